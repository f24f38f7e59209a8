"""How the claims page shows each claim's evidence: one function per claim key (`VIEWS`), and the small word
helpers the page shares with them. Words are looked up when a view runs (`lesson_words`), never at import, so
every session sees its own language."""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

import pandas as pd
import streamlit as st

from mpviz import claims, formats
from mpviz.claims.gradients import MATMUL_MADE
from view import text
from view.figures import claims as claims_fig
from view.figures import formats as formats_fig
from view.figures import policy as policy_fig
from view.page import chart, expert

BADGE_COLORS = {
    "holds": "green",
    "partly_holds": "orange",
    "depends_on_device": "blue",
    "does_not_hold": "red",
    "inconclusive": "gray",
}


def lesson_words() -> Mapping:
    """The claims lesson's words in this session's language."""
    return text.section("claims")


def range_labels() -> dict:
    """The formats lesson's range chart, with this lesson's titles."""
    return {**text.section("formats")["figure"], **lesson_words()["labels"]}


def number_line_labels() -> dict:
    """The formats lesson's number line, untitled: the page titles it with a caption, which wraps."""
    return {**text.section("formats")["figure"], "number_line_title": ""}


# ── words ───────────────────────────────────────────────────────────────────────────────────────────────────
def badge(verdict: str) -> str:
    return f":{BADGE_COLORS[verdict]}-badge[{lesson_words()['verdicts'][verdict]}]"


def value_class(cls: str) -> str:
    """What a stored number is ("normal", "subnormal", …: mpviz.formats.Encoding.cls) in this session's words."""
    return text.section("common")["value_classes"][cls]


def category(cat: str | None) -> str:
    return lesson_words()["category_phrase"][cat or "none"]


def short_category(cat: str | None) -> str:
    """A category's short name, breakable after each underscore so a narrow table can wrap it."""
    return lesson_words()["category_short"][cat or "none"].replace("_", "_\u200b")


def op_name(op: str) -> str:
    """ "aten::add.Tensor" / "aten.add.Tensor" → "add"."""
    return op.replace("::", ".").removeprefix("aten.").split(".")[0]


def code_list(names) -> str:
    t = lesson_words()
    return t["list_joiner"].join(f"`{n}`" for n in names) or t["no_ops"]


def ops_list(ops: tuple[str, ...]) -> str:
    return code_list(op_name(op) for op in ops)


def yes_no(flag: bool) -> str:
    return lesson_words()["yes" if flag else "no"]


def quoted_match(q: claims.Quoted) -> str:
    """What a quoted number really is, e.g. "float32's smallest subnormal value (1.401e-45)"."""
    t = lesson_words()
    found = [
        t["quoted"]["match"].format(format=m.format, field=t["field_names"][m.field], value=m.value) for m in q.matches
    ]
    return t["and_joiner"].join(found) or t["quoted"]["none"]


def say(c: claims.Checked, words: dict, fields: dict) -> None:
    """The claim's explanation filled with its measurements, then the conclusion its verdict supports, if any."""
    conclusion = words.get("conclusion", {}).get(c.verdict, "")
    st.markdown(" ".join(t for t in (words["explain"], conclusion) if t).format(**fields))


def table(rows: list[dict], container=st) -> None:
    """A small static table: every cell wraps instead of being cut off (phones, projectors)."""
    container.table(pd.DataFrame(rows), hide_index=True, border="horizontal")


# ── evidence, one view per claim ────────────────────────────────────────────────────────────────────────────
def device_labels(ev) -> dict[str, str]:
    return {run.device: lesson_words()["device_labels"][run.trace_device] for run in ev.devices}


def policy_view(c: claims.Checked, words: dict) -> None:
    """Claims 1, 2, 3, 7: the probed calls of each device as step strips, and the block's landmark dtypes."""
    t = lesson_words()
    ev: claims.PolicyEvidence = c.evidence
    fields = dict(c.headline)
    for run in ev.devices:
        fields[f"{run.device}_cat"] = category(next(iter(run.categories.values())))
        fields[f"{run.device}_low"] = ops_list(run.low_precision_ops)
    say(c, words, fields)
    labels = device_labels(ev)
    with st.expander(t["details"]):
        for col, run in zip(st.columns(len(ev.devices)), ev.devices, strict=True):
            col.markdown(f"**{labels[run.device]}** {badge(c.device_verdicts[run.device])}")
            for probe in run.probes:
                line = t["probe"].format(
                    function=probe.function, inputs=", ".join(probe.input_dtypes), out=probe.output_dtype
                )
                col.caption(line + (t["probe_fake"] if probe.fake else ""))
                if probe.error:
                    col.error(t["probe_error"].format(error=probe.error))
                key = f"steps_{c.claim}_{run.device}_{probe.function}"
                chart(policy_fig.call_steps_figure(list(probe.steps)), where=col, key=key)
            entries = "; ".join(f"`{op_name(op)}` {category(cat)}" for op, cat in run.categories.items())
            col.caption(t["policy_line"].format(device=t["device_short"][run.device], entries=entries))
        landmarks = ev.devices[0].landmarks
        table([{t["landmark"]: name} | {labels[r.device]: r.landmarks[name] for r in ev.devices} for name in landmarks])


