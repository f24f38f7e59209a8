"""Softmax overflow: provoke, measure and fix softmax's overflow, blur and underflow, format by format. Widgets and
drawing only: what is shown comes from the view model mpviz.presentation.view_models.softmax."""

import math

import streamlit as st

from mpviz import softmax as sm
from mpviz.app import text
from mpviz.app.page import chart, dtype_badge, guarded, page_header, reference, row, show_warnings
from mpviz.app.run_config import run_config
from mpviz.app.serving import results
from mpviz.app.url import UrlParam, dump_bool, parse_bool, parse_choice, seed_from_url, write_url
from mpviz.presentation.view_models import softmax as vm

TEXT = text.section("softmax")
SOURCES = tuple(TEXT["sources"])
METRICS = tuple(TEXT["metrics_choice"])
GEN, LOGIT = vm.GENERATOR, sm.LIMITS.max_abs_logit
PARAMS = [
    UrlParam("source", "preset", parse_choice(SOURCES), aliases=("src",)),
    UrlParam("preset", "large", parse_choice(sm.SCENARIO_NAMES)),
    UrlParam("logits", vm.DEFAULT_LIST, str),
    UrlParam("gen_length", GEN.length, vm.bounded(int, 1, sm.LIMITS.max_len), aliases=("gen_n",)),
    UrlParam("gen_spread", GEN.spread, vm.bounded(float, 0.0, 20.0)),
    UrlParam("gen_peak", GEN.peak, vm.bounded(float, 0.0, 100.0)),
    UrlParam("gen_center", GEN.center, vm.bounded(float, -50.0, 50.0)),
    UrlParam("gen_scale", GEN.scale, vm.parse_scale, lambda v: f"{v:g}"),
    UrlParam("trace_head", 0, int),
    UrlParam("trace_row", -1, int),  # -1: the last row (the one that sees every key)
    UrlParam("formats", list(vm.DEFAULT_FORMATS), vm.parse_formats, ",".join),
    UrlParam("loss", "dot", parse_choice(sm.LOSSES)),
    UrlParam("metric", "max_rel_error", parse_choice(METRICS)),
    UrlParam("bars_log", True, parse_bool, dump_bool),
    UrlParam("pair_a", vm.CLOSE[0], vm.bounded(float, -LOGIT, LOGIT)),
    UrlParam("pair_b", vm.CLOSE[1], vm.bounded(float, -LOGIT, LOGIT)),
]

page_header(TEXT)
rc, s = run_config(), st.session_state
if "source" not in s and not {"source", "src"} & set(st.query_params) and "logits" in st.query_params:
    s.source = "list"  # a link that carries logits means them, whatever the default source
seed_from_url(PARAMS)
show_warnings()

# ── where the logits come from ──────────────────────────────────────────────────────────────────────────────
chosen = vm.Logits(vm.scenario("large"))  # also the fallback when the chosen source gives no usable row
with guarded("softmax logits"):
    st.segmented_control(TEXT["source"], SOURCES, key="source", format_func=TEXT["sources"].get, required=True)
    if s.source == "list":
        st.text_input(TEXT["logits"], key="logits", max_chars=20_000)
        chosen = vm.listed(s.logits)
    elif s.source == "generator":
        c = row()
        c.number_input(TEXT["gen_n"], 1, sm.LIMITS.max_len, key="gen_length")
        c.slider(TEXT["gen_spread"], 0.0, 20.0, step=0.1, key="gen_spread")
        c.slider(TEXT["gen_peak"], 0.0, 100.0, step=0.5, key="gen_peak")
        c.slider(TEXT["gen_center"], -50.0, 50.0, step=0.5, key="gen_center")
        c.select_slider(TEXT["gen_scale"], vm.SCALES, key="gen_scale", format_func=lambda v: f"{v:g}")
        chosen = vm.generated(sm.LogitGenerator(s.gen_length, s.gen_spread, s.gen_peak, s.gen_scale, s.gen_center))
    else:
        st.selectbox(TEXT["preset"], sm.SCENARIO_NAMES, key="preset", format_func=TEXT["presets"].get)
        if not sm.scenario(s.preset).from_trace:
            chosen = vm.Logits(vm.scenario(s.preset))
        elif results.attention_trace(rc) is not None:
            if (shape := vm.score_shape(rc)) is None:
                st.info(TEXT["no_scores"])
            else:
                if s.trace_row == -1:
                    s.trace_row = shape[1] - 1
                for key, n in zip(("trace_head", "trace_row"), shape, strict=True):
                    if not 0 <= s[key] < n:
                        used, limit = min(max(s[key], 0), n - 1), f"0 … {n - 1}"
                        st.warning(TEXT["bad_trace"].format(field=key, value=text.echo(s[key]), limit=limit, used=used))
                        s[key] = used
                c = row()
                c.number_input(TEXT["trace_head"], 0, shape[0] - 1, key="trace_head", width=240)
                c.number_input(TEXT["trace_row"], 0, shape[1] - 1, key="trace_row", width=240)
                scores = vm.score_row(rc, s.trace_head, s.trace_row)
                st.caption(scores.caption)
                chosen = vm.Logits(scores.values)
    if chosen.problem:
        st.warning(chosen.problem)

