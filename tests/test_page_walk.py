"""Settings outlive a walk through the lessons: a page that does not draw the sidebar's widgets must not drop them.

Streamlit forgets a widget's value at the end of a run that did not draw it. The run config's widgets are drawn
only on lessons that change it (Attention, Scaler); Formats and Softmax show a one-line summary. Walking
Attention → Formats → Softmax → Attention used to leave "Autocast dtype" unselected and "Causal mask" off, and the
next change wrote `dtype=None&causal=0` into the URL (and to a presenter's followers).
"""

from types import SimpleNamespace

import pytest
import streamlit as st
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from mpviz.app import fragment_page
from mpviz.app.lessons import lesson
from mpviz.app.run_config import SIDEBAR_PARAMS
from tests.apptest import failures, page_app
from tests.browser import APP_IDLE, page_report
from tests.test_classroom_browser import _open, _room_code
from tests.test_stepper import STATE

WALK = ("mpviz/pages/formats.py", "mpviz/pages/softmax.py", "mpviz/pages/glossary.py", "mpviz/pages/attention.py")
CHOSEN = {"dtype": "fp16", "causal": "0", "seq": "12", "softmax": "naive"}  # every one differs from its default


def _config(at) -> dict:
    return {p.key: at.session_state[p.key] for p in SIDEBAR_PARAMS}


@pytest.mark.slow
def test_the_run_config_survives_a_walk_through_pages_that_do_not_draw_it():
    at = page_app("mpviz/pages/attention.py", **CHOSEN).run()
    assert not failures(at)
    start, url = _config(at), dict(at.query_params)
    assert start["dtype"] == "fp16" and start["causal"] is False
    for page in WALK:
        at.switch_page(page).run()
        assert not failures(at), page
        assert _config(at) == start, page
    assert {k: v for k, v in at.query_params.items() if k in CHOSEN} == {k: url[k] for k in CHOSEN}
    # the widgets are drawn again on Attention: they show the same run, and a change keeps the rest
    assert at.sidebar.segmented_control(key="dtype").value == "fp16"
    assert at.sidebar.toggle(key="causal").value is False
    at.sidebar.number_input(key="seq").set_value(10).run()
    assert at.query_params["dtype"] == "fp16" and at.query_params["causal"] == "0"


def test_a_fragment_tick_from_a_page_the_session_left_switches_back_to_its_page(monkeypatch):
    """A tick queued behind a page switch runs with the old page (Streamlit resets the session's page to it and the
    browser clears the new page): it draws nothing and switches back to the page the session is on."""
    state, switched = {}, []
    ctx = SimpleNamespace(fragment_ids_this_run=None, page_script_hash="softmax-hash")
    monkeypatch.setattr(fragment_page, "get_script_run_ctx", lambda: ctx)
    monkeypatch.setattr(st, "session_state", state)
    monkeypatch.setattr(st, "query_params", SimpleNamespace(to_dict=lambda: {"dtype": "fp16", "follow": "abc"}))
    monkeypatch.setattr(st, "switch_page", lambda page, query_params: switched.append((page, query_params)))
    state["_page"] = "softmax"
    fragment_page.keep_to_page()  # a full run of softmax notes its page
    ctx.fragment_ids_this_run = ["poll"]
    fragment_page.keep_to_page()  # its own ticks run on
    assert switched == []
    ctx.fragment_ids_this_run, ctx.page_script_hash, state["_page"] = None, "attention-hash", "attention"
    fragment_page.keep_to_page()  # the follower switched to attention (a full run)
    ctx.fragment_ids_this_run, ctx.page_script_hash = ["poll"], "softmax-hash"  # a tick sent from softmax
    fragment_page.keep_to_page()
    assert switched == [(lesson("attention").page, {"dtype": "fp16", "follow": "abc"})]


def _tail(log, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


_NAV = "[data-testid=stSidebarNav] a[href='{href}']"
_QUERY = "() => Object.fromEntries(new URLSearchParams(location.search))"


@pytest.mark.browser
def test_a_presenter_walking_pages_keeps_the_run_and_the_followers_run(browser, streamlit_server):
    """In Chromium, presenter and follower: Attention → Formats → Softmax → Attention by the sidebar's links."""
    server, log = streamlit_server
    teacher, student = (browser.new_context(viewport={"width": 1440, "height": 900}) for _ in range(2))
    query = "&".join(f"{k}={v}" for k, v in CHOSEN.items())
    presenter, _ = _open(teacher, f"{server}/attention?present=1&{query}")
    follower, _ = _open(student, f"{server}/?follow={_room_code(presenter)}")
    errors: list[str] = []  # the follower's uncaught script errors and console errors, for a failure's message
    follower.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    follower.on("console", lambda m: m.type == "error" and errors.append(f"console: {m.text}"))
    for slug in ("formats", "softmax", "attention"):
        path = "" if lesson(slug).home else slug
        presenter.locator(_NAV.format(href=f"{server}/{path}")).dispatch_event("click")  # folded for a projector
        presenter.wait_for_url(lambda url, path=path: url.split("?")[0].endswith(f"/{path}"), timeout=30_000)
        presenter.wait_for_selector(APP_IDLE, timeout=120_000)
        assert {k: presenter.evaluate(_QUERY).get(k) for k in CHOSEN} == CHOSEN, slug
    # the follower runs what the presenter runs: back on Attention with the same run config in its URL
    want = "&&".join(f"q.get({k!r}) === {v!r}" for k, v in CHOSEN.items())
    follower.wait_for_function(
        f"() => {{ const q = new URLSearchParams(location.search); return location.pathname === '/' && {want}; }}",
        timeout=60_000,
    )
    follower.wait_for_selector(APP_IDLE, timeout=120_000)
    try:
        follower.wait_for_function(f"({STATE})() !== null", timeout=60_000)  # and its stepper shows that run
    except PlaywrightTimeout:
        pytest.fail(
            f"the follower's stepper never drew: {page_report(follower)}\n\nits errors: {errors}\n\n"
            f"server log:\n{_tail(log)}"
        )
    assert {k: follower.evaluate(_QUERY).get(k) for k in CHOSEN} == CHOSEN
    assert not follower.get_by_text("is not valid").count()
    teacher.close()
    student.close()
