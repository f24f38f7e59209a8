"""Value statistics of one tensor, measured against the ranges of the low-precision formats.

Every threshold comes from `torch.finfo` at run time: a value overflows format F when round-to-nearest-even
would carry it past F's max (|x| ≥ max + ulp(max)/2), and flushes to zero when |x| ≤ smallest_subnormal/2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

# Formats every floating tensor is checked against ("what if this were stored in …").
RANGE_FORMATS: tuple[torch.dtype, ...] = (torch.float16, torch.bfloat16, torch.float8_e4m3fn)


@dataclass(frozen=True)
class FormatRange:
    """Range facts of one dtype, read from torch.finfo."""

    dtype: str
    max: float
    smallest_normal: float
    smallest_subnormal: float
    overflow_at: float  # |x| at or above this rounds past max
    underflow_at: float  # 0 < |x| at or below this rounds to zero

    @classmethod
    def of(cls, dtype: torch.dtype) -> FormatRange:
        fi = torch.finfo(dtype)
        ulp_max = 2.0 ** math.floor(math.log2(fi.max)) * fi.eps  # spacing of the top binade
        sub = fi.smallest_normal * fi.eps
        return cls(dtype_name(dtype), fi.max, fi.smallest_normal, sub, fi.max + ulp_max / 2, sub / 2)


def dtype_name(dtype: torch.dtype) -> str:
    """torch's dtype name without the 'torch.' prefix: torch.bfloat16 → 'bfloat16'."""
    return str(dtype).removeprefix("torch.")


@dataclass(frozen=True)
class TensorStats:
    """Summary of a floating tensor's values in its own dtype. NaN/inf are counted, not folded into min/max."""

    numel: int
    min: float
    max: float
    abs_max: float
    mean: float
    std: float
    nan: int
    posinf: int
    neginf: int
    zero: int
    subnormal: int  # 0 < |x| < smallest normal of the tensor's own dtype
    overflow_frac: dict[str, float]  # per format: share of elements, finite here, that would round to ±inf/saturate
    underflow_frac: dict[str, float]  # per format name: share of elements, non-zero here, that would become 0
    log2_hist: tuple[tuple[int, int], ...]  # (floor(log2|x|), count) for finite non-zero x, ascending

    @property
    def nonfinite(self) -> int:
        return self.nan + self.posinf + self.neginf


def tensor_stats(t: torch.Tensor) -> TensorStats:
    """Measure `t` (any floating dtype, any device) on `t`'s device.

    Counts and thresholds run in float32 (exact for fp32/bf16/fp16/fp8 values, and every threshold used here is
    a float32 number) or float64 for float64 tensors; mean and std accumulate in float64.
    """
    own = torch.finfo(t.dtype)
    work = torch.float64 if t.dtype == torch.float64 else torch.float32
    x = t.detach().reshape(-1).to(work)
    n = x.numel()
    count = torch.count_nonzero  # much cheaper than bool.sum() on large tensors
    nan, posinf, neginf = int(count(torch.isnan(x))), int(count(x == math.inf)), int(count(x == -math.inf))
    finite = x if nan + posinf + neginf == 0 else x[torch.isfinite(x)]  # no copy in the common case
    a = finite.abs()
    zero = int(count(a == 0))
    if finite.numel():
        mn, mx = (v.item() for v in torch.aminmax(finite))
        amax = a.max().item()
        mean = finite.mean(dtype=torch.float64).item()
        std = finite.to(torch.float64).std(unbiased=False).item() if finite.numel() > 1 else 0.0
    else:
        mn = mx = amax = mean = std = math.nan
    over, under = {}, {}
    for dt in RANGE_FORMATS:
        r = FormatRange.of(dt)
        over[r.dtype] = int(count(a >= r.overflow_at)) / max(n, 1)  # finite values only: inf is already inf
        under[r.dtype] = (int(count(a <= r.underflow_at)) - zero) / max(n, 1)  # non-zero here, zero there
    hist: tuple[tuple[int, int], ...] = ()
    if finite.numel() > zero:
        exps = torch.frexp(a).exponent[a > 0].to(torch.int64) - 1  # |x| = m·2^e, m in [0.5, 1): floor(log2|x|) = e-1
        lo = int(exps.min())
        counts = torch.bincount(exps - lo)
        hist = tuple((lo + i, int(c)) for i, c in enumerate(counts.tolist()) if c)
    return TensorStats(
        numel=n,
        min=mn,
        max=mx,
        abs_max=amax,
        mean=mean,
        std=std,
        nan=nan,
        posinf=posinf,
        neginf=neginf,
        zero=zero,
        subnormal=int(count(a < own.smallest_normal)) - zero,
        overflow_frac=over,
        underflow_frac=under,
        log2_hist=hist,
    )


def sample_values(t: torch.Tensor, max_side: int, max_mats: int) -> np.ndarray:
    """A bounded view of `t` for heatmaps and the element picker, as float32 (float64 stays float64).

    ≥2-D tensors → (m, r, c): the first `max_mats` matrices over the last two dims, cropped to max_side².
    0/1-D tensors → (1, 1, c) with the first max_side² elements. Values are exact (fp16/bf16 ⊂ fp32).
    """
    x = t.detach()
    if x.dim() >= 2:
        x = x.reshape(-1, x.shape[-2], x.shape[-1])[:max_mats, :max_side, :max_side]
    else:
        x = x.reshape(1, 1, -1)[:, :, : max_side * max_side]
    keep = torch.float64 if x.dtype == torch.float64 else torch.float32
    return x.to(device="cpu", dtype=keep).numpy().copy()
