"""Tutorial claims, checked: each claim from the seed tutorials next to the measurements that confirm, limit or
refute it, part by part. The verdicts come from mpviz.claims; this page only words and draws them."""

import math
from fractions import Fraction

import pandas as pd
import streamlit as st

from mpviz import claims, formats
from view import results, text
from view.figures import claims as claims_fig
from view.figures import formats as formats_fig
from view.figures import policy as policy_fig
from view.page import guarded, page_header, show_warnings
from view.url import UrlParam, dump_bool, parse_bool, parse_choice, seed_from_url, write_url

TEXT = text.section("claims")
RANGE_LABELS = {**text.section("formats")["figure"], **TEXT["labels"]}  # the formats lesson's range chart
NUMBER_LINE_LABELS = {**text.section("formats")["figure"], "number_line_title": ""}  # titled by a caption: it wraps

BADGE_COLORS = {
    "holds": "green",
    "partly_holds": "orange",
    "depends_on_device": "blue",
    "does_not_hold": "red",
    "inconclusive": "gray",
}
FILTERS = (claims.ALL, *claims.VERDICTS)
TOPIC_FILTERS = (claims.ALL, *claims.TOPICS)
PARAMS = [
    UrlParam("verdict", claims.ALL, parse_choice(FILTERS)),
    UrlParam("topic", claims.ALL, parse_choice(TOPIC_FILTERS)),
    UrlParam("slow", False, parse_bool, dump_bool),
]
SUMMARY_ANCHOR = "at-a-glance"


def measured(claim: claims.Claim) -> claims.Checked:
    """One claim's check, computed once per process for every session; slow checks wait for the admission gate."""
    return results.shared(("claim", claim.id), claim.check, heavy=claim.on_demand)


# ── words ───────────────────────────────────────────────────────────────────────────────────────────────────
def badge(verdict: str) -> str:
    return f":{BADGE_COLORS[verdict]}-badge[{TEXT['verdicts'][verdict]}]"


def category(cat: str | None) -> str:
    return TEXT["category_phrase"][cat or "none"]


def short_category(cat: str | None) -> str:
    """A category's short name, breakable after each underscore so a narrow table can wrap it."""
    return TEXT["category_short"][cat or "none"].replace("_", "_\u200b")


def op_name(op: str) -> str:
    """ "aten::add.Tensor" / "aten.add.Tensor" → "add"."""
    return op.replace("::", ".").removeprefix("aten.").split(".")[0]


def code_list(names) -> str:
    return TEXT["list_joiner"].join(f"`{n}`" for n in names) or TEXT["no_ops"]


def ops_list(ops: tuple[str, ...]) -> str:
    return code_list(op_name(op) for op in ops)


def yes_no(flag: bool) -> str:
    return TEXT["yes"] if flag else TEXT["no"]


def quoted_match(q: claims.Quoted) -> str:
    """What a quoted number really is, e.g. "float32's smallest subnormal value (1.401e-45)"."""
    found = [
        TEXT["quoted"]["match"].format(format=m.format, field=TEXT["field_names"][m.field], value=m.value)
        for m in q.matches
    ]
    return TEXT["and_joiner"].join(found) or TEXT["quoted"]["none"]


def say(c: claims.Checked, words: dict, fields: dict) -> None:
    """The claim's explanation filled with its measurements, then the conclusion its verdict supports, if any."""
    conclusion = words.get("conclusion", {}).get(c.verdict, "")
    st.markdown(" ".join(t for t in (words["explain"], conclusion) if t).format(**fields))


def table(rows: list[dict], container=st) -> None:
    """A small static table: every cell wraps instead of being cut off (phones, projectors)."""
    container.table(pd.DataFrame(rows), hide_index=True, border="horizontal")


# ── evidence, one view per claim ────────────────────────────────────────────────────────────────────────────
def device_labels(ev) -> dict[str, str]:
    return {run.device: TEXT["device_labels"][run.trace_device] for run in ev.devices}


