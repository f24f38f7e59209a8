"""The fp8 claims' evidence (mpviz.claims.fp8): each explanation filled with the block's measurements."""

from __future__ import annotations

from mpviz import claims
from mpviz.app.claim_evidence.words import say, table
from mpviz.claims.fp8 import CastEvidence, FormatRoleEvidence, MxGradientEvidence, Nvfp4Evidence


def format_role_view(c: claims.Checked, words: dict) -> None:
    ev: FormatRoleEvidence = c.evidence
    say(c, words, dict(ev.__dict__))


def mx_gradient_view(c: claims.Checked, words: dict) -> None:
    ev: MxGradientEvidence = c.evidence
    say(c, words, dict(ev.__dict__))


def nvfp4_view(c: claims.Checked, words: dict) -> None:
    ev: Nvfp4Evidence = c.evidence
    say(c, words, dict(ev.__dict__))


def cast_view(c: claims.Checked, words: dict) -> None:
    ev: CastEvidence = c.evidence
    say(c, words, dict(e4m3_max=ev.e4m3_max, e5m2_max=ev.e5m2_max))
    cols = words["columns"]
    rows = [
        {cols["value"]: f"{p:g}", "float8_e4m3fn": f"{a:g}", "float8_e5m2": f"{b:g}"}
        for p, a, b in zip(ev.probes, ev.e4m3, ev.e5m2, strict=True)
    ]
    table(rows)
