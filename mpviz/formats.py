"""Number formats down to their bits: `FormatSpec` read from ml_dtypes/torch finfo, exact `encode` / `decode`.

How it knows what it knows (nothing here is a hand-written table of facts):
- Widths, bias, max, smallest normal/subnormal and eps come from `ml_dtypes.finfo` (which wraps `numpy.finfo`
  for float64/32/16). Whether a format has inf, NaN, zero and a negative zero is measured by casting inf, NaN,
  0 and -0 with numpy/ml_dtypes. Where NaN lives in the bit patterns follows from those flags, and the largest
  finite pattern that follows from that is checked against finfo's max when the spec is built.
- tf32 has no storage dtype anywhere: it is float32's exponent (finfo(float32)) with float16's mantissa width
  (finfo(float16)). mpviz *emulates* its rounding with the same exact rounding as every other format.
- `encode` is exact: the input (a float, or decimal text such as "0.1" taken as the exact decimal) becomes a
  Fraction and is rounded with integer arithmetic; the result is then described from its bit pattern. Tests
  compare it pattern by pattern with torch's and ml_dtypes' casts. Where those libraries disagree with each
  other (saturation, NaN patterns, finfo fields, float64→float32→low-precision double rounding),
  `library_casts`, `library_disagreements` and `finfo_checks` measure both sides.

Rounding modes: "nearest" (ties to even significand), "zero", "up" (toward +inf), "down" (toward -inf).
Overflow (the rounded magnitude lies beyond max) gives inf where the format has it, else NaN where it has it
(as ml_dtypes does), else ±max; directed rounding toward zero gives ±max ("saturated") as IEEE 754 does.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from fractions import Fraction
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

_MAX_TEXT = 200  # characters of value text accepted
_HUGE_EXP10 = 400  # |decimal exponent| beyond which every format (float64 included) saturates or flushes


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


@dataclass(frozen=True)
class Encoding:
    """A value as stored in one format: its bits, fields, class, rounding error and neighbours."""

    format: str  # canonical format name
    input: str  # the input as given (text), or repr() of a float input
    rounding: str
    value: float  # the stored value (exact: every format here is a subset of float64)
    bits: str  # '0'/'1', most significant first, `FormatSpec.bits` characters
    sign: int  # 0 or 1 (always 0 in an unsigned format)
    exponent_bits: str
    exponent_raw: int
    exponent_unbiased: int | None  # None for zero, inf, nan; subnormals report emin (their real scale)
    mantissa: str
    cls: str  # "zero" | "subnormal" | "normal" | "inf" | "nan"
    ulp: float  # spacing of the binade holding the value (nan for inf/nan)
    abs_error: float  # |stored - input|, exact input (0 when both are the same infinity; nan when undefined)
    rel_error: float  # abs_error / |input|
    next_up: float | None  # next representable value toward +inf; None when there is none
    next_down: float | None  # next representable value toward -inf; None when there is none
    overflow: bool  # the input (finite or infinite) lies beyond the finite range after rounding
    underflow: bool  # a non-zero input became zero
    saturated: bool  # the input lay beyond the range's end; the stored value is that end (±max, e8m0's min)
    invalid: bool  # the format cannot hold this input at all (NaN without NaN, ≤0 in an unsigned format)

    @property
    def code(self) -> int:
        return int(self.bits, 2)

    @property
    def hex(self) -> str:
        return f"0x{self.code:0{(len(self.bits) + 3) // 4}x}"

    def to_dict(self) -> dict:
        """The CLI / JSON shape: nested exponent, "class" for cls."""
        return {
            "format": self.format,
            "input": self.input,
            "rounding": self.rounding,
            "value": self.value,
            "bits": self.bits,
            "hex": self.hex,
            "sign": self.sign,
            "exponent": {
                "bits": self.exponent_bits,
                "raw": self.exponent_raw,
                "unbiased": self.exponent_unbiased,
            },
            "mantissa": self.mantissa,
            "class": self.cls,
            "ulp": self.ulp,
            "abs_error": self.abs_error,
            "rel_error": self.rel_error,
            "next_up": self.next_up,
            "next_down": self.next_down,
            "overflow": self.overflow,
            "underflow": self.underflow,
            "saturated": self.saturated,
            "invalid": self.invalid,
        }


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
    if name == "tf32":
        f32, f16 = ml_dtypes.finfo(np.float32), ml_dtypes.finfo(np.float16)
        nexp, nmant, minexp = int(f32.nexp), int(f16.nmant), int(f32.minexp)
        bits = 1 + nexp + nmant
        flags, has_sub = _cast_flags(np.float32), True
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
        emulated=name == "tf32",
    )
    spec = replace(spec, max=_code_value(spec, _max_magnitude_code(spec)))
    if name != "tf32":  # the layout derived from the flags must reproduce finfo exactly
        derived = (spec.max, spec.smallest_normal, spec.smallest_subnormal, spec.eps)
        told = (float(fi.max), float(fi.smallest_normal), float(fi.smallest_subnormal), float(fi.eps))
        if derived != told:
            raise RuntimeError(f"{name}: layout gives {derived}, ml_dtypes.finfo says {told}")
    return spec


def canonical_format_name(name: str) -> str:
    """The canonical name of a format by any accepted spelling: "fp16", "half", "torch.float16" → "float16".

    Raises ValueError naming the accepted short names for an unknown one.
    """
    key = str(name).strip().lower().removeprefix("torch.").removeprefix("ml_dtypes.").removeprefix("np.")
    if key not in ALIASES:
        known = ", ".join(SHORT_NAMES.values())
        raise ValueError(f"unknown number format {str(name)[:40]!r}; use one of: {known} (or torch names)")
    return ALIASES[key]


def resolve_format(fmt: str | FormatSpec) -> FormatSpec:
    """The spec of a format by any accepted name: "fp16", "float16", "torch.float16", "half", "e4m3" …

    Raises ValueError naming the accepted short names for an unknown one.
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
        raise ValueError(
            f"{text[:40]!r} is not a bit pattern of {spec.name}: give {spec.bits} bits as 0/1, or 0x.. / 0b.."
        ) from None
    if code >> spec.bits:
        raise ValueError(f"{text[:40]!r} has {code.bit_length()} bits; {spec.name} has {spec.bits}")
    return code


