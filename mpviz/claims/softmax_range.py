"""Claims about softmax's numerics in a 16-bit format: does torch.softmax subtract the max, can its output overflow?

Real `torch.softmax` calls on real tensors (CPU, and the GPU when there is one), next to the textbook formula
exp(x) / sum(exp(x)) computed in the same dtype.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from mpviz.claims.devices import measured_device
from mpviz.claims.verdicts import Checked, Part, judged

# Scores whose exp overflows float32 (and float16): only a softmax that subtracts the max gives finite weights.
LARGE_SCORES = (1000.0, 1001.0)
SHIFT = 1000.0  # softmax(x) = softmax(x - SHIFT) exactly when the kernel subtracts the max itself
FP16_EXTREMES = (-65504.0, 0.0, 65504.0)  # fp16's largest-magnitude scores: the hardest input for its output


@dataclass(frozen=True)
class SoftmaxInDtype:
    dtype: str
    scores: tuple[float, ...]
    framework: tuple[float, ...]  # torch.softmax in `dtype`
    textbook: tuple[float, ...]  # exp(x) / exp(x).sum() in `dtype`
    shifted: tuple[float, ...]  # torch.softmax of scores - SHIFT (what subtracting the max would hand it)
    exact: tuple[float, ...]  # the exact weights (float64, max subtracted)


@dataclass(frozen=True)
class SoftmaxEvidence:
    device: str  # where torch.softmax ran
    runs: tuple[SoftmaxInDtype, ...]  # float32, float16

    def on(self, dtype: str) -> SoftmaxInDtype:
        return next(r for r in self.runs if r.dtype == dtype)


def _softmax_in(dtype: str, scores: tuple[float, ...], device: str) -> SoftmaxInDtype:
    d = getattr(torch, dtype)
    x = torch.tensor(scores, dtype=d, device=device)
    ex = torch.exp(x)
    exact = torch.softmax(torch.tensor(scores, dtype=torch.float64), dim=-1)
    return SoftmaxInDtype(
        dtype,
        scores,
        tuple(torch.softmax(x, dim=-1).double().tolist()),
        tuple((ex / ex.sum()).double().tolist()),
        tuple(torch.softmax(x - SHIFT, dim=-1).double().tolist()),
        tuple(exact.tolist()),
    )


def check_softmax_subtracts_max() -> Checked:
    """Claim: frameworks' softmax subtracts the max before exp (the safe softmax). A part per dtype (float32,
    float16): torch.softmax of scores whose exp overflows is finite and equals the softmax of the shifted scores,
    while the textbook formula in that dtype is not finite."""
    device = measured_device()
    runs = tuple(_softmax_in(d, LARGE_SCORES, device) for d in ("float32", "float16"))
    parts = []
    for r in runs:
        finite = all(math.isfinite(v) for v in r.framework) and r.framework == r.shifted
        parts.append(Part("stays_finite", finite and not all(map(math.isfinite, r.textbook)), subject=r.dtype))
    headline: dict[str, object] = {f"{r.dtype}_softmax": r.framework for r in runs}
    headline |= {f"{r.dtype}_textbook": r.textbook for r in runs}
    return judged(32, parts, SoftmaxEvidence(device, runs), headline)


@dataclass(frozen=True)
class OutputRangeEvidence:
    device: str
    run: SoftmaxInDtype  # fp16 softmax of FP16_EXTREMES
    fp16_max: float  # torch.finfo(float16).max
    largest_output: float  # the largest weight torch.softmax returned


def check_softmax_output_overflows_fp16() -> Checked:
    """Claim: softmax's output can be very large and overflow fp16 to inf. Part: fp16 softmax of fp16's most
    extreme scores returns a value above fp16's largest (inf). Its weights lie in [0, 1] whatever the input."""
    device = measured_device()
    run = _softmax_in("float16", FP16_EXTREMES, device)
    largest = max(run.framework)
    ev = OutputRangeEvidence(device, run, float(torch.finfo(torch.float16).max), largest)
    parts = [Part("overflows", math.isinf(largest) or largest > ev.fp16_max)]
    return judged(33, parts, ev, {"largest_output": largest, "fp16_max": ev.fp16_max})


# ── when every exp underflows (claim 42) ────────────────────────────────────────────────────────────────────
ALL_UNDERFLOW_SCORES = (-20.0, -21.0, -22.0)  # the seed's -20, and two below it: every exp is 0 in fp16
ONE_FAR_BELOW = (0.0, -20.0)  # after subtracting the max: exp(0) = 1, exp(-20) still underflows


@dataclass(frozen=True)
class UnderflowEvidence:
    device: str
    all_low: SoftmaxInDtype  # fp16, ALL_UNDERFLOW_SCORES
    exps: tuple[float, ...]  # torch.exp of those scores in fp16
    shifted_exps: tuple[float, ...]  # torch.exp(x - max) in fp16 for ONE_FAR_BELOW
    one_far_below: SoftmaxInDtype  # fp16 softmax of ONE_FAR_BELOW


def check_all_underflow_gives_nan() -> Checked:
    """Claim: if every exp underflows, the naive softmax computes 0/0 = NaN; subtracting the max keeps the
    denominator at 1 or more, though a score far below the max can still underflow to 0. Parts, in fp16 with
    torch: the textbook formula gives NaN for scores whose exps all underflow; torch.softmax of them is finite;
    exp(x − max) of a score 20 below the max is exactly 0."""
    device = measured_device()
    low = _softmax_in("float16", ALL_UNDERFLOW_SCORES, device)
    x = torch.tensor(ONE_FAR_BELOW, dtype=torch.float16, device=device)
    ev = UnderflowEvidence(
        device,
        low,
        tuple(torch.exp(torch.tensor(ALL_UNDERFLOW_SCORES, dtype=torch.float16, device=device)).double().tolist()),
        tuple(torch.exp(x - x.max()).double().tolist()),
        _softmax_in("float16", ONE_FAR_BELOW, device),
    )
    parts = [
        Part("naive_nan", all(v == 0 for v in ev.exps) and all(math.isnan(v) for v in low.textbook)),
        Part("torch_finite", all(math.isfinite(v) for v in low.framework)),
        Part("shifted_can_underflow", 0.0 in ev.shifted_exps),
    ]
    headline = {"naive": low.textbook, "softmax": low.framework, "shifted_exps": ev.shifted_exps}
    return judged(42, parts, ev, headline)
