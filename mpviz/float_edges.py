"""The edges of a float format, measured from torch: where exp overflows and flushes to zero, the spacing of the
format at a magnitude, and the rounding bin of a value (every real that is stored as the same value).

Nothing here is a table or a formula of the IEEE layout: each edge is found by bisection over bit patterns with
real torch calls (`torch.exp`, torch's own cast), so it is whatever this torch does, double rounding included.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import torch

from mpviz.formats import RoundingBin
from mpviz.stats import dtype_name

_INT_VIEW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}  # bit patterns by itemsize


# ── where exp stops being finite and non-zero ─────────────────────────────────────────────────────────────
def _from_bits(bits: int, dtype: torch.dtype) -> float:
    """The value of `dtype` whose bit pattern is the non-negative integer `bits`."""
    return torch.tensor([bits], dtype=_INT_VIEW[dtype.itemsize]).view(dtype).item()


def _first_bits(dtype: torch.dtype, hits) -> int:
    """Smallest magnitude bit pattern b in (0, inf] with hits(b), by bisection (hits is monotone in b)."""
    lo = 0  # bit pattern of +0.0
    hi = torch.tensor([math.inf], dtype=dtype).view(_INT_VIEW[dtype.itemsize]).item()
    assert not hits(lo) and hits(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if hits(mid) else (mid, hi)
    return hi


@dataclass(frozen=True)
class ExpThresholds:
    """Where `torch.exp` in one dtype stops giving a finite, non-zero result (measured, not computed)."""

    dtype: str
    max: float  # torch.finfo(dtype).max
    log_max: float  # ln(max) in float64: the textbook threshold, for comparison
    overflow_from: float  # smallest x of the dtype with exp(x) = inf
    largest_finite_input: float  # the dtype's value just below overflow_from
    underflow_from: float  # largest x of the dtype with exp(x) = 0 (every smaller x too)
    smallest_nonzero_input: float  # the dtype's value just above underflow_from


def exp_thresholds(dtype: torch.dtype) -> ExpThresholds:
    """Bisect the dtype's bit patterns with real `torch.exp` calls (exp is monotone: bisection is exact)."""

    def exp_of(bits: int, sign: float) -> float:
        return torch.exp(torch.tensor([sign * _from_bits(bits, dtype)], dtype=dtype)).item()

    over = _first_bits(dtype, lambda b: math.isinf(exp_of(b, 1.0)))
    under = _first_bits(dtype, lambda b: exp_of(b, -1.0) == 0.0)
    fi = torch.finfo(dtype)
    return ExpThresholds(
        dtype=dtype_name(dtype),
        max=fi.max,
        log_max=math.log(fi.max),
        overflow_from=_from_bits(over, dtype),
        largest_finite_input=_from_bits(over - 1, dtype),
        underflow_from=-_from_bits(under, dtype),
        smallest_nonzero_input=-_from_bits(under - 1, dtype),
    )


def spacing(dtype: torch.dtype, x: float) -> float:
    """Gap between |x| stored in `dtype` and the next larger value of `dtype` (its ulp there).

    Two logits closer than this at that magnitude can round to the same stored value. At the format's largest
    finite value, where there is no next value, the gap below is returned.
    """
    v = torch.tensor([abs(x)], dtype=torch.float64).to(dtype)
    bits = v.view(_INT_VIEW[dtype.itemsize])
    up = (bits + 1).view(dtype).to(torch.float64).item()
    here = v.to(torch.float64).item()
    if not math.isfinite(up) or not math.isfinite(here):  # at max (or saturated): step down instead
        here = min(here, torch.finfo(dtype).max)
        down = torch.tensor([here], dtype=torch.float64).to(dtype).view(bits.dtype) - 1
        return here - down.view(dtype).to(torch.float64).item()
    return up - here


# ── rounding bins ───────────────────────────────────────────────────────────────────────────────────────────
def _ordered(x: float) -> int:
    """float64 → an integer that orders like the value (−0.0 and +0.0 next to each other)."""
    (bits,) = struct.unpack("<q", struct.pack("<d", x))
    return bits if bits >= 0 else -(bits & 0x7FFF_FFFF_FFFF_FFFF) - 1


def _from_ordered(i: int) -> float:
    bits = i if i >= 0 else (-(i + 1)) | -0x8000_0000_0000_0000
    return struct.unpack("<d", struct.pack("<q", bits))[0]


def _stored(x: float, dtype: torch.dtype) -> float:
    """What torch's cast stores for the float64 value x, read back as float64."""
    return torch.tensor([x], dtype=torch.float64).to(dtype).to(torch.float64).item()


def _neighbour(value: float, dtype: torch.dtype, step: int) -> float:
    """The next value of `dtype` after the stored `value` towards +inf (step 1) or −inf (step −1), as float64.

    Past the last finite value, or where the next bit pattern is a NaN (formats without inf), it is ±inf.
    """
    if value == 0:
        tiny = torch.tensor([1], dtype=_INT_VIEW[dtype.itemsize]).view(dtype).to(torch.float64).item()
        return math.copysign(tiny, step)
    if math.isinf(value) and (value > 0) == (step > 0):
        return value
    bits = torch.tensor([value], dtype=torch.float64).to(dtype).view(_INT_VIEW[dtype.itemsize])
    away_from_zero = (value > 0) == (step > 0)  # one more in the bit pattern is one step further from zero
    after = (bits + (1 if away_from_zero else -1)).view(dtype).to(torch.float64).item()
    return math.copysign(math.inf, step) if math.isnan(after) else after


def torch_cast_bin(x: float, dtype: torch.dtype) -> RoundingBin:
    """The bin of float64 values that torch's cast stores as the same `dtype` value as `x` (bisected: exact).

    Every float64 in [lo, hi] is stored as `stored` by the cast, nothing outside is; where the edges fall is what
    the cast does, measured (it rounds twice, via float32, so an edge can sit off the exact midpoint). A bin that
    runs to ±inf is one the cast saturates into (or the bin of inf itself).
    """
    if not math.isfinite(x):
        raise ValueError(f"torch_cast_bin needs a finite value, not {x!r}")
    s = _stored(x, dtype)

    def edge(outside: float) -> float:
        """The value nearest `outside` (a neighbour of s, stored as itself) that is still stored as s."""
        if _stored(outside, dtype) == s:  # the cast saturates: the bin runs on to ±inf
            return outside
        a, b = _ordered(outside), _ordered(x)  # a: not stored as s; b: stored as s; the cast is monotone
        while abs(b - a) > 1:
            mid = (a + b) // 2
            a, b = (a, mid) if _stored(_from_ordered(mid), dtype) == s else (mid, b)
        return _from_ordered(b)

    return RoundingBin(dtype_name(dtype), s, edge(_neighbour(s, dtype, -1)), edge(_neighbour(s, dtype, 1)))