def call_label(probe) -> str:
    return f"`{probe.function}({', '.join(probe.input_dtypes)})`"


def probes_table(ev: claims.PolicyEvidence) -> list[dict]:
    """One row per probed call; per device what it returned with autocast on, then off."""
    t = lesson_words()
    cols, rows = t["table_cols"], []
    for i, first in enumerate(ev.devices[0].probes):
        row = {cols["function"]: call_label(first)}
        for run in ev.devices:
            p = run.probes[i]
            row[cols["on_off"].format(device=t["device_short"][run.device])] = t["pair"].format(
                a=p.output_dtype, b=p.output_dtype_without_autocast
            )
        rows.append(row)
    return rows


def functions_table(ev: claims.PolicyEvidence) -> list[dict]:
    """One row per probed call whose op is the i-th of the claim's ops: per device its category and result."""
    t = lesson_words()
    cols, rows = t["table_cols"], []
    for i, (op, first) in enumerate(zip(ev.devices[0].categories, ev.devices[0].probes, strict=True)):
        row = {cols["function"]: call_label(first)}
        for run in ev.devices:
            row[cols["category_out"].format(device=t["device_short"][run.device])] = t["arrow"].format(
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
    with expert(lesson_words()["details"], heading="none"):  # one row per probed op: folded when presenting
        table(probes_table(ev))


def fallback_view(c: claims.Checked, words: dict) -> None:
    ev: claims.PolicyEvidence = c.evidence
    judged = {p.subject for p in c.parts if p.device == "cuda"}
    listed = [p for p in ev.on("cuda").probes if p.function not in judged]
    fields = dict(cuda_listed=code_list(f"{p.function} → {p.output_dtype}" for p in listed))
    say(c, words, fields)
    with expert(lesson_words()["details"], heading="none"):
        table(functions_table(ev))


def cpu_autocast_view(c: claims.Checked, words: dict) -> None:
    t = lesson_words()
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
        col.caption(t["cpu_probe"].format(dtype=probe.autocast_dtype, inputs=", ".join(probe.input_dtypes)))
        chart(policy_fig.call_steps_figure(list(probe.steps)), where=col, key=f"cpu_{probe.autocast_dtype}")


def embedding_view(c: claims.Checked, words: dict) -> None:
    ev: claims.EmbeddingEvidence = c.evidence
    fields = {f"{d}_out": ev.outputs[d] for d in claims.DEVICES}
    fields |= {f"{d}_plain": ev.outputs_without_autocast[d] for d in claims.DEVICES}
    fields |= {f"{d}_cat": short_category(ev.categories[d]) for d in claims.DEVICES}
    say(c, words, fields)


def gradients_view(c: claims.Checked, words: dict) -> None:
    t = lesson_words()
    ev: claims.GradientsEvidence = c.evidence
    fields = {"follow": words["follows" if all(r.grads_follow_forward for r in ev.devices) else "differs"]}
    for run in ev.devices:
        made = {run.activations[a][0] for a in MATMUL_MADE if a in run.activations}
        fields[f"{run.device}_act"] = t["and_joiner"].join(sorted(made))
        fields[f"{run.device}_probs"] = run.activations.get("probs", ("—",))[0]
        fields[f"{run.device}_params"] = t["and_joiner"].join(sorted(set(run.parameter_grads.values())))
    say(c, words, fields)
    cols = t["table_cols"]
    rows = []
    for name in ev.devices[0].activations:
        row = {cols["activation"]: name}
        for run in ev.devices:
            fwd, grad = run.activations.get(name, ("—", "—"))
            row[cols["forward_gradient"].format(device=t["device_short"][run.device])] = t["pair"].format(a=fwd, b=grad)
        rows.append(row)
    with expert(t["details"], heading="none"):
        table(rows)
    params = ev.devices[0].parameter_grads
    grads = [
        {cols["parameter"]: p}
        | {cols["grad"].format(device=t["device_short"][r.device]): r.parameter_grads.get(p) for r in ev.devices}
        for p in params
    ]
    with st.expander(t["details"]):
        table(grads)


def no_op_view(c: claims.Checked, words: dict) -> None:
    t = lesson_words()
    ev: claims.NoOpEvidence = c.evidence
    on, off = ev.enabled, ev.disabled
    same = on.grads_restored and on.same_update_as_without
    outcome = words["outcome_same" if same else "outcome_differs"].format(loss_ratio=on.loss_ratio)
    fields = dict(loss_ratio=on.loss_ratio, grad_ratio=on.grad_ratio, outcome=outcome, disabled_ratio=off.loss_ratio)
    say(c, words, fields)
    cols, names = t["table_cols"], t["scaler_settings"]
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
    t = lesson_words()
    s: claims.ScalerStep = c.evidence
    fields = dict(
        moved=words["moved" if s.params_changed_in_step else "unchanged"],
        after_step=s.scale_after_step,
        after_update=s.scale_after_update,
        backoff=s.scale_after_update / s.scale,
    )
    say(c, words, fields)
    cols, moments = t["table_cols"], t["scaler_moments"]
    readings = (
        ("before", s.scale, "—"),
        ("step", s.scale_after_step, yes_no(s.params_changed_in_step)),
        ("update", s.scale_after_update, "—"),
    )
    table([{cols["moment"]: moments[k], cols["scale"]: f"{v:g}", cols["params_changed"]: ch} for k, v, ch in readings])


def api_view(c: claims.Checked, words: dict) -> None:
    t = lesson_words()
    ev: claims.ApiEvidence = c.evidence
    replacements = code_list(r.code for r in ev.replacements if r.current)
    say(c, words, dict(version=ev.torch_version, replacements=replacements))
    for call in ev.calls:
        left, right = st.columns([3, 2])
        left.code(call.code, language="python", wrap_lines=True)
        right.markdown(t["api_status"][claims.api_status(call)])
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
    fig = formats_fig.range_figure([f32, bf, ev.float16], labels=range_labels())
    chart(fig, key=f"range_{c.claim}")


def storage_table(ev: claims.StorageEvidence) -> list[dict]:
    """One row per value; per format what it is stored as, its kind and relative error."""
    t = lesson_words()
    cols, rows = t["storage_cols"], []
    for i, v in enumerate(ev.values):
        row = {cols["value"]: f"{v:g}"}
        for store in (ev.claimed, ev.contrast):
            e = store.stored[i]
            cell = t["stored_cell" if math.isfinite(e.rel_error) else "stored_cell_exactless"]
            cls = value_class(e.cls)
            row[store.format.name] = cell.format(stored=f"{e.value:.9g}", cls=cls, error=f"{e.rel_error:.2%}")
        rows.append(row)
    return rows


def storage_figure(c: claims.Checked, ev: claims.StorageEvidence, container) -> None:
    t = lesson_words()
    markers = {t["marker"].format(i=i + 1): v for i, v in enumerate(ev.values)}
    labels = {**range_labels(), "range_title": ""}
    fig = formats_fig.range_figure([ev.claimed.format, ev.contrast.format], markers, labels=labels)
    chart(fig, where=container, key=f"storage_{c.claim}")


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
        fields |= {f"v{i}": v, f"s{i}": e.value, f"c{i}": value_class(e.cls), f"e{i}": e.rel_error, f"o{i}": o.value}
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
        bf_cls=value_class(big.cls),
        bf_err=big.rel_error,
        bf_ulp=big.ulp,
        bf_ex=example.value,
    )
    say(c, words, fields)
    left, right = st.columns(2)
    table(storage_table(ev), left)
    storage_figure(c, ev, right)