def policy_view(c: claims.Checked, words: dict) -> None:
    """Claims 1, 2, 3, 7: the probed calls of each device as step strips, and the block's landmark dtypes."""
    ev: claims.PolicyEvidence = c.evidence
    fields = dict(c.headline)
    for run in ev.devices:
        fields[f"{run.device}_cat"] = category(next(iter(run.categories.values())))
        fields[f"{run.device}_low"] = ops_list(run.low_precision_ops)
    say(c, words, fields)
    labels = device_labels(ev)
    with st.expander(TEXT["details"]):
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
            entries = "; ".join(f"`{op_name(op)}` {category(cat)}" for op, cat in run.categories.items())
            col.caption(TEXT["policy_line"].format(device=TEXT["device_short"][run.device], entries=entries))
        frame = pd.DataFrame({labels[run.device]: run.landmarks for run in ev.devices}).rename_axis(TEXT["landmark"])
        st.dataframe(frame, width="stretch")


def call_label(probe) -> str:
    return f"`{probe.function}({', '.join(probe.input_dtypes)})`"


def probes_table(ev: claims.PolicyEvidence) -> list[dict]:
    """One row per probed call; per device what it returned with autocast on, then off."""
    cols, rows = TEXT["table_cols"], []
    for i, first in enumerate(ev.devices[0].probes):
        row = {cols["function"]: call_label(first)}
        for run in ev.devices:
            p = run.probes[i]
            row[cols["on_off"].format(device=TEXT["device_short"][run.device])] = TEXT["pair"].format(
                a=p.output_dtype, b=p.output_dtype_without_autocast
            )
        rows.append(row)
    return rows


def functions_table(ev: claims.PolicyEvidence) -> list[dict]:
    """One row per probed call whose op is the i-th of the claim's ops: per device its category and result."""
    cols, rows = TEXT["table_cols"], []
    for i, (op, first) in enumerate(zip(ev.devices[0].categories, ev.devices[0].probes, strict=True)):
        row = {cols["function"]: call_label(first)}
        for run in ev.devices:
            row[cols["category_out"].format(device=TEXT["device_short"][run.device])] = TEXT["arrow"].format(
                a=short_category(run.categories[op]), b=run.probes[i].output_dtype
            )
        rows.append(row)
    return rows


def promote_view(c: claims.Checked, words: dict) -> None:
    ev: claims.PolicyEvidence = c.evidence
    cpu, cuda = ev.on("cpu"), ev.on("cuda")
    fields = dict(
        cpu_listed=ops_list(tuple(op for op, cat in cpu.categories.items() if cat == "promote")),
        add_out=cpu.probe("add").output_dtype,
        add_plain=cpu.probe("add").output_dtype_without_autocast,
        gelu_out=cpu.probe("gelu").output_dtype,
        cpu_out=cpu.landmarks["out"],
        cuda_out=cuda.landmarks["out"],
    )
    say(c, words, fields)
    table(probes_table(ev))


def fallback_view(c: claims.Checked, words: dict) -> None:
    ev: claims.PolicyEvidence = c.evidence
    judged = {p.subject for p in c.parts if p.device == "cuda"}
    listed = [p for p in ev.on("cuda").probes if p.function not in judged]
    fields = dict(cuda_listed=code_list(f"{p.function} → {p.output_dtype}" for p in listed))
    say(c, words, fields)
    table(functions_table(ev))


def cpu_autocast_view(c: claims.Checked, words: dict) -> None:
    ev: claims.CpuAutocastEvidence = c.evidence
    out = {p.autocast_dtype: p.output_dtype for p in ev.probes}
    fields = dict(
        bf16_out=out["bfloat16"],
        fp16_out=out["float16"],
        low_ops=ev.policy_counts.get("lower_precision_fp", 0),
        fp32_ops=ev.policy_counts.get("fp32", 0),
        promote_ops=ev.policy_counts.get("promote", 0),
        q=ev.block_landmarks["q"],
        scores=ev.block_landmarks["scores"],
        capability=ev.cpu_capability,
    )
    say(c, words, fields)
    for col, probe in zip(st.columns(len(ev.probes)), ev.probes, strict=True):
        col.caption(TEXT["cpu_probe"].format(dtype=probe.autocast_dtype, inputs=", ".join(probe.input_dtypes)))
        col.plotly_chart(
            policy_fig.call_steps_figure(list(probe.steps)), width="stretch", key=f"cpu_{probe.autocast_dtype}"
        )


def embedding_view(c: claims.Checked, words: dict) -> None:
    ev: claims.EmbeddingEvidence = c.evidence
    fields = {f"{d}_out": ev.outputs[d] for d in claims.DEVICES}
    fields |= {f"{d}_plain": ev.outputs_without_autocast[d] for d in claims.DEVICES}
    fields |= {f"{d}_cat": short_category(ev.categories[d]) for d in claims.DEVICES}
    say(c, words, fields)


