"""The classroom in Chromium against `streamlit run app.py`: the guided lesson moves the stepper without reloading
the page, a think-first stop gives nothing away until Reveal (nor its stepper, left at the stop before), a follower
follows a presenter within 2 s (scrolled to the step card) and stays put after stopping, a room survives a presenter
reload and its follower is told while the presenter is gone (in a notice on screen wherever they scrolled) and when they
are back; nobody takes a room over (a presenter link naming it, the route cookie and the presenter toggle; a flood:
tests/test_classroom_flood.py), wrong codes are limited per client, and (slow) what 30 followers of one room cost the
server and how fast steps and page changes reach them, printed.

The 30 followers are small websocket clients that behave like a browser tab for this purpose: they open the follow
link, then send the follow fragment's auto-rerun every interval the server asked for, as Streamlit's frontend does.
"""

import asyncio
import os
import re
import secrets
import statistics
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect
from websockets.typing import Subprotocol

from mpviz import formats
from mpviz.app import lessons, text, tour
from mpviz.app.follow import POLL_S
from mpviz.app.rooms import WRONG_CODES, WRONG_WINDOW_S
from mpviz.app.websocket_session import MAX_MESSAGE_BYTES, open_page, percentile, rerun_request
from mpviz.app.websocket_session import run as run_sessions
from tests.browser import APP_IDLE
from tests.test_stepper import STATE, RerunCounter

FOLLOW_WITHIN_MS = 2000  # a class can't follow a lagging screen: a follower shows the presenter's step within 2 s
FOLLOWERS = 30
IDLE_S = 10.0
MOVES = 10
MOVE_EVERY_S = 1.0
# every lesson once, and back to the stepper's: what a follower waits for, page by page
PAGE_CHANGES = ("formats", "attention", "softmax", "policy", "scaler", "claims", "fp8", "glossary", "tour", "attention")
PAGE_LIMIT_S = 60.0  # the presenter opens the next lesson once every follower has opened this one, or after this


def _open(context, url, *, state=True, timeout=120_000):
    page = context.new_page()
    counter = RerunCounter(page)
    page.goto(url)
    page.wait_for_selector(APP_IDLE, timeout=timeout)
    if state:
        page.wait_for_function(f"({STATE})() !== null", timeout=60_000)
    return page, counter


CARD_IN_VIEW = """() => { const host = document.querySelector('.st-key-stepper [data-testid=stBidiComponentIsolated]');
  const r = host.shadowRoot.querySelector('[data-role=card]').getBoundingClientRect();
  return r.top >= -1 && r.bottom <= innerHeight + 1; }"""


def _room_code(page) -> str:
    """The room a presenter's sidebar hands out (once the browser's presenter key has opened it)."""
    link = page.locator("[data-testid=stSidebar] [data-testid=stCode] code", has_text="follow=").first.text_content()
    return re.search(r"follow=([A-Za-z0-9_-]+)", link).group(1)


# ── the guided lesson ───────────────────────────────────────────────────────────────────────────────────────
THINK_FIRST = [n for n, s in enumerate(tour.stops(), start=1) if s.think_first]
TOUR_BAR = text.load("en", "tour")["bar"]
ANSWER = TOUR_BAR["answer"].split("{")[0].replace("*", "").strip()  # "What the run shows:", as the page reads
LONG_DTYPE = {spec.short: spec.name for spec in formats.all_formats()}
LESSON_ON_SCREEN = """() => {
  const host = document.querySelector('.st-key-stepper [data-testid=stBidiComponentIsolated]');
  const r = host && host.shadowRoot;
  const all = (sel) => r ? [...r.querySelectorAll(sel)] : [];
  return {stepper: !!host, figures: document.querySelectorAll('[data-testid=stMain] .js-plotly-plot').length,
    current: all('.mpv-node.mpv-current').map(n => [n.dataset.node, n.getAttribute('aria-label')]),
    marks: all('.mpv-alarm, .mpv-err-nonfinite, .mpv-bad-key').length,
    titles: [...document.querySelectorAll('[data-testid=stMain] h1')].map(e => e.textContent.trim()),
    main: document.querySelector('[data-testid=stMain]').innerText}; }"""


def _lesson_path(stop: tour.Stop) -> str:
    return "" if lessons.lesson(stop.page).home else stop.page