def bin_fields(pair: claims.ScorePair, fmt: str, prefix: str) -> dict:
    t = lesson_words()
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
        f"{prefix}_state": t["distinct"]["kept" if stored.distinct else "merged"],
    }


def pair_figure(c: claims.Checked, pair: claims.ScorePair) -> None:
    t = lesson_words()
    margin = max(r.spacing for r in pair.formats)
    lo, hi = min(pair.scores) - margin, max(pair.scores) + margin
    lines = [formats.number_line(f.format, lo, hi) for f in pair.formats]
    st.caption(t["labels"]["number_line_title"])
    fig = claims_fig.close_scores_figure(lines, [pair], labels=t["labels"], number_line_labels=number_line_labels())
    chart(fig, key=f"scores_{c.claim}")


def close_scores_view(c: claims.Checked, words: dict) -> None:
    t = lesson_words()
    ev: claims.CloseScoresEvidence = c.evidence
    fields = bin_fields(ev.pair, "float16", "f16") | bin_fields(ev.pair, "bfloat16", "bf16")
    if ev.claimed_value_from:
        source = words["source_found"].format(
            claimed=ev.claimed_value,
            formats=t["and_joiner"].join(dict.fromkeys(f for f, _ in ev.claimed_value_from)),
            scores=t["and_joiner"].join(f"{s:g}" for _, s in ev.claimed_value_from),
        )
    else:
        source = words["source_none"].format(claimed=ev.claimed_value)
    say(c, words, dict(source=source, **fields))
    pair_figure(c, ev.pair)


