"""The number formats lesson's view model: the value text, the rounding and the formats in; each format's bits,
the tables and the figures out (mpviz/pages/formats.py draws them).

Every result here is shared by the class (mpviz.presentation.memo): a value, its formats and its rounding are the whole
key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import plotly.graph_objects as go

from mpviz import formats
from mpviz.presentation import runs, text
from mpviz.presentation.figures import formats as formats_fig
from mpviz.presentation.memo import memoised
from mpviz.presentation.run_config import RunConfig
from mpviz.trace import Trace

__all__ = [
    "ALL_SHORT",
    "DEFAULT_FORMATS",
    "DEFAULT_TENSOR",
    "DEFAULT_VALUE",
    "DRAWS",
    "TRACE_FORMATS",
    "ZOOMS",
    "BitField",
    "FormatBits",
    "TensorView",
    "ValueRead",
    "bits",
    "census_table",
    "encoding",
    "exponent_figure",
    "finfo_table",
    "library_table",
    "number_line_figure",
    "parse_formats",
    "parse_zoom",
    "probe_table",
    "properties_table",
    "range_figure",
    "read_value",
    "stochastic_table",
    "summary_table",
    "tensor_view",
    "value_marker",
]

DEFAULT_FORMATS = ("fp32", "fp16", "bf16", "e4m3")
TRACE_FORMATS = ("fp16", "bf16", "e4m3", "e5m2")
ALL_SHORT = tuple(formats.SHORT_NAMES.values())
ZOOMS = (0, 1, 2, 3, 4, 5, 6, "all")
DRAWS = 10_000
DEFAULT_VALUE = "0.1"
DEFAULT_TENSOR = "scores"


def parse_formats(raw: str) -> list[str]:
    """A link's "fp16,bf16" as the formats' short names, each once (a ValueError for none or an unknown name)."""
    names = [formats.resolve_format(n).short for n in raw.split(",") if n.strip()]
    if not names:
        raise ValueError(raw)
    return list(dict.fromkeys(names))


def parse_zoom(raw: str) -> int | str:
    """A link's zoom: "all" or one of the slider's steps (a ValueError for any other)."""
    if raw == "all":
        return raw
    if int(raw) not in ZOOMS:
        raise ValueError(raw)
    return int(raw)


def _words() -> dict:
    return text.section("formats")


def _classes() -> dict:
    return text.section("common")["value_classes"]  # "normal", "subnormal", … in this session's words


def _or_dash(x: float | None) -> str:
    return "—" if x is None else repr(x)


@memoised(words=False)
def encoding(value_text: str, fmt: str, rounding: str) -> formats.Encoding:
    """`value_text` stored in `fmt` with `rounding` (mpviz.formats.encode); raises its ValueError on bad text."""
    return formats.encode(value_text, fmt, rounding)


@dataclass(frozen=True)
class ValueRead:
    """The value text the lesson uses, and, when the visitor's could not be read, what to tell them."""

    text: str
    problem: str | None = None


def read_value(raw: str, selected: tuple[str, ...], rounding: str) -> ValueRead:
    """The visitor's text (a bare bit pattern read in the first selected format), or the default after saying why
    not: what they typed is echoed inert; the engine's own message, which quotes it, is not shown."""
    bound = formats.bind_pattern(raw, selected[0])
    try:
        encoding(bound, "fp64", rounding)
    except ValueError as e:
        reasons, reason = _words()["value_errors"], getattr(e, "reason", "")
        why = reasons[reason].format(**e.fields) if reason in reasons else reasons["other"]
        used = text.echo(DEFAULT_VALUE)
        return ValueRead(DEFAULT_VALUE, _words()["bad_value"].format(raw=text.echo(raw), why=why, used=used))
    return ValueRead(bound)


def value_marker(value_text: str) -> tuple[str, float]:
    """The input as a float64 (exact for bit-pattern inputs), labelled for the range chart."""
    return (_words()["marker_value"], encoding(value_text, "fp64", "nearest").value)


