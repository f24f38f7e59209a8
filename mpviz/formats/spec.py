"""Formats as layouts: `FormatSpec` read from ml_dtypes/torch finfo, and what each bit pattern stands for.

Widths, bias, max, smallest normal/subnormal and eps come from `ml_dtypes.finfo` (which wraps `numpy.finfo` for
float64/32/16). Whether a format has inf, NaN, zero and a negative zero is measured by casting inf, NaN, 0 and -0
with numpy/ml_dtypes. Where NaN lives in the bit patterns follows from those flags, and the largest finite pattern
that follows from that is checked against finfo's max when the spec is built. A format no dtype stores (tf32) is
assembled from the two dtypes named in `EMULATED_FROM`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache

import ml_dtypes
import numpy as np
import torch

ROUNDINGS: tuple[str, ...] = ("nearest", "zero", "up", "down")

# (canonical name = the torch / ml_dtypes name, short name, further accepted spellings), in display order.
_NAMES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("float64", "fp64", ("double", "f64")),
    ("float32", "fp32", ("float", "f32")),
    ("tf32", "tf32", ("tensorfloat32",)),
    ("float16", "fp16", ("half", "f16")),
    ("bfloat16", "bf16", ()),
    ("float8_e4m3fn", "e4m3", ("e4m3fn", "fp8_e4m3")),
    ("float8_e5m2", "e5m2", ("fp8_e5m2",)),
    ("float8_e4m3fnuz", "e4m3fnuz", ()),
    ("float8_e5m2fnuz", "e5m2fnuz", ()),
    ("float6_e2m3fn", "e2m3", ("e2m3fn", "fp6_e2m3")),
    ("float6_e3m2fn", "e3m2", ("e3m2fn", "fp6_e3m2")),
    ("float4_e2m1fn", "e2m1", ("e2m1fn", "fp4", "fp4_e2m1")),
    ("float8_e8m0fnu", "e8m0", ("e8m0fnu",)),
)
FORMAT_NAMES: tuple[str, ...] = tuple(n for n, _, _ in _NAMES)
SHORT_NAMES: dict[str, str] = {n: s for n, s, _ in _NAMES}  # canonical → short
ALIASES: dict[str, str] = {a: n for n, s, more in _NAMES for a in (n, s, *more)}  # any spelling → canonical
_NUMPY_DTYPES = {"float64": np.float64, "float32": np.float32, "float16": np.float16}

# A format no dtype stores → (dtype whose exponent field and range it has, dtype whose mantissa width it has).
EMULATED_FROM: dict[str, tuple[str, str]] = {"tf32": ("float32", "float16")}


class FormatInputError(ValueError):
    """A format name, value, bit pattern or rounding mode that mpviz cannot read.

    `reason` is a code views translate ("unknown_format", "not_text", "bad_length", "not_a_number",
    "not_a_pattern", "pattern_too_wide", "unknown_rounding", "draws_out_of_range"); `fields` holds facts about
    the format or limit involved (never the text that was given), to fill the view's sentence. `str()` is an
    English message for the CLI, which may quote the input.
    """

    def __init__(self, reason: str, message: str, **fields: object) -> None:
        self.reason, self.fields = reason, fields
        super().__init__(message)


@dataclass(frozen=True)
class FormatSpec:
    """One floating-point format's layout and range. Build with `resolve_format`."""

    name: str  # canonical: "float16", "float8_e4m3fn", "tf32"
    short: str  # "fp16", "e4m3", "tf32"
    bits: int
    sign_bits: int  # 1, or 0 for the unsigned float8_e8m0fnu
    exponent_bits: int
    mantissa_bits: int  # stored fraction bits (the leading 1 of normals is implicit)
    bias: int
    max: float
    smallest_normal: float
    smallest_subnormal: float  # == smallest_normal when the format has no subnormals
    eps: float  # spacing just above 1.0
    has_inf: bool
    has_nan: bool
    has_zero: bool
    has_negative_zero: bool
    has_subnormals: bool
    special_codes: str  # where NaN/inf live: "ieee" | "top_nan" | "negzero_nan" | "none" (see _special_codes)
    decimal_digits: float  # (mantissa_bits + 1) · log10(2)
    torch_dtype: str | None  # torch's dtype name, None where torch has no such dtype
    numpy_dtype: str | None  # numpy / ml_dtypes dtype name, None for tf32
    emulated: bool  # True for tf32: no dtype stores it; mpviz rounds float32 values to its 10 mantissa bits

    @property
    def emin(self) -> int:
        """log2 of the smallest normal."""
        return math.frexp(self.smallest_normal)[1] - 1

    @property
    def emax(self) -> int:
        """log2 of the largest binade's start (floor(log2(max)))."""
        return math.frexp(self.max)[1] - 1

    @property
    def min(self) -> float:
        """Smallest finite value: -max, or the smallest normal for an unsigned format."""
        return -self.max if self.sign_bits else self.smallest_normal

    @property
    def fields(self) -> tuple[tuple[str, int], ...]:
        """(field name, width) from the most significant bit down; fields of width 0 are left out."""
        out = (("sign", self.sign_bits), ("exponent", self.exponent_bits), ("mantissa", self.mantissa_bits))
        return tuple(f for f in out if f[1])

    @property
    def bit_positions(self) -> dict[str, tuple[int, ...]]:
        """Field name → its bit positions (0 = least significant), most significant first."""
        out, top = {}, self.bits
        for name, width in self.fields:
            out[name] = tuple(range(top - 1, top - 1 - width, -1))
            top -= width
        return out

    def code_from_bits(self, ones: Iterable[int]) -> int:
        """The pattern whose set bits are at `ones` (positions, 0 = least significant)."""
        ones = set(ones)
        if any(not 0 <= p < self.bits for p in ones):
            raise FormatInputError("pattern_too_wide", f"{self.name} has bits 0 … {self.bits - 1}", bits=self.bits)
        return sum(1 << p for p in ones)

    def pattern_text(self, code: int) -> str:
        """A pattern of this format as value text `encode` reads back: "fp16:0x3c00"."""
        return f"{self.short}:0x{code:0{(self.bits + 3) // 4}x}"