# ── exact rounding ──────────────────────────────────────────────────────────────────────────────────────────
def _floor_log2(a: Fraction) -> int:
    n, d = a.numerator, a.denominator
    e = n.bit_length() - d.bit_length()
    if (n << max(-e, 0)) < (d << max(e, 0)):  # a < 2^e
        e -= 1
    return e


def _round_magnitude(spec: FormatSpec, a: Fraction, negative: bool, rounding: str) -> tuple[int, bool]:
    """Round a > 0 into `spec` with an unbounded exponent range → (magnitude pattern, exact).

    The pattern may lie past the largest finite one (that is overflow, handled by the caller).
    """
    m_bits = spec.mantissa_bits
    e = _floor_log2(a)
    qexp = max(e, spec.emin) - m_bits  # a's quantum: 2^qexp
    t = a * (Fraction(2) ** -qexp)  # a in quanta
    lo = t.numerator // t.denominator
    if not spec.has_subnormals and e < spec.emin:
        lo = 0  # nothing between 0 and the smallest normal
    hi = (1 << m_bits) if lo == 0 and not spec.has_subnormals else lo + 1
    exact = t == lo
    if exact:
        k = lo
    elif rounding == "nearest":
        twice = 2 * t
        k = lo if twice < lo + hi or (twice == lo + hi and lo % 2 == 0) else hi
    elif rounding == "zero" or rounding == ("down" if not negative else "up"):
        k = lo
    else:
        k = hi
    if k == 0 and not spec.has_zero:
        k = 1 << m_bits  # e.g. float8_e8m0fnu: below its smallest value there is no zero to round to
    if k == 0:
        return 0, exact
    if k == 1 << (m_bits + 1):  # carried into the next binade
        k, qexp = k >> 1, qexp + 1
    if k < 1 << m_bits:  # subnormal
        return k, exact
    return ((qexp + m_bits + spec.bias) << m_bits) | (k - (1 << m_bits)), exact