def gradients_view(c: claims.Checked, words: dict) -> None:
    ev: claims.GradientsEvidence = c.evidence
    fields = {"follow": words["follows" if all(r.grads_follow_forward for r in ev.devices) else "differs"]}
    for run in ev.devices:
        made = {run.activations[a][0] for a in ("q", "scores", "context", "logits") if a in run.activations}
        fields[f"{run.device}_act"] = TEXT["and_joiner"].join(sorted(made))
        fields[f"{run.device}_probs"] = run.activations.get("probs", ("—",))[0]
        fields[f"{run.device}_params"] = TEXT["and_joiner"].join(sorted(set(run.parameter_grads.values())))
    say(c, words, fields)
    cols = TEXT["table_cols"]
    rows = []
    for name in ev.devices[0].activations:
        row = {cols["activation"]: name}
        for run in ev.devices:
            fwd, grad = run.activations.get(name, ("—", "—"))
            row[cols["forward_gradient"].format(device=TEXT["device_short"][run.device])] = TEXT["pair"].format(
                a=fwd, b=grad
            )
        rows.append(row)
    table(rows)
    params = ev.devices[0].parameter_grads
    grads = [
        {cols["parameter"]: p}
        | {cols["grad"].format(device=TEXT["device_short"][r.device]): r.parameter_grads.get(p) for r in ev.devices}
        for p in params
    ]
    with st.expander(TEXT["details"]):
        table(grads)


def no_op_view(c: claims.Checked, words: dict) -> None:
    ev: claims.NoOpEvidence = c.evidence
    on, off = ev.enabled, ev.disabled
    same = on.grads_restored and on.same_update_as_without
    outcome = words["outcome_same" if same else "outcome_differs"].format(loss_ratio=on.loss_ratio)
    fields = dict(loss_ratio=on.loss_ratio, grad_ratio=on.grad_ratio, outcome=outcome, disabled_ratio=off.loss_ratio)
    say(c, words, fields)
    cols, names = TEXT["table_cols"], TEXT["scaler_settings"]
    measures = {
        "scale": lambda s: f"{s.scale:g}",
        "loss_ratio": lambda s: f"{s.loss_ratio:g}",
        "grad_ratio": lambda s: f"{s.grad_ratio:g}",
        "restored": lambda s: yes_no(s.grads_restored),
        "same_update": lambda s: yes_no(s.same_update_as_without),
    }
    rows = [
        {cols["measure"]: cols[name]} | {names["enabled" if s.enabled else "disabled"]: show(s) for s in (on, off)}
        for name, show in measures.items()
    ]
    table(rows)


def backoff_view(c: claims.Checked, words: dict) -> None:
    s: claims.ScalerStep = c.evidence
    fields = dict(
        moved=words["moved" if s.params_changed_in_step else "unchanged"],
        after_step=s.scale_after_step,
        after_update=s.scale_after_update,
        backoff=s.scale_after_update / s.scale,
    )
    say(c, words, fields)
    cols, moments = TEXT["table_cols"], TEXT["scaler_moments"]
    rows = [
        {cols["moment"]: moments["before"], cols["scale"]: f"{s.scale:g}", cols["params_changed"]: "—"},
        {
            cols["moment"]: moments["step"],
            cols["scale"]: f"{s.scale_after_step:g}",
            cols["params_changed"]: yes_no(s.params_changed_in_step),
        },
        {cols["moment"]: moments["update"], cols["scale"]: f"{s.scale_after_update:g}", cols["params_changed"]: "—"},
    ]
    table(rows)


def api_view(c: claims.Checked, words: dict) -> None:
    ev: claims.ApiEvidence = c.evidence
    replacements = code_list(r.code for r in ev.replacements if r.current)
    say(c, words, dict(version=ev.torch_version, replacements=replacements))
    for call in ev.calls:
        left, right = st.columns([3, 2])
        left.code(call.code, language="python", wrap_lines=True)
        right.markdown(TEXT["api_status"][claims.api_status(call)])
        message = call.error or call.deprecation
        if message:
            right.code(message, language=None, wrap_lines=True)


