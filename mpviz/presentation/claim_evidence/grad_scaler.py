"""What a real GradScaler does: the scale it multiplies by, when it backs off, and bf16 recipes without one."""

from __future__ import annotations

import math

from mpviz import claims
from mpviz.presentation.claim_evidence.blocks import Block
from mpviz.presentation.claim_evidence.dispatch import shows
from mpviz.presentation.claim_evidence.words import lesson_words, say, table, yes_no


@shows(claims.NoOpEvidence)
def no_op_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    t = lesson_words()
    ev: claims.NoOpEvidence = c.evidence
    on, off = ev.enabled, ev.disabled
    same = on.grads_restored and on.same_update_as_without
    outcome = words["outcome_same" if same else "outcome_differs"].format(loss_ratio=on.loss_ratio)
    fields = dict(loss_ratio=on.loss_ratio, grad_ratio=on.grad_ratio, outcome=outcome, disabled_ratio=off.loss_ratio)
    said = say(c, words, fields)
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
    return said, table(rows)


@shows(claims.ScalerStep)
def backoff_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    t = lesson_words()
    s: claims.ScalerStep = c.evidence
    fields = dict(
        moved=words["moved" if s.params_changed_in_step else "unchanged"],
        after_step=s.scale_after_step,
        after_update=s.scale_after_update,
        backoff=s.scale_after_update / s.scale,
    )
    said = say(c, words, fields)
    cols, moments = t["table_cols"], t["scaler_moments"]
    readings = (
        ("before", s.scale, "—"),
        ("step", s.scale_after_step, yes_no(s.params_changed_in_step)),
        ("update", s.scale_after_update, "—"),
    )
    return said, table(
        [{cols["moment"]: moments[k], cols["scale"]: f"{v:g}", cols["params_changed"]: ch} for k, v, ch in readings]
    )


@shows(claims.ScalerEvidence)
def scaler_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    t = lesson_words()
    ev: claims.ScalerEvidence = c.evidence
    bf16, fp16s = ev.recipe("bf16"), ev.recipe("fp16+scaler")
    fields = dict(
        steps=ev.config.steps,
        seq=ev.config.model.seq_len,
        dim=ev.config.model.d_model,
        log2_mult=round(math.log2(ev.config.loss_multiplier)),
        nonzero=ev.nonzero,
        exact_zero=t["list_joiner"].join(f"`{n}` ({k})" for n, k in ev.exact_zero.items()) or t["no_ops"],
        bf16=ev.lost("bf16").lost,
        fp16s=ev.lost("fp16+scaler").lost,
        fp16=ev.lost("fp16").lost,
        bf16_nonfinite=len(bf16.nonfinite_steps),
        fp16s_skipped=len(fp16s.skipped_steps),
    )
    said = say(c, words, fields)
    names, cols = t["recipe_names"], t["recipe_cols"]
    lost = {u.recipe: u.lost for u in ev.underflow}
    rows = [
        {
            cols["recipe"]: names[r.recipe],
            cols["final"]: round(r.final_loss, 4),
            cols["lost"]: f"{lost[r.recipe]} / {ev.nonzero}" if r.recipe in lost else "—",
            cols["skipped_nonfinite"]: t["pair"].format(a=len(r.skipped_steps), b=len(r.nonfinite_steps)),
        }
        for r in ev.recipes
    ]
    return said, table(rows)


@shows(claims.DefaultsEvidence)
def defaults_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    ev: claims.DefaultsEvidence = c.evidence
    names = ("init_scale", "growth_factor", "growth_interval", "backoff_factor")
    return (say(c, words, {f: getattr(ev.read, f) for f in names}),)


@shows(claims.Bf16ScalingEvidence)
def bf16_scaling_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    ev: claims.Bf16ScalingEvidence = c.evidence
    fields = dict(
        scale=ev.scale,
        elements=ev.elements,
        identical=ev.identical,
        error_plain=ev.error_plain,
        error_scaled=ev.error_scaled,
    )
    return (say(c, words, fields),)


@shows(claims.CastBackEvidence)
def cast_back_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    ev: claims.CastBackEvidence = c.evidence
    fields = {f"{r.device}_out": r.returned for r in ev.matmul}
    fields |= {f"{r.device}_next": r.returned for r in ev.next_layer}
    fields |= {f"scale_{name}": dtype for name, dtype in ev.scaled_dtypes.items()}
    return (say(c, words, fields),)


@shows(claims.ScaleSizeEvidence)
def scale_size_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    """Claim 48: the scale over a few steps with large, small and inf gradients."""
    t = lesson_words()
    ev: claims.ScaleSizeEvidence = c.evidence
    large, small = ev.tracks["large"], ev.tracks["small"]
    fields = dict(
        interval=ev.growth_interval,
        default_interval=ev.default_growth_interval,
        steps=len(large.scales) - 1,
        large=large.gradient,
        small=small.gradient,
        large_final=large.scales[-1],
        small_final=small.scales[-1],
        start=large.scales[0],
        overflow_final=ev.overflow.scales[-1],
    )
    said = say(c, words, fields)
    cols = t["table_cols"]
    tracks = {**ev.tracks, "overflow": ev.overflow}
    rows = [
        {
            cols["gradient"]: f"{tr.gradient:g}",
            cols["scales"]: t["arrow"].format(a=f"{tr.scales[0]:g}", b=" → ".join(f"{v:g}" for v in tr.scales[1:])),
        }
        for tr in tracks.values()
    ]
    return said, table(rows)