@dataclass(frozen=True)
class _Input:
    text: str
    value: Fraction | None  # finite inputs
    special: str | None  # "inf" | "nan"
    negative: bool
    pattern: tuple[FormatSpec, int] | None  # bit-pattern input: (its format, code)


_PATTERN_RE = re.compile(r"^(?:(?P<fmt>[a-z0-9_.]+):)?(?P<bits>0[xb][0-9a-f_ ]+)$")


def _parse(value: float | str, spec: FormatSpec) -> _Input:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return _parse_decimal(str(value)[:40], Decimal(int(value)))  # exact, however large
    if isinstance(value, (float, np.floating)):
        x = float(value)
        text = repr(x)
        if math.isnan(x):
            return _Input(text, None, "nan", math.copysign(1.0, x) < 0, None)
        if math.isinf(x):
            return _Input(text, None, "inf", x < 0, None)
        return _Input(text, Fraction(x), None, math.copysign(1.0, x) < 0, None)
    if not isinstance(value, str):
        raise ValueError(f"value must be a number or text, not {type(value).__name__}")
    text = value.strip()
    if not text or len(text) > _MAX_TEXT:
        raise ValueError(f"give a value of 1 to {_MAX_TEXT} characters")
    low = text.lower()
    match = _PATTERN_RE.match(low)
    if match:
        pspec = resolve_format(match["fmt"]) if match["fmt"] else spec
        return _Input(text, None, None, False, (pspec, _parse_pattern(match["bits"], pspec)))
    body = low.lstrip("+-")
    negative = low.startswith("-")
    if body in ("inf", "infinity"):
        return _Input(text, None, "inf", negative, None)
    if body == "nan":
        return _Input(text, None, "nan", negative, None)
    try:
        d = Decimal(low)
    except InvalidOperation:
        d = None
    if d is None or not d.is_finite():
        raise ValueError(
            f"{text[:40]!r} is not a number: use a decimal (0.1, -3e-5), inf, -inf, nan, -0, "
            "or a bit pattern (0x3c00, 0b…, fp16:0x3c00)"
        )
    return _parse_decimal(text, d)


def _parse_decimal(text: str, d: Decimal) -> _Input:
    """Exact value of a finite decimal; beyond 10^±400 every format saturates or flushes alike, so such
    magnitudes are replaced by 10^400 / 10^-500 (keeps the Fraction small)."""
    negative = d.is_signed()
    if d and d.adjusted() > _HUGE_EXP10:
        d = Decimal(f"{'-' if negative else ''}1e{_HUGE_EXP10}")
    elif d and d.adjusted() < -_HUGE_EXP10 - 100:
        d = Decimal(f"{'-' if negative else ''}1e{-_HUGE_EXP10 - 100}")
    return _Input(text, Fraction(d), None, negative, None)


def _error(x: Fraction | None, special: str | None, negative: bool, stored: float) -> tuple[float, float]:
    """(absolute, relative) error of `stored` against the exact input."""
    if special == "nan" or math.isnan(stored):
        return math.nan, math.nan
    if special == "inf":
        return (0.0, 0.0) if math.isinf(stored) and (stored < 0) == negative else (math.inf, math.inf)
    if math.isinf(stored):
        return math.inf, math.inf
    diff = abs(Fraction(stored) - x)
    if x == 0:
        return 0.0, (0.0 if diff == 0 else math.inf)
    return _to_float(diff), _to_float(diff / abs(x))


def _to_float(q: Fraction) -> float:
    try:
        return float(q)
    except OverflowError:
        return math.inf


