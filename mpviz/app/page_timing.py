"""What one fresh session's page load costs the server once its results are cached, measured on a real server.

Run as a child process by `python -m mpviz bench` (mpviz itself never imports streamlit): starts `streamlit run
app.py` on a free loopback port, opens the page once to fill the caches, then opens it `runs` times at once and
reads the server process's CPU time before and after. Prints one JSON object: CPU ms per session (what a class of
30 queues for on the one GIL) and the wall time until every session's run finished.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from mpviz.app.launch import app_command, streamlit_env
from mpviz.app.websocket_session import open_page, percentile
from mpviz.app.websocket_session import run as run_sessions


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _class(url: str, query: str, n: int) -> list:
    return list(await asyncio.gather(*(open_page(url, query) for _ in range(n))))


def measure(query: str, runs: int) -> dict:
    port = _free_port()
    server = subprocess.Popen(  # the installed app, as `mpviz app` serves it
        app_command(port, "127.0.0.1", []), env=streamlit_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)
        run_sessions(open_page(url, query))  # computes and caches the results; also the process's first run
        run_sessions(open_page(url, query))
        cpu0, wall0 = _cpu_seconds(server.pid), time.perf_counter()
        sessions = run_sessions(_class(url, query, runs))
        cpu = _cpu_seconds(server.pid) - cpu0
        latencies = [s.latency_s for s in sessions]
        return {
            "query": query,
            "sessions": runs,
            "cpu_ms_per_session": cpu * 1e3 / runs,
            "wall_s": time.perf_counter() - wall0,
            "p50_s": percentile(latencies, 50),
            "p95_s": percentile(latencies, 95),
            "ok": all(s.ok for s in sessions),
        }
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1], int(sys.argv[2]))))