def merge_view(c: claims.Checked, words: dict) -> None:
    t = lesson_words()
    pair: claims.ScorePair = c.evidence
    bf16, (bf_a, _) = pair.on("bfloat16"), pair.bins_in("bfloat16")
    fields = bin_fields(pair, "float16", "f16") | dict(
        bf_gap=bf16.spacing,
        bf_lo=bf_a.lo,
        bf_hi=bf_a.hi,
        bf_a=bf16.stored[0],
        bf_state=t["distinct"]["kept" if bf16.distinct else "merged"],
        bf_p0=bf16.probs[0],
        bf_p1=bf16.probs[1],
    )
    say(c, words, fields)
    pair_figure(c, pair)


def exp_view(c: claims.Checked, words: dict) -> None:
    t = lesson_words()
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
    cols = t["table_cols"]
    rows = [
        {cols["input"]: f"exp({x:g})", cols["exact"]: f"{e:.6g}"}
        | {f.format: f"{f.results[i]:.6g}" for f in ev.formats}
        for i, (x, e) in enumerate(zip(ev.inputs, ev.exact, strict=True))
    ]
    table(rows)


def scaler_view(c: claims.Checked, words: dict) -> None:
    t = lesson_words()
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
    names, cols = t["recipe_names"], t["recipe_cols"]
    left, right = st.columns(2)
    fig = claims_fig.lost_gradients_figure(ev.recipes, names=names, labels=t["labels"])
    chart(fig, where=left, key=f"lost_{c.claim}")
    rows = [
        {
            cols["recipe"]: names[r.recipe],
            cols["final"]: round(r.final_loss, 4),
            cols["lost"]: f"{r.mean_zero_grad_fraction:.3%}",
            cols["skipped_nonfinite"]: t["pair"].format(a=len(r.skipped_steps), b=len(r.nonfinite_steps)),
        }
        for r in ev.recipes
    ]
    table(rows, right)


def speed_view(c: claims.Checked, words: dict) -> None:
    t = lesson_words()
    ev: claims.SpeedEvidence = c.evidence
    by = {r.dtype: r for r in ev.rows}
    bf, fp = by["bfloat16"], by["float16"]
    reasons = t["speed_reason"]
    if c.verdict != "inconclusive":
        reason = reasons["decided"]
    elif ev.too_noisy:
        reason = reasons["too_noisy"].format(spread=ev.max_relative_spread)
    else:
        reason = reasons["straddles"].format(q1=t["filters"][ev.verdict_at_q1], q3=t["filters"][ev.verdict_at_q3])
    fields = dict(
        device=t["measured_on"][ev.device],
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
    scope = t["speed_scope"]
    for key, codes in (("tells", ev.tells), ("cannot_tell", ev.cannot_tell)):
        items = t["list_joiner"].join(scope[code].format(capability=ev.cpu_capability) for code in codes)
        st.markdown(words[key].format(items=items))
    chart(claims_fig.speed_figure(ev, labels=t["labels"]), key=f"speed_{c.claim}")
    cols = t["speed_cols"]
    rows = [
        {
            cols["dtype"]: r.dtype,
            cols["step"]: f"{r.step_ms:.4g}",
            cols["speedup"]: t["speedup_cell"].format(
                median=r.step_speedup, q1=r.step_speedup_spread.q1, q3=r.step_speedup_spread.q3
            ),
        }
        for r in ev.rows
    ]
    table(rows)


def accumulation_view(c: claims.Checked, words: dict) -> None:
    t = lesson_words()
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
        device=t["measured_on"][ev.device],
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
    fig = claims_fig.accumulation_figure(ev, labels=t["labels"])
    chart(fig, where=left, key=f"accumulation_{c.claim}")
    cols, names = t["match_cols"], t["match_names"]
    rows = [
        {cols["how"]: names[how].format(device=t["measured_on"][ev.device]), cols["share"]: f"{share:.2%}"}
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