def _describe(
    spec: FormatSpec,
    code: int,
    inp: _Input,
    rounding: str,
    *,
    error: tuple[float, float] = (0.0, 0.0),
    overflow: bool = False,
    underflow: bool = False,
    saturated: bool = False,
    invalid: bool = False,
) -> Encoding:
    sign, e, m = _split(spec, code)
    cls = _classify(spec, sign, e, m)
    value = _code_value(spec, code)
    bits = format(code, f"0{spec.bits}b")
    if cls == "normal":
        ulp = math.ldexp(1.0, math.frexp(abs(value))[1] - 1 - spec.mantissa_bits)
    elif cls in ("subnormal", "zero"):
        ulp = math.ldexp(1.0, spec.emin - spec.mantissa_bits)
    else:
        ulp = math.nan
    if cls == "nan":
        error = (math.nan, math.nan)
    if cls == "normal":
        unbiased = e - spec.bias
    elif cls == "subnormal":
        unbiased = spec.emin
    else:
        unbiased = None
    nan = cls == "nan"
    return Encoding(
        format=spec.name,
        input=inp.text,
        rounding=rounding,
        value=value,
        bits=bits,
        sign=sign,
        exponent_bits=bits[spec.sign_bits : spec.sign_bits + spec.exponent_bits],
        exponent_raw=e,
        exponent_unbiased=unbiased,
        mantissa=bits[spec.sign_bits + spec.exponent_bits :],
        cls=cls,
        ulp=ulp,
        abs_error=error[0],
        rel_error=error[1],
        next_up=None if nan else _neighbour(spec, code, +1),
        next_down=None if nan else _neighbour(spec, code, -1),
        overflow=overflow,
        underflow=underflow,
        saturated=saturated,
        invalid=invalid,
    )


def _overflow_code(spec: FormatSpec, negative: bool, rounding: str) -> tuple[int, bool]:
    """Pattern for a value beyond the finite range → (code, saturated)."""
    s = _sign_bit(spec) if negative else 0
    toward_zero = rounding == "zero" or rounding == ("down" if not negative else "up")
    if spec.has_inf and not toward_zero:
        return s | (((1 << spec.exponent_bits) - 1) << spec.mantissa_bits), False
    if spec.has_nan and not toward_zero:
        return _nan_code(spec, negative), False
    return s | _max_magnitude_code(spec), True


def encode(value: float | str, fmt: str | FormatSpec, rounding: str = "nearest") -> Encoding:
    """Store `value` in `fmt` with `rounding` and describe the result bit by bit.

    `value`: a float, or text: a decimal taken exactly ("0.1", "-3e-5", "-0"), inf/-inf/nan, or a bit pattern
    "0x3c00" / "0b…" (of `fmt`) or "fp16:0x3c00" (of another format, whose value is then stored in `fmt`).
    Raises ValueError for bad text, an unknown format or rounding mode.
    """
    spec = resolve_format(fmt)
    if rounding not in ROUNDINGS:
        raise ValueError(f"unknown rounding {str(rounding)[:20]!r}; use one of: {', '.join(ROUNDINGS)}")
    inp = _parse(value, spec)
    if inp.pattern is not None:
        pspec, code = inp.pattern
        if pspec == spec:
            return _describe(spec, code, inp, rounding)
        decoded = _code_value(pspec, code)
        return replace(encode(decoded, spec, rounding), input=inp.text)
    s = _sign_bit(spec) if inp.negative else 0
    if not spec.sign_bits and inp.negative and inp.special != "nan":
        return _describe(spec, _nan_code(spec, False), inp, rounding, error=(math.nan, math.nan), invalid=True)
    if inp.special == "nan":
        if spec.has_nan:
            return _describe(
                spec,
                _nan_code(spec, inp.negative and spec.special_codes != "negzero_nan"),
                inp,
                rounding,
                error=(math.nan, math.nan),
            )
        # no NaN to store: mpviz stores a zero with the NaN's sign (library_casts shows what ml_dtypes does)
        return _describe(spec, s, inp, rounding, error=(math.nan, math.nan), invalid=True)
    if inp.special == "inf":
        if spec.has_inf:
            return _describe(spec, s | (((1 << spec.exponent_bits) - 1) << spec.mantissa_bits), inp, rounding)
        code, sat = _overflow_code(spec, inp.negative, "nearest")
        return _describe(
            spec,
            code,
            inp,
            rounding,
            error=_error(None, "inf", inp.negative, _code_value(spec, code)),
            overflow=True,
            saturated=sat,
        )
    x = inp.value
    if x == 0:
        if not spec.has_zero:
            return _describe(spec, _nan_code(spec, False), inp, rounding, error=(math.nan, math.nan), invalid=True)
        return _describe(spec, s if spec.has_negative_zero else 0, inp, rounding)
    mag, _ = _round_magnitude(spec, abs(x), inp.negative, rounding)
    overflow = saturated = False
    if mag > _max_magnitude_code(spec):
        code, saturated = _overflow_code(spec, inp.negative, rounding)
        overflow = True
    elif mag == 0 and spec.has_zero:
        code = s if spec.has_negative_zero else 0
    else:
        code = s | mag
    stored = _code_value(spec, code)
    if not spec.has_zero and rounding in ("zero", "down") and abs(x) < Fraction(spec.smallest_normal):
        saturated = True  # asked for a value below the smallest one, and there is no zero to go to
    return _describe(
        spec,
        code,
        inp,
        rounding,
        error=_error(x, None, inp.negative, stored),
        overflow=overflow,
        underflow=stored == 0,
        saturated=saturated,
    )


