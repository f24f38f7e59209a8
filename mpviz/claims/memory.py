"""The memory claim: does bf16 mixed precision halve a training step's memory against float32?

Measured on one forward of an attention block on the CPU: the bytes of every distinct tensor autograd saves for
backward (what a step holds between forward and backward), and the bytes of the parameters and their gradients,
which autocast leaves in float32.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from mpviz.claims.verdicts import Checked, Part, judged
from mpviz.isolation import autocast_shared
from mpviz.model import AttentionConfig, build

MEMORY_BLOCK = AttentionConfig(seq_len=256, d_model=256, n_heads=4)  # activations outweigh the weights here


@dataclass(frozen=True)
class StepBytes:
    dtype: str  # "float32" (autocast off) | "bfloat16" (autocast on)
    saved_bytes: int  # distinct storages autograd saved for backward, parameters excluded
    parameter_bytes: int  # the parameters; their gradients take as many again


MEMORY_POLICY = "cpu"  # whose autocast policy the step ran under: CPU's (CUDA's keeps more ops in float32)


@dataclass(frozen=True)
class MemoryEvidence:
    block: AttentionConfig
    runs: tuple[StepBytes, StepBytes]  # float32, bfloat16
    policy: str = MEMORY_POLICY

    @property
    def saved_ratio(self) -> float:
        return self.runs[1].saved_bytes / self.runs[0].saved_bytes

    @property
    def parameter_ratio(self) -> float:
        return self.runs[1].parameter_bytes / self.runs[0].parameter_bytes


def step_bytes(cfg: AttentionConfig, low: torch.dtype | None) -> StepBytes:
    """Bytes one forward of `cfg` saves for backward, with bf16 autocast (`low`) or without (None)."""
    model, x, targets = build(cfg)
    saved: dict[int, int] = {}  # storage address → bytes: a tensor saved twice is held once

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        saved[storage.data_ptr()] = storage.nbytes()
        return t

    autocast = torch.autocast(MEMORY_POLICY, dtype=low or torch.bfloat16, enabled=low is not None)
    with autocast_shared(), autocast, torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(x, targets)
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    return StepBytes(
        "bfloat16" if low else "float32",
        sum(n for ptr, n in saved.items() if ptr not in params),
        sum(p.untyped_storage().nbytes() for p in model.parameters()),
    )


def check_bf16_halves_memory() -> Checked:
    """Claim: bf16 mixed precision takes 50% of float32's memory. Parts: the tensors saved for backward take at
    most half the bytes; the parameters (and so their gradients) take at most half the bytes."""
    ev = MemoryEvidence(MEMORY_BLOCK, (step_bytes(MEMORY_BLOCK, None), step_bytes(MEMORY_BLOCK, torch.bfloat16)))
    parts = [Part("saved_half", ev.saved_ratio <= 0.5), Part("parameters_half", ev.parameter_ratio <= 0.5)]
    headline = {"saved_ratio": ev.saved_ratio, "parameter_ratio": ev.parameter_ratio}
    return judged(30, parts, ev, headline)