def range_view(c: claims.Checked, words: dict) -> None:
    ev: claims.RangeEvidence = c.evidence
    bf, f32 = ev.bfloat16, ev.float32
    low, high = ev.quoted
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
        low_text=low.text,
        low_match=quoted_match(low),
        high_text=high.text,
        high_match=quoted_match(high),
    )
    say(c, words, fields)
    fig = formats_fig.range_figure([f32, bf, ev.float16], labels=RANGE_LABELS)
    st.plotly_chart(fig, width="stretch", key=f"range_{c.claim}")


def storage_table(ev: claims.StorageEvidence) -> list[dict]:
    """One row per value; per format what it is stored as, its kind and relative error."""
    cols, rows = TEXT["storage_cols"], []
    for i, v in enumerate(ev.values):
        row = {cols["value"]: f"{v:g}"}
        for store in (ev.claimed, ev.contrast):
            e = store.stored[i]
            cell = TEXT["stored_cell" if math.isfinite(e.rel_error) else "stored_cell_exactless"]
            row[store.format.name] = cell.format(stored=f"{e.value:.9g}", cls=e.cls, error=f"{e.rel_error:.2%}")
        rows.append(row)
    return rows


def storage_figure(c: claims.Checked, ev: claims.StorageEvidence, container) -> None:
    markers = {TEXT["marker"].format(i=i + 1): v for i, v in enumerate(ev.values)}
    labels = {**RANGE_LABELS, "range_title": ""}
    fig = formats_fig.range_figure([ev.claimed.format, ev.contrast.format], markers, labels=labels)
    container.plotly_chart(fig, width="stretch", key=f"storage_{c.claim}")


def storage_view(c: claims.Checked, words: dict) -> None:
    """Claims 5 and 11: tiny values stored in one 16-bit format, the other beside it."""
    ev: claims.StorageEvidence = c.evidence
    mine, other = ev.claimed, ev.contrast
    fields = dict(
        normal=mine.format.smallest_normal,
        sub=mine.format.smallest_subnormal,
        zero=mine.zero_at_or_below,
        ozero=other.zero_at_or_below,
    )
    if ev.quoted:
        fields |= dict(quoted_text=ev.quoted[0].text, quoted_match=quoted_match(ev.quoted[0]))
    for i, (v, e, o) in enumerate(zip(ev.values, mine.stored, other.stored, strict=True)):
        fields |= {f"v{i}": v, f"s{i}": e.value, f"c{i}": e.cls, f"e{i}": e.rel_error, f"o{i}": o.value}
    say(c, words, fields)
    left, right = st.columns(2)
    table(storage_table(ev), left)
    storage_figure(c, ev, right)


def big_value_view(c: claims.Checked, words: dict) -> None:
    """Claim 21: 70000 (and the tutorial's 1.23456789) in bf16, fp16 beside it."""
    ev: claims.StorageEvidence = c.evidence
    big, example = ev.claimed.stored
    fields = dict(
        f16_big=ev.contrast.stored[0].value,
        f16_max=ev.contrast.format.max,
        bf_big=big.value,
        bf_cls=big.cls,
        bf_err=big.rel_error,
        bf_ulp=big.ulp,
        bf_ex=example.value,
    )
    say(c, words, fields)
    left, right = st.columns(2)
    table(storage_table(ev), left)
    storage_figure(c, ev, right)


def bin_fields(pair: claims.ScorePair, fmt: str, prefix: str) -> dict:
    stored, (a, b) = pair.on(fmt), pair.bins_in(fmt)
    return {
        "score_a": pair.scores[0],
        "score_b": pair.scores[1],
        "near": round(max(pair.scores)),
        f"{prefix}_gap": stored.spacing,
        f"{prefix}_a": a.stored,
        f"{prefix}_b": b.stored,
        f"{prefix}_a_lo": a.lo,
        f"{prefix}_a_hi": a.hi,
        f"{prefix}_b_lo": b.lo,
        f"{prefix}_b_hi": b.hi,
        f"{prefix}_state": TEXT["distinct"]["kept" if stored.distinct else "merged"],
    }


def pair_figure(c: claims.Checked, pair: claims.ScorePair) -> None:
    margin = max(r.spacing for r in pair.formats)
    lo, hi = min(pair.scores) - margin, max(pair.scores) + margin
    lines = [formats.number_line(f.format, lo, hi) for f in pair.formats]
    st.caption(TEXT["labels"]["number_line_title"])
    fig = claims_fig.close_scores_figure(lines, [pair], labels=TEXT["labels"], number_line_labels=NUMBER_LINE_LABELS)
    st.plotly_chart(fig, width="stretch", key=f"scores_{c.claim}")