# ── building specs ──────────────────────────────────────────────────────────────────────────────────────────
def numpy_dtype(spec: FormatSpec) -> np.dtype | None:
    """numpy / ml_dtypes dtype storing `spec`, None for tf32."""
    if spec.numpy_dtype is None:
        return None
    return np.dtype(_NUMPY_DTYPES.get(spec.numpy_dtype) or getattr(ml_dtypes, spec.numpy_dtype))


def torch_dtype(spec: FormatSpec) -> torch.dtype | None:
    return getattr(torch, spec.torch_dtype) if spec.torch_dtype else None


def _cast_flags(dt) -> dict[str, bool]:
    """Measure inf / NaN / zero / negative-zero support by casting through numpy or ml_dtypes."""
    with np.errstate(all="ignore"):
        got = np.array([math.inf, math.nan, 0.0, -0.0]).astype(dt).astype(np.float64)
    return {
        "has_inf": bool(np.isinf(got[0])),
        "has_nan": bool(np.isnan(got[1])),
        "has_zero": bool(got[2] == 0),
        "has_negative_zero": bool(got[3] == 0 and np.signbit(got[3])),
    }


def _special_codes(sign_bits: int, has_inf: bool, has_nan: bool, has_negative_zero: bool, **_) -> str:
    """Where the specials live, from the measured flags.

    "ieee": the all-ones exponent is inf (mantissa 0) or NaN (mantissa ≠ 0).
    "top_nan": no inf; the single pattern with all non-sign bits set is NaN (float8_e4m3fn, float8_e8m0fnu).
    "negzero_nan": no inf and no -0; the pattern -0 would have is the one NaN (the fnuz formats).
    "none": every pattern is a finite number (float6 / float4).
    """
    if has_inf:
        return "ieee"
    if has_nan:
        return "negzero_nan" if sign_bits and not has_negative_zero else "top_nan"
    return "none"


def _max_magnitude_code(spec_like: FormatSpec) -> int:
    """Largest finite pattern with the sign bit clear."""
    top = (1 << (spec_like.exponent_bits + spec_like.mantissa_bits)) - 1
    skip = {"ieee": 1 << spec_like.mantissa_bits, "top_nan": 1}.get(spec_like.special_codes, 0)
    return top - skip


