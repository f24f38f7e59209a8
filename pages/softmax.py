"""Softmax overflow: provoke, measure and fix softmax's overflow, blur and underflow, format by format."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from mpviz import softmax as sm
from mpviz.model import ConfigError
from view import results, text
from view.figures import softmax as softmax_fig
from view.page import dtype_badge, page_header, show_warnings
from view.run_config import run_config
from view.url import UrlParam, dump_bool, parse_bool, parse_choice, seed_from_url, write_url

TEXT = text.section("softmax")

SOURCES = tuple(TEXT["sources"])
METRICS = tuple(TEXT["metrics_choice"])
SCALES = tuple(m * 10.0**e for e in range(-2, 3) for m in (1.0, 2.0, 5.0))  # overall-scale slider stops
GEN = sm.LogitGenerator()
CLOSE = sm.scenario("close").values
DEFAULT_LIST = ", ".join(f"{v:g}" for v in CLOSE)
DEFAULT_FORMATS = ["float32", "float16", "bfloat16"]
MAX_BARS = 48  # longer rows: the most probable entries only


def _bounded(cast, lo: float, hi: float):
    def parse(raw: str):
        value = cast(raw)
        if not lo <= value <= hi:  # also rejects nan
            raise ValueError(raw)
        return value

    return parse


def _formats(raw: str) -> list[str]:
    names = [n for n in raw.split(",") if n]
    if not names or any(n not in sm.FORMAT_NAMES for n in names):
        raise ValueError(raw)
    return names


def _scale(raw: str) -> float:
    value = float(raw)
    if value not in SCALES:
        raise ValueError(raw)
    return value


PARAMS = [
    UrlParam("src", "preset", parse_choice(SOURCES)),
    UrlParam("preset", "large", parse_choice(sm.SCENARIO_NAMES)),
    UrlParam("logits", DEFAULT_LIST, str),
    UrlParam("gen_n", GEN.length, _bounded(int, 1, sm.LIMITS.max_len)),
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


@st.cache_data(max_entries=32, show_spinner=False)
def _compare(logits: tuple, formats: tuple, loss: str) -> sm.Comparison:
    return sm.compare(logits, formats, sm.METHODS, loss)


@st.cache_data(max_entries=32, show_spinner=False)
def _sweep(logits: tuple, formats: tuple) -> sm.Sweep:
    return sm.sweep(logits, formats=formats)


@st.cache_data(max_entries=4, show_spinner=False)
def _exp_curves(formats: tuple) -> tuple:
    return sm.exp_curves(formats)


FIG = {**TEXT["fig"], "methods": TEXT["methods"]}


def _names(items: list[str]) -> str:
    return ", ".join(items) or TEXT["nobody"]


def _broken(m: sm.RowMetrics) -> bool:
    return m.nan + m.inf > 0


page_header(TEXT)
s = st.session_state
if "src" not in s and "src" not in st.query_params and "logits" in st.query_params:
    s.src = "list"  # a link that carries logits means them, whatever the default source
seed_from_url(PARAMS)
show_warnings()

# ── where the logits come from ──────────────────────────────────────────────────────────────────────────────
st.segmented_control(TEXT["source"], SOURCES, key="src", format_func=TEXT["sources"].get, required=True)
logits = sm.scenario_logits("large")  # also the fallback when the chosen source gives no usable row
if s.src == "list":
    st.text_input(TEXT["logits"], key="logits")
    try:
        logits = sm.parse_logits(s.logits)
    except ConfigError as e:
        logits = CLOSE
        st.warning(
            TEXT["bad_logits"].format(
                raw=s.logits[:60], field=e.field, value=e.value, reason=e.reason, used=DEFAULT_LIST
            )
        )
elif s.src == "generator":
    c1, c2, c3, c4, c5 = st.columns(5)
    c1.number_input(TEXT["gen_n"], 1, sm.LIMITS.max_len, key="gen_n")
    c2.slider(TEXT["gen_spread"], 0.0, 20.0, step=0.1, key="gen_spread")
    c3.slider(TEXT["gen_peak"], 0.0, 100.0, step=0.5, key="gen_peak")
    c4.slider(TEXT["gen_center"], -50.0, 50.0, step=0.5, key="gen_center")
    c5.select_slider(TEXT["gen_scale"], SCALES, key="gen_scale", format_func=lambda v: f"{v:g}")
    gen = sm.LogitGenerator(s.gen_n, s.gen_spread, s.gen_peak, s.gen_scale, s.gen_center)
    try:
        logits = gen.logits()
    except ConfigError as e:
        st.warning(TEXT["bad_generator"].format(field=e.field, value=e.value, reason=e.reason))
else:
    st.selectbox(TEXT["preset"], sm.SCENARIO_NAMES, key="preset", format_func=TEXT["presets"].get)
    if not sm.scenario(s.preset).from_trace:
        logits = sm.scenario_logits(s.preset)
    elif (result := results.attention_trace(run_config())) is not None:
        try:
            heads, rows, _ = sm.score_sample_shape(result.trace)
        except ConfigError:
            st.info(TEXT["no_scores"])
        else:
            if s.trace_row == -1:
                s.trace_row = rows - 1
            for key, n in (("trace_head", heads), ("trace_row", rows)):
                if not 0 <= s[key] < n:
                    used = min(max(s[key], 0), n - 1)
                    limit = f"0 … {n - 1}"
                    st.warning(TEXT["bad_trace"].format(field=key, value=s[key], limit=limit, used=used))
                    s[key] = used
            c1, c2 = st.columns(2)
            c1.number_input(TEXT["trace_head"], 0, heads - 1, key="trace_head")
            c2.number_input(TEXT["trace_row"], 0, rows - 1, key="trace_row")
            row = sm.score_row(result.trace, s.trace_head, s.trace_row)
            logits = row.values
            masked = sum(v == -math.inf for v in logits)
            caption = TEXT["trace_caption"].format(
                head=row.head, row=row.row, dtype=row.dtype, n=len(logits), masked=masked
            )
            if row.full_length > len(logits):
                caption += TEXT["trace_cropped"].format(n=len(logits), full=row.full_length)
            st.caption(caption)

c1, c2 = st.columns([3, 2])
c1.segmented_control(TEXT["formats"], sm.FORMAT_NAMES, key="formats", selection_mode="multi")
c2.segmented_control(TEXT["loss"], sm.LOSSES, key="loss", format_func=TEXT["losses"].get, required=True)
formats = tuple(f for f in sm.FORMAT_NAMES if f in (s.formats or DEFAULT_FORMATS))
finite = [v for v in logits if math.isfinite(v)]
st.caption(TEXT["row_summary"].format(n=len(logits), max=max(finite), min=min(finite)))

with st.spinner(TEXT["spinner"]):
    comparison = _compare(tuple(logits), formats, s.loss)

# ── probabilities, side by side ─────────────────────────────────────────────────────────────────────────────
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
st.plotly_chart(softmax_fig.softmax_bars(comparison, MAX_BARS, s.bars_log, labels=FIG), width="stretch")
if len(logits) > MAX_BARS:
    st.caption(TEXT["bars_cropped"].format(k=MAX_BARS, n=len(logits)))
variants = comparison.variants
bad = [f"{v.format} · {v.method}" for v in variants if _broken(v.metrics)]
zeroed = [f"{v.format} · {v.method} ({v.metrics.underflow})" for v in variants if v.metrics.underflow]
moved = [f"{v.format} · {v.method}" for v in variants if v.metrics.argmax_changed]
notes = [TEXT["bars_bad"].format(which=_names(bad)) if bad else TEXT["bars_none_bad"]]
notes += [TEXT["bars_zero"].format(which=_names(zeroed))] if zeroed else []
notes += [TEXT["bars_argmax"].format(which=_names(moved))] if moved else []
for fmt in formats:
    naive, stable = comparison.variant(fmt, "naive").metrics, comparison.variant(fmt, "stable").metrics
    if _broken(naive) and not _broken(stable):
        notes.append(TEXT["bars_fixed"].format(fmt=fmt, err=stable.sum_error))
st.markdown(" ".join(notes))

st.subheader(TEXT["metrics"])
cols = TEXT["cols"]
table = pd.DataFrame(
    [
        {
            cols["format"]: v.format,
            cols["method"]: v.method,
            cols["output"]: v.output_dtype,
            cols["nan"]: v.metrics.nan,
            cols["inf"]: v.metrics.inf,
            cols["zero"]: v.metrics.underflow,
            cols["sum"]: v.metrics.sum_error,
            cols["abs"]: v.metrics.max_abs_error,
            cols["rel"]: v.metrics.max_rel_error,
            cols["kl"]: v.metrics.kl,
            cols["argmax"]: v.metrics.argmax_changed,
            cols["order"]: v.metrics.order_lost,
            cols["grad_rel"]: v.grad.max_rel_error,
            cols["grad_bad"]: v.grad.nan + v.grad.inf,
            cols["grad_zero"]: v.grad.underflow,
        }
        for v in comparison.variants
    ]
)
for k in ("sum", "abs", "rel", "kl", "grad_rel"):  # as text, so nan and inf read as nan and inf
    table[cols[k]] = table[cols[k]].map(lambda x: f"{x:.2e}")
st.dataframe(table, hide_index=True)
st.caption(TEXT["metrics_note"])

# ── the sweep ───────────────────────────────────────────────────────────────────────────────────────────────
st.subheader(TEXT["sweep"])
st.segmented_control(TEXT["metric"], METRICS, key="metric", format_func=TEXT["metrics_choice"].get, required=True)
if max(abs(v) for v in finite) > 0:  # an all-zero row has no scale to sweep
    with st.spinner(TEXT["sweep_spinner"].format(n=len(sm.sweep_scales()))):
        sweep = _sweep(tuple(logits), formats)
    lo, hi = sweep.scales[0], sweep.scales[-1]
    st.caption(TEXT["sweep_intro"].format(lo=lo, hi=hi))
    st.plotly_chart(softmax_fig.softmax_sweep(sweep, s.metric, labels=FIG), width="stretch")
    lines = []
    for fmt in formats:
        naive = next(c for c in sweep.curves if c.format == fmt and c.method == "naive")
        stable = next(c for c in sweep.curves if c.format == fmt and c.method == "stable")
        compute = comparison.variant(fmt, "naive").compute_dtype
        t = sweep.overflow_scale.get(compute)
        first = f"{naive.first_nonfinite:.3g}" if naive.first_nonfinite else TEXT["sweep_never"].format(hi=hi)
        line = TEXT["sweep_naive"].format(fmt=fmt, x=first, marker=TEXT["sweep_marker"].format(t=t) if t else "")
        stable_first = f"{stable.first_nonfinite:.3g}" if stable.first_nonfinite else TEXT["sweep_never"].format(hi=hi)
        if stable.first_underflow:
            line += TEXT["sweep_stable"].format(stable=stable_first, under=f"{stable.first_underflow:.3g}")
        else:
            line += TEXT["sweep_stable_no_zero"].format(stable=stable_first, hi=hi)
        lines.append(f"- {line}.")
    st.markdown("\n".join(lines))

# ── exp(x) and each format's ceiling ────────────────────────────────────────────────────────────────────────
st.subheader(TEXT["exp"])
curves = _exp_curves(formats)
st.plotly_chart(softmax_fig.softmax_exp(curves, labels=FIG), width="stretch")
st.markdown(
    "\n".join(
        "- "
        + TEXT["exp_note"].format(
            dtype=c.dtype,
            over=c.thresholds.overflow_from,
            ln=c.thresholds.log_max,
            under=c.thresholds.underflow_from,
        )
        for c in curves[1:]
    )
)

# ── two close logits ────────────────────────────────────────────────────────────────────────────────────────
st.subheader(TEXT["close"])
exact = st.column_config.NumberColumn(format="%.10g")
c1, c2 = st.columns(2)
c1.number_input(TEXT["pair_a"], -sm.LIMITS.max_abs_logit, sm.LIMITS.max_abs_logit, key="pair_a", format="%g")
c2.number_input(TEXT["pair_b"], -sm.LIMITS.max_abs_logit, sm.LIMITS.max_abs_logit, key="pair_b", format="%g")
pairs = sm.close_logits(s.pair_a, s.pair_b, formats)
cc = TEXT["close_cols"]
st.dataframe(
    pd.DataFrame(
        [
            {
                cc["format"]: p.format,
                cc["spacing"]: p.spacing,
                cc["a"]: p.stored[0],
                cc["b"]: p.stored[1],
                cc["distinct"]: p.distinct,
                cc["pa"]: p.probs[0],
                cc["pb"]: p.probs[1],
                cc["ra"]: p.reference[0],
                cc["rb"]: p.reference[1],
            }
            for p in pairs
        ]
    ),
    hide_index=True,
    column_config={cc[k]: exact for k in ("spacing", "a", "b", "pa", "pb", "ra", "rb")},
)
st.markdown(
    TEXT["close_note"].format(
        gap=abs(s.pair_b - s.pair_a),
        kept=_names([f"{p.format} ({p.spacing:.3g})" for p in pairs if p.distinct]),
        merged=_names([f"{p.format} ({p.spacing:.3g})" for p in pairs if not p.distinct]),
    )
)

# ── 8-bit probabilities ─────────────────────────────────────────────────────────────────────────────────────
st.subheader(TEXT["quant"])
linear, log2 = sm.quantize_probs(comparison.reference)
qc = TEXT["quant_cols"]
st.dataframe(
    pd.DataFrame(
        [
            {
                qc["scheme"]: q.scheme,
                qc["smallest"]: q.smallest_nonzero,
                qc["abs"]: q.metrics.max_abs_error,
                qc["rel"]: q.metrics.max_rel_error,
                qc["zero"]: q.metrics.underflow,
                qc["kl"]: q.metrics.kl,
            }
            for q in (linear, log2)
        ]
    ),
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