def close_scores_view(c: claims.Checked, words: dict) -> None:
    ev: claims.CloseScoresEvidence = c.evidence
    fields = bin_fields(ev.pair, "float16", "f16") | bin_fields(ev.pair, "bfloat16", "bf16")
    if ev.claimed_value_from:
        source = words["source_found"].format(
            claimed=ev.claimed_value,
            formats=TEXT["and_joiner"].join(dict.fromkeys(f for f, _ in ev.claimed_value_from)),
            scores=TEXT["and_joiner"].join(f"{s:g}" for _, s in ev.claimed_value_from),
        )
    else:
        source = words["source_none"].format(claimed=ev.claimed_value)
    say(c, words, dict(source=source, **fields))
    pair_figure(c, ev.pair)


def merge_view(c: claims.Checked, words: dict) -> None:
    pair: claims.ScorePair = c.evidence
    bf16, (bf_a, _) = pair.on("bfloat16"), pair.bins_in("bfloat16")
    fields = bin_fields(pair, "float16", "f16") | dict(
        bf_gap=bf16.spacing,
        bf_lo=bf_a.lo,
        bf_hi=bf_a.hi,
        bf_a=bf16.stored[0],
        bf_state=TEXT["distinct"]["kept" if bf16.distinct else "merged"],
        bf_p0=bf16.probs[0],
        bf_p1=bf16.probs[1],
    )
    say(c, words, fields)
    pair_figure(c, pair)


def exp_view(c: claims.Checked, words: dict) -> None:
    ev: claims.ExpEvidence = c.evidence
    f16, bf = ev.on("float16"), ev.on("bfloat16")
    fields = dict(
        f16_over=f16.results[0],
        f16_under=f16.results[1],
        bf_over=bf.results[0],
        bf_under=bf.results[1],
        exact_over=ev.exact[0],
        exact_under=ev.exact[1],
        quoted_text=ev.quoted_max.text,
        quoted_match=quoted_match(ev.quoted_max),
        f16_from=f16.thresholds.overflow_from,
        f16_last=f16.thresholds.largest_finite_input,
        f16_logmax=f16.thresholds.log_max,
        f16_under_from=f16.thresholds.underflow_from,
        bf_from=bf.thresholds.overflow_from,
        bf_under_from=bf.thresholds.underflow_from,
    )
    say(c, words, fields)
    cols = TEXT["table_cols"]
    rows = [
        {cols["input"]: f"exp({x:g})", cols["exact"]: f"{e:.6g}"}
        | {f.format: f"{f.results[i]:.6g}" for f in ev.formats}
        for i, (x, e) in enumerate(zip(ev.inputs, ev.exact, strict=True))
    ]
    table(rows)


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
    say(c, words, fields)
    names, cols = TEXT["recipe_names"], TEXT["recipe_cols"]
    left, right = st.columns(2)
    fig = claims_fig.lost_gradients_figure(ev.recipes, names=names, labels=TEXT["labels"])
    left.plotly_chart(fig, width="stretch", key=f"lost_{c.claim}")
    rows = [
        {
            cols["recipe"]: names[r.recipe],
            cols["final"]: round(r.final_loss, 4),
            cols["lost"]: f"{r.mean_zero_grad_fraction:.3%}",
            cols["skipped_nonfinite"]: TEXT["pair"].format(a=len(r.skipped_steps), b=len(r.nonfinite_steps)),
        }
        for r in ev.recipes
    ]
    table(rows, right)