@cache
def _build(name: str) -> FormatSpec:
    if name in EMULATED_FROM:
        exp_from, mant_from = (_NUMPY_DTYPES[n] for n in EMULATED_FROM[name])
        fe, fm = ml_dtypes.finfo(exp_from), ml_dtypes.finfo(mant_from)
        nexp, nmant, minexp = int(fe.nexp), int(fm.nmant), int(fe.minexp)
        bits = 1 + nexp + nmant
        flags, has_sub = _cast_flags(exp_from), True
        np_name = None
    else:
        dt = _NUMPY_DTYPES.get(name) or getattr(ml_dtypes, name)
        fi = ml_dtypes.finfo(dt)
        nexp, nmant, minexp, bits = int(fi.nexp), int(fi.nmant), int(fi.minexp), int(fi.bits)
        flags = _cast_flags(dt)
        has_sub = float(fi.smallest_subnormal) < float(fi.smallest_normal)
        np_name = name
    sign_bits = bits - nexp - nmant
    bias = 1 - minexp if has_sub else -minexp  # normal pattern e means 2^(e - bias); finfo.minexp is emin
    smallest_normal = math.ldexp(1.0, minexp)
    spec = FormatSpec(
        name=name,
        short=SHORT_NAMES[name],
        bits=bits,
        sign_bits=sign_bits,
        exponent_bits=nexp,
        mantissa_bits=nmant,
        bias=bias,
        max=math.nan,  # filled from the layout just below
        smallest_normal=smallest_normal,
        smallest_subnormal=math.ldexp(1.0, minexp - nmant) if has_sub else smallest_normal,
        eps=math.ldexp(1.0, -nmant),
        **flags,
        has_subnormals=has_sub,
        special_codes=_special_codes(sign_bits, **flags),
        decimal_digits=(nmant + 1) * math.log10(2),
        torch_dtype=name if isinstance(getattr(torch, name, None), torch.dtype) else None,
        numpy_dtype=np_name,
        emulated=name in EMULATED_FROM,
    )
    spec = replace(spec, max=_code_value(spec, _max_magnitude_code(spec)))
    if name not in EMULATED_FROM:  # the layout derived from the flags must reproduce finfo exactly
        derived = (spec.max, spec.smallest_normal, spec.smallest_subnormal, spec.eps)
        told = (float(fi.max), float(fi.smallest_normal), float(fi.smallest_subnormal), float(fi.eps))
        if derived != told:
            raise RuntimeError(f"{name}: layout gives {derived}, ml_dtypes.finfo says {told}")
    return spec


def canonical_format_name(name: str) -> str:
    """The canonical name of a format by any accepted spelling: "fp16", "half", "torch.float16" → "float16".

    Raises FormatInputError ("unknown_format") naming the accepted short names for an unknown one.
    """
    key = str(name).strip().lower().removeprefix("torch.").removeprefix("ml_dtypes.").removeprefix("np.")
    if key not in ALIASES:
        known = ", ".join(SHORT_NAMES.values())
        raise FormatInputError(
            "unknown_format",
            f"unknown number format {str(name)[:40]!r}; use one of: {known} (or torch names)",
            known=known,
        )
    return ALIASES[key]


def resolve_format(fmt: str | FormatSpec) -> FormatSpec:
    """The spec of a format by any accepted name: "fp16", "float16", "torch.float16", "half", "e4m3" …

    Raises FormatInputError ("unknown_format") naming the accepted short names for an unknown one.
    """
    if isinstance(fmt, FormatSpec):
        return fmt
    return _build(canonical_format_name(fmt))


def all_formats() -> tuple[FormatSpec, ...]:
    return tuple(_build(n) for n in FORMAT_NAMES)


# ── bit patterns ────────────────────────────────────────────────────────────────────────────────────────────
def _split(spec: FormatSpec, code: int) -> tuple[int, int, int]:
    """code → (sign, raw exponent, mantissa)."""
    m_bits, e_bits = spec.mantissa_bits, spec.exponent_bits
    sign = (code >> (e_bits + m_bits)) & 1 if spec.sign_bits else 0
    return sign, (code >> m_bits) & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)


