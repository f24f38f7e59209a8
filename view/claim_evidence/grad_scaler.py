"""What a real GradScaler does: the scale it multiplies by, when it backs off, and bf16 recipes without one."""

from __future__ import annotations

import math

import streamlit as st

from mpviz import claims
from view.claim_evidence.words import lesson_words, say, table, yes_no
from view.figures import claims as claims_fig
from view.page import chart


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
