"""Load test: a class opens one shared link at once, against a real `streamlit run app.py`, then steps through it.

Sessions are small asyncio clients speaking the browser's protocol (tests/protocol.py). First one student opens
the link (the lesson bundle is computed: cold), then a class of 30 fresh sessions opens it at once (warm: every
session gets the cached bundle), then one student alone. Behaviour is asserted; latencies are only printed
(benchmarks measure speed, tests don't). The stepping half needs real browsers: 30 Chromium pages on the same link
each press → ten times, and the server must hear no rerun request for any of it.
"""

import asyncio
import json
import time

import pytest

from mpviz.app.websocket_session import SUCCESS, SessionRun, open_page, percentile
from mpviz.app.websocket_session import run as run_sessions
from tests.browser import APP_IDLE
from tests.test_stepper import STATE, RerunCounter

pytestmark = pytest.mark.slow
CLASS_SIZE = 30
LINK = "dtype=bf16"  # the link the teacher shared: the attention lesson's default run
PAGE_TITLE = "Attention, step by step"  # mpviz/locales/en/attention.toml title
TOTAL_TIMEOUT_S = 300
BROWSER_BATCH = 10  # Chromium pages open at once (2 cores: more only queue)
STEPS = 10


async def _class(base_url: str) -> dict[str, list[SessionRun]]:
    cold = [await open_page(base_url, LINK)]  # the first student: the bundle is computed now
    warm = list(await asyncio.gather(*(open_page(base_url, LINK) for _ in range(CLASS_SIZE))))
    solo = [await open_page(base_url, LINK)]  # one student alone, for scale
    return {"cold": cold, "warm": warm, "solo": solo}


def _bundle(run: SessionRun) -> dict:
    (payload,) = run.components
    return json.loads(payload)["bundle"]


def test_a_class_of_30_opens_one_warm_link(fresh_streamlit_server, printout):
    base_url, log_path = fresh_streamlit_server
    started = time.perf_counter()
    waves = run_sessions(asyncio.wait_for(_class(base_url), TOTAL_TIMEOUT_S))
    lines = [
        f"load: ?{LINK}, a class of {CLASS_SIZE} fresh sessions at once, one process, all in "
        f"{time.perf_counter() - started:.1f} s (until each page's run finished)"
    ]
    for name, runs in waves.items():  # printed before the checks, so a failing run still shows its numbers
        latencies = [r.latency_s for r in runs]
        failed = sum(not r.ok for r in runs)
        lines.append(
            f"  {name:>4} ({len(runs):>2} sessions): p50 {percentile(latencies, 50):.2f} s, "
            f"p95 {percentile(latencies, 95):.2f} s, max {max(latencies):.2f} s; failed runs: {failed}"
        )
    printout("\n".join(lines))
    log = log_path.read_text()[-3000:]
    runs = [r for wave in waves.values() for r in wave]
    for r in runs:
        assert r.ok and set(r.statuses[:-1]) <= {"FINISHED_EARLY_FOR_RERUN"}, f"{r.statuses} {r.exceptions}\n{log}"
        assert ("h1", PAGE_TITLE) in r.headings, r.headings
        assert len(r.components) == 1, "the page mounts exactly one stepper"
    first = _bundle(runs[0])
    assert first["run"]["autocast_dtype"] == "bfloat16" and first["counts"]["events"] == len(first["events"])
    assert all(r.components[0] == runs[0].components[0] for r in runs), "every student sees the same bundle"
    assert all(r.statuses[-1] == SUCCESS for r in runs)


@pytest.mark.browser
def test_a_class_steps_through_the_lesson_without_one_server_rerun(fresh_streamlit_server, browser, printout):
    base_url, _ = fresh_streamlit_server
    pages, reruns_at_load, reruns_after = [], 0, 0
    started = time.perf_counter()
    for batch in range(0, CLASS_SIZE, BROWSER_BATCH):
        opened = []
        for _ in range(BROWSER_BATCH):  # fresh sessions: one context (cookies, storage) per student
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            counter = RerunCounter(page)
            page.goto(f"{base_url}/?{LINK}")
            opened.append((context, page, counter))
        for context, page, counter in opened:
            page.wait_for_selector(APP_IDLE, timeout=180_000)
            page.wait_for_function(f"({STATE})() !== null", timeout=120_000)
            reruns_at_load += counter.reruns
            for _ in range(STEPS):
                page.keyboard.press("ArrowRight")
            assert page.evaluate(STATE)["step"] == STEPS
            page.wait_for_function(f"() => location.search.includes('step={STEPS}')")
            reruns_after += counter.reruns
            pages.append(batch)
            context.close()
    stepping_reruns = reruns_after - reruns_at_load
    printout(
        f"load: {len(pages)} browser sessions on ?{LINK} each stepped {STEPS} times in "
        f"{time.perf_counter() - started:.1f} s: {reruns_at_load} page-load runs, "
        f"{stepping_reruns} reruns from stepping"
    )
    assert reruns_at_load == CLASS_SIZE  # one run per page load
    assert stepping_reruns == 0
