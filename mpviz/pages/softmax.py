"""Softmax overflow: provoke, measure and fix softmax's overflow, blur and underflow, format by format."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from mpviz import softmax as sm
from mpviz import softmax_scale
from mpviz.app import text
from mpviz.app.page import chart, dtype_badge, expert, guarded, page_header, show_warnings
from mpviz.app.run_config import run_config
from mpviz.app.serving import results
from mpviz.app.url import UrlParam, dump_bool, parse_bool, parse_choice, seed_from_url, write_url
from mpviz.model import ConfigError
from mpviz.presentation.figures import softmax as softmax_fig

TEXT = text.section("softmax")

SOURCES = tuple(TEXT["sources"])
METRICS = tuple(TEXT["metrics_choice"])
SCALES = tuple(m * 10.0**e for e in range(-2, 3) for m in (1.0, 2.0, 5.0))  # overall-scale slider stops
GEN = sm.LogitGenerator()
CLOSE = sm.scenario("close").values
DEFAULT_LIST = ", ".join(f"{v:g}" for v in CLOSE)
DEFAULT_FORMATS = ["float32", "float16", "bfloat16"]
MAX_BARS = 48  # longer rows: the most probable entries only
MAX_ERROR_POINTS = 300  # entries per recipe in the error chart
FIG = {**TEXT["fig"], "methods": TEXT["methods"]}


def _bounded(cast, lo: float, hi: float):
    def parse(raw: str):
        value = cast(raw)
        if not lo <= value <= hi:  # also rejects nan
            raise ValueError(raw)
        return value

    return parse


def _formats(raw: str) -> list[str]:
    names = list(dict.fromkeys(n for n in raw.split(",") if n))  # each once, in the order given
    if not names or any(n not in sm.FORMAT_NAMES for n in names):
        raise ValueError(raw)
    return names


def _scale(raw: str) -> float:
    value = float(raw)
    if value not in SCALES:
        raise ValueError(raw)
    return value


PARAMS = [
    UrlParam("source", "preset", parse_choice(SOURCES), aliases=("src",)),
    UrlParam("preset", "large", parse_choice(sm.SCENARIO_NAMES)),
    UrlParam("logits", DEFAULT_LIST, str),
    UrlParam("gen_length", GEN.length, _bounded(int, 1, sm.LIMITS.max_len), aliases=("gen_n",)),
    UrlParam("gen_spread", GEN.spread, _bounded(float, 0.0, 20.0)),
    UrlParam("gen_peak", GEN.peak, _bounded(float, 0.0, 100.0)),
    UrlParam("gen_center", GEN.center, _bounded(float, -50.0, 50.0)),
    UrlParam("gen_scale", GEN.scale, _scale, lambda v: f"{v:g}"),
    UrlParam("trace_head", 0, int),
    UrlParam("trace_row", -1, int),  # -1: the last row (the one that sees every key)
    UrlParam("formats", DEFAULT_FORMATS, _formats, ",".join),
    UrlParam("loss", "dot", parse_choice(sm.LOSSES)),
    UrlParam("metric", "max_rel_error", parse_choice(METRICS)),
    UrlParam("bars_log", True, parse_bool, dump_bool),
    UrlParam("pair_a", CLOSE[0], _bounded(float, -sm.LIMITS.max_abs_logit, sm.LIMITS.max_abs_logit)),
    UrlParam("pair_b", CLOSE[1], _bounded(float, -sm.LIMITS.max_abs_logit, sm.LIMITS.max_abs_logit)),
]


# table column key (locale) → RowMetrics field
METRIC_FIELDS = {
    "nan": "nan",
    "inf": "inf",
    "zero": "underflow",
    "sum": "sum_error",
    "abs": "max_abs_error",
    "rel": "max_rel_error",
    "kl": "kl",
    "argmax": "argmax_changed",
    "order": "order_lost",
}


def _metric_cells(metrics: sm.RowMetrics, names, keys: tuple[str, ...]) -> dict:
    """Table cells {column title: value} of a RowMetrics, for the column keys asked for."""
    return {names[k]: getattr(metrics, METRIC_FIELDS[k]) for k in keys}


def _names(variants) -> str:
    """'float16 · naive, bfloat16 · max-subtracted' (or 'none')."""
    return ", ".join(f"{v.format} · {TEXT['methods'][v.method]}" for v in variants) or TEXT["nobody"]


def _compare(logits: tuple, formats: tuple, loss: str) -> sm.Comparison:
    key = ("softmax-compare", logits, formats, loss)
    with results.spinner(key, TEXT["spinner"]):
        compare = lambda: sm.compare(logits, formats, sm.METHODS, loss)  # noqa: E731
        return results.shared(key, compare, sm.LIMITS.is_heavy(len(logits)))


def _sweep(logits: tuple, formats: tuple) -> softmax_scale.Sweep:
    key = ("softmax-sweep", logits, formats)
    with results.spinner(key, TEXT["sweep_spinner"].format(n=len(softmax_scale.sweep_scales()))):
        sweep = lambda: softmax_scale.sweep(logits, formats=formats)  # noqa: E731
        return results.shared(key, sweep, sm.LIMITS.is_heavy(len(logits)))


def _scenario(name: str) -> tuple[float, ...]:
    """A preset's row, made once per process: grown until it overflows, a row costs more than the page around it."""
    return results.shared(("softmax-scenario", name), lambda: sm.scenario_logits(name))