def _bar_title(n: int) -> str:
    stop = tour.stops()[n - 1]
    return TOUR_BAR["title"].format(
        n=n, total=len(tour.stops()), title=text.load("en", "tour")["stops"][stop.id]["title"]
    )


def _click_and_settle(page, name: str, shows: str) -> None:
    """Click the tour bar's button `name`, then wait for the run that shows `shows` in the bar to finish."""
    page.locator(".st-key-tour_bar").get_by_role("button", name=name).click()
    page.locator(".st-key-tour_bar").get_by_text(shows).first.wait_for(timeout=120_000)
    page.wait_for_selector(APP_IDLE, timeout=120_000)


# ── the guided lesson ───────────────────────────────────────────────────────────────────────────────────────
@pytest.mark.browser
@pytest.mark.parametrize("n", THINK_FIRST)
def test_a_think_first_stop_gives_nothing_away_until_reveal(browser, streamlit_server, n):
    """Arriving from the stop before (its answer shown, its stepper placed), a think-first stop asks: no stepper (no
    node's dtype, no inf/NaN mark, no place), no figure, no lesson, no answer on screen. Reveal shows the lesson at
    the stop's place, and the answer the bar quotes is what the highlighted node or the red banner shows."""
    server, _ = streamlit_server
    stops = tour.stops()
    stop, before = stops[n - 1], stops[n - 2]
    link = urlencode({**before.query, "tour": n - 1, **({"reveal": 1} if before.think_first else {})})
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page, _ = _open(context, f"{server}/{_lesson_path(before)}?{link}", state=False)
    page.locator(".st-key-tour_bar").get_by_text(_bar_title(n - 1)).first.wait_for(timeout=120_000)
    page.wait_for_selector(APP_IDLE, timeout=120_000)
    _click_and_settle(page, TOUR_BAR["next"], _bar_title(n))
    asked = page.evaluate(LESSON_ON_SCREEN)
    assert text.load("en", stop.page)["title"] not in asked["titles"], "the lesson waits for the reveal"
    assert ANSWER not in asked["main"]
    assert not asked["stepper"] and not asked["current"] and not asked["marks"] and not asked["figures"], asked
    _click_and_settle(page, TOUR_BAR["reveal"], ANSWER)
    answer = page.locator(".st-key-tour_bar [data-testid=stMarkdownContainer]", has_text=ANSWER).first.inner_text()
    assert text.load("en", stop.page)["title"] in page.evaluate(LESSON_ON_SCREEN)["titles"]
    if "landmark" in (stop.target or {}):  # the highlighted node is the stop's tensor, in the dtype the bar quotes
        landmark = stop.target["landmark"]
        page.wait_for_function(f"() => ({LESSON_ON_SCREEN})().current.some(c => c[0] === {landmark!r})", timeout=60_000)
        ((node, label),) = page.evaluate(LESSON_ON_SCREEN)["current"]  # its label names its dtype, as its colour does
        (short,) = [d for d in LONG_DTYPE if re.search(rf"\b{d}\b", label)]
        assert node == landmark and f"{landmark} is {LONG_DTYPE[short]}" in answer, (node, label, answer)
    if (stop.target or {}).get("nonfinite"):  # the stepper sits on the op the bar names, its marks shown
        event = int(re.search(r"op #(\d+)", answer).group(1))
        page.wait_for_function(f"() => ({STATE})() && ({STATE})().event === {event}", timeout=60_000)
        assert page.evaluate(LESSON_ON_SCREEN)["marks"] > 0
    context.close()


SEEN_WORDS = """(words) => { window.__seen = window.__seen || [];
  new MutationObserver(() => { const bar = document.querySelector('.st-key-tour_bar');
    const said = bar && bar.innerText;
    if (said && said.includes(words) && !window.__seen.includes(said)) window.__seen.push(said);
  }).observe(document, {subtree: true, childList: true, characterData: true}); }"""