# ── the bits ──────────────────────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class BitField:
    """One field's bits (one group of the page's bit flipper): `pressed` are the positions holding a 1."""

    key: str  # "bits-<field>-<short>": the field by name (the flipper colours it by its name)
    label: str
    positions: tuple[int, ...]  # most significant first
    pressed: tuple[int, ...]


@dataclass(frozen=True)
class FormatBits:
    """One format's stored pattern as the page shows it."""

    short: str
    name: str
    code: int
    emulated: str | None  # how an emulated format is made, in words; None for a real dtype
    fields: tuple[BitField, ...]
    line: str  # markdown: the stored value, its class, errors, neighbours, flags, and torch's own cast if it differs


def _emulated(spec: formats.FormatSpec) -> str | None:
    if not spec.emulated:
        return None
    exp_from, mant_from = (formats.resolve_format(n) for n in formats.EMULATED_FROM[spec.name])
    return _words()["emulated"].format(
        name=spec.name,
        exponent_bits=spec.exponent_bits,
        exp_from=exp_from.name,
        mantissa_bits=spec.mantissa_bits,
        mant_from=mant_from.name,
        max=spec.max,
        exp_max=exp_from.max,
        sub=spec.smallest_subnormal,
        exp_sub=exp_from.smallest_subnormal,
    )


def _line(x: float, enc: formats.Encoding) -> str:
    words = _words()
    line = words["line"].format(
        value=repr(enc.value),
        cls=_classes()[enc.cls],
        abs_error=enc.abs_error,
        rel_error=enc.rel_error,
        ulp=enc.ulp,
        down=_or_dash(enc.next_down),
        up=_or_dash(enc.next_up),
    )
    if enc.exponent_unbiased is not None:
        line += " · " + words["exponent_note"].format(
            bits=enc.exponent_bits, raw=enc.exponent_raw, unbiased=enc.exponent_unbiased
        )
    flags = [words["flags"][k] for k in words["flags"] if getattr(enc, k)]
    torch_cast = formats.torch_cast_differs(x, enc)
    differs = [] if torch_cast is None else [words["torch_differs"].format(value=repr(torch_cast.value))]
    return " · ".join([line, *flags, *differs])


@memoised
def bits(value_text: str, selected: tuple[str, ...], rounding: str) -> tuple[FormatBits, ...]:
    """Each selected format's bits, field by field, and the line under them."""
    x = encoding(value_text, "fp64", "nearest").value
    out = []
    for short in selected:
        spec, enc = formats.resolve_format(short), encoding(value_text, short, rounding)
        fields = tuple(
            BitField(
                f"bits-{field}-{short}",
                _words()["fields"][field],
                positions,
                tuple(p for p in positions if enc.code >> p & 1),
            )
            for field, positions in spec.bit_positions.items()
        )
        out.append(FormatBits(short, spec.name, enc.code, _emulated(spec), fields, _line(x, enc)))
    return tuple(out)


@memoised(returns="table")
def summary_table(value_text: str, selected: tuple[str, ...], rounding: str) -> list[dict]:
    """One row per format: the stored value, its pattern, class, errors, neighbours and flags."""
    words = _words()
    cols = words["cols"]
    return [
        {
            cols["format"]: enc.format,
            cols["value"]: repr(enc.value),
            cols["hex"]: enc.hex,
            cols["cls"]: _classes()[enc.cls],
            cols["abs"]: f"{enc.abs_error:.3g}",
            cols["rel"]: f"{enc.rel_error:.3g}",
            cols["ulp"]: f"{enc.ulp:.3g}",
            cols["down"]: _or_dash(enc.next_down),
            cols["up"]: _or_dash(enc.next_up),
            cols["flags"]: ", ".join(v for k, v in words["flag_names"].items() if getattr(enc, k)) or words["none"],
        }
        for enc in (encoding(value_text, f, rounding) for f in selected)
    ]


# ── the number line and the ranges ──────────────────────────────────────────────────────────────────────────
@memoised(words=False)
def _number_line(fmt: str, lo: float, hi: float) -> formats.NumberLine:
    return formats.number_line(fmt, lo, hi)


