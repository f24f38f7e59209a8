"""Exact rounding into a format: `encode` / `decode` one value bit by bit, `round_array` / `storage_census` many.

`encode` is exact: the input (a float, or decimal text such as "0.1" taken as the exact decimal) becomes a
Fraction and is rounded with integer arithmetic; the result is then described from its bit pattern. Tests compare
it pattern by pattern with torch's and ml_dtypes' casts.

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

import numpy as np

from mpviz.formats.spec import (
    ROUNDINGS,
    FormatInputError,
    FormatSpec,
    _classify,
    _code_value,
    _max_magnitude_code,
    _nan_code,
    _neighbour,
    _parse_pattern,
    _sign_bit,
    _split,
    resolve_format,
)

_MAX_TEXT = 200  # characters of value text accepted
_HUGE_EXP10 = 400  # |decimal exponent| beyond which every format (float64 included) saturates or flushes


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

    @property
    def nearest_bin(self) -> tuple[float, float]:
        """The inputs that round to nearest onto this value: (low, high), halfway to each neighbour (a tie goes
        to the even neighbour; past the last value the bin is unbounded). (nan, nan) for inf and NaN. What merges
        two inputs is sharing a bin, not being close: two inputs a hair apart across an edge stay apart."""
        if self.cls in ("inf", "nan"):
            return (math.nan, math.nan)
        low = -math.inf if self.next_down is None else (self.next_down + self.value) / 2
        high = math.inf if self.next_up is None else (self.value + self.next_up) / 2
        return (low, high)

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
        raise FormatInputError("not_text", f"value must be a number or text, not {type(value).__name__}")
    text = value.strip()
    if not text or len(text) > _MAX_TEXT:
        raise FormatInputError("bad_length", f"give a value of 1 to {_MAX_TEXT} characters", limit=_MAX_TEXT)
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
        raise FormatInputError(
            "not_a_number",
            f"{text[:40]!r} is not a number: use a decimal (0.1, -3e-5), inf, -inf, nan, -0, "
            "or a bit pattern (0x3c00, 0b…, fp16:0x3c00)",
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
        raise FormatInputError(
            "unknown_rounding", f"unknown rounding {str(rounding)[:20]!r}; use one of: {', '.join(ROUNDINGS)}"
        )
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
        raise FormatInputError("not_text", "a bit pattern is text: 0x3c00, 0b… or 0/1 characters")
    code = _parse_pattern(bits, spec)
    return _describe(spec, code, _Input(bits.strip(), None, None, False, None), "nearest")


def bind_pattern(text: str, fmt: str | FormatSpec) -> str:
    """Value text whose bare bit pattern ("0x3c00", "0b…") is read as a pattern of `fmt` in every format it is
    stored in: "0x3c00" → "fp16:0x3c00". Decimals and patterns that name their format come back unchanged."""
    match = _PATTERN_RE.match(text.strip().lower())
    return f"{resolve_format(fmt).short}:{text.strip()}" if match and not match["fmt"] else text


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