def speed_view(c: claims.Checked, words: dict) -> None:
    ev: claims.SpeedEvidence = c.evidence
    by = {r.dtype: r for r in ev.rows}
    bf, fp = by["bfloat16"], by["float16"]
    reasons = TEXT["speed_reason"]
    if c.verdict != "inconclusive":
        reason = reasons["decided"]
    elif ev.too_noisy:
        reason = reasons["too_noisy"].format(spread=ev.max_relative_spread)
    else:
        reason = reasons["straddles"].format(q1=TEXT["filters"][ev.verdict_at_q1], q3=TEXT["filters"][ev.verdict_at_q3])
    fields = dict(
        device=TEXT["measured_on"][ev.device],
        threads=ev.threads,
        repeat=ev.repeat,
        bf16=bf.step_speedup,
        bf16_q1=bf.step_speedup_spread.q1,
        bf16_q3=bf.step_speedup_spread.q3,
        fp16=fp.step_speedup,
        fp16_q1=fp.step_speedup_spread.q1,
        fp16_q3=fp.step_speedup_spread.q3,
        bf16_mm=bf.matmul_speedup,
        fp16_mm=fp.matmul_speedup,
        reason=reason,
    )
    say(c, words, fields)
    scope = TEXT["speed_scope"]
    for key, codes in (("tells", ev.tells), ("cannot_tell", ev.cannot_tell)):
        items = TEXT["list_joiner"].join(scope[code].format(capability=ev.cpu_capability) for code in codes)
        st.markdown(words[key].format(items=items))
    left, right = st.columns(2)
    left.plotly_chart(claims_fig.speed_figure(ev, labels=TEXT["labels"]), width="stretch", key=f"speed_{c.claim}")
    cols = TEXT["speed_cols"]
    rows = [
        {
            cols["dtype"]: r.dtype,
            cols["step"]: f"{r.step_ms:.4g}",
            cols["speedup"]: TEXT["speedup_cell"].format(
                median=r.step_speedup, q1=r.step_speedup_spread.q1, q3=r.step_speedup_spread.q3
            ),
        }
        for r in ev.rows
    ]
    table(rows, right)