@pytest.mark.browser
def test_a_stops_first_visit_says_what_it_computes_and_how_far_along(browser, streamlit_server):
    """The first visit to a stop (here the fp8 outlier's, which no other test opens) says in the bar what is being
    computed and which of its two steps it is at, for the whole wait; the words go once the stop is shown. (Step 2,
    the answer's numbers, is often too quick for the browser to draw before the words go.)"""
    server, _ = streamlit_server
    (n,) = [n for n, s in enumerate(tour.stops(), start=1) if s.id == "fp8_outlier"]
    stop = tour.stops()[n - 1]
    preparing = TOUR_BAR["preparing"].split("{")[0]
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.add_init_script(f"({SEEN_WORDS})({preparing!r})")  # from the page's first byte: no wait missed
    page = context.new_page()
    started = time.monotonic()
    page.goto(f"{server}/{_lesson_path(stop)}?{urlencode({**stop.query, 'tour': n})}")
    page.wait_for_function(  # the words said, then gone with the stop shown (a busy machine: minutes)
        """(preparing) => { const bar = document.querySelector('.st-key-tour_bar');
             return bar && (window.__seen || []).length && !bar.innerText.includes(preparing); }""",
        arg=preparing,
        timeout=420_000,
    )
    print(f"\nstop {n} ({stop.id}), first visit: shown after {time.monotonic() - started:.1f} s")
    seen = page.evaluate("window.__seen")
    lesson = tour.lesson_title(stop.page)
    assert any(TOUR_BAR["part_page"].format(lesson=lesson) in t for t in seen), seen  # step 1 of 2: the page
    context.close()


@pytest.mark.browser
def test_a_tour_stop_moves_the_stepper_without_reloading_and_scrolls_to_its_section(browser, streamlit_server):
    server, _ = streamlit_server
    stops = tour.stops()
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page, _ = _open(context, f"{server}/?tour=2&reveal=1")
    page.wait_for_function(f"({STATE})().landmarks.includes('{stops[1].target['landmark']}')", timeout=30_000)
    page.evaluate("window.__samePage = true")  # survives only if the page is never reloaded
    page.get_by_role("button", name=TOUR_BAR["next"]).click()  # stop 3: another run config
    page.get_by_role("button", name=TOUR_BAR["reveal"]).click()  # a think-first stop
    page.wait_for_function(f"({STATE})() && ({STATE})().landmarks.includes('{stops[2].target['landmark']}')")
    assert "device=cuda-sim" in page.url
    page.get_by_role("button", name=TOUR_BAR["next"]).click()  # stop 4: the first inf
    page.get_by_role("button", name=TOUR_BAR["reveal"]).click()
    page.wait_for_function(  # the new run shows first (at the step it had), then the stop's place arrives
        f"({STATE})() && ({STATE})().title.includes('exp') && location.search.includes('view=full')", timeout=60_000
    )
    assert page.evaluate("window.__samePage === true")
    page.get_by_role("button", name=TOUR_BAR["next"]).click()  # stop 5: another lesson
    page.wait_for_function("() => location.pathname.endsWith('/softmax')", timeout=60_000)
    page.wait_for_selector(APP_IDLE, timeout=120_000)
    heading = text.load("en", "softmax")[stops[4].section]
    page.wait_for_function(  # its section's heading, scrolled to just below the tour's sticky bar
        """(h) => { const e = [...document.querySelectorAll('h2, h3')].find(x => x.textContent.trim() === h);
                    const bar = document.querySelector('.st-key-tour_bar').getBoundingClientRect();
                    const r = e && e.getBoundingClientRect();
                    return r && r.top >= bar.bottom - 2 && r.top < bar.bottom + 120; }""",
        arg=heading,
        timeout=10_000,
    )
    context.close()


