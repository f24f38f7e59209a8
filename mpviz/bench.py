"""What the attention lesson costs, per config: the forward+backward untraced, traced without and with value
statistics, the full analysis (trace + float64 reference + errors), and the whole lesson (that, the counterpart
device's run and the bundle), with the bundle's size; plus a class of 30 opening the cached lesson on a real server.

Each config's variants are timed in interleaved rounds (`mpviz.timing`), `repeat` rounds after one warm-up run of
each (kernel registration, allocator); `repeat` is bounded by `mpviz.timing.REPEAT_LIMITS`. The class is measured
by a child process (mpviz/app/page_timing.py, with its own `streamlit run`): mpviz never imports streamlit itself.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import subprocess
import sys
from dataclasses import dataclass

import torch

from mpviz.attention import trace_attention
from mpviz.bundle import lesson_bundle
from mpviz.model import AttentionConfig, build, parse_autocast_dtype
from mpviz.stats import dtype_name
from mpviz.timing import check_repeat, time_interleaved
from mpviz.trace import Trace, trace

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
    full_ms: float  # trace_attention: trace + float64 reference + errors
    lesson_ms: float  # lesson_bundle: that, the counterpart device's trace, and building the bundle
    ratio: float  # traced / untraced
    events: int
    stats_us_per_output: float  # (trace with stats − trace without) / floating outputs
    bundle_bytes: int  # the lesson bundle's JSON
    relative_spread: float  # the largest IQR / median of the timings: how far to trust them


@dataclass(frozen=True)
class PageRun:
    """A class opening one link on a real `streamlit run app.py`, its results already cached
    (mpviz/app/page_timing.py)."""

    query: str
    sessions: int  # fresh sessions opened at once
    cpu_ms_per_session: float  # server CPU time per page load: what each student adds to the one GIL's queue
    wall_s: float
    p50_s: float  # until a session's run finished
    p95_s: float
    ok: bool


PAGE_QUERY = "dtype=bf16"  # the attention lesson's default link (the home page)
CLASS_SIZE = 30


def _step(cfg: AttentionConfig, dtype: torch.dtype | None, traced: bool, stats: bool = True) -> Trace | None:
    model, x, targets = build(cfg)
    ac = torch.autocast("cpu", dtype=dtype) if dtype is not None else contextlib.nullcontext()
    region = trace(model, keep_stats=stats) if traced else contextlib.nullcontext()
    with region as t:
        with ac:
            loss = model(x, targets)
        loss.backward()
    return t if traced else None


def run_bench(repeat: int = DEFAULT_REPEAT, configs: dict | None = None) -> list[BenchRow]:
    """One row per config. Raises ConfigError for a `repeat` outside REPEAT_LIMITS (before any work)."""
    repeat = check_repeat(repeat)
    rows = []
    for name, (cfg, dt) in (configs or BENCH_CONFIGS).items():
        dtype = parse_autocast_dtype(dt)
        timings = time_interleaved(
            {
                "untraced": lambda cfg=cfg, dtype=dtype: _step(cfg, dtype, False),
                "no_stats": lambda cfg=cfg, dtype=dtype: _step(cfg, dtype, True, stats=False),
                "traced": lambda cfg=cfg, dtype=dtype: _step(cfg, dtype, True),
                "full": lambda cfg=cfg, dt=dt: trace_attention(cfg, "cpu", dt),
                "lesson": lambda cfg=cfg, dt=dt: lesson_bundle(cfg, "cpu", dt),
            },
            repeat,
        )
        med = {k: t.median for k, t in timings.items()}
        t = _step(cfg, dtype, True)
        outputs = sum(o.stats is not None for e in t.events for o in e.outputs)
        rows.append(
            BenchRow(
                name=name,
                dtype=dtype_name(dtype or torch.float32),
                untraced_ms=med["untraced"],
                traced_ms=med["traced"],
                full_ms=med["full"],
                lesson_ms=med["lesson"],
                ratio=med["traced"] / med["untraced"],
                events=len(t.events),
                stats_us_per_output=(med["traced"] - med["no_stats"]) * 1e3 / max(outputs, 1),
                bundle_bytes=len(lesson_bundle(cfg, "cpu", dt).to_json()),
                relative_spread=max(t.relative_spread for t in timings.values()),
            )
        )
    return rows


def page_run(sessions: int = CLASS_SIZE) -> PageRun | None:
    """`sessions` fresh sessions opening the attention lesson at once on a real server (None without streamlit)."""
    if importlib.util.find_spec("streamlit") is None or importlib.util.find_spec("websockets") is None:
        return None
    args = [sys.executable, "-m", "mpviz.app.page_timing", PAGE_QUERY, str(sessions)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"timing the page failed: {proc.stderr.strip()[-300:]}")
    return PageRun(**json.loads(proc.stdout.strip().splitlines()[-1]))
