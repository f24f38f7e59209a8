"""Light beside heavy, for real: top-size links with distinct seeds (three; MPVIZ_FAIR_HEAVY=10 for the figure of ten)
and ten small uncached links at once on one `streamlit run app.py`. The small runs have a lane of their own
(mpviz/app/serving/results.py, mpviz.app.serving.workers.light_pool), so each must finish while heavy runs are still
queued; every run must succeed. Latencies, the heavy runs' throughput and PSS (server and workers) are printed, not
asserted: figures, not limits.
"""

import asyncio
import os
import time

import pytest

from mpviz.app.websocket_session import open_page, percentile
from mpviz.app.websocket_session import run as run_sessions
from tests.conftest import running_server
from tests.test_memory import _pss_mb, sampled_pss

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("serial")]  # see conftest: never beside other servers
HEAVY = "seq=512&dim=512&heads=16&dtype=bf16&seed={seed}"  # the largest allowed run
SMALL = "seq=8&dim=16&heads=2&dtype=bf16&seed={seed}"  # small, and nobody computed it yet
LINKS = 10  # small uncached links
# top-size links: three keep the heavy lane queued for the whole of the small ones (the behaviour asserted); the
# issue's figure of ten (MPVIZ_FAIR_HEAVY=10) waits ~10 top-size runs one after another, minutes a CI run need not pay
HEAVY_LINKS = int(os.environ.get("MPVIZ_FAIR_HEAVY", "3"))
TTL_S = 3
TOTAL_TIMEOUT_S = 1800


async def _both(url: str) -> tuple[list, list, list[float]]:
    started = time.perf_counter()
    heavy = [asyncio.create_task(open_page(url, HEAVY.format(seed=100 + k))) for k in range(HEAVY_LINKS)]
    small = [asyncio.create_task(open_page(url, SMALL.format(seed=200 + k))) for k in range(LINKS)]
    small_runs = await asyncio.gather(*small)
    heavy_left = sum(not t.done() for t in heavy)
    heavy_done_at: list[float] = []
    for task in asyncio.as_completed(heavy):
        await task
        heavy_done_at.append(time.perf_counter() - started)
    return [t.result() for t in heavy], small_runs, [heavy_left, *heavy_done_at]


def test_small_links_finish_while_top_size_links_queue(tmp_path, printout):
    with running_server(tmp_path / "server.log", "--server.disconnectedSessionTTL", str(TTL_S)) as (url, proc):
        run_sessions(open_page(url, SMALL.format(seed=1)))  # the server and both lanes' workers are up
        with sampled_pss(proc.pid) as samples:
            heavy, small, (heavy_left, *heavy_done_at) = run_sessions(asyncio.wait_for(_both(url), TOTAL_TIMEOUT_S))
        start = samples[0]
        time.sleep(TTL_S + 5)
        after = _pss_mb(proc.pid)
        log = (tmp_path / "server.log").read_text()[-3000:]
    small_s = [r.latency_s for r in small]
    span = heavy_done_at[-1]
    n = HEAVY_LINKS
    printout(
        f"fair lanes: {n} top-size links (T=512 d=512 H=16, distinct seeds) and {LINKS} small uncached links at "
        f"once: small p50 {percentile(small_s, 50):.2f} s, p95 {percentile(small_s, 95):.2f} s, max {max(small_s):.2f} "
        f"s ({heavy_left} heavy runs still unfinished when the last small one was done); heavy: all {n} done in "
        f"{span:.0f} s = {n / span * 60:.2f} runs/min (first {heavy_done_at[0]:.0f} s); PSS of server and workers "
        f"{start:.0f} MB before, peak {max(samples):.0f} MB, {after:.0f} MB after ({os.cpu_count()} cores, shared)"
    )
    assert all(r.ok and len(r.components) == 1 for r in heavy + small), log
    assert heavy_left > 0, "the small links finished while heavy runs were still queued or running"