# ── follow me ───────────────────────────────────────────────────────────────────────────────────────────────
@pytest.mark.browser
def test_a_follower_sees_each_step_within_two_seconds_and_stays_after_stopping(browser, streamlit_server):
    server, _ = streamlit_server
    teacher = browser.new_context(viewport={"width": 1440, "height": 900})
    student = browser.new_context(viewport={"width": 1024, "height": 768})
    presenter, _ = _open(teacher, f"{server}/?present=1")
    code = _room_code(presenter)
    follower, counter = _open(student, f"{server}/?follow={code}")
    full_runs = counter.reruns  # the follower's page loads so far; from here on, only the poll may run
    for _ in range(3):
        presenter.keyboard.press("ArrowRight")
        want = presenter.evaluate(STATE)
        follower.wait_for_function(
            f"() => {{ const s = ({STATE})(); return s && s.event === {want['event']} && s.step === {want['step']}; }}",
            timeout=FOLLOW_WITHIN_MS,
        )
    polls = counter.reruns - full_runs
    assert polls >= 1  # the follow fragment ticked; no full page run was needed to follow three steps
    follower.wait_for_function(CARD_IN_VIEW, timeout=5_000)  # scrolled to the card the presenter shows
    assert follower.evaluate("new URLSearchParams(location.search).get('follow')") == code

    stop = text.load("en", "classroom")["stop_following"]
    follower.get_by_role("button", name=stop).click()
    follower.wait_for_function("() => !location.search.includes('follow=')", timeout=10_000)
    follower.wait_for_selector(APP_IDLE, timeout=60_000)
    stayed = follower.evaluate(STATE)
    for _ in range(2):
        presenter.keyboard.press("ArrowRight")
    time.sleep(3 * POLL_S + 1)  # longer than a follower needs to follow
    assert follower.evaluate(STATE)["event"] == stayed["event"] != presenter.evaluate(STATE)["event"]
    teacher.close()
    student.close()


def _follows_a_step(presenter, follower) -> None:
    presenter.keyboard.press("ArrowRight")
    want = presenter.evaluate(STATE)
    follower.wait_for_function(
        f"() => {{ const s = ({STATE})(); return s && s.event === {want['event']} && s.step === {want['step']}; }}",
        timeout=FOLLOW_WITHIN_MS + 3000,  # the first poll after a reload may wait for the new session's first run
    )


def _shows(page, words: str, timeout: float) -> None:
    page.wait_for_function(
        "(w) => document.querySelector('[data-testid=stMain]').innerText.includes(w)", arg=words, timeout=timeout
    )


def _after_code(template: str) -> str:
    """The words of a notice right after its {code}: what tells "has left" from "is back"."""
    return template.split("{code}")[1].split("{")[0].split("(")[0].strip()


# a notice the follower can read where they are: inside the viewport, with the words, while scrolled to the end
NOTICE_IN_VIEW = """(w) => { const n = document.querySelector('.st-key-follow_notice');
  if (!n || !n.innerText.includes(w)) return false;
  const r = n.getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; }"""
SCROLL_TO_END = """() => { const main = '[data-testid=stMain] [data-testid=stVerticalBlock] > *';
  const blocks = document.querySelectorAll(main); blocks[blocks.length - 1].scrollIntoView({ block: 'end' }); }"""


@pytest.mark.browser
def test_the_room_survives_a_presenter_reload_and_followers_are_told_while_the_presenter_is_gone(
    browser, streamlit_server
):
    server, _ = streamlit_server
    words = text.load("en", "classroom")
    gone = _after_code(words["presenter_gone"])
    teacher = browser.new_context(viewport={"width": 1440, "height": 900})
    student = browser.new_context(viewport={"width": 1024, "height": 768})
    presenter, _ = _open(teacher, f"{server}/?present=1")
    code = _room_code(presenter)
    assert "room=" not in presenter.url, "the room is the browser's presenter key's, never the URL's"
    follower, _ = _open(student, f"{server}/?follow={code}")
    _shows(presenter, words["audience"].format(n=1).replace("*", ""), 10_000)  # the live count, without a rerun

    presenter.reload()  # the room and its follower survive it
    presenter.wait_for_selector(APP_IDLE, timeout=120_000)
    presenter.wait_for_function(f"({STATE})() !== null", timeout=60_000)
    assert _room_code(presenter) == code and "room=" not in presenter.url
    _follows_a_step(presenter, follower)

    url = presenter.url
    presenter.close()  # the presenter's tab is gone: after about 10 s the follower reads so
    _shows(follower, gone, 20_000)
    assert follower.evaluate("new URLSearchParams(location.search).get('follow')") == code
    presenter, _ = _open(teacher, url)  # back, on the same link
    assert _room_code(presenter) == code
    follower.wait_for_function(
        "(w) => !document.querySelector('[data-testid=stMain]').innerText.includes(w)", arg=gone, timeout=5_000
    )
    _follows_a_step(presenter, follower)
    teacher.close()
    student.close()