@memoised(returns="figure")
def number_line_figure(value_text: str, selected: tuple[str, ...], zoom: int | str) -> go.Figure:
    """Every selected format's values around the input at `zoom` (0 … 6: its binade, each step wider; "all": the
    widest selected format's whole range), the input marked where it is finite."""
    x = encoding(value_text, "fp64", "nearest").value
    limit = max(formats.resolve_format(f).max for f in selected)
    lo, hi = (-limit, limit) if zoom == "all" else formats.zoom_window(x, zoom, limit)
    marked = x if math.isfinite(x) else None
    lines = [_number_line(f, lo, hi) for f in selected]
    return formats_fig.number_line_figure(lines, lo, hi, marked, labels=_words()["figure"])


@memoised(returns="figure")
def range_figure(selected: tuple[str, ...], markers: tuple[tuple[str, float], ...]) -> go.Figure:
    """Each selected format's range (normal, subnormal), with the labelled values `markers` on it."""
    specs = [formats.resolve_format(f) for f in selected]
    return formats_fig.range_figure(specs, dict(markers), labels=_words()["figure"])


# ── a real tensor from the trace ────────────────────────────────────────────────────────────────────────────
def _trace(rc: RunConfig) -> Trace:
    return runs.attention_trace(rc).trace


@dataclass(frozen=True)
class TensorView:
    """One landmark tensor of the sidebar's traced run, as the lesson shows it."""

    name: str
    caption: str
    histogram: bool  # the tensor has finite non-zero values to draw exponents of
    markers: tuple[tuple[str, float], ...]  # its largest and smallest non-zero magnitudes, for the range chart


@memoised(words=False)
def landmarks(rc: RunConfig) -> tuple[str, ...]:
    """The traced run's landmark tensors that have values to show."""
    t = _trace(rc)
    return tuple(n for n, i in t.landmarks.items() if t.events[i].outputs and t.events[i].outputs[0].stats)


def _output(rc: RunConfig, name: str):  # the landmark's tensor: its stats and its sample (a numpy array)
    return _trace(rc).landmark_event(name).outputs[0]


@memoised
def tensor_view(rc: RunConfig, name: str) -> TensorView:
    """The landmark `name` of `rc`'s trace: its caption and where it lies (one of `landmarks(rc)`)."""
    words, out = _words(), _output(rc, name)
    sample = out.sample if out.sample is not None else []
    caption = words["trace_intro"].format(dtype=rc.dtype, n=len(sample.reshape(-1)), numel=out.stats.numel)
    if not out.stats.log2_hist:
        return TensorView(name, caption, False, ())
    nonzero = abs(sample[(sample != 0) & (abs(sample) < math.inf)])
    markers = [(words["marker_max"].format(name=name), out.stats.abs_max)]
    if nonzero.size:
        markers.append((words["marker_min"].format(name=name), float(nonzero.min())))
    return TensorView(name, caption, True, tuple(markers))


@memoised(returns="figure")
def exponent_figure(rc: RunConfig, name: str) -> go.Figure:
    """The landmark's exponent histogram against the low-precision formats' ranges."""
    specs = [formats.resolve_format(f) for f in TRACE_FORMATS]
    hist = _output(rc, name).stats.log2_hist
    return formats_fig.format_exponent_figure(name, hist, specs, labels=_words()["figure"])


@memoised(returns="table")
def census_table(rc: RunConfig, name: str) -> list[dict]:
    """What storing the landmark's sampled values in each low-precision format does: overflow, flush, subnormal."""
    cc = _words()["census_cols"]
    out = _output(rc, name)
    sample = out.sample if out.sample is not None else []
    censuses = ((formats.resolve_format(f), formats.storage_census(sample, f)) for f in TRACE_FORMATS)
    return [{cc["format"]: spec.name} | {cc[k]: getattr(c, k) for k in list(cc)[1:]} for spec, c in censuses]


# ── rounding, libraries, finfo, properties ──────────────────────────────────────────────────────────────────
@memoised(words=False)
def _stochastic(value_text: str, fmt: str) -> formats.StochasticRounding:
    return formats.stochastic_rounding(value_text, fmt, draws=DRAWS)


