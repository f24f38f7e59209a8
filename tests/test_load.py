"""Load test: a class opens one shared link at once, against a real `streamlit run app.py`, then steps through it;
and a first visitor of a fresh hosted server (`streamlit run serve.py`) finds every lesson and tour stop warmed.

Sessions are small asyncio clients speaking the browser's protocol (tests/protocol.py). First one student opens
the link (the lesson bundle is computed: cold), then a class of 30 fresh sessions opens it at once (warm: every
session gets the cached bundle), then one student alone. Behaviour is asserted; latencies are only printed
(benchmarks measure speed, tests don't). The stepping half needs real browsers: 30 Chromium pages on the same link
each press → ten times, and the server must hear no rerun request for any of it.
"""

import asyncio
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

import pytest

from mpviz.app import warm_up
from mpviz.app.websocket_session import SUCCESS, SessionRun, open_page, percentile
from mpviz.app.websocket_session import run as run_sessions
from tests.browser import APP_IDLE
from tests.conftest import ROOT
from tests.servers import free_port, stop, wait_until_answering
from tests.test_stepper import STATE, RerunCounter

pytestmark = pytest.mark.slow
CLASS_SIZE = 30
LINK = "dtype=bf16"  # the link the teacher shared: the attention lesson's default run
PAGE_TITLE = "Attention, step by step"  # mpviz/locales/en/attention.toml title
TOTAL_TIMEOUT_S = 300
BROWSER_BATCH = 10  # Chromium pages open at once (2 cores: more only queue)
BROWSER_CLASS = 20  # real browsers that step (the websocket test above opens all CLASS_SIZE): two batches show the
# property (no rerun from stepping) as well as three, a minute sooner on the suite's serial path
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
    for batch in range(0, BROWSER_CLASS, BROWSER_BATCH):
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
    assert reruns_at_load == BROWSER_CLASS  # one run per page load
    assert stepping_reruns == 0


WARM_LIMIT_S = 1800  # the whole warm-up (tens of views, a top-size tour stop among them) on a loaded 2-core machine


def _first_visits(base_url: str) -> list[tuple[warm_up.Visit, float, bool]]:
    """Each lesson at its defaults and each tour stop, opened by a fresh session, one after another."""
    found = []
    for visit in (v for v in warm_up.visits() if v.locale == warm_up.LOCALES[0]):
        t0 = time.perf_counter()
        ok = run_sessions(asyncio.wait_for(warm_up.open_view(base_url, visit), 600))
        found.append((visit, time.perf_counter() - t0, ok))
    return found


@pytest.mark.xdist_group("serial")  # see conftest: never beside other servers (its warm-up keeps the cores busy)
def test_a_first_visit_to_a_fresh_hosted_server_finds_its_views_warm(tmp_path, printout):
    """`streamlit run serve.py` answers health at once, before its warm-up (mpviz/app/warm_up.py) has finished; once it
    has, every lesson and tour stop opens for a first visitor from warm caches. Latencies are printed: with
    MPVIZ_WARM_UP=0 the same visits measure a fresh server without the warm-up (the figure before it)."""
    warming = os.environ.get("MPVIZ_WARM_UP", "1") != "0"
    port, log_path = free_port(), tmp_path / "serve.log"
    url = f"http://127.0.0.1:{port}"
    args = [
        "run",
        "mpviz/app/serve.py",
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--server.port",
        str(port),
    ]
    began = time.perf_counter()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", *args], cwd=ROOT, stdout=log, stderr=log)
    try:
        wait_until_answering(
            proc, f"{url}/_stcore/health", log_path, "mpviz/app/serve.py", ok=lambda body: body == b"ok"
        )
        health_s = time.perf_counter() - began
        t0 = time.perf_counter()
        assert urllib.request.urlopen(f"{url}/_stcore/health", timeout=5).read() == b"ok"
        again_s = time.perf_counter() - t0
        assert "warm-up: done" not in log_path.read_text(), "health did not wait for the warm-up"
        deadline = time.monotonic() + WARM_LIMIT_S
        while warming and "warm-up: done" not in log_path.read_text():  # the server's log is the only word of it
            assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()[-3000:]
            time.sleep(1)
        warmed_s = time.perf_counter() - began
        visits = _first_visits(url)
    finally:
        stop(proc)
    log = log_path.read_text()
    lines = [
        f"first visits to a fresh `streamlit run serve.py` ({'warmed' if warming else 'MPVIZ_WARM_UP=0'}): health "
        f"answered {health_s:.1f} s after start (again: {again_s * 1e3:.0f} ms)"
        + (f", warm-up done {warmed_s:.0f} s after start ({log.count('warm-up: ') - 1} views)" if warming else "")
    ]
    # what each view cost the warm-up, which opened it on a cold server: a first visitor's wait without it
    cold = dict(re.findall(r"warm-up: \d+/\d+ (.+) in ([\d.]+) s", log))
    for v, s, ok in visits:
        was = f"  (cold, in the warm-up: {cold.get(str(v), '?')} s)" if warming else ""
        lines.append(f"  {v!s:<72} {s:6.2f} s{'' if ok else '  FAILED'}{was}")
    worst = max(s for _, s, _ in visits)
    lines.append(f"  slowest first visit {worst:.2f} s ({os.cpu_count()} cores, shared)")
    printout("\n".join(lines))
    assert all(ok for _, _, ok in visits), log[-3000:]
    if warming:
        assert "(0 failed)" in log.split("warm-up: done")[1].split("\n")[0], log[-3000:]  # it warmed every view
