"""Claims about what a number format can hold: ranges, tiny and huge values, close scores, exp's limits.

Everything is read from the formats themselves (`mpviz.formats`: ml_dtypes/torch finfo and exact rounding) or
from real `torch.exp` calls. Numbers a tutorial quotes are kept as it writes them (`Quoted`) and matched against
every format's range fields, so a page can say which field a quoted number really is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import torch

from mpviz.claims.verdicts import Checked, Part, judged
from mpviz.formats import Encoding, FormatSpec, RoundingBin, encode, resolve_format, rounding_bin
from mpviz.model import parse_autocast_dtype
from mpviz.softmax import CloseLogits, ExpThresholds, close_logits, exp_thresholds
from mpviz.stats import FormatRange

SIXTEEN_BIT = ("float16", "bfloat16")


# ── quoted numbers ──────────────────────────────────────────────────────────────────────────────────────────
QUOTE_FORMATS = ("float32", "bfloat16", "float16")
QUOTE_FIELDS = ("max", "smallest_normal", "smallest_subnormal", "eps")


@dataclass(frozen=True)
class QuotedMatch:
    format: str
    field: str  # one of QUOTE_FIELDS
    value: float  # the field's exact value


@dataclass(frozen=True)
class Quoted:
    """A number as a tutorial writes it, and every format field that rounds to it at the digits it shows."""

    text: str  # "1.4e-45"
    value: float
    digits: int  # significant digits written
    matches: tuple[QuotedMatch, ...]


def identify_quoted(text: str) -> Quoted:
    """Which (format, field) of QUOTE_FORMATS × QUOTE_FIELDS a quoted number is, at its written precision."""
    digits = len(Decimal(text).normalize().as_tuple().digits)
    value = float(text)
    matches = []
    for name in QUOTE_FORMATS:
        spec = resolve_format(name)
        for field in QUOTE_FIELDS:
            exact = getattr(spec, field)
            if float(f"{exact:.{digits - 1}e}") == value:
                matches.append(QuotedMatch(name, field, exact))
    return Quoted(text, value, digits, tuple(matches))


# ── the range (claim 4) ─────────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class RangeEvidence:
    bfloat16: FormatSpec
    float32: FormatSpec
    float16: FormatSpec  # for contrast
    same_max: bool
    same_smallest_normal: bool
    same_smallest_subnormal: bool
    max_ratio: float  # bf16 max / float32 max
    subnormal_ratio: float  # bf16 smallest subnormal / float32 smallest subnormal
    quoted: tuple[Quoted, ...]  # the range's ends as the tutorial writes them (low, high)


BF16_RANGE_QUOTED = ("1.4e-45", "3.4e38")  # "±1.4e-45 ~ ±3.4e38", quoted for bf16


def check_bf16_range() -> Checked:
    """Claim: bf16's dynamic range is exactly float32's. Parts: same max, same smallest normal, same smallest
    subnormal."""
    bf, f32, f16 = (resolve_format(n) for n in ("bfloat16", "float32", "float16"))
    same = {f: getattr(bf, f) == getattr(f32, f) for f in ("max", "smallest_normal", "smallest_subnormal")}
    evidence = RangeEvidence(
        bf,
        f32,
        f16,
        same["max"],
        same["smallest_normal"],
        same["smallest_subnormal"],
        bf.max / f32.max,
        bf.smallest_subnormal / f32.smallest_subnormal,
        tuple(identify_quoted(q) for q in BF16_RANGE_QUOTED),
    )
    headline = {
        "bf16_max": bf.max,
        "fp32_max": f32.max,
        "bf16_smallest_normal": bf.smallest_normal,
        "bf16_smallest_subnormal": bf.smallest_subnormal,
        "fp32_smallest_subnormal": f32.smallest_subnormal,
    }
    return judged(4, [Part(f"same_{f}", ok) for f, ok in same.items()], evidence, headline)


# ── values stored in a 16-bit format (claims 5, 11, 21) ─────────────────────────────────────────────────────
@dataclass(frozen=True)
class FormatStorage:
    format: FormatSpec
    stored: tuple[Encoding, ...]  # each value of the claim stored in `format` (round to nearest even)
    zero_at_or_below: float  # a non-zero |x| at or below this rounds to 0 in `format`


@dataclass(frozen=True)
class StorageEvidence:
    values: tuple[float, ...]  # the values the claim is about
    claimed: FormatStorage  # in the format the claim is about
    contrast: FormatStorage  # the same values in the other 16-bit format
    quoted: tuple[Quoted, ...] = ()  # numbers the tutorial states about the format


@dataclass(frozen=True)
class BigValueEvidence(StorageEvidence):
    """Claim 21's values (a big loss, the tutorial's example): a type of its own, so that its view is picked by it."""


def _storage(values: tuple[float, ...], fmt: str) -> FormatStorage:
    spec = resolve_format(fmt)
    zero = FormatRange.of(parse_autocast_dtype(fmt)).underflow_at
    return FormatStorage(spec, tuple(encode(v, spec) for v in values), zero)


def _storage_evidence(
    values: tuple[float, ...], fmt: str, quoted: tuple[str, ...] = (), kind: type[StorageEvidence] = StorageEvidence
) -> StorageEvidence:
    other = next(f for f in SIXTEEN_BIT if f != fmt)
    return kind(values, _storage(values, fmt), _storage(values, other), tuple(map(identify_quoted, quoted)))


def _stored_headline(ev: StorageEvidence) -> dict[str, object]:
    name = ev.claimed.format.name
    headline: dict[str, object] = {f"{name}({v:g})": e.value for v, e in zip(ev.values, ev.claimed.stored, strict=True)}
    headline[f"{name}_zero_at_or_below"] = ev.claimed.zero_at_or_below
    return headline


FP16_TINY_VALUES = (1e-7,)  # the seed's own gradient, below the smallest value it gives fp16
FP16_SMALLEST_QUOTED = "6.1e-5"  # "fp16_min = 6.1e-5", as the tutorial writes it
BF16_TINY_VALUES = (1e-7, 1e-8)  # the gradients a tutorial says bf16 holds easily


def check_fp16_tiny_gradients() -> Checked:
    """Claim: in fp16 values below ~6.1e-5, such as a 1e-7 gradient, become zero. A part per value the seed names
    (1e-7 only): it really is stored as 0."""
    ev = _storage_evidence(FP16_TINY_VALUES, "float16", (FP16_SMALLEST_QUOTED,))
    parts = [
        Part("becomes_zero", e.underflow, subject=f"{v:g}") for v, e in zip(ev.values, ev.claimed.stored, strict=True)
    ]
    return judged(5, parts, ev, _stored_headline(ev))


def check_bf16_tiny_gradients() -> Checked:
    """Claim: bf16 keeps tiny gradients (1e-7, 1e-8) non-zero. A part per value: stored as non-zero."""
    ev = _storage_evidence(BF16_TINY_VALUES, "bfloat16")
    parts = [
        Part("stays_nonzero", not e.underflow, subject=f"{v:g}")
        for v, e in zip(ev.values, ev.claimed.stored, strict=True)
    ]
    return judged(11, parts, ev, _stored_headline(ev))


BIG_VALUE, BF16_EXAMPLE, BF16_EXAMPLE_CLAIMED = 70000.0, 1.23456789, 1.234375  # the tutorial's loss and example


def check_bf16_holds_70000() -> Checked:
    """Claim: a loss of 70000 overflows fp16 to inf but bf16 represents it normally (and stores 1.23456789 as
    1.234375). Parts: fp16 gives inf; bf16 gives a finite normal value; bf16 stores the example as stated. The
    tutorial says "represented normally", not "exactly": the value bf16 stores (70144) is shown, not judged."""
    ev = _storage_evidence((BIG_VALUE, BF16_EXAMPLE), "bfloat16", kind=BigValueEvidence)
    big, example = ev.claimed.stored
    parts = [
        Part("fp16_overflows", ev.contrast.stored[0].cls == "inf"),
        Part("bf16_finite", big.cls == "normal"),
        Part("bf16_example_as_stated", example.value == BF16_EXAMPLE_CLAIMED),
    ]
    headline = _stored_headline(ev) | {f"float16({BIG_VALUE:g})": ev.contrast.stored[0].value}
    return judged(21, parts, ev, headline)


# ── two close scores (claims 6, 22) ─────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class BinEnds:
    """Whether each end of a rounding bin is stored as the bin's value (closed) or rounds away (open). An end is a
    tie between two neighbours; round-to-nearest-even sends it to the neighbour whose last mantissa bit is 0."""

    lo_in: bool
    hi_in: bool


def bin_ends(b: RoundingBin) -> BinEnds:
    """Store each end of `b` in its format and see whether it lands on `b.stored`."""
    return BinEnds(encode(b.lo, b.format).value == b.stored, encode(b.hi, b.format).value == b.stored)


@dataclass(frozen=True)
class ScorePair:
    scores: tuple[float, float]
    formats: tuple[CloseLogits, ...]  # float16, bfloat16: stored pair, spacing, softmax of the stored pair
    bins: tuple[tuple[RoundingBin, RoundingBin], ...]  # per format (same order): the bin each score falls in
    ends: tuple[tuple[BinEnds, BinEnds], ...]  # per format (same order): which ends of each bin belong to it

    def on(self, fmt: str) -> CloseLogits:
        return next(c for c in self.formats if c.format == fmt)

    def bins_in(self, fmt: str) -> tuple[RoundingBin, RoundingBin]:
        return next(b for b in self.bins if b[0].format == fmt)

    def ends_in(self, fmt: str) -> tuple[BinEnds, BinEnds]:
        return next(e for b, e in zip(self.bins, self.ends, strict=True) if b[0].format == fmt)


def score_pair(a: float, b: float) -> ScorePair:
    """Two scores stored in fp16 and bf16: they merge exactly when they fall in the same rounding bin."""
    formats = close_logits(a, b, formats=SIXTEEN_BIT)
    bins = tuple((rounding_bin(a, f.format), rounding_bin(b, f.format)) for f in formats)
    ends = tuple((bin_ends(x), bin_ends(y)) for x, y in bins)
    return ScorePair((a, b), formats, bins, ends)


@dataclass(frozen=True)
class CloseScoresEvidence:
    claimed_value: float  # what the tutorial says both scores become
    claimed_value_from: tuple[tuple[str, float], ...]  # (format, score) pairs whose storage is claimed_value
    pair: ScorePair


CLAIMED_PAIR, CLAIMED_VALUE = (10.1, 10.2), 10.125
MERGE_PAIR = (10.0, 10.01)


def check_close_scores() -> Checked:
    """Claim: in fp16 the scores 10.1 and 10.2 may both be stored as 10.125 (and softmax cannot tell them apart).
    Parts: fp16 stores both as 10.125; fp16 merges them at all."""
    pair = score_pair(*CLAIMED_PAIR)
    fp16 = pair.on("float16")
    source = tuple(
        (c.format, s) for c in pair.formats for s, v in zip(pair.scores, c.stored, strict=True) if v == CLAIMED_VALUE
    )
    parts = [Part("stored_as_claimed", fp16.stored == (CLAIMED_VALUE,) * 2), Part("merged", not fp16.distinct)]
    headline = {
        "fp16_stored": fp16.stored,
        "bf16_stored": pair.on("bfloat16").stored,
        "fp16_spacing_at_10": fp16.spacing,
    }
    return judged(6, parts, CloseScoresEvidence(CLAIMED_VALUE, source, pair), headline)


def check_fp16_merges_10_and_10_01() -> Checked:
    """Claim: fp16 cannot tell 10.0 from 10.01 (both quantized to one value). Part: fp16 stores them as one
    value. bf16 is shown for contrast, not judged: the claim names fp16."""
    pair = score_pair(*MERGE_PAIR)
    parts = [Part("merged", not pair.on("float16").distinct)]
    headline = {f"{c.format}_stored": c.stored for c in pair.formats}
    return judged(22, parts, pair, headline)


# ── exp at the ends of the range (claim 20) ─────────────────────────────────────────────────────────────────
EXP_INPUTS = (12.0, -20.0)  # the tutorial's overflow and underflow examples
FP16_MAX_QUOTED = "65504"


@dataclass(frozen=True)
class ExpInFormat:
    format: str
    results: tuple[float, ...]  # torch.exp of each EXP_INPUTS value computed in `format`
    thresholds: ExpThresholds  # measured by bisection over the format's values


@dataclass(frozen=True)
class ExpEvidence:
    inputs: tuple[float, ...]
    exact: tuple[float, ...]  # exp in float64
    formats: tuple[ExpInFormat, ...]  # float16 (the claim's), bfloat16 (contrast)
    quoted_max: Quoted  # fp16's largest value as the tutorial writes it

    def on(self, fmt: str) -> ExpInFormat:
        return next(f for f in self.formats if f.format == fmt)


def check_exp_limits() -> Checked:
    """Claim: in fp16 e^12 overflows to inf and e^-20 underflows to 0. Parts: each, measured with torch.exp in
    float16. bf16 is measured beside it for contrast."""
    formats = []
    for name in SIXTEEN_BIT:
        dtype = getattr(torch, name)
        results = torch.exp(torch.tensor(EXP_INPUTS, dtype=dtype)).to(torch.float64).tolist()
        formats.append(ExpInFormat(name, tuple(results), exp_thresholds(dtype)))
    ev = ExpEvidence(
        EXP_INPUTS, tuple(math.exp(x) for x in EXP_INPUTS), tuple(formats), identify_quoted(FP16_MAX_QUOTED)
    )
    fp16 = ev.on("float16")
    parts = [Part("overflows", math.isinf(fp16.results[0])), Part("underflows", fp16.results[1] == 0.0)]
    headline: dict[str, object] = {f"{f.format}_exp": f.results for f in formats}
    headline |= {f"{f.format}_exp_overflow_from": f.thresholds.overflow_from for f in formats}
    return judged(20, parts, ev, headline)


# ── below fp16's smallest subnormal (claim 37) ──────────────────────────────────────────────────────────────
FP16_SUBNORMAL_QUOTED = "5.96e-8"  # the seed: gradients below the smallest value it can hold (~5.96e-8) become 0
FP16_BELOW_SMALLEST = (4e-8, 2e-8)  # below the quoted minimum: one above half of it, one below


def check_fp16_below_smallest_becomes_zero() -> Checked:
    """Claim: in fp16 a gradient below the smallest value it can represent (~5.96e-8) becomes 0. Parts: the
    quoted number is fp16's smallest (subnormal) value; each value below it is stored as 0."""
    ev = _storage_evidence(FP16_BELOW_SMALLEST, "float16", (FP16_SUBNORMAL_QUOTED,))
    quoted = {(m.format, m.field) for m in ev.quoted[0].matches}
    parts = [Part("quoted_is_smallest", ("float16", "smallest_subnormal") in quoted)]
    parts += [
        Part("becomes_zero", e.underflow, subject=f"{v:g}") for v, e in zip(ev.values, ev.claimed.stored, strict=True)
    ]
    return judged(37, parts, ev, _stored_headline(ev))


