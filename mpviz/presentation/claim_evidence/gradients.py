"""Which dtype each gradient has after a backward under autocast, beside its forward activation."""

from __future__ import annotations

from mpviz import claims
from mpviz.claims.gradients import BACKWARD_BLOCK
from mpviz.presentation.claim_evidence.blocks import Block, Details, caption
from mpviz.presentation.claim_evidence.dispatch import shows
from mpviz.presentation.claim_evidence.words import code_list, lesson_words, say, table


@shows(claims.GradientsEvidence)
def gradients_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    t = lesson_words()
    ev: claims.GradientsEvidence = c.evidence
    fields = {"follow": words["follows" if all(r.grads_follow_forward for r in ev.devices) else "differs"]}
    for run in ev.devices:
        low = [name for name, (fwd, _) in run.activations.items() if fwd == ev.autocast_dtype]
        other = [name for name, (fwd, _) in run.activations.items() if fwd != ev.autocast_dtype]
        fields[f"{run.device}_low"] = code_list(low)
        fields[f"{run.device}_other"] = code_list(other)
        fields[f"{run.device}_params"] = t["and_joiner"].join(sorted(set(run.parameter_grads.values())))
    fields["cuda_where"] = t["device_labels"][ev.on("cuda").trace_device]
    said = say(c, words, fields)
    cols = t["table_cols"]
    rows = []
    for name in ev.devices[0].activations:
        row = {cols["activation"]: name}
        for run in ev.devices:
            fwd, grad = run.activations.get(name, ("—", "—"))
            row[cols["forward_gradient"].format(device=t["device_short"][run.device])] = t["pair"].format(a=fwd, b=grad)
        rows.append(row)
    params = ev.devices[0].parameter_grads
    grads = [
        {cols["parameter"]: p}
        | {cols["grad"].format(device=t["device_short"][r.device]): r.parameter_grads.get(p) for r in ev.devices}
        for p in params
    ]
    return said, Details(t["details"], (table(rows),), folded=False), Details(t["details"], (table(grads),))


@shows(claims.BackwardPlacementEvidence)
def backward_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    """Claim 49: backward inside the autocast region against backward after it, per device."""
    t = lesson_words()
    ev: claims.BackwardPlacementEvidence = c.evidence
    fields = dict(seq=BACKWARD_BLOCK.seq_len, dim=BACKWARD_BLOCK.d_model)
    for r in ev.devices:
        fields |= {
            f"{r.device}_differing": r.differing,
            f"{r.device}_parameters": r.parameters,
            f"{r.device}_dtypes": t["and_joiner"].join(r.grad_dtypes) or t["refused"],
            f"{r.device}_where": t["device_labels"][r.trace_device],
        }
    return say(c, words, fields), *(caption(t["probe_error"].format(error=r.error)) for r in ev.devices if r.error)