# ── nobody takes a room over ────────────────────────────────────────────────────────────────────────────────
def _sidebar_says(page, words: str, timeout: float = 10_000) -> None:
    page.wait_for_function(
        "(w) => document.querySelector('[data-testid=stSidebar]').innerText.includes(w)", arg=words, timeout=timeout
    )


@pytest.mark.browser
def test_a_presenter_link_naming_the_room_does_not_take_a_departed_teachers_class(browser, streamlit_server):
    """The teacher's tab closes; someone opens `/glossary?present=1&room=CODE`: they get a room of their own, the
    class stays where it was and reads that the presenter left (on screen, scrolled anywhere; the sidebar agrees),
    and the teacher who comes back has the same room and is told nothing else."""
    server, _ = streamlit_server
    words = text.load("en", "classroom")
    teacher = browser.new_context(viewport={"width": 1440, "height": 900})
    student = browser.new_context(viewport={"width": 1024, "height": 768})
    intruder = browser.new_context(viewport={"width": 1024, "height": 768})
    presenter, _ = _open(teacher, f"{server}/?present=1")
    code = _room_code(presenter)
    follower, _ = _open(student, f"{server}/?follow={code}")
    presenter.close()
    _shows(follower, _after_code(words["presenter_gone"]), 25_000)

    stranger, _ = _open(intruder, f"{server}/glossary?present=1&room={code}", state=False)
    assert _room_code(stranger) != code
    time.sleep(3 * POLL_S + 1)  # longer than a follower needs to follow
    assert not follower.evaluate("location.pathname").endswith("/glossary"), "the class stays where it was"
    follower.evaluate(SCROLL_TO_END)  # reading further down the lesson than the presenter
    follower.wait_for_function(NOTICE_IN_VIEW, arg=_after_code(words["presenter_gone"]), timeout=5_000)
    _sidebar_says(follower, _after_code(words["following_gone"]))

    presenter, _ = _open(teacher, f"{server}/?present=1")  # the teacher is back, in the same browser
    assert _room_code(presenter) == code
    follower.wait_for_function(NOTICE_IN_VIEW, arg=_after_code(words["presenter_back"]), timeout=10_000)
    _sidebar_says(follower, _after_code(words["following"]))
    _follows_a_step(presenter, follower)
    for context in (teacher, student, intruder):
        context.close()


@pytest.mark.browser
def test_a_follower_with_the_teachers_route_cookie_who_turns_presenter_mode_on_gets_a_room_of_their_own(
    browser, streamlit_server
):
    """Behind the proxy a follower of room K carries the route cookie K, as the teacher does; with the teacher
    gone, turning presenter mode on opens another room, never K."""
    server, _ = streamlit_server
    words = text.load("en", "classroom")
    key = "k" + secrets.token_hex(4)  # what the proxy would set (deploy/nginx.conf.template)
    teacher = browser.new_context(viewport={"width": 1440, "height": 900})
    student = browser.new_context(viewport={"width": 1024, "height": 768})
    for context in (teacher, student):
        context.add_cookies([{"name": "mpviz_route", "value": key, "url": server}])
    presenter, _ = _open(teacher, f"{server}/?present=1")
    code = _room_code(presenter)
    assert code.split("-")[0] == key, "the room routes like the teacher's cookie"
    follower, _ = _open(student, f"{server}/?follow={code}")
    presenter.close()
    _shows(follower, _after_code(words["presenter_gone"]), 25_000)
    follower.locator("[data-testid=stSidebar] label", has_text=words["present"]).first.click()
    assert _room_code(follower) != code
    presenter, _ = _open(teacher, f"{server}/?present=1")
    assert _room_code(presenter) == code
    teacher.close()
    student.close()


