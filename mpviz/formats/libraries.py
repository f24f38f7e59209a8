"""What the libraries do with the same values: torch's and numpy/ml_dtypes' casts next to mpviz's exact rounding,
the probe inputs where they disagree (saturation, NaN patterns, float64→float32→low-precision double rounding),
and their finfo fields against what the bit patterns measure."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from functools import lru_cache

import ml_dtypes
import numpy as np
import torch

from mpviz.formats.encoding import Encoding, encode
from mpviz.formats.spec import (
    _NUMPY_DTYPES,
    FormatSpec,
    _code_value,
    all_formats,
    numpy_dtype,
    resolve_format,
    torch_dtype,
)


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
    bits = struct.unpack("<q", struct.pack("<d", float(value)))[0]  # the key keeps -0.0 and NaN payloads apart
    return _library_casts(bits, resolve_format(fmt))


@lru_cache(maxsize=4096)  # pure, and a page shows the same few values to a whole class
def _library_casts(bits: int, spec: FormatSpec) -> tuple[LibraryCast, ...]:
    x = struct.unpack("<d", struct.pack("<q", bits))[0]
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


def torch_cast_differs(value: float, stored: Encoding) -> LibraryCast | None:
    """torch's own cast of the float64 `value` into `stored`'s format, when it stores other bits than `stored` (the
    exact rounding to nearest); None when they agree, when `stored` was rounded otherwise (torch's casts round to
    nearest only), or when the format has no torch dtype. Two NaNs of different payloads agree: both are NaN.

    Measured: torch's float8_e4m3fn saturates past the range (500, even inf → 448) where the exact rounding gives
    NaN; the libraries table shows every probe input where they part."""
    if stored.rounding != "nearest":
        return None
    cast = next((c for c in library_casts(value, stored.format) if c.library == "torch"), None)
    if cast is None or cast.bits == stored.bits or (math.isnan(cast.value) and math.isnan(stored.value)):
        return None
    return cast


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
