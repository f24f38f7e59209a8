"""Shared fixtures: empty Streamlit caches per test, and a real `streamlit run app.py` for server-level tests."""

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import streamlit as st

from mpviz.admission import default_cache
from tests.browser import CHROMIUM_ARGS, require_chromium

ROOT = Path(__file__).resolve().parents[1]
SERVER_ARGS = ("run", "app.py", "--server.address", "127.0.0.1", "--server.headless", "true")  # loopback only


@pytest.fixture(autouse=True)
def _clear_streamlit_caches():
    st.cache_data.clear()
    st.cache_resource.clear()
    default_cache().clear()
    yield


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def running_server(log_path: Path, *extra_args: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """`streamlit run app.py` on a free loopback port until the block ends; yields (base URL, process)."""
    port = _free_port()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", *SERVER_ARGS, "--server.port", str(port), *extra_args],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit did not become healthy in 90 s:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)


@pytest.fixture(scope="module")
def streamlit_server(tmp_path_factory):
    """A fresh `streamlit run app.py` per test module on a free loopback port; yields (base URL, log path)."""
    log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
    with running_server(log_path) as (url, _):
        yield url, log_path


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the whole run (contexts keep tests apart); see tests/browser.py."""
    exe = require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        yield b
        b.close()
