"""Which dtype each op a tutorial names returned, per device: one table row per call, with its policy category."""

from __future__ import annotations

from mpviz import claims
from mpviz.presentation.claim_evidence.blocks import Block, caption
from mpviz.presentation.claim_evidence.dispatch import shows
from mpviz.presentation.claim_evidence.words import lesson_words, say, short_category, table


def op_rows(ev: claims.OpDtypeEvidence) -> list[dict]:
    """One row per call: what it got and what the tutorial says, then per device category → returned dtype."""
    t = lesson_words()
    cols, rows = t["table_cols"], {}
    for r in ev.rows:
        label = f"`{r.call.function}({', '.join(r.call.inputs)})`"
        row = rows.setdefault(label, {cols["function"]: label, cols["claimed"]: r.expected})
        got = r.returned or t["refused"]
        row[cols["category_out"].format(device=t["device_short"][r.device])] = t["arrow"].format(
            a=short_category(r.category), b=got
        )
    return list(rows.values())


@shows(claims.OpDtypeEvidence)
def op_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    """Claims 23–27 and 34: the explanation filled from the headline, then the table of calls."""
    ev: claims.OpDtypeEvidence = c.evidence
    refused = lesson_words()["refused"]
    fields = {name: refused if value is None else value for name, value in c.headline.items()}
    # With autocast off: the dtype returned, or what torch said refusing the call.
    fields |= {
        f"{r.device}_{r.call.function}_off": r.returned_without_autocast or r.error_without_autocast for r in ev.rows
    }
    errors = (caption(lesson_words()["probe_error"].format(error=r.error)) for r in ev.rows if r.error)
    return say(c, words, fields), table(op_rows(ev)), *errors
