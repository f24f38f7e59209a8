"""Tutorial claims, checked: each claim from the seed tutorials next to the measurement that confirms, limits or
refutes it. The verdicts come from mpviz.claims; this page only words them."""

import math

import pandas as pd
import streamlit as st

from mpviz import claims, formats
from view import text
from view.figures import claims as claims_fig
from view.figures import formats as formats_fig
from view.figures import policy as policy_fig
from view.page import page_header, show_warnings
from view.url import UrlParam, dump_bool, parse_bool, parse_choice, seed_from_url, write_url

TEXT = text.section("claims")
RANGE_LABELS = {**text.section("formats")["figure"], **TEXT["labels"]}  # the formats lesson's range chart

BADGE_COLORS = {
    "holds": "green",
    "partly_holds": "orange",
    "depends_on_device": "blue",
    "does_not_hold": "red",
    "inconclusive": "gray",
}
FILTERS = ("all", *claims.VERDICTS)
PARAMS = [
    UrlParam("verdict", "all", parse_choice(FILTERS)),
    UrlParam("slow", False, parse_bool, dump_bool),
]


@st.cache_data(max_entries=32, show_spinner=False)
def measured(claim_id: int) -> claims.Checked:
    """One claim's check, shared by every session (cleared with the process)."""
    return claims.check(claim_id)


def badge(verdict: str) -> str:
    return f":{BADGE_COLORS[verdict]}-badge[{TEXT['verdicts'][verdict]}]"


def category(cat: str | None) -> str:
    return TEXT["category_phrase"][cat or "none"]


def ops_list(ops: tuple[str, ...]) -> str:
    return ", ".join(f"`{op.removeprefix('aten.').rsplit('.', 1)[0]}`" for op in ops) or TEXT["no_ops"]


# ── evidence, one view per kind ─────────────────────────────────────────────────────────────────────────────
def policy_view(c: claims.Checked, words: dict) -> None:
    ev: claims.PolicyEvidence = c.evidence
    fields = dict(c.headline)
    for run in ev.devices:
        fields[f"{run.device}_cat"] = category(next(iter(run.categories.values())))
        fields[f"{run.device}_low"] = ops_list(run.low_precision_ops)
    st.markdown(words["explain"].format(**fields))
    labels = {run.device: TEXT["device_labels"][run.trace_device] for run in ev.devices}
    for col, run in zip(st.columns(len(ev.devices)), ev.devices, strict=True):
        col.markdown(f"**{labels[run.device]}** {badge(c.device_verdicts[run.device])}")
        for probe in run.probes:
            line = TEXT["probe"].format(
                function=probe.function, inputs=", ".join(probe.input_dtypes), out=probe.output_dtype
            )
            col.caption(line + (TEXT["probe_fake"] if probe.fake else ""))
            if probe.error:
                col.error(TEXT["probe_error"].format(error=probe.error))
            key = f"steps_{c.claim}_{run.device}_{probe.function}"
            col.plotly_chart(policy_fig.call_steps_figure(list(probe.steps)), width="stretch", key=key)
        entries = "; ".join(f"`{op.removeprefix('aten::')}` {category(cat)}" for op, cat in run.categories.items())
        col.caption(TEXT["policy_line"].format(device=run.device.upper(), entries=entries))
    table = pd.DataFrame({labels[run.device]: run.landmarks for run in ev.devices}).rename_axis(TEXT["landmark"])
    st.dataframe(table, width="stretch")


def range_view(c: claims.Checked, words: dict) -> None:
    ev: claims.RangeEvidence = c.evidence
    bf, f32 = ev.bfloat16, ev.float32
    fields = dict(
        bf_max=bf.max,
        f32_max=f32.max,
        max_ratio=ev.max_ratio,
        normal=bf.smallest_normal,
        bf_sub=bf.smallest_subnormal,
        f32_sub=f32.smallest_subnormal,
        sub_ratio=ev.subnormal_ratio,
        bf_mant=bf.mantissa_bits,
        f32_mant=f32.mantissa_bits,
    )
    st.markdown(words["explain"].format(**fields))
    st.plotly_chart(
        formats_fig.range_figure([f32, bf, ev.float16], labels=RANGE_LABELS), width="stretch", key="range_4"
    )


