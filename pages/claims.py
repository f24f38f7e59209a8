"""Tutorial claims, checked: each claim from the seed tutorials next to the measurement that confirms, limits or
refutes it. The verdicts come from mpviz.claims; this page only words them."""

import math

import pandas as pd
import streamlit as st

from mpviz import claims, figures, formats
from pages import common

TEXT = {
    "title": "Tutorial claims, checked",
    "intro": (
        "The tutorials this app answers repeat a handful of claims about mixed precision. Each card below states "
        "one of them in our words, names the tutorial file it comes from, and checks it **now**, against this "
        "machine's torch: autocast's real kernels on CPU and CUDA's policy (probed from torch; where a value is "
        "needed without a GPU, CUDA's policy is emulated on CPU), number formats read from `ml_dtypes`, real "
        "training runs and timings. Policy claims are checked under bf16 autocast, as the tutorials use it."
    ),
    "filter": "Show claims whose verdict is",
    "filters": {
        "all": "any",
        "holds": "holds",
        "partly_holds": "partly holds",
        "depends_on_device": "depends on the device",
        "does_not_hold": "does not hold",
    },
    "verdicts": {
        "holds": "Holds",
        "partly_holds": "Partly holds",
        "depends_on_device": "Depends on the device",
        "does_not_hold": "Does not hold",
    },
    "slow": "Run the slow checks (training, timing)",
    "measuring": "Measuring the claims on this machine…",
    "measuring_slow": "Measuring claim {id} (training / timing)…",
    "summary_pending": "not measured yet",
    "pending": "This check trains a model or times kernels. Switch on **{slow}** above to run it.",
    "pending_hidden": "{n} slow claim(s) are not measured yet, so this filter cannot place them.",
    "none_shown": "No measured claim has this verdict.",
    "card_title": "{id}. {claim}",
    "source": "From {seeds}",
    "measured_on": {"cpu": "this machine's CPU", "cuda": "this machine's GPU"},
    "device_labels": {
        "cpu": "CPU (this machine)",
        "cuda-sim": "CUDA's policy (probed; block emulated on CPU)",
        "cuda": "CUDA (this machine's GPU)",
    },
    "probe": "`{function}({inputs})` under bf16 autocast → **{out}**",
    "probe_fake": " · fake CUDA tensors through torch's real CUDA autocast kernels",
    "probe_error": "torch refused this call: {error}",
    "policy_line": "In {device}'s autocast policy: {entries}",
    "category_phrase": {
        "none": "not listed",
        "lower_precision_fp": "cast down to the autocast dtype (`lower_precision_fp`)",
        "fp32": "cast up to float32 (`fp32`)",
        "fp32_set_opt_dtype": "computed and returned in float32 (`fp32_set_opt_dtype`)",
        "fp32_append_dtype": "computed in float32 via a dtype overload (`fp32_append_dtype`)",
        "promote": "widest input wins (`promote`)",
        "banned": "refused (`banned`)",
        "unclassified": "in the policy, category unknown",
    },
    "no_ops": "none",
    "landmark": "tensor in the attention block",
    "distinct": {True: "still two different values", False: "now one value"},
    "storage_cols": {
        "value": "value",
        "format": "format",
        "stored": "stored as",
        "class": "kind",
        "error": "rel. error",
    },
    "marker": "gradient {i}",
    "recipe_names": {
        "fp32": "fp32",
        "bf16": "bf16, no scaler",
        "fp16+scaler": "fp16 + GradScaler",
        "fp16": "fp16, no scaler",
    },
    "recipe_cols": {
        "recipe": "recipe",
        "final": "final loss",
        "lost": "lost to zero (mean)",
        "skipped": "skipped steps",
        "nonfinite": "steps with inf/NaN gradients",
    },
    "speed_cols": {"dtype": "dtype", "matmul": "matmul (ms)", "step": "forward+backward (ms)"},
    "match_cols": {"how": "accumulated by", "share": "= exact sum, rounded once"},
    "match_names": {
        "matmul": "torch.matmul on {device}",
        "float32_accumulator": "float32 accumulator (emulated)",
        "bfloat16_accumulator": "bfloat16 accumulator (emulated)",
    },
    "labels": {
        "speedup": "speed vs float32 (×, log axis)",
        "matmul": "one {n}×{n} matmul",
        "step": "forward + backward (T={seq}, d={dim})",
        "claimed": "claimed 2–3×",
        "terms": "terms added",
        "partial_sum": "running sum",
        "exact": "exact",
        "low_accumulator": "{dtype} accumulator",
        "rounded_once": "exact, rounded once to {dtype}",
        "measured": "torch.matmul on {device}",
        "lost": "gradient elements lost to zero (mean per step)",
        "recipe": "recipe",
        "stored": "{value:g} → {stored:.9g} in {format}",
        "number_line_title": "Where each score is stored",
        "range_title": "Range of each format (log2 scale)",
    },
    "claims": {
        "softmax_fp32": {
            "claim": "Under autocast, softmax is always computed in float32.",
            "explain": (
                "Softmax of a bfloat16 tensor returns **{cpu_softmax_out}** on CPU and **{cuda_softmax_out}** "
                "under CUDA's policy, and the attention block's probs come out {cpu_probs} on CPU and "
                "{cuda_probs} under CUDA's policy. `softmax` in CPU's policy: {cpu_cat}; in CUDA's: {cuda_cat}. "
                "An op the policy does not list runs in whatever dtype arrives."
            ),
        },
        "matmul_low_precision": {
            "claim": "Under autocast, matrix multiplications and linear layers run in the low-precision dtype.",
            "explain": (
                "With float32 inputs, `matmul` returns **{cpu_matmul_out}** on CPU and **{cuda_matmul_out}** under "
                "CUDA's policy, `linear` {cpu_linear_out} / {cuda_linear_out}: autocast casts the inputs down "
                "first (◆ in the strips). q, scores, context and logits of the block are all made by matmuls."
            ),
        },
        "layer_norm_fp32": {
            "claim": "Autocast keeps LayerNorm in float32: a bf16 activation entering LayerNorm leaves as float32.",
            "explain": (
                "A bfloat16 input to `layer_norm` — what a bf16 linear layer hands on — comes back "
                "**{cpu_layer_norm_out}** on CPU and **{cuda_layer_norm_out}** under CUDA's policy. `layer_norm` "
                "in CPU's policy: {cpu_cat}; in CUDA's: {cuda_cat}. In the attention block x_norm is "
                "{cpu_x_norm} on CPU only because its input x arrives as {cpu_x}."
            ),
        },
        "bf16_range": {
            "claim": "bf16 has exactly the same dynamic range as float32 (about 1.4e-45 up to 3.4e38).",
            "explain": (
                "bf16's largest value is {bf_max:.5g} against float32's {f32_max:.5g} ({max_ratio:.1%} of it) and "
                "both share the smallest normal value {normal:.4g}. Below it they part: bf16's smallest subnormal "
                "is {bf_sub:.3g}, float32's {f32_sub:.3g} — {sub_ratio:,.0f}× apart, since bf16 has {bf_mant} "
                "mantissa bits to spend on subnormals and float32 has {f32_mant}. The 1.4e-45 quoted for bf16 is "
                "float32's smallest subnormal."
            ),
        },
        "fp16_tiny_gradients": {
            "claim": "fp16's smallest value is about 6.1e-5, so a gradient of 1e-7 becomes zero in fp16.",
            "explain": (
                "6.1e-5 is fp16's smallest *normal* value ({normal:.4g}). Below it come subnormals down to "
                "{sub:.4g}, and only values at or below {zero:.4g} round to 0. Measured: {v0:g} is stored as "
                "{s0:.5g} ({c0}), {v1:g} as {s1:.5g} ({c1}, {e1:.0%} off)."
            ),
        },
        "close_scores": {
            "claim": (
                "In low precision such as fp16, two close attention scores like 10.1 and 10.2 may both be stored "
                "as 10.125, so softmax can no longer tell them apart."
            ),
            "explain": (
                "fp16's spacing near 10 is {f16_gap:g}: 10.1 and 10.2 are stored as {f16_a:.8g} and {f16_b:.8g} — "
                "{f16_state}. 10.125 is what *bf16* makes of 10.1 (spacing {bf16_gap:g}), and bf16 stores 10.2 as "
                "{bf16_b:.6g} — {bf16_state}. Scores closer than the spacing do merge: 10.0 and 10.01 become "
                "{m_f16_a:.8g} and {m_f16_b:.8g} in fp16, {m_bf16_a:.6g} and {m_bf16_b:.6g} in bf16."
            ),
        },
        "loss_fp32": {
            "claim": "Under autocast the loss (cross-entropy) is computed in float32 automatically.",
            "explain": (
                "Cross-entropy of bfloat16 logits returns **{cpu_cross_entropy_out}** on CPU and "
                "**{cuda_cross_entropy_out}** under CUDA's policy, but the work differs. `cross_entropy_loss` in "
                "CPU's policy: {cpu_cat}; in CUDA's: {cuda_cat}. Ops that computed in bfloat16 — on CPU: {cpu_low}; "
                "under CUDA's policy: {cuda_low}."
            ),
        },
        "bf16_no_scaler": {
            "claim": "bf16 training needs no GradScaler: with its range, gradients do not underflow.",
            "explain": (
                "{steps} Adam steps of a small block (T={seq}, d={dim}), same seed and data for every recipe, the "
                "loss × 2^{log2_mult} to push gradients toward underflow: bf16 without a scaler lost "
                "**{bf16:.3%}** of gradient elements to zero and had {bf16_nonfinite} inf/NaN step(s); fp16 with "
                "GradScaler lost {fp16s:.3%} (skipped {fp16s_skipped} step(s)); fp16 without one lost **{fp16:.1%}**."
            ),
        },
        "speedup": {
            "claim": "Mixed precision makes training about 2–3× faster than float32.",
            "explain": (
                "On {device} ({threads} threads) a forward+backward of the block runs at **{bf16:.2f}×** "
                "float32's speed under bf16 autocast and **{fp16:.2g}×** under fp16; a single matmul at "
                "{bf16_mm:.2f}× and {fp16_mm:.2g}×. Median of {repeat} runs each; timings vary from run to run "
                "and the verdict follows the numbers shown."
            ),
        },
        "matmul_accumulation": {
            "claim": (
                "A bf16 × bf16 matmul accumulates in float32 and returns float32, so attention scores reach "
                "softmax in float32."
            ),
            "explain": (
                "A 1 followed by {n_small} copies of 2^{small_log2} (a quarter of bf16's spacing at 1), dotted with "
                "ones: exact {exact:.9g}; an accumulator kept in bf16 stays at {low:g}; a float32 accumulator "
                "rounded once gives {once:g}; torch.matmul on {device} returned **{measured:g}**. On random "
                "{m}×{k} · {k}×{n} bf16 matrices {share:.2%} of its results equal the exact sum rounded once "
                "(table): it accumulates like **{accumulator}**. It returns **{out}**, and the attention scores "
                "are {cpu_scores} on CPU and {cuda_scores} under CUDA's policy."
            ),
        },
        "bf16_tiny_gradients": {
            "claim": "bf16 easily represents tiny gradients such as 1e-7 and 1e-8, without underflow.",
            "explain": (
                "In bf16 {v0:g} is stored as {s0:.5g} and {v1:g} as {s1:.5g} ({e0:.2%} and {e1:.2%} off); bf16 "
                "rounds to 0 only at or below {zero:.3g}. fp16 for contrast: {o0:.5g} and {o1:.5g} (0 at or below "
                "{ozero:.3g})."
            ),
        },
    },
}