@pytest.mark.browser
def test_a_hand_over_link_moves_the_room_to_another_device_once(browser, streamlit_server):
    """The presenter's sidebar makes a one-time link; the device that opens it presents the same room (and keeps it
    across a reload: the key is now in its browser); the link opened again gives nothing."""
    server, _ = streamlit_server
    words = text.load("en", "classroom")
    laptop = browser.new_context(viewport={"width": 1440, "height": 900})
    tablet = browser.new_context(viewport={"width": 1024, "height": 768})
    late = browser.new_context(viewport={"width": 1024, "height": 768})
    presenter, _ = _open(laptop, f"{server}/?present=1")
    code = _room_code(presenter)
    presenter.locator("[data-testid=stExpandSidebarButton]").click()  # presenter mode starts it collapsed
    presenter.get_by_text(words["handover"]).click()
    presenter.get_by_role("button", name=words["handover_make"]).click()
    link = presenter.locator("[data-testid=stSidebar] [data-testid=stCode] code", has_text="handover=").first
    link.wait_for(state="attached", timeout=120_000)  # the click's rerun: seconds on a loaded 2-core host
    link = link.text_content()
    assert "present" not in link and code in link
    moved, _ = _open(tablet, link)
    assert _room_code(moved) == code and "handover=" not in moved.url and "follow=" not in moved.url
    moved.reload()
    moved.wait_for_selector(APP_IDLE, timeout=120_000)
    moved.goto(f"{server}/?present=1")  # a plain presenter link on the tablet now: its browser holds the key
    assert _room_code(moved) == code
    spent, _ = _open(late, link, state=False)
    _shows(spent, words["handover_used"].split(".")[0], 10_000)
    assert not spent.locator("[data-testid=stSidebar] [data-testid=stCode] code", has_text="follow=").count()
    for context in (laptop, tablet, late):
        context.close()


async def _alerts(base_url: str, path: str, query: str, headers: dict) -> str:
    """What one session without a browser is told (its alerts) when it opens `/path?query` with `headers`."""
    return "\n".join((await open_page(base_url, query, path=path, headers=headers)).alerts)


@pytest.mark.browser
def test_room_codes_that_lead_nowhere_are_limited_per_client(streamlit_server, printout):
    """A client that tried WRONG_CODES codes that lead nowhere waits before the next, whatever code it is (a room
    that exists looks the same); another client is not affected."""
    server, _ = streamlit_server
    limited = text.load("en", "classroom")["lookups_limited"].split("{")[0].strip()
    guesser = {"X-Forwarded-For": f"198.51.100.{secrets.randbelow(250)}"}

    async def guesses() -> list[tuple[str, float]]:
        said = []
        for n in range(WRONG_CODES + 1):
            t0 = time.perf_counter()
            said.append((await _alerts(server, "glossary", f"follow=nope{n}", guesser), time.perf_counter() - t0))
        return said

    said = run_sessions(guesses())
    assert not any(limited in s for s, _ in said[:WRONG_CODES]) and limited in said[-1][0]
    other = run_sessions(_alerts(server, "glossary", "follow=nope0", {"X-Forwarded-For": "192.0.2.44"}))
    assert limited not in other
    per = statistics.median(t for _, t in said)
    printout(
        f"wrong room codes, one client: {WRONG_CODES} answered (median {per * 1e3:.0f} ms each, a glossary page run),"
        f" then every new code waits up to {WRONG_WINDOW_S:.0f} s: a sustained guess costs"
        f" {WRONG_WINDOW_S / WRONG_CODES:.0f} s per client"
    )


