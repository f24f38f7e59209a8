"""A flood of presenter sessions from one client never takes the teacher's room, checked while the flood is connected.

Issue 27's second takeover: 520 presenter sessions from one client (a follower of the room, carrying its route
cookie as behind the proxy) filled the 512 rooms; the oldest room, the teacher's, was evicted, a flood session took
its code, the class moved to the flood's page and the teacher was silently given another code. Once the flood
disconnects, the old registry let the teacher take the code back, so the checks are made while every flood session
is still connected.

Against b628916 (before presenter keys) the same checks failed: the follower was moved to the flood's page and the
teacher's step did not reach the class.
"""

import asyncio
import re
import secrets
import threading

import pytest

from mpviz.app import text
from mpviz.app.websocket_session import open_page
from mpviz.app.websocket_session import run as run_sessions
from tests.browser import APP_IDLE
from tests.test_stepper import STATE

pytestmark = [pytest.mark.slow, pytest.mark.browser]
FLOOD = 520  # more presenter sessions than mpviz.app.rooms.MAX_ROOMS (512) rooms
EVERY_S = 0.05  # 20 new flood sessions a second, as in the issue (520 in 26 s)
FLOOD_LIMIT_S = 900  # every flood session has run its page once by then, even on a loaded 2-core machine
TEACHER_PAGE = "Attention, step by step"  # the h1 of the page the teacher presents (mpviz/locales/en/attention.toml)
FLOOD_PAGE = "glossary"  # where the flood's presenters stand: a follower moved there was taken


def _open(context, url):
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector(APP_IDLE, timeout=300_000)  # the server's first lesson is computed now (when run alone)
    page.wait_for_function(f"({STATE})() !== null", timeout=60_000)
    return page


def _room_code(page) -> str:
    link = page.locator("[data-testid=stSidebar] [data-testid=stCode] code", has_text="follow=").first.text_content()
    return re.search(r"follow=([A-Za-z0-9_-]+)", link).group(1)


def _follows_a_step(presenter, follower) -> None:
    presenter.keyboard.press("ArrowRight")
    want = presenter.evaluate(STATE)
    follower.wait_for_function(
        f"() => {{ const s = ({STATE})(); return s && s.event === {want['event']} && s.step === {want['step']}; }}",
        timeout=10_000,  # beside 520 connected sessions on a loaded machine
    )


class Flood:
    """FLOOD presenter sessions from one client, opened EVERY_S apart on a loop of their own (Playwright's sync API
    holds the test's thread), each connected until `release`. `ran` is set once every one has run its page."""

    def __init__(self, base_url: str, headers: dict) -> None:
        self.ran = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._hold = asyncio.Event()
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._flood(base_url, headers),))
        self._thread.start()

    async def _flood(self, base_url: str, headers: dict) -> None:
        ran, sessions = [], []
        for _ in range(FLOOD):
            session = open_page(
                base_url, "present=1", path=FLOOD_PAGE, headers=headers, hold=self._hold, finished=ran.append
            )
            sessions.append(asyncio.create_task(session))
            await asyncio.sleep(EVERY_S)
        while len(ran) < FLOOD and not any(s.done() and s.exception() for s in sessions):
            await asyncio.sleep(0.5)
        self.ran.set()
        await self._hold.wait()
        await asyncio.gather(*sessions)

    def release(self) -> None:
        self._loop.call_soon_threadsafe(self._hold.set)
        self._thread.join(120)


def _after_code(template: str) -> str:
    """The words of a sidebar line right after its {code}: what tells "following" from "waiting"."""
    return template.split("{code}")[1].split("{")[0].split("(")[0].strip()


def _late_student(server: str, code: str) -> tuple[str, list[str]]:
    """What a late student's first visit of the follow link shows: its alerts, and its h1 headings."""
    run = run_sessions(open_page(server, f"follow={code}"))
    return "\n".join(run.alerts), [body for tag, body in run.headings if tag == "h1"]


def test_a_flood_of_presenter_sessions_from_one_client_leaves_the_teachers_room_alone(browser, streamlit_server):
    """520 presenter sessions from one follower of the room (its route cookie is the room's key), all connected:
    while they are, the teacher keeps the room and its code, the class keeps following the teacher (never moved to
    the flood's page), and a late student joins the teacher's view."""
    server, _ = streamlit_server
    words = text.load("en", "classroom")
    key = "f" + secrets.token_hex(4)
    teacher = browser.new_context(viewport={"width": 1440, "height": 900})
    student = browser.new_context(viewport={"width": 1024, "height": 768})
    teacher.add_cookies([{"name": "mpviz_route", "value": key, "url": server}])
    presenter = _open(teacher, f"{server}/?present=1")
    code = _room_code(presenter)
    follower = _open(student, f"{server}/?follow={code}")
    flood = Flood(server, {"X-Forwarded-For": "203.0.113.7", "Cookie": f"mpviz_route={key}"})
    try:
        assert flood.ran.wait(FLOOD_LIMIT_S), "every flood session ran its page"
        said, h1 = _late_student(server, code)
        assert _after_code(words["following"]) in said, f"the room lives: {said}"
        assert _after_code(words["waiting"]) not in said, f"the room lives: {said}"
        assert TEACHER_PAGE in h1, f"a late student joins the teacher's view, not the flood's: {h1}"
        assert not follower.evaluate("location.pathname").endswith(f"/{FLOOD_PAGE}"), "the class stays put"
        _follows_a_step(presenter, follower)  # the class still follows the teacher, who never reloaded
        assert _room_code(presenter) == code, "the teacher was not silently given another code"
    finally:
        flood.release()
    presenter.reload()
    presenter.wait_for_selector(APP_IDLE, timeout=120_000)
    assert _room_code(presenter) == code
    teacher.close()
    student.close()
