"""Whether autocast made a step faster here: measured speedups with their spread, and what that can and cannot tell."""

from __future__ import annotations

from mpviz import claims
from mpviz.presentation.claim_evidence.blocks import Block, figure
from mpviz.presentation.claim_evidence.dispatch import shows
from mpviz.presentation.claim_evidence.words import lesson_words, say, table
from mpviz.presentation.figures import claims as claims_fig


@shows(claims.SpeedEvidence)
def speed_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    t = lesson_words()
    ev: claims.SpeedEvidence = c.evidence
    by = {r.dtype: r for r in ev.rows}
    bf, fp = by["bfloat16"], by["float16"]
    reasons = t["speed_reason"]
    if c.verdict != "inconclusive":
        reason = reasons["decided"]
    elif ev.device != ev.claim_device:
        reason = reasons["other_device"]
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
    out: list[Block] = [say(c, words, fields)]
    scope = t["speed_scope"]
    for key, codes in (("tells", ev.tells), ("cannot_tell", ev.cannot_tell)):
        items = t["list_joiner"].join(scope[code].format(capability=ev.cpu_capability) for code in codes)
        out.append(words[key].format(items=items))
    out.append(figure(f"speed_{c.claim}", lambda: claims_fig.speed_figure(ev, labels=t["labels"])))
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
    return (*out, table(rows))