def _trace_row() -> tuple[float, ...] | None:
    """A score row of the sidebar's traced attention run (head/row from the widgets), or None after saying why."""
    result = results.attention_trace(run_config())
    if result is None:
        return None
    try:
        heads, rows, _ = sm.score_sample_shape(result.trace)
    except ConfigError:
        st.info(TEXT["no_scores"])
        return None
    if s.trace_row == -1:
        s.trace_row = rows - 1
    for key, n in (("trace_head", heads), ("trace_row", rows)):
        if not 0 <= s[key] < n:
            used = min(max(s[key], 0), n - 1)
            st.warning(TEXT["bad_trace"].format(field=key, value=text.echo(s[key]), limit=f"0 … {n - 1}", used=used))
            s[key] = used
    c1, c2 = st.columns(2)
    c1.number_input(TEXT["trace_head"], 0, heads - 1, key="trace_head")
    c2.number_input(TEXT["trace_row"], 0, rows - 1, key="trace_row")
    row = sm.score_row(result.trace, s.trace_head, s.trace_row)
    masked = sum(v == -math.inf for v in row.values)
    caption = TEXT["trace_caption"].format(
        head=row.head, row=row.row, dtype=row.dtype, n=len(row.values), masked=masked
    )
    if row.full_length > len(row.values):
        caption += TEXT["trace_cropped"].format(n=len(row.values), full=row.full_length)
    st.caption(caption)
    return row.values


page_header(TEXT)
s = st.session_state
if "source" not in s and not {"source", "src"} & set(st.query_params) and "logits" in st.query_params:
    s.source = "list"  # a link that carries logits means them, whatever the default source
seed_from_url(PARAMS)
show_warnings()

# ── where the logits come from ──────────────────────────────────────────────────────────────────────────────
logits = _scenario("large")  # also the fallback when the chosen source gives no usable row
with guarded("softmax logits"):
    st.segmented_control(TEXT["source"], SOURCES, key="source", format_func=TEXT["sources"].get, required=True)
    if s.source == "list":
        st.text_input(TEXT["logits"], key="logits", max_chars=20_000)
        try:
            logits = sm.parse_logits(s.logits)
        except ConfigError as e:
            logits = CLOSE
            raw, value, used = text.echo(s.logits), text.echo(e.value), text.echo(DEFAULT_LIST)
            st.warning(TEXT["bad_logits"].format(raw=raw, field=e.field, value=value, reason=text.reason(e), used=used))
    elif s.source == "generator":
        c1, c2, c3, c4, c5 = st.columns(5)
        c1.number_input(TEXT["gen_n"], 1, sm.LIMITS.max_len, key="gen_length")
        c2.slider(TEXT["gen_spread"], 0.0, 20.0, step=0.1, key="gen_spread")
        c3.slider(TEXT["gen_peak"], 0.0, 100.0, step=0.5, key="gen_peak")
        c4.slider(TEXT["gen_center"], -50.0, 50.0, step=0.5, key="gen_center")
        c5.select_slider(TEXT["gen_scale"], SCALES, key="gen_scale", format_func=lambda v: f"{v:g}")
        gen = sm.LogitGenerator(s.gen_length, s.gen_spread, s.gen_peak, s.gen_scale, s.gen_center)
        try:
            logits = results.shared(("softmax-generated", gen), gen.logits)
        except ConfigError as e:
            st.warning(TEXT["bad_generator"].format(field=e.field, value=text.echo(e.value), reason=text.reason(e)))
    else:
        st.selectbox(TEXT["preset"], sm.SCENARIO_NAMES, key="preset", format_func=TEXT["presets"].get)
        if not sm.scenario(s.preset).from_trace:
            logits = _scenario(s.preset)
        elif (row := _trace_row()) is not None:
            logits = row

