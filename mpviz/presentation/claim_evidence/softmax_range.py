"""torch.softmax against the textbook formula on scores whose exp overflows, and the range of its output."""

from __future__ import annotations

from mpviz import claims
from mpviz.presentation.claim_evidence.blocks import Block
from mpviz.presentation.claim_evidence.dispatch import shows
from mpviz.presentation.claim_evidence.words import lesson_words, say


def numbers(values: tuple[float, ...]) -> str:
    return ", ".join(f"{v:.6g}" for v in values)


@shows(claims.SoftmaxEvidence)
def subtracts_max_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    ev: claims.SoftmaxEvidence = c.evidence
    f32, f16 = ev.on("float32"), ev.on("float16")
    fields = dict(
        device=lesson_words()["measured_on"][ev.device],
        scores=numbers(f32.scores),
        f32=numbers(f32.framework),
        f16=numbers(f16.framework),
        f32_textbook=numbers(f32.textbook),
        f16_textbook=numbers(f16.textbook),
        exact=numbers(f32.exact),
    )
    return (say(c, words, fields),)


@shows(claims.OutputRangeEvidence)
def output_range_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    ev: claims.OutputRangeEvidence = c.evidence
    fields = dict(
        scores=numbers(ev.run.scores),
        out=numbers(ev.run.framework),
        largest=ev.largest_output,
        fp16_max=ev.fp16_max,
    )
    return (say(c, words, fields),)


@shows(claims.UnderflowEvidence)
def underflow_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    """Claim 42: every exp underflowing in fp16, the textbook formula against torch.softmax."""
    ev: claims.UnderflowEvidence = c.evidence
    fields = dict(
        device=lesson_words()["measured_on"][ev.device],
        scores=numbers(ev.all_low.scores),
        exps=numbers(ev.exps),
        naive=numbers(ev.all_low.textbook),
        softmax=numbers(ev.all_low.framework),
        pair=numbers(ev.one_far_below.scores),
        shifted=numbers(ev.shifted_exps),
        pair_softmax=numbers(ev.one_far_below.framework),
    )
    return (say(c, words, fields),)
