"""The torch.cuda.amp calls a tutorial uses, run against this torch: current, deprecated, or gone."""

from __future__ import annotations

from mpviz import claims
from mpviz.presentation.claim_evidence.blocks import Block, Code, Columns
from mpviz.presentation.claim_evidence.dispatch import shows
from mpviz.presentation.claim_evidence.words import code_list, lesson_words, say, table, yes_no


@shows(claims.ApiEvidence)
def api_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    t = lesson_words()
    ev: claims.ApiEvidence = c.evidence
    replacements = code_list(r.code for r in ev.replacements if r.current)
    out: list[Block] = [say(c, words, dict(version=ev.torch_version, replacements=replacements))]
    for call in ev.calls:
        message = call.error or call.deprecation
        status = (t["api_status"][claims.api_status(call)], *([Code(message, None)] if message else []))
        out.append(Columns(((Code(call.code),), status), widths=(3, 2)))
    return tuple(out)


@shows(claims.DefaultDtypeEvidence)
def default_dtype_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    ev: claims.DefaultDtypeEvidence = c.evidence
    fields = dict(fast=ev.cuda_amp_autocast, cuda=ev.torch_autocast["cuda"], cpu=ev.torch_autocast["cpu"])
    fields["deprecated"] = yes_no(ev.deprecation is not None)
    fields |= dict(low=code_list(ev.low_landmarks), other=code_list(ev.other_landmarks))
    fields["where"] = lesson_words()["device_labels"][ev.trace_device]
    return (say(c, words, fields),)


@shows(claims.DefaultFloatEvidence)
def default_float_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    """Claim 43: the default dtype, what factories make and what modules' parameters are."""
    t = lesson_words()
    ev: claims.DefaultFloatEvidence = c.evidence
    said = say(c, words, dict(default=ev.default_dtype))
    cols = t["table_cols"]
    made = {**ev.factories, **ev.parameters}
    return said, table([{cols["measure"]: f"`{code}`", cols["dtype"]: d} for code, d in made.items()])
