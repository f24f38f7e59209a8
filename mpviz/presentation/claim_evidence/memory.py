"""What a forward under bf16 autocast saves for backward, in bytes, against float32."""

from __future__ import annotations

from mpviz import claims
from mpviz.presentation.claim_evidence.blocks import Block
from mpviz.presentation.claim_evidence.dispatch import shows
from mpviz.presentation.claim_evidence.words import lesson_words, say


@shows(claims.MemoryEvidence)
def memory_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    ev: claims.MemoryEvidence = c.evidence
    f32, bf16 = ev.runs
    fields = dict(
        seq=ev.block.seq_len,
        dim=ev.block.d_model,
        f32_saved=f32.saved_bytes / 2**20,
        bf16_saved=bf16.saved_bytes / 2**20,
        saved_ratio=ev.saved_ratio,
        params=f32.parameter_bytes / 2**20,
        parameter_ratio=ev.parameter_ratio,
        policy=lesson_words()["device_short"][ev.policy],
    )
    return (say(c, words, fields),)
