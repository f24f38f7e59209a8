"""The speed claim, timed here: float32 against bf16 and fp16 autocast, a matmul and a training step.

A CPU timing cannot settle a claim about GPU tensor cores; the evidence says what it can and cannot tell
(`SPEED_SCOPE` codes) and the verdict is `inconclusive` whenever the rounds' spread is too wide to decide.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass

import torch

from mpviz.claims.devices import measured_device
from mpviz.claims.verdicts import Checked
from mpviz.isolation import autocast_shared
from mpviz.model import AttentionConfig, build
from mpviz.timing import Spread, ratios, time_interleaved


@dataclass(frozen=True)
class SpeedRow:
    dtype: str  # "float32" | "bfloat16" | "float16"
    matmul_ms: float  # median of one n×n matmul, both operands stored in `dtype`
    step_ms: float  # median forward+backward of the block under autocast(`dtype`) (float32: autocast off)
    matmul_speedup: float  # median over rounds of float32's time / this time in the same round
    step_speedup: float
    matmul: Spread  # milliseconds, every round
    step: Spread
    matmul_speedup_spread: Spread  # per-round ratios
    step_speedup_spread: Spread


# What a timing on one device can say about the claim, which is about GPUs (tensor cores). Codes for views.
SPEED_SCOPE: dict[str, dict[str, tuple[str, ...]]] = {
    "cpu": {
        "tells": ("speed_on_this_cpu", "cast_overhead_on_this_cpu", "low_precision_kernels_on_this_cpu"),
        "cannot_tell": ("gpu_tensor_core_speedup", "gpu_memory_bandwidth_saving", "speed_at_model_scale"),
    },
    "cuda": {
        "tells": ("speed_on_this_gpu", "cast_overhead_on_this_gpu"),
        "cannot_tell": ("speed_on_other_gpus", "speed_at_model_scale"),
    },
}


@dataclass(frozen=True)
class SpeedEvidence:
    device: str
    threads: int  # torch.get_num_threads() (CPU)
    matmul_n: int
    block: AttentionConfig
    repeat: int  # interleaved timed rounds per number (after one warm-up run of each)
    rows: tuple[SpeedRow, ...]  # float32 first
    cpu_capability: str  # torch.backends.cpu.get_cpu_capability(): the vector ISA torch's CPU kernels use here
    claim_device: str  # the device the claim is about: "cuda" (GPU tensor cores)
    tells: tuple[str, ...]  # SPEED_SCOPE codes: what this measurement can tell about the claim
    cannot_tell: tuple[str, ...]
    max_relative_spread: float  # a step speedup whose IQR / median is wider than this gives no verdict
    verdict_at_q1: str  # the verdict rule applied to every low dtype's lower-quartile step speedup
    verdict_at_q3: str  # … and to the upper quartiles; they differ when the spread straddles a threshold
    too_noisy: bool  # some step speedup's relative spread exceeds max_relative_spread


SPEED_MATMUL_N = 256
SPEED_BLOCK = AttentionConfig(seq_len=256, d_model=256, n_heads=4)  # fp16 on CPU allows no bigger (model.LIMITS)
SPEED_REPEAT = 7  # interleaved rounds: enough for quartiles, short enough to run on demand
MAX_RELATIVE_SPREAD = 0.5  # IQR above half the median: the rounds disagree too much to judge
SPEED_DTYPES = (("float32", None), ("bfloat16", torch.bfloat16), ("float16", torch.float16))


def measure_speed(repeat: int = SPEED_REPEAT) -> SpeedEvidence:
    """Time one matmul and one training step of `SPEED_BLOCK` in float32, bf16 and fp16 on `measured_device()`.

    All six candidates run in each of `repeat` rounds (order rotated); speedups are per-round ratios to the same
    round's float32, so a slow spell of the machine mostly cancels. Raises ConfigError for a bad `repeat`.
    """
    device = measured_device()
    g = torch.Generator().manual_seed(0)
    a, b = (torch.randn(SPEED_MATMUL_N, SPEED_MATMUL_N, generator=g) for _ in range(2))  # (n, n) each
    model, x, targets = build(SPEED_BLOCK, device=device)
    candidates: dict[str, Callable[[], object]] = {}
    for name, low in SPEED_DTYPES:
        da, db = (t.to(device, low or torch.float32) for t in (a, b))

        def step(low: torch.dtype | None = low) -> None:
            model.zero_grad(set_to_none=True)
            with autocast_shared(), torch.autocast(device, dtype=low) if low else nullcontext():
                loss = model(x, targets)
            loss.backward()

        candidates[f"{name}/matmul"] = lambda da=da, db=db: da @ db
        candidates[f"{name}/step"] = step
    sync = torch.cuda.synchronize if device == "cuda" else None
    t = time_interleaved(candidates, repeat, sync)
    rows = []
    for name, _ in SPEED_DTYPES:
        mm, st = t[f"{name}/matmul"], t[f"{name}/step"]
        mm_up, st_up = ratios(t["float32/matmul"], mm), ratios(t["float32/step"], st)
        rows.append(SpeedRow(name, mm.median, st.median, mm_up.median, st_up.median, mm, st, mm_up, st_up))
    at_q1, at_q3, noisy = quartile_verdicts(rows)
    return SpeedEvidence(
        device=device,
        threads=torch.get_num_threads(),
        matmul_n=SPEED_MATMUL_N,
        block=SPEED_BLOCK,
        repeat=repeat,
        rows=tuple(rows),
        cpu_capability=torch.backends.cpu.get_cpu_capability(),
        claim_device="cuda",
        tells=SPEED_SCOPE[device]["tells"],
        cannot_tell=SPEED_SCOPE[device]["cannot_tell"],
        max_relative_spread=MAX_RELATIVE_SPREAD,
        verdict_at_q1=at_q1,
        verdict_at_q3=at_q3,
        too_noisy=noisy,
    )


def quartile_verdicts(rows: list[SpeedRow] | tuple[SpeedRow, ...]) -> tuple[str, str, bool]:
    """(verdict at the low dtypes' lower quartiles, at their upper quartiles, whether any spread is too wide)."""
    low = rows[1:]  # float32 first
    at_q1 = _speed_verdict([r.step_speedup_spread.q1 for r in low])
    at_q3 = _speed_verdict([r.step_speedup_spread.q3 for r in low])
    return at_q1, at_q3, any(r.step_speedup_spread.relative_spread > MAX_RELATIVE_SPREAD for r in low)


def _speed_verdict(speedups: list[float]) -> str:
    """holds: every low dtype at least 2× faster; does_not_hold: none faster at all; partly_holds otherwise."""
    return "holds" if min(speedups) >= 2 else ("does_not_hold" if max(speedups) < 1 else "partly_holds")


def speed_verdict(ev: SpeedEvidence) -> str:
    """The verdict of the medians; inconclusive ("cannot be decided here") when the timing ran on another device
    than the claim's (a CPU timing says nothing about GPU tensor cores, whatever its numbers), when the rounds are
    too noisy, or when the quartiles disagree."""
    if ev.device != ev.claim_device or ev.too_noisy or ev.verdict_at_q1 != ev.verdict_at_q3:
        return "inconclusive"
    return _speed_verdict([r.step_speedup for r in ev.rows[1:]])


def check_speedup() -> Checked:
    """Claim: mixed precision trains 2–3× faster than float32 (on a GPU's tensor cores). On a GPU, judged on the
    training step's per-round speedup: holds if every low-precision dtype is at least 2× faster, does not hold if
    none is faster at all, partly otherwise. Inconclusive on a CPU and whenever the spread is too wide to say
    (see `speed_verdict`); the CPU timing is still shown."""
    ev = measure_speed()
    headline: dict[str, object] = {"device": ev.device}
    for r in ev.rows[1:]:
        headline |= {
            f"{r.dtype}_step_speedup": r.step_speedup,
            f"{r.dtype}_step_speedup_iqr": (r.step_speedup_spread.q1, r.step_speedup_spread.q3),
            f"{r.dtype}_matmul_speedup": r.matmul_speedup,
        }
    return Checked(9, speed_verdict(ev), {}, ev, headline)