# ── what a room of 30 costs ─────────────────────────────────────────────────────────────────────────────────
def _server_pid(port: int) -> int:
    """The `streamlit run` process listening on `port` (the fixture started it with --server.port PORT)."""
    for proc in Path("/proc").iterdir():
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in b" ".join(args) and str(port).encode() in args:
            return int(proc.name)
    raise AssertionError(f"no streamlit process on port {port}")


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Follower:
    """One student's tab, without a browser: opens `?follow=CODE`, then sends the follow fragment's auto-reruns."""

    def __init__(self, base_url: str, code: str, arrived: threading.Condition):
        self.base_url, self.query = base_url, f"follow={code}"
        self.arrived = arrived  # notified at each page change, for the test's thread
        self.ticks = 0
        self.gotos: list[float] = []  # when a go-to (the presenter's new place) arrived
        self.pages: list[float] = []  # when a run of another page than the last one finished (a page change)
        self.errors: list[str] = []
        self.runs: list[float] = []  # when a full run (not the poll fragment's) of any page finished

    async def _until_finished(self, ws, fragment: dict) -> None:
        shown = fragment.get("page")
        for _ in range(5000):
            msg = ForwardMsg()
            msg.ParseFromString(await ws.recv(decode=False))
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                fragment["page"] = msg.new_session.page_script_hash
            elif kind == "auto_rerun":
                fragment["id"], fragment["every"] = msg.auto_rerun.fragment_id, msg.auto_rerun.interval
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                if element.WhichOneof("type") == "exception":
                    self.errors.append(element.exception.message)
                elif element.WhichOneof("type") == "bidi_component" and element.bidi_component.json:
                    self.gotos.append(time.perf_counter())
            elif kind == "script_finished" and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                if msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:  # a fragment's run ends otherwise
                    self.runs.append(time.perf_counter())
                if shown is not None and fragment["page"] != shown:
                    with self.arrived:
                        self.pages.append(time.perf_counter())
                        self.arrived.notify_all()
                return
        raise AssertionError("no script_finished")

    async def run(self, stop: asyncio.Event, joined: threading.Event) -> None:
        ws_url = self.base_url.replace("http://", "ws://") + "/_stcore/stream"
        async with connect(
            ws_url, subprotocols=[Subprotocol("streamlit")], max_size=MAX_MESSAGE_BYTES, ping_interval=None
        ) as ws:
            fragment: dict = {}
            await ws.send(rerun_request(self.base_url, self.query))
            await self._until_finished(ws, fragment)
            joined.set()
            assert "id" in fragment, "the follow page registers its poll"
            while not stop.is_set():
                await asyncio.sleep(fragment["every"])
                msg = BackMsg()
                state = msg.rerun_script
                state.query_string = self.query
                state.page_script_hash = fragment["page"]
                state.fragment_id = fragment["id"]
                state.is_auto_rerun = True
                state.context_info.url = f"{self.base_url}/?{self.query}"
                await ws.send(msg.SerializeToString())
                await self._until_finished(ws, fragment)
                self.ticks += 1