# ── "FP16/BF16's range is far smaller than FP32's" (claim 40) ───────────────────────────────────────────────
@dataclass(frozen=True)
class RangeSpan:
    format: FormatSpec
    normal_binades: float  # log2(max / smallest normal): the powers of two its normal numbers span
    all_binades: float  # log2(max / smallest subnormal): subnormals included


@dataclass(frozen=True)
class RangeSpanEvidence:
    spans: tuple[RangeSpan, ...]  # float32, then the claim's float16 and bfloat16
    far_below: float  # "far smaller": fewer than this share of float32's normal binades

    def on(self, fmt: str) -> RangeSpan:
        return next(s for s in self.spans if s.format.name == fmt)


FAR_SMALLER_SHARE = 0.5


def _span(name: str) -> RangeSpan:
    spec = resolve_format(name)
    return RangeSpan(spec, math.log2(spec.max / spec.smallest_normal), math.log2(spec.max / spec.smallest_subnormal))


def check_low_range_far_smaller() -> Checked:
    """Claim: FP16/BF16's numeric range is far smaller than FP32's. A part per format: its normal numbers span
    fewer than FAR_SMALLER_SHARE of float32's binades (powers of two), read from the formats' limits."""
    ev = RangeSpanEvidence(tuple(_span(n) for n in ("float32", *SIXTEEN_BIT)), FAR_SMALLER_SHARE)
    f32 = ev.on("float32").normal_binades
    parts = [Part("far_smaller", ev.on(n).normal_binades < FAR_SMALLER_SHARE * f32, subject=n) for n in SIXTEEN_BIT]
    headline = {f"{s.format.name}_normal_binades": s.normal_binades for s in ev.spans}
    return judged(40, parts, ev, headline)


