"""Number formats: one value in every selected format, bit by bit, with rounding bins, ranges and tensors."""

import math

import streamlit as st

from mpviz import formats
from view import results, text
from view.bit_focus import keep_bit_focus
from view.figures import formats as formats_fig
from view.figures import style
from view.glossary import term_help
from view.page import chart, dtype_badge, expert, guarded, page_header, show_warnings, warn
from view.run_config import run_config
from view.url import UrlParam, parse_choice, seed_from_url, write_url

TEXT = text.section("formats")
CLASSES = text.section("common")["value_classes"]  # "normal", "subnormal", … in this session's words

DEFAULT_FORMATS = ("fp32", "fp16", "bf16", "e4m3")
TRACE_FORMATS = ("fp16", "bf16", "e4m3", "e5m2")
ALL_SHORT = tuple(formats.SHORT_NAMES.values())
ZOOMS = (0, 1, 2, 3, 4, 5, 6, "all")
DRAWS = 10_000
DEFAULT_VALUE = "0.1"
DEFAULT_TENSOR = "scores"


def _parse_formats(raw: str) -> list[str]:
    names = [formats.resolve_format(n).short for n in raw.split(",") if n.strip()]
    if not names:
        raise ValueError(raw)
    return list(dict.fromkeys(names))


def _parse_zoom(raw: str):
    if raw == "all":
        return raw
    if int(raw) not in ZOOMS:
        raise ValueError(raw)
    return int(raw)


PAGE_PARAMS = [
    UrlParam("value", DEFAULT_VALUE, str, aliases=("v",)),
    UrlParam("fmts", list(DEFAULT_FORMATS), _parse_formats, ",".join),  # not "formats": the softmax page's key
    UrlParam("round", "nearest", parse_choice(formats.ROUNDINGS)),
    UrlParam("zoom", 0, _parse_zoom),
    UrlParam("tensor", DEFAULT_TENSOR, str, aliases=("lm",)),  # a landmark of the attention trace
]


# Shared by every session (results.shared), not st.cache_data: a page script's decorator is made again on every
# run (it reads the function's source to key it), and st.cache_data hands each caller a fresh copy.
def _encode(text: str, fmt: str, rounding: str) -> formats.Encoding:
    return results.shared(("encode", text, fmt, rounding), lambda: formats.encode(text, fmt, rounding))


def _stochastic(text: str, fmt: str) -> formats.StochasticRounding:
    return results.shared(("stochastic", text, fmt), lambda: formats.stochastic_rounding(text, fmt, draws=DRAWS))


def _number_line(fmt: str, lo: float, hi: float) -> formats.NumberLine:
    return results.shared(("number line", fmt, repr(lo), repr(hi)), lambda: formats.number_line(fmt, lo, hi))


def _disagreements() -> dict[str, tuple]:
    build = lambda: {spec.short: formats.library_disagreements(spec) for spec in formats.all_formats()}  # noqa: E731
    return results.shared(("formats", "library_disagreements"), build)


def _finfo_checks() -> tuple:
    return results.shared(("formats", "finfo_checks"), formats.finfo_checks)


def _flip(short: str) -> None:
    """Pills changed: rebuild that format's pattern from the three field groups and make it the value."""
    spec = formats.resolve_format(short)
    code = spec.code_from_bits(
        p for field, _ in spec.fields for p in st.session_state.get(f"bits-{field}-{short}") or []
    )
    if code != st.session_state.get("_codes", {}).get(short):
        st.session_state.value = spec.pattern_text(code)


def _bit_label(code: int, position: int) -> str:
    """The bit's 0/1. Pills match selections by label, so each label is made unique with `position` trailing
    spaces, which markdown does not show. ASCII on purpose: Streamlit searches every non-ASCII label for a leading
    emoji with a regex of every emoji, which for the page's 140 bit labels cost a third of its run."""
    return str(code >> position & 1) + " " * position


def _fmt(x: float | None) -> str:
    return "—" if x is None else repr(x)


def _value_error(e: ValueError) -> str:
    """Why value text could not be read, in the page's words (the engine's own message may quote the input)."""
    reasons = TEXT["value_errors"]
    reason = getattr(e, "reason", "")
    return reasons[reason].format(**e.fields) if reason in reasons else reasons["other"]


