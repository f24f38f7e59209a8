"""The fp8 claims' evidence (mpviz.claims.fp8): the cast table. The other fp8 claims need only their words, filled
with their evidence's fields (mpviz.presentation.claim_evidence.dispatch.words_only)."""

from __future__ import annotations

from mpviz import claims
from mpviz.claims.fp8 import CastEvidence
from mpviz.presentation.claim_evidence.blocks import Block
from mpviz.presentation.claim_evidence.dispatch import shows
from mpviz.presentation.claim_evidence.words import say, table


@shows(CastEvidence)
def cast_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    ev: CastEvidence = c.evidence
    cols = words["columns"]
    rows = [
        {cols["value"]: f"{p:g}", "float8_e4m3fn": f"{a:g}", "float8_e5m2": f"{b:g}"}
        for p, a, b in zip(ev.probes, ev.e4m3, ev.e5m2, strict=True)
    ]
    return say(c, words, dict(e4m3_max=ev.e4m3_max, e5m2_max=ev.e5m2_max)), table(rows)