@memoised(returns="table")
def stochastic_table(value_text: str, selected: tuple[str, ...]) -> list[dict]:
    """Stochastic rounding of the input into each format: its two neighbours, P(up), expected and sampled mean."""
    sc = _words()["sr_cols"]
    return [
        {
            sc["format"]: r.format,
            sc["down"]: repr(r.down),
            sc["up"]: repr(r.up),
            sc["p_up"]: f"{r.p_up:.6g}",
            sc["expected"]: repr(r.expected),
            sc["mean"]: repr(r.sample_mean),
            sc["nearest"]: repr(r.nearest),
            sc["bias"]: f"{r.nearest_bias:.3g}",
        }
        for r in (_stochastic(value_text, f) for f in selected)
    ]


@memoised(returns="table")
def library_table(value_text: str, selected: tuple[str, ...]) -> list[dict]:
    """torch's, numpy/ml_dtypes' and mpviz's casts of the input into each format, and whether they agree."""
    lc = _words()["lib_cols"]
    x = encoding(value_text, "fp64", "nearest").value
    rows = []
    for f in selected:
        casts = {("numpy" if c.library == "ml_dtypes" else c.library): c for c in formats.library_casts(x, f)}
        row = {lc["format"]: formats.resolve_format(f).name, lc["agree"]: len({c.bits for c in casts.values()}) == 1}
        for lib in ("torch", "numpy", "mpviz"):
            row[lc[lib]] = f"{casts[lib].value!r} ({casts[lib].hex})" if lib in casts else "—"
        rows.append(row)
    return rows


@memoised(words=False)
def _disagreements(fmt: str) -> tuple[formats.CastDisagreement, ...]:
    return formats.library_disagreements(fmt)


@memoised(returns="table")
def probe_table(selected: tuple[str, ...]) -> list[dict]:
    """The probe inputs on which the libraries store different patterns, per selected format."""
    words = _words()
    lc, pc = words["lib_cols"], words["probe_cols"]
    rows = []
    for f in selected:
        for d in _disagreements(f):
            row = {
                pc["format"]: d.format,
                pc["probe"]: words["probe_names"].get(d.probe, d.probe),
                pc["input"]: repr(d.input),
            }
            row |= {lc.get(c.library, lc["numpy"]): f"{c.value!r} ({c.hex})" for c in d.casts}
            rows.append(row)
    return rows


@memoised(returns="table")
def finfo_table(differing_only: bool) -> list[dict]:
    """torch.finfo and ml_dtypes.finfo against what the bit patterns measure (only where they part, if asked)."""
    fc = _words()["finfo_cols"]
    return [
        {
            fc["format"]: c.format,
            fc["field"]: c.field,
            fc["torch"]: "—" if c.torch is None else f"{c.torch:.6g}",
            fc["ml_dtypes"]: f"{c.ml_dtypes:.6g}",
            fc["measured"]: f"{c.measured:.6g}",
            fc["agree"]: c.agree,
        }
        for c in formats.finfo_checks()
        if not (differing_only and c.agree)
    ]


@memoised(returns="table")
def properties_table() -> list[dict]:
    """Every format's layout, bias, range, epsilon and specials, from its spec."""
    pr = _words()["prop_cols"]
    return [
        {
            pr["name"]: spec.name,
            pr["short"]: spec.short,
            pr["bits"]: spec.bits,
            pr["layout"]: f"{spec.sign_bits}·{spec.exponent_bits}·{spec.mantissa_bits}",
            pr["bias"]: spec.bias,
            pr["max"]: f"{spec.max:.6g}",
            pr["smallest_normal"]: f"{spec.smallest_normal:.6g}",
            pr["smallest_subnormal"]: f"{spec.smallest_subnormal:.6g}",
            pr["eps"]: f"{spec.eps:.6g}",
            pr["digits"]: round(spec.decimal_digits, 2),
            pr["inf"]: spec.has_inf,
            pr["nan"]: spec.has_nan,
            pr["negzero"]: spec.has_negative_zero,
            pr["torch"]: spec.torch_dtype or "—",
            pr["emulated"]: spec.emulated,
        }
        for spec in formats.all_formats()
    ]