def _bits(short: str, enc: formats.Encoding) -> None:
    """One format's bits as pills grouped by field (click to flip), then the stored value's line."""
    spec = formats.resolve_format(short)
    st.markdown(f"{dtype_badge(spec.name)} &nbsp; **{short}**", unsafe_allow_html=True)
    if spec.emulated:
        exp_from, mant_from = (formats.resolve_format(n) for n in formats.EMULATED_FROM[spec.name])
        st.caption(
            TEXT["emulated"].format(
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
        )
    row = st.container(horizontal=True, gap="medium")  # the fields side by side, wrapping when too long
    for field, positions in spec.bit_positions.items():
        key = f"bits-{field}-{short}"
        s[key] = [p for p in positions if enc.code >> p & 1]  # the widget shows the current pattern
        row.pills(
            TEXT["fields"][field],
            positions,
            selection_mode="multi",
            wrap=True,
            key=key,
            format_func=lambda p, code=enc.code: _bit_label(code, p),
            on_change=_flip,
            args=(short,),
        )
    line = TEXT["line"].format(
        value=repr(enc.value),
        cls=CLASSES[enc.cls],
        abs_error=enc.abs_error,
        rel_error=enc.rel_error,
        ulp=enc.ulp,
        down=_fmt(enc.next_down),
        up=_fmt(enc.next_up),
    )
    if enc.exponent_unbiased is not None:
        line += " · " + TEXT["exponent_note"].format(
            bits=enc.exponent_bits, raw=enc.exponent_raw, unbiased=enc.exponent_unbiased
        )
    flags = [TEXT["flags"][k] for k in TEXT["flags"] if getattr(enc, k)]
    st.markdown(" · ".join([line, *flags, *_torch_differs(short, enc)]))


def _torch_differs(short: str, enc: formats.Encoding) -> list[str]:
    """torch's own cast of the value, when it stores something else than the exact rounding shown (ml_dtypes'):
    torch's float8_e4m3fn saturates past the range (500, even inf → 448) where the exact rounding gives NaN."""
    if enc.rounding != "nearest":  # torch casts round to nearest only
        return []
    cast = next((c for c in formats.library_casts(x, short) if c.library == "torch"), None)
    if cast is None or cast.bits == enc.bits or (math.isnan(cast.value) and math.isnan(enc.value)):
        return []
    return [TEXT["torch_differs"].format(value=repr(cast.value))]


page_header(TEXT)
rc = run_config()
seed_from_url(PAGE_PARAMS)
s = st.session_state

# ── controls: the value, the rounding, the formats ──────────────────────────────────────────────────────────
c1, c2 = st.columns([2, 3])
c1.text_input(TEXT["value"], key="value", help=TEXT["value_help"])
c2.segmented_control(
    TEXT["rounding"], formats.ROUNDINGS, key="round", format_func=TEXT["roundings"].get, required=True, wrap=True
)
st.multiselect(TEXT["formats"], ALL_SHORT, key="fmts")
if not s.fmts:
    warn(TEXT["no_formats"].format(used=", ".join(DEFAULT_FORMATS)))
selected = list(s.fmts) or list(DEFAULT_FORMATS)
value_text = formats.bind_pattern(s.value, selected[0])
try:
    _encode(value_text, "fp64", s.round)
except ValueError as e:  # what the visitor typed is echoed inert; the engine's message (which quotes it) is not
    warn(TEXT["bad_value"].format(raw=text.echo(s.value), why=_value_error(e), used=text.echo(DEFAULT_VALUE)))
    value_text = DEFAULT_VALUE
write_url(PAGE_PARAMS)
show_warnings()
x = _encode(value_text, "fp64", "nearest").value  # the input as a float64 (exact for bit-pattern inputs)
encodings = {f: _encode(value_text, f, s.round) for f in selected}
s._codes = {f: enc.code for f, enc in encodings.items()}  # what the bit pills show, for _flip

# ── the bits of every selected format ───────────────────────────────────────────────────────────────────────
with guarded("bits"):
    css = "".join(  # bit pills coloured by field: pressed (1) solid, released (0) outlined
        f"[class*='st-key-bits-{field}-'] button[data-variant='pills']"
        f"{{border-color:{color};color:{color};font-family:monospace;font-weight:600}}"
        f"[class*='st-key-bits-{field}-'] button[data-variant='pills'][aria-pressed='true']"
        f"{{background:{color};color:{style.ink(color)}}}"
        for field, color in style.FIELD_COLORS.items()
    )
    st.html(f"<style>{css}</style>")
    keep_bit_focus()  # a flip redraws the pills: the keyboard stays on the flipped bit
    for short, enc in encodings.items():
        _bits(short, enc)

with guarded("summary"), expert(TEXT["summary"], help=term_help("ulp", "subnormal", "saturation")):  # wide
    cols = TEXT["cols"]

    def summary() -> list[dict]:
        return [
            {
                cols["format"]: enc.format,
                cols["value"]: repr(enc.value),
                cols["hex"]: enc.hex,
                cols["cls"]: CLASSES[enc.cls],
                cols["abs"]: f"{enc.abs_error:.3g}",
                cols["rel"]: f"{enc.rel_error:.3g}",
                cols["ulp"]: f"{enc.ulp:.3g}",
                cols["down"]: _fmt(enc.next_down),
                cols["up"]: _fmt(enc.next_up),
                cols["flags"]: ", ".join(v for k, v in TEXT["flag_names"].items() if getattr(enc, k)) or TEXT["none"],
            }
            for enc in encodings.values()
        ]

    key = ("formats summary", value_text, s.round, tuple(selected))
    st.dataframe(results.shared_table(key, summary), hide_index=True, width="stretch")

specs = [formats.resolve_format(f) for f in selected]

# ── number line ─────────────────────────────────────────────────────────────────────────────────────────────
with guarded("number line"):
    st.subheader(TEXT["number_line"], help=term_help("ulp", "binade"))
    st.caption(TEXT["number_line_caption"])
    st.select_slider(
        TEXT["zoom"],
        ZOOMS,
        key="zoom",
        format_func=lambda z: TEXT["zoom_labels"].get(str(z)) or TEXT["zoom_step"].format(factor=formats.ZOOM_STEP**z),
    )
    limit = max(spec.max for spec in specs)
    lo, hi = (-limit, limit) if s.zoom == "all" else formats.zoom_window(x, s.zoom, limit)
    marked = x if math.isfinite(x) else None
    chart(
        results.shared_figure(
            ("number line", tuple(selected), repr(lo), repr(hi), repr(marked)),
            lambda: formats_fig.number_line_figure(
                [_number_line(f, lo, hi) for f in selected], lo, hi, marked, labels=TEXT["figure"]
            ),
        )
    )

# ── from the trace: a real tensor (its extremes also go on the range chart) ─────────────────────────────────
markers = {TEXT["marker_value"]: x}
with guarded("trace"):
    st.subheader(TEXT["trace"], help=term_help("landmark", "autocast"))
    result = results.attention_trace(rc)
    if result is not None:
        t = result.trace
        names = [n for n, i in t.landmarks.items() if t.events[i].outputs and t.events[i].outputs[0].stats]
        if s.tensor not in names:
            used = DEFAULT_TENSOR if DEFAULT_TENSOR in names else names[0]
            st.warning(TEXT["bad_landmark"].format(raw=text.echo(s.tensor), used=text.echo(used)), icon="⚠️")
            s.tensor = used
        st.selectbox(TEXT["landmark"], names, key="tensor")
        write_url(PAGE_PARAMS)
        out = t.landmark_event(s.tensor).outputs[0]
        sample = out.sample if out.sample is not None else []
        st.caption(TEXT["trace_intro"].format(dtype=rc.dtype, n=len(sample.reshape(-1)), numel=out.stats.numel))
        trace_specs = [formats.resolve_format(f) for f in TRACE_FORMATS]
        if out.stats.log2_hist:
            st.caption(TEXT["hist_caption"].format(name=s.tensor))
            figure = results.shared_figure(
                ("exponents", results.config_key(rc.config), rc.device, rc.dtype, s.tensor),
                lambda: formats_fig.format_exponent_figure(
                    s.tensor, out.stats.log2_hist, trace_specs, labels=TEXT["figure"]
                ),
            )
            chart(figure)
            nonzero = abs(sample[(sample != 0) & (abs(sample) < math.inf)])
            markers[TEXT["marker_max"].format(name=s.tensor)] = out.stats.abs_max
            if nonzero.size:
                markers[TEXT["marker_min"].format(name=s.tensor)] = float(nonzero.min())
        else:
            st.info(TEXT["no_trace_values"])
        cc = TEXT["census_cols"]

        def census() -> list[dict]:
            return [
                {cc["format"]: spec.name} | {cc[k]: getattr(c, k) for k in list(cc)[1:]}
                for spec, c in ((spec, formats.storage_census(sample, spec)) for spec in trace_specs)
            ]

        key = ("census", results.config_key(rc.config), rc.device, rc.dtype, s.tensor)
        st.dataframe(results.shared_table(key, census), hide_index=True, width="stretch")

with guarded("ranges"):
    st.subheader(TEXT["range"], help=term_help("binade", "subnormal", "saturation"))
    st.caption(TEXT["range_caption"])
    marks = tuple((name, repr(v)) for name, v in markers.items())
    chart(
        results.shared_figure(
            ("ranges", tuple(selected), marks), lambda: formats_fig.range_figure(specs, markers, labels=TEXT["figure"])
        )
    )

# ── stochastic rounding ─────────────────────────────────────────────────────────────────────────────────────
with guarded("stochastic rounding"):
    st.subheader(TEXT["stochastic"])
    st.markdown(TEXT["stochastic_intro"].format(draws=DRAWS))
    sc = TEXT["sr_cols"]
    with expert(TEXT["stochastic_table"], heading="none"):  # eight wide columns: folded away in presenter mode

        def stochastic() -> list[dict]:
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

        key = ("stochastic", value_text, tuple(selected))
        st.dataframe(results.shared_table(key, stochastic), hide_index=True, width="stretch")

# ── the libraries ───────────────────────────────────────────────────────────────────────────────────────────
with guarded("libraries"), expert(TEXT["libraries"]):  # expert tables: folded away in presenter mode
    lc, pc = TEXT["lib_cols"], TEXT["probe_cols"]

    def your_value() -> list[dict]:
        rows = []
        for f in selected:
            casts = {("numpy" if c.library == "ml_dtypes" else c.library): c for c in formats.library_casts(x, f)}
            row = {
                lc["format"]: formats.resolve_format(f).name,
                lc["agree"]: len({c.bits for c in casts.values()}) == 1,
            }
            for lib in ("torch", "numpy", "mpviz"):
                row[lc[lib]] = f"{casts[lib].value!r} ({casts[lib].hex})" if lib in casts else "—"
            rows.append(row)
        return rows

    def probes() -> list[dict]:
        rows = []
        for f in selected:
            for d in _disagreements()[f]:
                probe = TEXT["probe_names"].get(d.probe, d.probe)
                row = {pc["format"]: d.format, pc["probe"]: probe, pc["input"]: repr(d.input)}
                row |= {lc.get(c.library, lc["numpy"]): f"{c.value!r} ({c.hex})" for c in d.casts}
                rows.append(row)
        return rows

    st.markdown(f"**{TEXT['your_value']}**")
    key = ("library casts", value_text, tuple(selected))
    st.dataframe(results.shared_table(key, your_value), hide_index=True, width="stretch")
    st.markdown(f"**{TEXT['probes']}**")
    st.dataframe(results.shared_table(("probes", tuple(selected)), probes), hide_index=True, width="stretch")
with guarded("finfo"):
    fc = TEXT["finfo_cols"]
    finfo_rows = [
        {
            fc["format"]: c.format,
            fc["field"]: c.field,
            fc["torch"]: "—" if c.torch is None else f"{c.torch:.6g}",
            fc["ml_dtypes"]: f"{c.ml_dtypes:.6g}",
            fc["measured"]: f"{c.measured:.6g}",
            fc["agree"]: c.agree,
        }
        for c in _finfo_checks()
    ]
    differing = lambda: [r for r in finfo_rows if not r[fc["agree"]]]  # noqa: E731
    with expert(TEXT["finfo"], heading="bold"):
        st.dataframe(results.shared_table(("finfo differs",), differing), hide_index=True, width="stretch")
    with st.expander(TEXT["finfo_all"]):
        st.dataframe(results.shared_table(("finfo",), lambda: finfo_rows), hide_index=True, width="stretch")

# ── properties of every format ──────────────────────────────────────────────────────────────────────────────
with guarded("properties"), expert(TEXT["properties"]):
    pr = TEXT["prop_cols"]

    def properties() -> list[dict]:
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

    st.dataframe(results.shared_table(("format properties",), properties), hide_index=True, width="stretch")