c1, c2 = st.columns([3, 2])
c1.segmented_control(TEXT["formats"], sm.FORMAT_NAMES, key="formats", selection_mode="multi")
c2.segmented_control(TEXT["loss"], sm.LOSSES, key="loss", format_func=TEXT["losses"].get, required=True)
formats = tuple(f for f in sm.FORMAT_NAMES if f in (s.formats or DEFAULT_FORMATS))
finite = [v for v in logits if math.isfinite(v)]
st.caption(TEXT["row_summary"].format(n=len(logits), max=max(finite), min=min(finite)))
logits = tuple(logits)

# ── probabilities, side by side ─────────────────────────────────────────────────────────────────────────────
comparison = None
with guarded("softmax probabilities"):
    comparison = _compare(logits, formats, s.loss)
    st.subheader(TEXT["bars"])
    for fmt in formats:
        badges = []
        for v in (v for v in comparison.variants if v.format == fmt):
            m = v.metrics
            marks = [f":red-badge[{TEXT['badge_nan'].format(n=m.nan)}]"] if m.nan else []
            marks += [f":red-badge[{TEXT['badge_inf'].format(n=m.inf)}]"] if m.inf else []
            marks += [f":orange-badge[{TEXT['badge_zero'].format(n=m.underflow)}]"] if m.underflow else []
            marks += [f":violet-badge[{TEXT['badge_argmax']}]"] if m.argmax_changed else []
            marks = marks or [f":green-badge[{TEXT['badge_ok']}]"]
            badges.append(f"**{TEXT['methods'][v.method]}** {' '.join(marks)}")
        st.markdown(f"{dtype_badge(fmt)} &nbsp; " + " &nbsp;·&nbsp; ".join(badges), unsafe_allow_html=True)
    st.toggle(TEXT["bars_log"], key="bars_log")
    bars = ("softmax bars", logits, formats, s.loss, s.bars_log)
    chart(results.shared_figure(bars, lambda: softmax_fig.softmax_bars(comparison, MAX_BARS, s.bars_log, labels=FIG)))
    if len(logits) > MAX_BARS:
        st.caption(TEXT["bars_cropped"].format(k=MAX_BARS, n=len(logits)))
    summary = comparison.summary()
    notes = [TEXT["bars_bad"].format(which=_names(summary.broken)) if summary.broken else TEXT["bars_none_bad"]]
    if summary.flushed:
        which = ", ".join(f"{_names([v])} ({v.metrics.underflow})" for v in summary.flushed)
        notes.append(TEXT["bars_zero"].format(which=which))
    if summary.argmax_moved:
        notes.append(TEXT["bars_argmax"].format(which=_names(summary.argmax_moved)))
    notes += [
        TEXT["bars_fixed"].format(fmt=v.format, err=v.metrics.sum_error) for v in summary.rescued_by_max_subtraction
    ]
    st.markdown(" ".join(notes))

    st.subheader(TEXT["errors"])
    errors = ("softmax errors", logits, formats, s.loss)
    chart(results.shared_figure(errors, lambda: softmax_fig.softmax_errors(comparison, MAX_ERROR_POINTS, labels=FIG)))
    positive = sum(p > 0 for p in comparison.reference)
    cropped = TEXT["errors_cropped"].format(k=MAX_ERROR_POINTS, n=positive) if positive > MAX_ERROR_POINTS else ""
    st.caption(TEXT["errors_caption"] + cropped)

    with expert(TEXT["metrics"]):  # fifteen columns: folded away in presenter mode
        cols = TEXT["cols"]

        def metrics() -> pd.DataFrame:
            table = pd.DataFrame(
                [
                    {
                        cols["format"]: v.format,
                        cols["method"]: TEXT["methods"][v.method],
                        cols["output"]: v.output_dtype,
                        **_metric_cells(
                            v.metrics, cols, ("nan", "inf", "zero", "sum", "abs", "rel", "kl", "argmax", "order")
                        ),
                        cols["grad_rel"]: v.grad.max_rel_error,
                        cols["grad_bad"]: v.grad.nan + v.grad.inf,
                        cols["grad_zero"]: v.grad.underflow,
                    }
                    for v in comparison.variants
                ]
            )
            for k in ("sum", "abs", "rel", "kl", "grad_rel"):  # as text, so nan and inf read as nan and inf
                table[cols[k]] = table[cols[k]].map(lambda x: f"{x:.2e}")
            return table

        key = ("softmax metrics", logits, formats, s.loss)
        st.dataframe(results.shared_table(key, metrics), hide_index=True)
        st.caption(TEXT["metrics_note"])

