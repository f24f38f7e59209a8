"""The torch.cuda.amp calls a tutorial uses, run against this torch: current, deprecated, or gone."""

from __future__ import annotations

import streamlit as st

from mpviz import claims
from mpviz.app.claim_evidence.words import code_list, lesson_words, say, table, yes_no


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


def default_dtype_view(c: claims.Checked, words: dict) -> None:
    ev: claims.DefaultDtypeEvidence = c.evidence
    fields = dict(fast=ev.cuda_amp_autocast, cuda=ev.torch_autocast["cuda"], cpu=ev.torch_autocast["cpu"])
    fields["deprecated"] = yes_no(ev.deprecation is not None)
    fields |= dict(low=code_list(ev.low_landmarks), other=code_list(ev.other_landmarks))
    fields["where"] = lesson_words()["device_labels"][ev.trace_device]
    say(c, words, fields)


def default_float_view(c: claims.Checked, words: dict) -> None:
    """Claim 43: the default dtype, what factories make and what modules' parameters are."""
    t = lesson_words()
    ev: claims.DefaultFloatEvidence = c.evidence
    say(c, words, dict(default=ev.default_dtype))
    cols = t["table_cols"]
    made = {**ev.factories, **ev.parameters}
    table([{cols["measure"]: f"`{code}`", cols["dtype"]: d} for code, d in made.items()])
