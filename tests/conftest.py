"""Shared fixtures: empty Streamlit caches per test, a real `streamlit run app.py` for server-level tests, and how
the run is split over two processes (pytest-xdist) without letting server tests overlap or hiding their figures."""

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import streamlit as st
from hypothesis.configuration import set_hypothesis_home_dir

from mpviz.app.serving import admission, workers
from mpviz.app.serving.admission import BoundedCache, default_cache
from tests.browser import CHROMIUM_ARGS, require_chromium
from tests.servers import free_port, stop, wait_until_answering

ROOT = Path(__file__).resolve().parents[1]
SERVER_ARGS = ("run", "app.py", "--server.address", "127.0.0.1", "--server.headless", "true")  # loopback only
SERIAL = "serial"  # the xdist group whose tests run on one worker, one after another (see below)
SERIAL_FIXTURES = {"streamlit_server", "fresh_streamlit_server"}
# A served app computes in worker processes (mpviz.app.serving.workers), as hosted; page tests in this process compute
# in-process, so that their monkeypatches reach the engine.
workers.set_default_pool(None)
# Hypothesis keeps what it stores (the examples it found, replayed first next time; its character tables) in the
# user's cache instead of a .hypothesis/ folder of the checkout: no test writes into the repository.
USER_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")  # as mpviz.policy.cache_dir
set_hypothesis_home_dir(str(USER_CACHE / "mpviz-tests" / "hypothesis"))


def pytest_addoption(parser, pluginmanager):
    """pyproject's addopts name xdist's options: with `-p no:xdist` accept (and ignore) them, run in this process."""
    if not pluginmanager.has_plugin("xdist"):
        group = parser.getgroup("xdist (disabled by -p no:xdist)")
        group.addoption("--numprocesses", "--maxprocesses", "--dist", help="ignored without xdist")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups into node ids
def pytest_collection_modifyitems(items):
    """Tests that use the app's server (the shared one, or a module's fresh one), or start servers of their own
    to measure load, memory or a proxy (marked `xdist_group("serial")` in their module), all run on one worker,
    one after another: Streamlit servers never overlap and one shared server serves them. The rest spread over both
    workers, browser tests that need no Streamlit server among them (a lesson file from file://, JupyterLab and
    marimo, the JS float bits): each worker starts its own Chromium if it runs one. (No test writes into the
    repository: throw-away files go to tmp_path.)"""
    for item in items:
        if SERIAL_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.xdist_group(SERIAL))


@pytest.fixture
def printout(request) -> Callable[[str], None]:
    """`printout(text)` prints a test's measured figures and repeats them in the run's summary (xdist's workers
    swallow prints, and without -s so does pytest): benchmarks' numbers are read, not asserted."""

    def record(text: str) -> None:
        print(text)
        request.node.user_properties.append(("printout", text))

    return record


def pytest_terminal_summary(terminalreporter):
    seen = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            for key, text in getattr(report, "user_properties", ()):
                if key == "printout":
                    seen.setdefault((report.nodeid, text), None)
    if seen:
        terminalreporter.write_sep("-", "measured figures (printed, not asserted)")
        for nodeid, text in seen:
            terminalreporter.write_line(nodeid.split("@")[0])  # xdist's loadgroup appends "@group" to node ids
            terminalreporter.write_line(text.strip("\n"))


_shared_results: BoundedCache | None = None


@pytest.fixture(autouse=True)
def _clear_streamlit_caches(request):
    """Every test starts with empty caches, except those marked `shared_results`: they only render pages over the
    real engine's results (no monkeypatch), so they share one cache of their own, as a class on one link does (the
    first computes, the rest read), and no other test's patched results can reach it."""
    global _shared_results
    st.cache_data.clear()
    st.cache_resource.clear()
    default_cache().clear()
    if not request.node.get_closest_marker("shared_results"):
        yield
        return
    if _shared_results is None:
        _shared_results = BoundedCache(admission.DEFAULT_CACHE_MB * 2**20)
    own, admission._cache = admission._cache, _shared_results  # default_cache()'s process-wide instance
    try:
        yield
    finally:
        admission._cache = own


def child_pids(pid: int) -> list[int]:
    """The processes `pid`'s threads started (a server's workers), read from /proc; a thread or process that
    ends while we read is skipped."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


@contextmanager
def running_server(log_path: Path, *extra_args: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """`streamlit run app.py` on a free loopback port until the block ends; yields (base URL, process)."""
    port = free_port()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", *SERVER_ARGS, "--server.port", str(port), *extra_args],
            cwd=ROOT,
            env={**os.environ, "MPVIZ_WARM_UP": "0"},  # tests measure their own first visits (tests/test_load.py)
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(proc, f"{url}/_stcore/health", log_path, "streamlit", ok=lambda body: body == b"ok")
        yield url, proc
    finally:
        stop(proc)


def _serve(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
    with running_server(log_path) as (url, _):
        yield url, log_path


@pytest.fixture(scope="session")
def streamlit_server(tmp_path_factory):
    """One `streamlit run app.py` for the whole run on a free loopback port; yields (base URL, log path).

    Shared like a hosted copy is: tests open their own sessions and rooms, and read only what they caused.
    """
    yield from _serve(tmp_path_factory)


@pytest.fixture(scope="module")
def fresh_streamlit_server(tmp_path_factory):
    """A `streamlit run app.py` of this module's own, for tests whose figures need a server nobody warmed up."""
    yield from _serve(tmp_path_factory)


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the whole run (contexts keep tests apart); see tests/browser.py."""
    exe = require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        yield b
        b.close()