BADGE_COLORS = {"holds": "green", "partly_holds": "orange", "depends_on_device": "blue", "does_not_hold": "red"}
FILTERS = ("all", *claims.VERDICTS)
PARAMS = [
    common.UrlParam("verdict", "all", common.parse_choice(FILTERS)),
    common.UrlParam("slow", False, common.parse_bool, lambda v: "1" if v else "0"),
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
            col.plotly_chart(figures.call_steps_figure(list(probe.steps)), width="stretch", key=key)
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
    st.plotly_chart(figures.range_figure([f32, bf, ev.float16], labels=TEXT["labels"]), width="stretch", key="range_4")


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
    fig = figures.range_figure([mine.format, other.format], markers, {**TEXT["labels"], "range_title": ""})
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
        f16_state=TEXT["distinct"][f16.distinct],
        bf16_gap=bf16.spacing,
        bf16_b=bf16.stored[1],
        bf16_state=TEXT["distinct"][bf16.distinct],
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
    st.plotly_chart(figures.close_scores_figure(lines, ev.pairs, TEXT["labels"]), width="stretch", key="scores_6")


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
    left.plotly_chart(figures.lost_gradients_figure(ev.recipes, names, TEXT["labels"]), width="stretch", key="lost_8")
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
    left.plotly_chart(figures.speed_figure(ev, TEXT["labels"]), width="stretch", key="speed_9")
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
    left.plotly_chart(figures.accumulation_figure(ev, TEXT["labels"]), width="stretch", key="accumulation_10")
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
common.page_header(TEXT["title"], TEXT["intro"])
common.seed_from_url(PARAMS)
common.show_warnings()
s = st.session_state
st.segmented_control(TEXT["filter"], FILTERS, key="verdict", format_func=TEXT["filters"].get, required=True)
st.toggle(TEXT["slow"], key="slow")
common.write_url(PARAMS)

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
