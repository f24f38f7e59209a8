"""What autocast does to each probed call, per device: step strips, category tables, CPU's autocast, embeddings."""

from __future__ import annotations

from mpviz import claims
from mpviz.policy import CallProbe
from mpviz.presentation.claim_evidence.blocks import Block, Columns, Details, caption, figure
from mpviz.presentation.claim_evidence.dispatch import shows
from mpviz.presentation.claim_evidence.words import (
    badge,
    category,
    lesson_words,
    op_name,
    ops_list,
    say,
    short_category,
    table,
)
from mpviz.presentation.figures import policy as policy_fig


def device_labels(ev: claims.PolicyEvidence) -> dict[str, str]:
    return {run.device: lesson_words()["device_labels"][run.trace_device] for run in ev.devices}


@shows(claims.PolicyEvidence)
def policy_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    """Claims 1, 2, 3, 7: the probed calls of each device as step strips, and the block's landmark dtypes."""
    t = lesson_words()
    ev: claims.PolicyEvidence = c.evidence
    fields = dict(c.headline)
    for run in ev.devices:
        fields[f"{run.device}_cat"] = category(next(iter(run.categories.values())))
        fields[f"{run.device}_low"] = ops_list(run.low_precision_ops)
    labels = device_labels(ev)
    columns = []
    for run in ev.devices:
        column: list[Block] = [f"**{labels[run.device]}** {badge(c.device_verdicts[run.device])}"]
        for probe in run.probes:
            line = t["probe"].format(
                function=probe.function, inputs=", ".join(probe.input_dtypes), out=probe.output_dtype
            )
            column.append(caption(line + (t["probe_fake"] if probe.fake else "")))
            if probe.error:
                column.append(t["probe_error"].format(error=probe.error))
            build = lambda p=probe: policy_fig.call_steps_figure(list(p.steps))  # noqa: E731
            column.append(figure(f"steps_{c.claim}_{run.device}_{probe.function}", build))
        entries = "; ".join(f"`{op_name(op)}` {category(cat)}" for op, cat in run.categories.items())
        column.append(caption(t["policy_line"].format(device=t["device_short"][run.device], entries=entries)))
        columns.append(tuple(column))
    landmarks = ev.devices[0].landmarks
    rows = [{t["landmark"]: name} | {labels[r.device]: r.landmarks[name] for r in ev.devices} for name in landmarks]
    return say(c, words, fields), Details(t["details"], (Columns(tuple(columns)), table(rows)))


def call_label(probe: CallProbe) -> str:
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


@shows(claims.PromoteListEvidence)
def promote_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    ev: claims.PolicyEvidence = c.evidence
    cpu, cuda = ev.on("cpu"), ev.on("cuda")
    fields = dict(
        cpu_listed=ops_list(tuple(op for op, cat in cpu.categories.items() if cat == "promote")),
        cuda_listed=ops_list(tuple(op for op, cat in cuda.categories.items() if cat == "promote")),
        add_out=cpu.probe("add").output_dtype,
        add_plain=cpu.probe("add").output_dtype_without_autocast,
        gelu_out=cpu.probe("gelu").output_dtype,
        cpu_out=cpu.landmarks["out"],
        cuda_out=cuda.landmarks["out"],
    )
    # one row per probed op: folded when presenting
    return say(c, words, fields), Details(lesson_words()["details"], (table(probes_table(ev)),), folded=False)


@shows(claims.FallbackEvidence)
def fallback_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    """Claim 15: each example's result and its category in each policy."""
    ev: claims.PolicyEvidence = c.evidence
    fields = dict(c.headline)
    for run in ev.devices:
        for probe, cat in zip(run.probes, run.categories.values(), strict=True):
            fields[f"{run.device}_{probe.function}_cat"] = category(cat)
    return say(c, words, fields), Details(lesson_words()["details"], (table(functions_table(ev)),), folded=False)


@shows(claims.CpuAutocastEvidence)
def cpu_autocast_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
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
    columns = tuple(
        (
            caption(t["cpu_probe"].format(dtype=probe.autocast_dtype, inputs=", ".join(probe.input_dtypes))),
            figure(f"cpu_{probe.autocast_dtype}", lambda p=probe: policy_fig.call_steps_figure(list(p.steps))),
        )
        for probe in ev.probes
    )
    return say(c, words, fields), Columns(columns)


@shows(claims.EmbeddingEvidence)
def embedding_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    ev: claims.EmbeddingEvidence = c.evidence
    fields = {f"{d}_out": ev.outputs[d] for d in claims.DEVICES}
    fields |= {f"{d}_plain": ev.outputs_without_autocast[d] for d in claims.DEVICES}
    fields |= {f"{d}_cat": short_category(ev.categories[d]) for d in claims.DEVICES}
    return (say(c, words, fields),)


@shows(claims.MpsEvidence)
def mps_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    ev: claims.MpsEvidence = c.evidence
    fields = {f"{d}_kernels": n for d, n in ev.registered.items()}
    fields |= dict(
        dtype=ev.default_dtype,
        linear_out=ev.probes[0].output_dtype,
        softmax_out=ev.probes[1].output_dtype,
    )
    return (say(c, words, fields),)


@shows(claims.ModelOutputEvidence)
def model_output_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    """Claim 44: the block's output and loss under each device's autocast, in bf16 and fp16."""
    t = lesson_words()
    ev: claims.ModelOutputEvidence = c.evidence
    fields = {f"{d}_{low}": ev.logits[d][low] for d in ev.logits for low in ev.logits[d]}
    fields |= {f"{d}_{low}_loss": ev.loss[d][low] for d in ev.loss for low in ev.loss[d]}
    fields["where"] = t["device_labels"][ev.trace_devices["cuda"]]
    return (say(c, words, fields),)