# ── "1024 levels" and "128 levels" (claim 41) ───────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class BinadeLevels:
    format: FormatSpec
    claimed: int  # the levels the seed gives it (2^mantissa bits as it writes them)
    in_one_to_two: int  # distinct values in [1, 2), counted over every bit pattern of the format
    in_lowest_normal: int  # in [smallest normal, 2 · smallest normal)
    in_top_subnormal: int  # in [smallest normal / 2, smallest normal): subnormals are spaced like the lowest normals


@dataclass(frozen=True)
class LevelsEvidence:
    formats: tuple[BinadeLevels, ...]  # float16, bfloat16

    def on(self, fmt: str) -> BinadeLevels:
        return next(f for f in self.formats if f.format.name == fmt)


CLAIMED_LEVELS = {"float16": 1024, "bfloat16": 128}  # the seed: "2^10 = 1024 levels", "2^7 = 128 levels"


def _levels(name: str) -> BinadeLevels:
    spec = resolve_format(name)
    with np.errstate(invalid="ignore"):  # the NaN patterns: they fall in no binade anyway
        every = np.arange(2**spec.bits, dtype=np.uint16).view(np.dtype(spec.numpy_dtype)).astype(np.float64)

    def count(lo: float, hi: float) -> int:
        return int(np.unique(every[(every >= lo) & (every < hi)]).size)

    tiny = spec.smallest_normal
    return BinadeLevels(spec, CLAIMED_LEVELS[name], count(1.0, 2.0), count(tiny, 2 * tiny), count(tiny / 2, tiny))


def check_levels_per_binade() -> Checked:
    """Claim: fp16's 10 mantissa bits give 2^10 = 1024 levels of precision, bf16's 7 bits 128. A part per
    format: the values it holds in [1, 2) (one binade), counted over all its bit patterns, are the claimed
    number."""
    ev = LevelsEvidence(tuple(_levels(n) for n in SIXTEEN_BIT))
    parts = [Part("levels", f.in_one_to_two == f.claimed, subject=f.format.name) for f in ev.formats]
    headline = {f"{f.format.name}_levels": f.in_one_to_two for f in ev.formats}
    return judged(41, parts, ev, headline)
