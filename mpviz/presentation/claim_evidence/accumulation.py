"""In which dtype a low-precision matmul adds up its products: small terms lost or kept, measured against exact."""

from __future__ import annotations

import math
from fractions import Fraction

from mpviz import claims
from mpviz.presentation.claim_evidence.blocks import Block, Columns, caption, figure
from mpviz.presentation.claim_evidence.dispatch import shows
from mpviz.presentation.claim_evidence.words import lesson_words, say, table, yes_no
from mpviz.presentation.figures import claims as claims_fig


@shows(claims.AccumulationEvidence)
def accumulation_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    t = lesson_words()
    ev: claims.AccumulationEvidence = c.evidence
    m, k, n = ev.random_shape
    fraction = Fraction(ev.small / ev.spacing_at_one).limit_denominator(1024)
    fields = dict(
        n_small=ev.n_small,
        small_log2=round(math.log2(ev.small)),
        fraction=f"{fraction.numerator}/{fraction.denominator}",
        spacing=ev.spacing_at_one,
        exact=ev.exact,
        low=ev.low_accumulator,
        once=ev.rounded_once,
        measured=ev.measured,
        device=t["measured_on"][ev.device],
        m=m,
        k=k,
        n=n,
        share=ev.random_match["matmul"],
        accumulator=ev.accumulator,
        out=ev.output_dtype,
        cpu_scores=ev.score_dtypes["cpu"],
        cuda_scores=ev.score_dtypes["cuda"],
        cpu_out=ev.autocast_outputs["cpu"],
        cuda_out=ev.autocast_outputs["cuda"],
        reduced=yes_no(ev.reduced_precision_reduction),
    )
    said = say(c, words, fields)
    unmeasured = caption(words["cuda_unmeasured"].format(**fields)) if ev.device != "cuda" else ""  # the seed's device
    build = lambda: claims_fig.accumulation_figure(ev, labels=t["labels"])  # noqa: E731
    cols, names = t["match_cols"], t["match_names"]
    rows = [
        {cols["how"]: names[how].format(device=t["measured_on"][ev.device]), cols["share"]: f"{share:.2%}"}
        for how, share in ev.random_match.items()
    ]
    return said, unmeasured, Columns(((figure(f"accumulation_{c.claim}", build),), (table(rows),)))
