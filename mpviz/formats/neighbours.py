"""Around a value: the representable values of a window with their rounding bins (`number_line`), the window
itself (`zoom_window`), and stochastic rounding between the two neighbours (`stochastic_rounding`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from mpviz.formats.encoding import _parse, _to_float, encode
from mpviz.formats.spec import (
    FormatInputError,
    FormatSpec,
    _code_of_ordinal,
    _code_value,
    _ordinal,
    _ordinal_range,
    resolve_format,
)


@dataclass(frozen=True)
class NumberLine:
    """Representable values of one format in a window, with their round-to-nearest bins."""

    format: str
    lo: float
    hi: float
    count: int  # representable values in [lo, hi]
    values: np.ndarray  # (n,) ascending; all of them (plus one neighbour each side) when complete
    edges: np.ndarray | None  # (n+1,) rounding-bin edges: a value x rounds to values[i] iff edges[i] < x < edges[i+1]
    complete: bool  # False: too many to draw, `values` is an evenly thinned subset and edges is None


def number_line(fmt: str | FormatSpec, lo: float, hi: float, max_points: int = 400) -> NumberLine:
    """The values of `fmt` between lo and hi (clipped to the finite range), at most `max_points` of them.

    A window wholly outside the finite range gives count 0 and no values."""
    spec = resolve_format(fmt)
    lo, hi = max(float(lo), spec.min), min(float(hi), spec.max)
    if not lo <= hi:  # the window lies outside this format's finite range
        return NumberLine(spec.name, float(lo), float(hi), 0, np.zeros(0), np.zeros(0), True)
    o_lo = _ordinal(spec, encode(lo, spec, "up").code)
    o_hi = _ordinal(spec, encode(hi, spec, "down").code)
    first, last = _ordinal_range(spec)
    if spec.has_inf:  # ±inf are not on a number line
        first, last = first + (1 if spec.sign_bits else 0), last - 1
    count = max(o_hi - o_lo + 1, 0)
    if count <= max_points:
        ordinals = range(max(o_lo - 1, first), min(o_hi + 1, last) + 1)
        values = np.array([_code_value(spec, _code_of_ordinal(spec, o)) for o in ordinals])
        mids = (values[:-1] + values[1:]) / 2
        edges = np.concatenate(
            [[values[0]] if ordinals[0] == first else [], mids, [values[-1]] if ordinals[-1] == last else []]
        )
        if ordinals[0] != first:
            values = values[1:]
        if ordinals[-1] != last:
            values = values[:-1]
        return NumberLine(spec.name, lo, hi, count, values, edges, True)
    step = -(-count // max_points)
    values = np.array([_code_value(spec, _code_of_ordinal(spec, o)) for o in range(o_lo, o_hi + 1, step)])
    return NumberLine(spec.name, lo, hi, count, values, None, False)


ZOOM_LOG2 = 3  # each zoom level of `zoom_window` is 2^ZOOM_LOG2 times wider
ZOOM_STEP = 1 << ZOOM_LOG2


def _pow2(e: int) -> float:
    """2^e as a float; inf where float64 has no such power (the caller clips it to the format's range)."""
    try:
        return math.ldexp(1.0, e)
    except OverflowError:
        return math.inf


def zoom_window(value: float, zoom: int, limit: float) -> tuple[float, float]:
    """A number-line window around `value`: zoom 0 is the binade holding |value| ([-½, ½] around 0), each
    level ZOOM_STEP× wider and centred on value, clipped to ±limit. inf centres on ±limit, nan on 0.

    Any zoom ≥ 0 works (a window wider than the range is the range); a negative one is a FormatInputError."""
    if isinstance(zoom, bool) or not isinstance(zoom, int) or zoom < 0:
        raise FormatInputError("zoom_out_of_range", f"zoom must be a whole number ≥ 0, not {str(zoom)[:20]}")
    value = 0.0 if math.isnan(value) else max(-limit, min(limit, value))
    if value == 0:
        half = min(_pow2(ZOOM_LOG2 * zoom - 1), limit)
        return -half, half
    e = math.frexp(abs(value))[1] - 1
    if zoom == 0:
        lo, hi = _pow2(e), min(_pow2(e + 1), limit)  # 2·2^e may be past float64's range: clipped
        return (lo, hi) if value > 0 else (-hi, -lo)
    half = _pow2(ZOOM_LOG2 * zoom + e - 1)
    return max(value - half, -limit), min(value + half, limit)


# ── stochastic rounding ─────────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class StochasticRounding:
    """Rounding x up with probability (x - down)/(up - down): unbiased on average, unlike nearest."""

    format: str
    input: str
    down: float  # representable neighbours bracketing x (equal when x is representable)
    up: float
    p_up: float  # probability of rounding up (nan when x is beyond the finite range or not a number)
    expected: float  # down + p_up·(up - down): x itself, up to float64 rounding of this sum
    nearest: float  # round-to-nearest-even result
    nearest_bias: float  # nearest - x (exact difference, as float)
    draws: int
    sample_mean: float  # mean of `draws` seeded random roundings (measured)


def stochastic_rounding(
    value: float | str, fmt: str | FormatSpec, draws: int = 10_000, seed: int = 0
) -> StochasticRounding:
    """Expected and sampled value of stochastically rounding `value` into `fmt` (draws ≤ 1,000,000)."""
    spec = resolve_format(fmt)
    if not 1 <= draws <= 1_000_000:
        raise FormatInputError("draws_out_of_range", f"draws must be 1 … 1,000,000, not {draws}", limit=1_000_000)
    down, up = encode(value, spec, "down"), encode(value, spec, "up")
    near = encode(value, spec, "nearest")
    inp = _parse(value, spec)
    x = inp.value
    if inp.pattern is not None:  # a bit pattern stands for its own format's value
        decoded = _code_value(*inp.pattern)
        x = Fraction(decoded) if math.isfinite(decoded) else None
    if x is None or not (math.isfinite(down.value) and math.isfinite(up.value)):
        p = expected = mean = bias = math.nan
    else:
        lo, hi = Fraction(down.value), Fraction(up.value)
        p_frac = Fraction(0) if hi == lo else (x - lo) / (hi - lo)
        p, expected = float(p_frac), float(lo + p_frac * (hi - lo))
        picks = np.random.default_rng(seed).random(draws) < p
        mean = down.value + float(picks.mean()) * (up.value - down.value)  # no overflowing sum near max
        bias = _to_float(Fraction(near.value) - x) if math.isfinite(near.value) else math.nan
    return StochasticRounding(spec.name, near.input, down.value, up.value, p, expected, near.value, bias, draws, mean)


# ── rounding bins ───────────────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class RoundingBin:
    """The stretch of reals stored as one value: two inputs merge in a format exactly when they share a bin.

    `format` names the format (or torch dtype) and `stored` the value every input in [lo, hi] becomes. Which end
    belongs to the bin (a tie rounds to the even neighbour) follows from the rounding that made it: `rounding_bin`
    below is exact round-to-nearest (what a float32 → low-precision conversion does);
    `mpviz.float_edges.torch_cast_bin` measures what torch's cast of a float64 does (it rounds twice, via float32).
    """

    format: str
    stored: float
    lo: float
    hi: float

    @property
    def width(self) -> float:
        return self.hi - self.lo


def rounding_bin(x: float, fmt: str) -> RoundingBin:
    """The exact round-to-nearest bin `x` falls in when stored in `fmt` (a finite x inside the format's range)."""
    e = encode(x, fmt)
    lo = (e.next_down + e.value) / 2 if e.next_down is not None else e.value
    hi = (e.value + e.next_up) / 2 if e.next_up is not None else e.value
    return RoundingBin(e.format, e.value, lo, hi)