# ── the sweep ───────────────────────────────────────────────────────────────────────────────────────────────
with guarded("softmax sweep"):
    st.subheader(TEXT["sweep"])
    st.segmented_control(TEXT["metric"], METRICS, key="metric", format_func=TEXT["metrics_choice"].get, required=True)
    if max(abs(v) for v in finite) > 0:  # an all-zero row has no scale to sweep
        sweep = _sweep(logits, formats)
        hi = sweep.scales[-1]
        st.caption(TEXT["sweep_intro"].format(lo=sweep.scales[0], hi=hi))
        key = ("softmax sweep", logits, formats, s.metric)
        chart(results.shared_figure(key, lambda: softmax_fig.softmax_sweep(sweep, s.metric, labels=FIG)))

        def when(scale: float | None) -> str:
            return TEXT["sweep_never"].format(hi=hi) if scale is None else TEXT["sweep_at"].format(x=scale)

        lines = []
        for f in sweep.naive_vs_stable():
            t = f.exp_overflow_scale
            line = TEXT["sweep_naive"].format(
                fmt=f.format, when=when(f.naive_first_nonfinite), marker=TEXT["sweep_marker"].format(t=t) if t else ""
            )
            stable = when(f.stable_first_nonfinite)
            if f.stable_first_underflow is not None:
                line += TEXT["sweep_stable"].format(when=stable, under=f.stable_first_underflow)
            else:
                line += TEXT["sweep_stable_no_zero"].format(when=stable, hi=hi)
            lines.append("- " + TEXT["sweep_line"].format(line=line))
        st.markdown("\n".join(lines))

# ── exp(x) and each format's ceiling ────────────────────────────────────────────────────────────────────────
with guarded("softmax exp"):
    st.subheader(TEXT["exp"])
    curves = results.shared(("softmax-exp", formats), lambda: softmax_scale.exp_curves(formats))
    chart(results.shared_figure(("softmax exp", formats), lambda: softmax_fig.softmax_exp(curves, labels=FIG)))
    notes = [
        "- "
        + TEXT["exp_note"].format(
            dtype=c.dtype, over=c.thresholds.overflow_from, ln=c.thresholds.log_max, under=c.thresholds.underflow_from
        )
        for c in curves[1:]
    ]
    st.markdown("\n".join(notes))

