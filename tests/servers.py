"""Servers the tests start as child processes (Streamlit, JupyterLab, marimo): a free port, waiting until one
answers, and stopping it for good."""

import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

START_LIMIT_S = 90


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_answering(
    proc: subprocess.Popen, url: str, log_path: Path, name: str, ok: Callable[[bytes], bool] = lambda _: True
) -> None:
    """Poll `url` until it answers (and `ok` accepts the body); the test fails with the log's tail if the process
    exits first or START_LIMIT_S pass."""
    deadline = time.monotonic() + START_LIMIT_S
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{name} exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
        try:
            if ok(urllib.request.urlopen(url, timeout=2).read()):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"{name} did not answer in {START_LIMIT_S} s:\n{log_path.read_text()[-3000:]}")
        time.sleep(0.5)


def stop(proc: subprocess.Popen) -> None:
    """Politely, then by SIGKILL if it has not ended in 20 s."""
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=20)