@pytest.mark.slow
@pytest.mark.browser
def test_what_thirty_followers_of_one_room_cost_the_server(browser, streamlit_server, printout):
    server, _ = streamlit_server
    pid = _server_pid(int(server.rsplit(":", 1)[1]))
    teacher = browser.new_context(viewport={"width": 1440, "height": 900})
    for slug in set(PAGE_CHANGES):  # warm caches: a page change then costs what following costs, not a first run
        path = "" if lessons.lesson(slug).home else slug  # a first run of scaler or claims: minutes on a busy host
        _open(teacher, f"{server}/{path}", state=False, timeout=900_000)[0].close()
    presenter, presenter_runs = _open(teacher, f"{server}/?present=1")
    code = _room_code(presenter)
    arrived = threading.Condition()
    followers = [Follower(server, code, arrived) for _ in range(FOLLOWERS)]

    # the followers' websockets run on their own event loop (Playwright's sync API drives the presenter here)
    loop = asyncio.new_event_loop()
    stop, joined = asyncio.Event(), [threading.Event() for _ in followers]

    async def class_of_followers() -> None:
        async def one(f: Follower, j: threading.Event) -> None:
            await f.run(stop, j)

        await asyncio.gather(*(one(f, j) for f, j in zip(followers, joined, strict=True)))

    thread = threading.Thread(target=loop.run_until_complete, args=(class_of_followers(),), daemon=True)
    thread.start()
    try:
        assert all(j.wait(300) for j in joined), "every follower opened the follow link"
        time.sleep(2 * POLL_S)
        cpu0, ticks0, t0 = _cpu_s(pid), sum(f.ticks for f in followers), time.perf_counter()
        time.sleep(IDLE_S)  # nobody moves: only the polls cost
        idle = {"cpu": _cpu_s(pid) - cpu0, "ticks": sum(f.ticks for f in followers) - ticks0}
        idle["s"] = time.perf_counter() - t0
        runs0, cpu0, ticks0, t0 = (
            presenter_runs.reruns,
            _cpu_s(pid),
            sum(f.ticks for f in followers),
            time.perf_counter(),
        )
        moves = []
        for _ in range(MOVES):  # the presenter steps once a second
            presenter.keyboard.press("ArrowRight")
            moves.append(time.perf_counter())
            time.sleep(MOVE_EVERY_S)
        time.sleep(2 * POLL_S)
        moving = {"cpu": _cpu_s(pid) - cpu0, "ticks": sum(f.ticks for f in followers) - ticks0}
        moving |= {"s": time.perf_counter() - t0, "presenter_runs": presenter_runs.reruns - runs0}
        changes = []
        presenter.locator("[data-testid=stExpandSidebarButton]").click()  # presenter mode starts it collapsed
        cpu0, t0 = _cpu_s(pid), time.perf_counter()
        for slug in PAGE_CHANGES:  # the presenter opens another lesson from the navigation
            path = "" if lessons.lesson(slug).home else slug  # the home lesson's path is "/"
            presenter.locator(f"[data-testid=stSidebarNav] a[href$='/{path}']").click()
            changes.append(time.perf_counter())
            with arrived:  # every follower has opened it (one that lagged behind goes to the newest page at once)
                arrived.wait_for(lambda: all(f.pages and f.pages[-1] >= changes[-1] for f in followers), PAGE_LIMIT_S)
        paging = {"cpu": _cpu_s(pid) - cpu0, "s": time.perf_counter() - t0}
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(60)
    tick_ms = idle["cpu"] * 1e3 / max(idle["ticks"], 1)
    extra = moving["cpu"] - idle["cpu"] / idle["s"] * moving["s"]  # what the moves added to the polling
    # server CPU per follower's page change (the presenter's runs included), beyond what the polling costs: unlike
    # the lags, this does not depend on how busy the machine's other processes keep its cores
    paging_ms = (paging["cpu"] - idle["cpu"] / idle["s"] * paging["s"]) * 1e3 / (FOLLOWERS * len(PAGE_CHANGES))
    lags = [g - max(m for m in moves if m <= g) for f in followers for g in f.gotos if moves[0] <= g < changes[0]]
    page_lags = [p - max(c for c in changes if c <= p) for f in followers for p in f.pages if p >= changes[0]]
    runs_per_change = sum(r >= changes[0] for f in followers for r in f.runs) / (FOLLOWERS * len(PAGE_CHANGES))
    by_page: dict[str, list[float]] = {}  # which lesson a page change opened: its lags (what its run costs shows)
    for f in followers:
        for p in (p for p in f.pages if p >= changes[0]):
            i = max(i for i, c in enumerate(changes) if c <= p)
            by_page.setdefault(PAGE_CHANGES[i], []).append(p - changes[i])
    per_page = ", ".join(
        f"{slug} p50 {statistics.median(v) * 1e3:.0f} / p95 {percentile(v, 95) * 1e3:.0f} ms"
        for slug, v in by_page.items()
    )
    printout(
        f"follow-me, {FOLLOWERS} followers of one room, poll every {POLL_S} s, one process on this machine:\n"
        f"  idle   {idle['s']:.1f} s: {idle['ticks']} polls, server CPU {idle['cpu'] * 1e3 / idle['s']:.0f} ms/s"
        f" ({tick_ms:.2f} ms per poll)\n"
        f"  moving {moving['s']:.1f} s, {MOVES} steps ({moving['presenter_runs']} presenter runs):"
        f" server CPU {moving['cpu'] * 1e3 / moving['s']:.0f} ms/s,"
        f" {extra * 1e3 / MOVES:.1f} ms per step on top of the polling\n"
        f"  a step reached a follower after p50 {statistics.median(lags) * 1e3:.0f} ms,"
        f" max {max(lags) * 1e3:.0f} ms ({len(lags)} deliveries)\n"
        f"  a page change ({', '.join(PAGE_CHANGES)}) reached a follower after"
        f" p50 {statistics.median(page_lags) * 1e3:.0f} ms, p95 {percentile(page_lags, 95) * 1e3:.0f} ms,"
        f" max {max(page_lags) * 1e3:.0f} ms ({len(page_lags)} deliveries)\n"
        f"  by the page opened: {per_page}\n"
        f"  server CPU per follower per page change, beyond the polling: {paging_ms:.0f} ms;"
        f" full runs per follower per page change: {runs_per_change:.2f}"
    )
    assert not [e for f in followers for e in f.errors]
    assert len(lags) >= FOLLOWERS * MOVES * 0.9  # (nearly) every follower got (nearly) every step
    # (nearly) every follower went to (nearly) every page: one that lagged two changes behind goes to the newest at once
    assert len(page_lags) >= FOLLOWERS * len(PAGE_CHANGES) * 0.9
    teacher.close()
