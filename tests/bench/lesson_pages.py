"""Benchmark: what a class of 30 costs the server on each lesson page once its results are cached.

    python tests/bench/lesson_pages.py [--pages formats,claims,...] [--sessions 30] [--rounds 2]

Starts one `streamlit run app.py` of this checkout on a free loopback port (MPVIZ_WARM_UP=0: each page is computed by
its own first visit here), opens each page once cold and once warm, then `--sessions` fresh websocket sessions at
once, one page at a time, `--rounds` times. Per page and round it prints one JSON line: the server process's CPU ms
per session (utime + stime; what the class queues for on one GIL), p50 / p95 seconds until each session's run
finished, the bytes and deltas (elements and blocks) one session received, and the first (cold) visit. A follower's
page change is the same full run of the new page for each of 30 followers, so this is also that cost without the
poll. On a shared machine compare trees alternately (run it in each checkout in turn). Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mpviz.app import lessons  # noqa: E402
from mpviz.app.page_timing import _cpu_seconds, _free_port  # noqa: E402
from mpviz.app.websocket_session import open_page, percentile  # noqa: E402


async def _open(base: str, path: str) -> tuple[float, int, int, bool]:
    """One fresh session on /path: (seconds until its run finished, bytes received, deltas, no exception)."""
    run = await open_page(base, "", path=path)
    return run.latency_s, run.received_bytes, run.deltas, not run.exceptions


async def _class(base: str, path: str, n: int) -> list[tuple[float, int, int, bool]]:
    return list(await asyncio.gather(*(_open(base, path) for _ in range(n))))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pages", default=",".join(e.slug for e in lessons.LESSONS))
    p.add_argument("--sessions", type=int, default=30)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    port = _free_port()
    options = ["--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true"]
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", *options, "--browser.gatherUsageStats", "false"],
        cwd=ROOT,
        env={**os.environ, "MPVIZ_WARM_UP": "0"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(480):
            try:
                if urllib.request.urlopen(f"{base}/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)  # the server is still starting
        cold: dict[str, float] = {}
        for r in range(args.rounds):
            for slug in args.pages.split(","):
                path = "" if lessons.lesson(slug).home else slug
                if slug not in cold:
                    cold[slug] = asyncio.run(_open(base, path))[0]  # computes and caches the page's results
                    asyncio.run(_open(base, path))
                cpu0, wall0 = _cpu_seconds(server.pid), time.perf_counter()
                runs = asyncio.run(_class(base, path, args.sessions))
                cpu = _cpu_seconds(server.pid) - cpu0
                latencies = [x[0] for x in runs]
                line = {"page": slug, "round": r, "cold_s": round(cold[slug], 2)}
                line |= {"cpu_ms_per_session": round(cpu * 1e3 / args.sessions, 1)}
                line |= {"p50_s": round(percentile(latencies, 50), 2), "p95_s": round(percentile(latencies, 95), 2)}
                line |= {"wall_s": round(time.perf_counter() - wall0, 2), "kib_per_session": round(runs[0][1] / 1024)}
                line |= {"deltas": runs[0][2], "ok": all(x[3] for x in runs)}
                print(json.dumps(line), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=60)


if __name__ == "__main__":
    main()