c = row()
c.segmented_control(TEXT["formats"], sm.FORMAT_NAMES, key="formats", selection_mode="multi")
c.segmented_control(TEXT["loss"], sm.LOSSES, key="loss", format_func=TEXT["losses"].get, required=True)
formats = tuple(f for f in sm.FORMAT_NAMES if f in (s.formats or vm.DEFAULT_FORMATS))
logits, finite = chosen.values, [v for v in chosen.values if math.isfinite(v)]
st.caption(TEXT["row_summary"].format(n=len(logits), max=max(finite), min=min(finite)))

# ── probabilities, side by side ─────────────────────────────────────────────────────────────────────────────
compared = False
with guarded("softmax probabilities"):
    results.computed(TEXT["spinner"], vm.compare, logits, formats, s.loss)
    compared = True
    found = vm.probabilities(logits, formats, s.loss)
    st.subheader(TEXT["bars"])
    lines = (f"{dtype_badge(fmt)} &nbsp; {badges}" for fmt, badges in found.badges)  # one element, a line each
    st.markdown("  \n".join(lines), unsafe_allow_html=True)
    st.toggle(TEXT["bars_log"], key="bars_log")
    chart(vm.bars_figure(logits, formats, s.loss, s.bars_log))
    if found.bars_cropped:
        st.caption(found.bars_cropped)
    st.markdown(found.verdict)
    st.subheader(TEXT["errors"])
    chart(vm.errors_figure(logits, formats, s.loss))
    st.caption(found.errors_caption)
    with reference(TEXT["metrics"], "ref_metrics") as shown:  # fifteen columns: built only once opened
        if shown:
            st.dataframe(vm.metrics_table(logits, formats, s.loss), hide_index=True)
            st.caption(TEXT["metrics_note"])

# ── the sweep ───────────────────────────────────────────────────────────────────────────────────────────────
with guarded("softmax sweep"):
    st.subheader(TEXT["sweep"])
    st.segmented_control(TEXT["metric"], METRICS, key="metric", format_func=TEXT["metrics_choice"].get, required=True)
    if max(abs(v) for v in finite) > 0:  # an all-zero row has no scale to sweep
        results.computed(TEXT["sweep_spinner"].format(n=vm.SWEEP_POINTS), vm.sweep, logits, formats)
        intro, lines = vm.sweep_lines(logits, formats)
        st.caption(intro)
        chart(vm.sweep_figure(logits, formats, s.metric))
        st.markdown(lines)

# ── exp(x) and each format's ceiling ────────────────────────────────────────────────────────────────────────
with guarded("softmax exp"):
    st.subheader(TEXT["exp"])
    chart(vm.exp_figure(formats))
    st.markdown(vm.exp_notes(formats))

# ── two close logits ────────────────────────────────────────────────────────────────────────────────────────
with guarded("softmax close logits"):
    st.subheader(TEXT["close"])
    c = row()
    c.number_input(TEXT["pair_a"], -LOGIT, LOGIT, key="pair_a", format="%g", width=240)
    c.number_input(TEXT["pair_b"], -LOGIT, LOGIT, key="pair_b", format="%g", width=240)
    exact = st.column_config.NumberColumn(format="%.10g")
    exact_cols = {TEXT["close_cols"][k]: exact for k in ("spacing", "a", "b", "pa", "pb", "ra", "rb")}
    st.dataframe(vm.close_table(s.pair_a, s.pair_b, formats), hide_index=True, column_config=exact_cols)
    st.markdown(vm.close_note(s.pair_a, s.pair_b, formats))

# ── 8-bit probabilities ─────────────────────────────────────────────────────────────────────────────────────
with guarded("softmax 8-bit"), reference(TEXT["quant"], "ref_quant") as shown:  # an aside
    if shown and compared:
        small = st.column_config.NumberColumn(format="%.3e")
        small_cols = {TEXT["quant_cols"][k]: small for k in ("smallest", "abs", "rel")}
        st.dataframe(vm.quantized_table(logits, formats, s.loss), hide_index=True, column_config=small_cols)
        st.markdown(vm.quantized_note(logits, formats, s.loss))
write_url(PARAMS)
