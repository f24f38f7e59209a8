"""What tracing costs: the same forward+backward untraced, traced, and traced with the float64 reference.

Medians over `repeat` runs in one process, after one warm-up run of each (kernel registration, allocator).
"""

from __future__ import annotations

import contextlib
import statistics
import time
from dataclasses import dataclass

import torch

from mpviz.attention import trace_attention
from mpviz.model import AttentionConfig, build, parse_autocast_dtype
from mpviz.trace import trace

BENCH_CONFIGS = {
    "default (T=16, d=64, H=4)": (AttentionConfig(), "bf16"),
    "large (T=256, d=256, H=8)": (AttentionConfig(seq_len=256, d_model=256, n_heads=8), "bf16"),
}


@dataclass(frozen=True)
class BenchRow:
    name: str
    dtype: str
    untraced_ms: float
    traced_ms: float  # trace with stats and samples
    full_ms: float  # trace_attention: trace + float64 reference + errors (what the page waits for)
    ratio: float  # traced / untraced
    events: int


def _median_ms(fn, repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def _step(cfg: AttentionConfig, dtype: torch.dtype | None, traced: bool) -> int:
    model, x, targets = build(cfg)
    ac = torch.autocast("cpu", dtype=dtype) if dtype is not None else contextlib.nullcontext()
    region = trace(model) if traced else contextlib.nullcontext()
    with region as t:
        with ac:
            loss = model(x, targets)
        loss.backward()
    return len(t.events) if traced else 0


def run_bench(repeat: int = 5, configs: dict | None = None) -> list[BenchRow]:
    rows = []
    for name, (cfg, dt) in (configs or BENCH_CONFIGS).items():
        dtype = parse_autocast_dtype(dt)
        untraced = _median_ms(lambda cfg=cfg, dtype=dtype: _step(cfg, dtype, False), repeat)
        traced = _median_ms(lambda cfg=cfg, dtype=dtype: _step(cfg, dtype, True), repeat)
        full = _median_ms(lambda cfg=cfg, dt=dt: trace_attention(cfg, "cpu", dt), repeat)
        events = _step(cfg, dtype, True)
        rows.append(
            BenchRow(name, str(dtype).removeprefix("torch."), untraced, traced, full, traced / untraced, events)
        )
    return rows