def storage_view(c: claims.Checked, words: dict) -> None:
    ev: claims.StorageEvidence = c.evidence
    mine, other = ev.claimed, ev.contrast
    fields = dict(
        normal=mine.format.smallest_normal,
        sub=mine.format.smallest_subnormal,
        zero=mine.zero_at_or_below,
        ozero=other.zero_at_or_below,
    )
    for i, (v, e, o) in enumerate(zip(ev.values, mine.stored, other.stored, strict=True)):
        fields |= {f"v{i}": v, f"s{i}": e.value, f"c{i}": e.cls, f"e{i}": e.rel_error, f"o{i}": o.value}
    st.markdown(words["explain"].format(**fields))
    left, right = st.columns(2)
    cols = TEXT["storage_cols"]
    rows = [
        {
            cols["value"]: f"{v:g}",
            cols["format"]: store.format.name,
            cols["stored"]: f"{e.value:.6g}",
            cols["class"]: e.cls,
            cols["error"]: f"{e.rel_error:.2%}",
        }
        for store in (mine, other)
        for v, e in zip(ev.values, store.stored, strict=True)
    ]
    left.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    markers = {TEXT["marker"].format(i=i + 1): v for i, v in enumerate(ev.values)}
    fig = formats_fig.range_figure([mine.format, other.format], markers, labels={**RANGE_LABELS, "range_title": ""})
    right.plotly_chart(fig, width="stretch", key=f"storage_{c.claim}")


def close_scores_view(c: claims.Checked, words: dict) -> None:
    ev: claims.CloseScoresEvidence = c.evidence
    claimed, other = ev.pairs
    f16, bf16 = claimed.on("float16"), claimed.on("bfloat16")
    m16, mbf = other.on("float16"), other.on("bfloat16")
    fields = dict(
        f16_gap=f16.spacing,
        f16_a=f16.stored[0],
        f16_b=f16.stored[1],
        f16_state=TEXT["distinct"]["kept" if f16.distinct else "merged"],
        bf16_gap=bf16.spacing,
        bf16_b=bf16.stored[1],
        bf16_state=TEXT["distinct"]["kept" if bf16.distinct else "merged"],
        m_f16_a=m16.stored[0],
        m_f16_b=m16.stored[1],
        m_bf16_a=mbf.stored[0],
        m_bf16_b=mbf.stored[1],
    )
    st.markdown(words["explain"].format(**fields))
    scores = [s for p in ev.pairs for s in p.scores]
    margin = max(r.spacing for p in ev.pairs for r in p.formats)
    lo, hi = min(scores) - margin, max(scores) + margin
    lines = [formats.number_line(f, lo, hi) for f in ("float16", "bfloat16")]
    st.plotly_chart(
        claims_fig.close_scores_figure(
            lines, ev.pairs, labels=TEXT["labels"], number_line_labels=text.section("formats")["figure"]
        ),
        width="stretch",
        key="scores_6",
    )


def scaler_view(c: claims.Checked, words: dict) -> None:
    ev: claims.ScalerEvidence = c.evidence
    bf16, fp16s, fp16 = ev.recipe("bf16"), ev.recipe("fp16+scaler"), ev.recipe("fp16")
    fields = dict(
        steps=ev.config.steps,
        seq=ev.config.model.seq_len,
        dim=ev.config.model.d_model,
        log2_mult=round(math.log2(ev.config.loss_multiplier)),
        bf16=bf16.mean_zero_grad_fraction,
        bf16_nonfinite=len(bf16.nonfinite_steps),
        fp16s=fp16s.mean_zero_grad_fraction,
        fp16s_skipped=len(fp16s.skipped_steps),
        fp16=fp16.mean_zero_grad_fraction,
    )
    st.markdown(words["explain"].format(**fields))
    names, cols = TEXT["recipe_names"], TEXT["recipe_cols"]
    left, right = st.columns(2)
    left.plotly_chart(
        claims_fig.lost_gradients_figure(ev.recipes, names=names, labels=TEXT["labels"]), width="stretch", key="lost_8"
    )
    rows = [
        {
            cols["recipe"]: names[r.recipe],
            cols["final"]: round(r.final_loss, 4),
            cols["lost"]: f"{r.mean_zero_grad_fraction:.3%}",
            cols["skipped"]: len(r.skipped_steps),
            cols["nonfinite"]: len(r.nonfinite_steps),
        }
        for r in ev.recipes
    ]
    right.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def speed_view(c: claims.Checked, words: dict) -> None:
    ev: claims.SpeedEvidence = c.evidence
    by = {r.dtype: r for r in ev.rows}
    fields = dict(
        device=TEXT["measured_on"][ev.device],
        threads=ev.threads,
        repeat=ev.repeat,
        bf16=by["bfloat16"].step_speedup,
        fp16=by["float16"].step_speedup,
        bf16_mm=by["bfloat16"].matmul_speedup,
        fp16_mm=by["float16"].matmul_speedup,
    )
    st.markdown(words["explain"].format(**fields))
    left, right = st.columns(2)
    left.plotly_chart(claims_fig.speed_figure(ev, labels=TEXT["labels"]), width="stretch", key="speed_9")
    cols = TEXT["speed_cols"]
    rows = [{cols["dtype"]: r.dtype, cols["matmul"]: r.matmul_ms, cols["step"]: r.step_ms} for r in ev.rows]
    right.dataframe(pd.DataFrame(rows).round(3), hide_index=True, width="stretch")