def decode(bits: str, fmt: str | FormatSpec) -> Encoding:
    """Describe a bit pattern of `fmt`: '0x3c00', '0b…', or exactly `fmt.bits` characters 0/1."""
    spec = resolve_format(fmt)
    if not isinstance(bits, str):
        raise ValueError("a bit pattern is text: 0x3c00, 0b… or 0/1 characters")
    code = _parse_pattern(bits, spec)
    return _describe(spec, code, _Input(bits.strip(), None, None, False, None), "nearest")


# ── many values at once ─────────────────────────────────────────────────────────────────────────────────────
def _round_unbounded(a: np.ndarray, spec: FormatSpec) -> np.ndarray:
    """Round magnitudes a ≥ 0 (float64, finite) to nearest-even in `spec`, ignoring max. Exact: only the
    significand is rounded (np.rint is ties-to-even) and scaling by powers of two is exact in float64."""
    m_bits = spec.mantissa_bits
    e = np.frexp(a)[1].astype(np.int64) - 1  # floor(log2 a) for a > 0
    qexp = np.maximum(e, spec.emin) - m_bits
    k = np.rint(np.ldexp(a, -qexp))
    if not spec.has_subnormals:  # below the smallest normal there is only the smallest normal (no zero)
        k = np.where(e < spec.emin, float(1 << m_bits), k)
    return np.where(a > 0, np.ldexp(k, qexp), 0.0)


def round_array(values: np.ndarray, fmt: str | FormatSpec) -> np.ndarray:
    """`values` (any shape, float64) stored in `fmt` with round-to-nearest-even; same rules as `encode`."""
    spec = resolve_format(fmt)
    x = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(x)
    a = np.where(finite, np.abs(x), 0.0)
    r = _round_unbounded(a, spec)
    beyond = math.inf if spec.has_inf else (math.nan if spec.has_nan else spec.max)
    r = np.where(r > spec.max, beyond, r)
    r = np.where(finite, r, np.where(np.isinf(x), beyond, math.nan if spec.has_nan else 0.0))
    out = np.copysign(r, x)
    if not spec.has_negative_zero:
        out = np.where(out == 0, 0.0, out)
    if not spec.sign_bits:
        out = np.where((x <= 0) | np.isnan(x), math.nan, r)
    return out


@dataclass(frozen=True)
class StorageCensus:
    """What storing a set of values in one format would do to them (round-to-nearest-even)."""

    format: str
    total: int
    nonfinite: int  # inf / nan already in the input
    zero: int  # exact zeros in the input
    overflow: int  # finite inputs rounding past max (→ inf, nan or ±max)
    underflow: int  # non-zero inputs flushed to zero
    subnormal: int  # non-zero inputs landing on a subnormal
    normal: int  # the rest: stored as normal numbers


