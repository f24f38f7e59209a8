"""Number formats down to their bits, measured rather than tabulated.

    spec.py        FormatSpec: each format's layout and range from ml_dtypes/torch finfo and measured casts;
                   the names every format answers to; what each bit pattern stands for
    encoding.py    exact rounding: encode / decode one value bit by bit, round_array / storage_census many
    neighbours.py  around a value: number lines with rounding bins, zoom windows, stochastic rounding
    libraries.py   torch's and ml_dtypes' own casts and finfo fields, and where they disagree with each other

Nothing here is a hand-written table of facts: tests compare every pattern of the ≤16-bit formats with torch's and
ml_dtypes' casts. tf32 has no storage dtype anywhere: it is float32's exponent with float16's mantissa width, and
mpviz *emulates* its rounding with the same exact rounding as every other format.
"""

from mpviz.formats.encoding import (
    Encoding,
    StorageCensus,
    bind_pattern,
    decode,
    encode,
    round_array,
    storage_census,
)
from mpviz.formats.libraries import (
    CastDisagreement,
    FinfoCheck,
    LibraryCast,
    finfo_checks,
    library_casts,
    library_disagreements,
    torch_cast_differs,
)
from mpviz.formats.neighbours import (
    ZOOM_STEP,
    NumberLine,
    RoundingBin,
    StochasticRounding,
    number_line,
    rounding_bin,
    stochastic_rounding,
    zoom_window,
)
from mpviz.formats.spec import (
    ALIASES,
    EMULATED_FROM,
    FORMAT_NAMES,
    ROUNDINGS,
    SHORT_NAMES,
    FormatInputError,
    FormatSpec,
    all_formats,
    canonical_format_name,
    numpy_dtype,
    resolve_format,
    torch_dtype,
)

__all__ = [
    "ALIASES",
    "EMULATED_FROM",
    "FORMAT_NAMES",
    "ROUNDINGS",
    "SHORT_NAMES",
    "ZOOM_STEP",
    "CastDisagreement",
    "Encoding",
    "FinfoCheck",
    "FormatInputError",
    "FormatSpec",
    "LibraryCast",
    "NumberLine",
    "RoundingBin",
    "StochasticRounding",
    "StorageCensus",
    "all_formats",
    "bind_pattern",
    "canonical_format_name",
    "decode",
    "encode",
    "finfo_checks",
    "library_casts",
    "library_disagreements",
    "number_line",
    "numpy_dtype",
    "resolve_format",
    "round_array",
    "rounding_bin",
    "stochastic_rounding",
    "storage_census",
    "torch_cast_differs",
    "torch_dtype",
    "zoom_window",
]
