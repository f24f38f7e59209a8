"""The torch.cuda.amp calls a tutorial uses, run against this torch: current, deprecated, or gone."""

from __future__ import annotations

import streamlit as st

from mpviz import claims
from view.claim_evidence.words import code_list, lesson_words, say, yes_no


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
    say(c, words, fields)