def storage_census(values: np.ndarray, fmt: str | FormatSpec) -> StorageCensus:
    """Count overflow / underflow-to-zero / subnormal outcomes of storing `values` (any shape) in `fmt`."""
    spec = resolve_format(fmt)
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    finite = np.isfinite(x)
    a = np.abs(x[finite])
    r = _round_unbounded(a, spec)
    nonzero = a > 0
    over = r > spec.max
    under = nonzero & (r == 0)
    sub = nonzero & (r > 0) & (r < spec.smallest_normal)
    return StorageCensus(
        format=spec.name,
        total=int(x.size),
        nonfinite=int((~finite).sum()),
        zero=int((~nonzero).sum()),
        overflow=int(over.sum()),
        underflow=int(under.sum()),
        subnormal=int(sub.sum()),
        normal=int((nonzero & ~over & ~under & ~sub).sum()),
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


ZOOM_STEP = 8  # each zoom level of `zoom_window` is this many times wider


def zoom_window(value: float, zoom: int, limit: float) -> tuple[float, float]:
    """A number-line window around `value`: zoom 0 is the binade holding |value| ([-½, ½] around 0), each
    level ZOOM_STEP× wider and centred on value, clipped to ±limit. inf centres on ±limit, nan on 0."""
    value = 0.0 if math.isnan(value) else max(-limit, min(limit, value))
    if value == 0:
        half = min(0.5 * float(ZOOM_STEP) ** zoom, limit)
        return -half, half
    e = math.frexp(abs(value))[1] - 1
    if zoom == 0:
        lo, hi = math.ldexp(1.0, e), min(2.0 * math.ldexp(1.0, e), limit)  # 2·2^e may be inf: clipped
        return (lo, hi) if value > 0 else (-hi, -lo)
    half = math.ldexp(float(ZOOM_STEP) ** zoom, e - 1)
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
        raise ValueError(f"draws must be 1 … 1,000,000, not {draws}")
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
        mean = float(np.where(picks, up.value, down.value).mean())
        bias = _to_float(Fraction(near.value) - x) if math.isfinite(near.value) else math.nan
    return StochasticRounding(spec.name, near.input, down.value, up.value, p, expected, near.value, bias, draws, mean)


# ── what the libraries do ───────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class LibraryCast:
    library: str  # "torch" | "numpy" | "ml_dtypes" | "mpviz" (exact rounding of the same float64)
    value: float
    bits: str

    @property
    def hex(self) -> str:
        return f"0x{int(self.bits, 2):0{(len(self.bits) + 3) // 4}x}"


def _pattern_bits(raw: int, spec: FormatSpec) -> str:
    return format(raw & ((1 << spec.bits) - 1), f"0{spec.bits}b")


def library_casts(value: float, fmt: str | FormatSpec) -> tuple[LibraryCast, ...]:
    """Cast the float64 `value` with torch (`tensor.to(dtype)`) and numpy/ml_dtypes (`astype`), next to mpviz.

    Measured, not assumed: the libraries may saturate, pick other NaN patterns, or go through float32 first.
    """
    spec = resolve_format(fmt)
    x = float(value)
    out = []
    tdt = torch_dtype(spec)
    if tdt is not None:
        t = torch.tensor([x], dtype=torch.float64).to(tdt)
        ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
        out.append(LibraryCast("torch", t.double().item(), _pattern_bits(t.view(ints).item(), spec)))
    ndt = numpy_dtype(spec)
    if ndt is not None:
        with np.errstate(all="ignore"):
            a = np.array([x], dtype=np.float64).astype(ndt)
        raw = int(a.view(f"u{a.itemsize}")[0])
        lib = "numpy" if spec.name in _NUMPY_DTYPES else "ml_dtypes"
        out.append(LibraryCast(lib, float(a.astype(np.float64)[0]), _pattern_bits(raw, spec)))
    enc = encode(x, spec)
    out.append(LibraryCast("mpviz", enc.value, enc.bits))
    return tuple(out)


@dataclass(frozen=True)
class CastDisagreement:
    format: str
    probe: str  # code of the input tried: see _probes ("twice_max", "tie_plus_2^-40", "nan" …)
    input: float
    casts: tuple[LibraryCast, ...]


def _probes(spec: FormatSpec) -> tuple[tuple[str, float], ...]:
    """Inputs where libraries are known to be tempted to differ, placed from the spec's own numbers."""
    top = spec.max + math.ldexp(1.0, spec.emax - spec.mantissa_bits)  # the pattern after max, if it existed
    probes = [
        ("pos_inf", math.inf),
        ("neg_inf", -math.inf),
        ("nan", math.nan),
        ("neg_zero", -0.0),
        ("zero", 0.0),
        ("minus_one", -1.0),
        ("above_max", spec.max + (top - spec.max) * 0.75),  # between max and where the next pattern would be
        ("twice_max", 2 * spec.max),
        ("half_smallest_subnormal", spec.smallest_subnormal / 2),
        ("float32_subnormal", 1.4 * 2.0**-127),
    ]
    if spec.mantissa_bits < 23:  # a tie in `spec` that float32 cannot hold: float64 → float32 → spec differs
        probes.append(("tie_plus_2^-40", 1 + spec.eps / 2 + 2**-40))
    return tuple((label, x) for label, x in probes if math.isnan(x) or abs(x) < 1.7e308)


def library_disagreements(fmt: str | FormatSpec) -> tuple[CastDisagreement, ...]:
    """The probe inputs on which torch, numpy/ml_dtypes and mpviz do not all give the same bit pattern."""
    spec = resolve_format(fmt)
    out = []
    for label, x in _probes(spec):
        casts = library_casts(x, spec)
        if len({c.bits for c in casts}) > 1:
            out.append(CastDisagreement(spec.name, label, x, casts))
    return tuple(out)


@dataclass(frozen=True)
class FinfoCheck:
    """One finfo field of one format: as torch reports it, as ml_dtypes reports it, as measured from bits."""

    format: str
    field: str  # "eps" | "max" | "smallest_normal"
    torch: float | None  # None: torch has no such dtype
    ml_dtypes: float
    measured: float  # from torch's own bit patterns (or the layout, for formats torch lacks)

    @property
    def agree(self) -> bool:
        return len({v for v in (self.torch, self.ml_dtypes, self.measured) if v is not None}) == 1


def _measured_finfo(spec: FormatSpec) -> dict[str, float]:
    """eps, max, smallest normal from the bits: torch's own view of its dtype where it has one."""
    tdt = torch_dtype(spec)
    if tdt is None or spec.bits > 16:
        one = encode(1.0, spec).code
        return {
            "eps": _code_value(spec, one + 1) - 1,
            "max": spec.max,
            "smallest_normal": spec.smallest_normal,
        }
    ints = torch.uint8 if spec.bits == 8 else torch.int16
    vals = torch.arange(1 << spec.bits, dtype=torch.int32).to(ints).view(tdt).double()
    one = torch.tensor([1.0]).to(tdt).view(ints)
    eps = (one + 1).view(tdt).double().item() - 1
    pos = torch.unique(vals[torch.isfinite(vals) & (vals > 0)])  # ascending
    gaps = pos[1:] - pos[:-1]
    normal = pos[:-1][gaps <= pos[:-1] * eps]  # the spacing of normals is value·eps at a binade start
    return {"eps": eps, "max": pos.max().item(), "smallest_normal": normal.min().item()}


def finfo_checks() -> tuple[FinfoCheck, ...]:
    """eps / max / smallest_normal of every format with a dtype: torch.finfo, ml_dtypes.finfo, the bits."""
    out = []
    for spec in all_formats():
        if spec.numpy_dtype is None:
            continue
        mfi = ml_dtypes.finfo(numpy_dtype(spec))
        tfi = torch.finfo(torch_dtype(spec)) if spec.torch_dtype else None
        measured = _measured_finfo(spec)
        for field in ("eps", "max", "smallest_normal"):
            out.append(
                FinfoCheck(
                    spec.name,
                    field,
                    float(getattr(tfi, field)) if tfi else None,
                    float(getattr(mfi, field)),
                    float(measured[field]),
                )
            )
    return tuple(out)