def _classify(spec: FormatSpec, sign: int, e: int, m: int) -> str:
    top = (1 << spec.exponent_bits) - 1
    if spec.special_codes == "ieee" and e == top:
        return "inf" if m == 0 else "nan"
    if spec.special_codes == "top_nan" and e == top and m == (1 << spec.mantissa_bits) - 1:
        return "nan"
    if spec.special_codes == "negzero_nan" and sign and e == 0 and m == 0:
        return "nan"
    if e == 0 and spec.has_subnormals:
        return "zero" if m == 0 else "subnormal"
    return "normal"


def _code_value(spec: FormatSpec, code: int) -> float:
    """The value a pattern stands for, exactly, as a float64."""
    sign, e, m = _split(spec, code)
    cls = _classify(spec, sign, e, m)
    if cls == "nan":
        return math.nan
    if cls == "inf":
        mag = math.inf
    elif cls in ("zero", "subnormal"):
        mag = math.ldexp(m, 1 - spec.bias - spec.mantissa_bits)
    else:
        mag = math.ldexp((1 << spec.mantissa_bits) | m, e - spec.bias - spec.mantissa_bits)
    return -mag if sign else mag


def _sign_bit(spec: FormatSpec) -> int:
    return 1 << (spec.exponent_bits + spec.mantissa_bits) if spec.sign_bits else 0


def _ordinal_range(spec: FormatSpec) -> tuple[int, int]:
    """Ordinals number the non-NaN values in increasing order (0 = zero, ±1 = smallest magnitudes …)."""
    top = _max_magnitude_code(spec) + (1 if spec.has_inf else 0)
    return (-top if spec.sign_bits else 0), top


def _ordinal(spec: FormatSpec, code: int) -> int:
    mag = code & (_sign_bit(spec) - 1) if spec.sign_bits else code
    return -mag if code & _sign_bit(spec) else mag


def _code_of_ordinal(spec: FormatSpec, ordinal: int) -> int:
    return (_sign_bit(spec) | -ordinal) if ordinal < 0 else ordinal


def _neighbour(spec: FormatSpec, code: int, step: int) -> float | None:
    lo, hi = _ordinal_range(spec)
    ordinal = _ordinal(spec, code) + step
    if not lo <= ordinal <= hi:
        return None
    value = _code_value(spec, _code_of_ordinal(spec, ordinal))
    return None if math.isnan(value) else value


def _nan_code(spec: FormatSpec, negative: bool) -> int:
    s = _sign_bit(spec) if negative else 0
    if spec.special_codes == "ieee":  # quiet NaN: top exponent, leading mantissa bit set
        return s | (((1 << spec.exponent_bits) - 1) << spec.mantissa_bits) | (1 << (spec.mantissa_bits - 1))
    if spec.special_codes == "top_nan":
        return s | ((1 << (spec.exponent_bits + spec.mantissa_bits)) - 1)
    return _sign_bit(spec)  # negzero_nan


def _parse_pattern(text: str, spec: FormatSpec) -> int:
    """'0x3c00', '0b0011110000000000' or (bare) '0011110000000000' → the pattern as an int."""
    s = text.strip().lower().replace("_", "").replace(" ", "")
    try:
        if s.startswith("0x"):
            code = int(s[2:], 16)
        elif s.startswith("0b"):
            code = int(s[2:], 2)
        elif len(s) == spec.bits and set(s) <= {"0", "1"}:
            code = int(s, 2)
        else:
            raise ValueError
    except ValueError:
        raise FormatInputError(
            "not_a_pattern",
            f"{text[:40]!r} is not a bit pattern of {spec.name}: give {spec.bits} bits as 0/1, or 0x.. / 0b..",
            format=spec.name,
            bits=spec.bits,
        ) from None
    if code >> spec.bits:
        raise FormatInputError(
            "pattern_too_wide",
            f"{text[:40]!r} has {code.bit_length()} bits; {spec.name} has {spec.bits}",
            format=spec.name,
            bits=spec.bits,
            given=code.bit_length(),
        )
    return code
