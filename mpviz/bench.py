"""What tracing costs: the same forward+backward untraced, traced, and traced with the float64 reference.

Each config's three variants are timed in interleaved rounds (`mpviz.timing`), `repeat` rounds after one
warm-up run of each (kernel registration, allocator); `repeat` is bounded by `mpviz.timing.REPEAT_LIMITS`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch

from mpviz.attention import trace_attention
from mpviz.model import AttentionConfig, build, parse_autocast_dtype
from mpviz.stats import dtype_name
from mpviz.timing import check_repeat, time_interleaved
from mpviz.trace import trace

BENCH_CONFIGS = {
    "default (T=16, d=64, H=4)": (AttentionConfig(), "bf16"),
    "large (T=256, d=256, H=8)": (AttentionConfig(seq_len=256, d_model=256, n_heads=8), "bf16"),
}
DEFAULT_REPEAT = 5


@dataclass(frozen=True)
class BenchRow:
    name: str
    dtype: str  # autocast dtype, "float32" when autocast is off
    untraced_ms: float  # medians over the rounds
    traced_ms: float  # trace with stats and samples
    full_ms: float  # trace_attention: trace + float64 reference + errors (what the page waits for)
    ratio: float  # traced / untraced
    events: int
    relative_spread: float  # the largest IQR / median of the three timings: how far to trust them


def _step(cfg: AttentionConfig, dtype: torch.dtype | None, traced: bool) -> int:
    model, x, targets = build(cfg)
    ac = torch.autocast("cpu", dtype=dtype) if dtype is not None else contextlib.nullcontext()
    region = trace(model) if traced else contextlib.nullcontext()
    with region as t:
        with ac:
            loss = model(x, targets)
        loss.backward()
    return len(t.events) if traced else 0


def run_bench(repeat: int = DEFAULT_REPEAT, configs: dict | None = None) -> list[BenchRow]:
    """One row per config. Raises ConfigError for a `repeat` outside REPEAT_LIMITS (before any work)."""
    repeat = check_repeat(repeat)
    rows = []
    for name, (cfg, dt) in (configs or BENCH_CONFIGS).items():
        dtype = parse_autocast_dtype(dt)
        timings = time_interleaved(
            {
                "untraced": lambda cfg=cfg, dtype=dtype: _step(cfg, dtype, False),
                "traced": lambda cfg=cfg, dtype=dtype: _step(cfg, dtype, True),
                "full": lambda cfg=cfg, dt=dt: trace_attention(cfg, "cpu", dt),
            },
            repeat,
        )
        untraced, traced, full = (timings[k].median for k in ("untraced", "traced", "full"))
        spread = max(t.relative_spread for t in timings.values())
        events = _step(cfg, dtype, True)
        rows.append(
            BenchRow(
                name, dtype_name(dtype or torch.float32), untraced, traced, full, traced / untraced, events, spread
            )
        )
    return rows