# ── two close logits ────────────────────────────────────────────────────────────────────────────────────────
with guarded("softmax close logits"):
    st.subheader(TEXT["close"])
    exact = st.column_config.NumberColumn(format="%.10g")
    c1, c2 = st.columns(2)
    c1.number_input(TEXT["pair_a"], -sm.LIMITS.max_abs_logit, sm.LIMITS.max_abs_logit, key="pair_a", format="%g")
    c2.number_input(TEXT["pair_b"], -sm.LIMITS.max_abs_logit, sm.LIMITS.max_abs_logit, key="pair_b", format="%g")
    pairs = results.shared(
        ("softmax-close", s.pair_a, s.pair_b, formats), lambda: sm.close_logits(s.pair_a, s.pair_b, formats)
    )
    cc = TEXT["close_cols"]

    def bin_text(b) -> str:
        return f"[{b.lo:.10g}, {b.hi:.10g}]"

    def close() -> list[dict]:
        return [
            {
                cc["format"]: p.format,
                cc["spacing"]: p.spacing,
                cc["a"]: p.stored[0],
                cc["b"]: p.stored[1],
                cc["bin_a"]: bin_text(p.bins[0]),
                cc["bin_b"]: bin_text(p.bins[1]),
                cc["distinct"]: p.distinct,
                cc["pa"]: p.probs[0],
                cc["pb"]: p.probs[1],
                cc["ra"]: p.reference[0],
                cc["rb"]: p.reference[1],
            }
            for p in pairs
        ]

    st.dataframe(
        results.shared_table(("softmax close", s.pair_a, s.pair_b, formats), close),
        hide_index=True,
        column_config={cc[k]: exact for k in ("spacing", "a", "b", "pa", "pb", "ra", "rb")},
    )
    note = TEXT["close_note"].format(
        gap=abs(s.pair_b - s.pair_a),
        kept=", ".join(p.format for p in pairs if p.distinct) or TEXT["nobody"],
        merged=", ".join(p.format for p in pairs if not p.distinct) or TEXT["nobody"],
    )
    example_format = "float16" if "float16" in formats else next((f for f in formats if f != "float32"), formats[0])
    magnitude = max(abs(s.pair_a), abs(s.pair_b))
    counterexamples = results.shared(
        ("softmax-gap", magnitude, example_format), lambda: sm.gap_counterexamples(magnitude, example_format)
    )
    if (ex := counterexamples) is not None:
        note += " " + TEXT["close_example"].format(
            fmt=ex.format,
            x=magnitude,
            ka=ex.kept[0],
            kb=ex.kept[1],
            kgap=ex.kept_gap,
            spacing=ex.spacing,
            ksa=ex.kept_stored[0],
            ksb=ex.kept_stored[1],
            ma=ex.merged[0],
            mb=ex.merged[1],
            mgap=ex.merged_gap,
            ms=ex.merged_stored,
        )
    st.markdown(note)

# ── 8-bit probabilities ─────────────────────────────────────────────────────────────────────────────────────
if comparison is not None:
    with guarded("softmax 8-bit"), expert(TEXT["quant"]):  # an aside: folded away in presenter mode
        key = ("softmax-quantized", logits, formats, s.loss)  # the comparison's key: its float64 reference
        linear, log2 = results.shared(key, lambda: sm.quantize_probs(comparison.reference))
        qc = TEXT["quant_cols"]

        def rows() -> list[dict]:
            return [
                {
                    qc["scheme"]: TEXT["schemes"][q.scheme],
                    qc["smallest"]: q.smallest_nonzero,
                    **_metric_cells(q.metrics, qc, ("abs", "rel", "zero", "kl")),
                }
                for q in (linear, log2)
            ]

        st.dataframe(
            results.shared_table(("quantized table", *key), rows),
            hide_index=True,
            column_config={qc[k]: st.column_config.NumberColumn(format="%.3e") for k in ("smallest", "abs", "rel")},
        )
        st.markdown(
            TEXT["quant_note"].format(
                lin_step=linear.step,
                lin_zero=linear.metrics.underflow,
                log_step=log2.step,
                floor=log2.smallest_nonzero,
                log_zero=log2.metrics.underflow,
                log_abs=log2.metrics.max_abs_error,
                lin_abs=linear.metrics.max_abs_error,
            )
        )
write_url(PARAMS)