def accumulation_view(c: claims.Checked, words: dict) -> None:
    ev: claims.AccumulationEvidence = c.evidence
    m, k, n = ev.random_shape
    fields = dict(
        n_small=ev.n_small,
        small_log2=round(math.log2(ev.small)),
        exact=ev.exact,
        low=ev.low_accumulator,
        once=ev.rounded_once,
        measured=ev.measured,
        device=TEXT["measured_on"][ev.device],
        m=m,
        k=k,
        n=n,
        share=ev.random_match["matmul"],
        accumulator=ev.accumulator,
        out=ev.output_dtype,
        cpu_scores=ev.score_dtypes["cpu"],
        cuda_scores=ev.score_dtypes["cuda"],
    )
    st.markdown(words["explain"].format(**fields))
    left, right = st.columns(2)
    left.plotly_chart(claims_fig.accumulation_figure(ev, labels=TEXT["labels"]), width="stretch", key="accumulation_10")
    cols, names = TEXT["match_cols"], TEXT["match_names"]
    rows = [
        {cols["how"]: names[how].format(device=TEXT["measured_on"][ev.device]), cols["share"]: f"{share:.2%}"}
        for how, share in ev.random_match.items()
    ]
    right.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


VIEWS = {
    claims.PolicyEvidence: policy_view,
    claims.RangeEvidence: range_view,
    claims.StorageEvidence: storage_view,
    claims.CloseScoresEvidence: close_scores_view,
    claims.ScalerEvidence: scaler_view,
    claims.SpeedEvidence: speed_view,
    claims.AccumulationEvidence: accumulation_view,
}


def card(claim: claims.Claim, checked: claims.Checked | None) -> None:
    words = TEXT["claims"][claim.key]
    with st.container(border=True):
        st.subheader(TEXT["card_title"].format(id=claim.id, claim=words["claim"]))
        st.caption(TEXT["source"].format(seeds=", ".join(f"`{s}`" for s in claim.seeds)))
        if checked is None:
            st.info(TEXT["pending"].format(slow=TEXT["slow"]))
            return
        st.markdown(badge(checked.verdict))
        VIEWS[type(checked.evidence)](checked, words)


# ── the page ────────────────────────────────────────────────────────────────────────────────────────────────
page_header(TEXT)
seed_from_url(PARAMS)
show_warnings()
s = st.session_state
st.segmented_control(TEXT["filter"], FILTERS, key="verdict", format_func=TEXT["filters"].get, required=True)
st.toggle(TEXT["slow"], key="slow")
write_url(PARAMS)

results: dict[int, claims.Checked] = {}
with st.spinner(TEXT["measuring"]):
    for claim in claims.CLAIMS:
        if not claim.on_demand:
            results[claim.id] = measured(claim.id)
if s.slow:
    for claim in claims.CLAIMS:
        if claim.on_demand:
            with st.spinner(TEXT["measuring_slow"].format(id=claim.id)):
                results[claim.id] = measured(claim.id)

counts = claims.verdict_counts(list(results.values()))
pending = [c for c in claims.CLAIMS if c.id not in results]
cols = st.columns(len(counts) + 1)
for i, (verdict, n) in enumerate(counts.items()):
    cols[i].metric(TEXT["verdicts"][verdict], n)
cols[-1].metric(TEXT["summary_pending"], len(pending))

if s.verdict == "all":
    shown = list(claims.CLAIMS)
else:
    shown = [c for c in claims.CLAIMS if c.id in results and results[c.id].verdict == s.verdict]
    if pending:
        st.caption(TEXT["pending_hidden"].format(n=len(pending)))
    if not shown:
        st.info(TEXT["none_shown"])
for claim in shown:
    card(claim, results.get(claim.id))