def accumulation_view(c: claims.Checked, words: dict) -> None:
    ev: claims.AccumulationEvidence = c.evidence
    m, k, n = ev.random_shape
    fraction = Fraction(ev.small / ev.spacing_at_one).limit_denominator(1024)
    fields = dict(
        n_small=ev.n_small,
        small_log2=round(math.log2(ev.small)),
        fraction=f"{fraction.numerator}/{fraction.denominator}",
        spacing=ev.spacing_at_one,
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
    say(c, words, fields)
    left, right = st.columns(2)
    fig = claims_fig.accumulation_figure(ev, labels=TEXT["labels"])
    left.plotly_chart(fig, width="stretch", key=f"accumulation_{c.claim}")
    cols, names = TEXT["match_cols"], TEXT["match_names"]
    rows = [
        {cols["how"]: names[how].format(device=TEXT["measured_on"][ev.device]), cols["share"]: f"{share:.2%}"}
        for how, share in ev.random_match.items()
    ]
    table(rows, right)


VIEWS = {
    "softmax_fp32": policy_view,
    "matmul_low_precision": policy_view,
    "layer_norm_fp32": policy_view,
    "bf16_range": range_view,
    "fp16_tiny_gradients": storage_view,
    "close_scores": close_scores_view,
    "loss_fp32": policy_view,
    "bf16_no_scaler": scaler_view,
    "speedup": speed_view,
    "matmul_accumulation": accumulation_view,
    "bf16_tiny_gradients": storage_view,
    "cpu_no_mixed_precision": cpu_autocast_view,
    "cuda_amp_api": api_view,
    "promote_list": promote_view,
    "unlisted_fall_back_to_fp32": fallback_view,
    "embedding_low_precision": embedding_view,
    "gradients_low_precision": gradients_view,
    "scaler_no_op_bf16": no_op_view,
    "backoff_in_step": backoff_view,
    "exp_limits": exp_view,
    "bf16_holds_70000": big_value_view,
    "fp16_merges_close_scores": merge_view,
}


# ── a card ──────────────────────────────────────────────────────────────────────────────────────────────────
def anchor(claim: claims.Claim) -> str:
    return f"claim-{claim.id}"


def source_lines(claim: claims.Claim) -> str:
    title = claims.SOURCES[claim.seeds[0]][1]  # English gloss; the Chinese title comes with the language choice
    line = TEXT["source"].format(title=title, section=claim.section[1])
    if len(claim.seeds) > 1:
        others = TEXT["list_joiner"].join(f"*{claims.SOURCES[s][1]}*" for s in claim.seeds[1:])
        line += "  \n" + TEXT["also_in"].format(titles=others)
    return line


def parts_list(parts, words: dict) -> str:
    """A markdown list: ✓ or ✗, then what the part says (its subject filled in)."""
    lines = []
    for part in parts:
        subject = (part.subject or "").replace("\n", "; ")
        mark = TEXT["part_holds" if part.holds else "part_fails"]
        lines.append("- " + TEXT["part_line"].format(mark=mark, text=words["parts"][part.code].format(subject=subject)))
    return "\n".join(lines)


def parts_block(checked: claims.Checked, words: dict) -> None:
    """What the claim says, part by part; parts measured per device side by side, each with its verdict."""
    st.markdown(f"**{TEXT['parts_title']}**")
    devices = list(dict.fromkeys(p.device for p in checked.parts))
    if devices == [None]:
        st.markdown(parts_list(checked.parts, words))
        return
    for col, device in zip(st.columns(len(devices)), devices, strict=True):
        head = f"**{TEXT['device_short'][device]}** {badge(checked.device_verdicts[device])}"
        col.markdown(head + "\n\n" + parts_list([p for p in checked.parts if p.device == device], words))


def card(claim: claims.Claim, checked: claims.Checked | None) -> None:
    words = TEXT["claims"][claim.key]
    with st.container(border=True):
        st.subheader(TEXT["card_title"].format(id=claim.id, claim=words["claim"]), anchor=anchor(claim))
        st.caption(source_lines(claim))
        if checked is None:
            st.info(TEXT["pending"].format(slow=TEXT["slow"]))
            return
        st.markdown(badge(checked.verdict))
        if checked.parts:
            parts_block(checked, words)
        VIEWS[claim.key](checked, words)
        st.markdown(TEXT["back"])  # a link from the locale file: markdown, not a caption (captions carry no links)


# ── the overview ────────────────────────────────────────────────────────────────────────────────────────────
def summary(shown: tuple[claims.Claim, ...], measured_results: dict[int, claims.Checked]) -> None:
    """Verdict counts, then one compact table per topic: each claim's number links to its card."""
    st.subheader(TEXT["summary_title"], anchor=SUMMARY_ANCHOR)
    counts = claims.verdict_counts(measured_results.values())
    pending = sum(c.id not in measured_results for c in claims.CLAIMS)
    tally = [TEXT["count"].format(color=BADGE_COLORS[v], label=TEXT["verdicts"][v], n=n) for v, n in counts.items()]
    tally.append(TEXT["count"].format(color="gray", label=TEXT["summary_pending"], n=pending))
    st.markdown(" ".join(tally))  # one line of badges: compact on a phone, readable on a projector
    head = TEXT["summary_cols"]
    topics = [t for t in claims.TOPICS if any(c.topic == t for c in shown)]
    grid = st.columns(2)
    for i, topic in enumerate(topics):
        rows = [f"| {head['id']} | {head['claim']} | {head['verdict']} |", "|---:|---|---|"]
        for c in (c for c in shown if c.topic == topic):
            r = measured_results.get(c.id)
            verdict = badge(r.verdict) if r else TEXT["summary_pending"]
            rows.append(f"| [{c.id}](#{anchor(c)}) | {TEXT['claims'][c.key]['short']} | {verdict} |")
        grid[i % 2].markdown(f"**{TEXT['topics'][topic]}**\n\n" + "\n".join(rows))


# ── the page ────────────────────────────────────────────────────────────────────────────────────────────────
page_header(TEXT)
seed_from_url(PARAMS)
show_warnings()
s = st.session_state
st.segmented_control(TEXT["filter"], FILTERS, key="verdict", format_func=TEXT["filters"].get, required=True)
st.segmented_control(
    TEXT["topic_filter"], TOPIC_FILTERS, key="topic", format_func=TEXT["topic_filters"].get, required=True
)
st.toggle(TEXT["slow"], key="slow")
write_url(PARAMS)

results_by_id: dict[int, claims.Checked] = {}
with st.spinner(TEXT["measuring"]):
    for claim in claims.CLAIMS:
        if not claim.on_demand:
            with guarded(f"claim {claim.id}"):
                results_by_id[claim.id] = measured(claim)
if s.slow:
    for claim in claims.CLAIMS:
        if claim.on_demand:
            with st.spinner(TEXT["measuring_slow"].format(id=claim.id)), guarded(f"claim {claim.id}"):
                results_by_id[claim.id] = measured(claim)

selection = claims.select(results_by_id, s.verdict, s.topic)
with guarded("summary"):
    summary(selection.shown, results_by_id)
if selection.unplaced:
    st.caption(TEXT["pending_hidden"].format(n=len(selection.unplaced)))
if not selection.shown:
    st.info(TEXT["none_shown"])
topic = None
for claim in selection.shown:
    if claim.topic != topic:
        topic = claim.topic
        st.header(TEXT["topics"][topic], anchor=f"topic-{topic}")
    with guarded(f"card {claim.id}"):
        card(claim, results_by_id.get(claim.id))
