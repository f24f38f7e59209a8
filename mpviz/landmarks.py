"""Landmarks: the conceptual tensors of a model (q, scores, probs, their gradients …), named from inside its code.

A model calls `mark(t, "q")` / `mark_grad(t, "grad_q")` where a tensor means something. Outside a recording both
are free no-ops that return `t`. Inside `recording(sink)` (per thread, so concurrent sessions never see each
other's marks) the sink is told about the tensor: in the forward at once, for gradients when backward reaches it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

import torch
from torch import nn

PARAM_GRAD_PREFIX = "grad_"  # gradient landmarks are "grad_<name>", e.g. grad_q or grad_attn.q_proj.weight


class LandmarkSink(Protocol):
    def on_mark(self, name: str, t: torch.Tensor) -> None: ...


_local = threading.local()


def _sink() -> LandmarkSink | None:
    return getattr(_local, "sink", None)


@contextmanager
def recording(sink: LandmarkSink, model: nn.Module | None = None) -> Iterator[None]:
    """Send this thread's marks to `sink`; with `model`, also mark every parameter's gradient."""
    prev, _local.sink = _sink(), sink
    handles = []
    if model is not None:
        for name, p in model.named_parameters():
            if p.requires_grad:
                # Closure binds the sink: backward may run on another thread (CUDA) where _local is empty.
                handles.append(p.register_hook(_grad_hook(sink, PARAM_GRAD_PREFIX + name)))
    try:
        yield
    finally:
        _local.sink = prev
        for h in handles:
            h.remove()


def _grad_hook(sink: LandmarkSink, name: str):
    def hook(grad: torch.Tensor) -> None:
        sink.on_mark(name, grad)

    return hook


def mark(t: torch.Tensor, name: str) -> torch.Tensor:
    """Name a forward tensor for the current recording (no-op otherwise). Returns `t`."""
    sink = _sink()
    if sink is not None:
        sink.on_mark(name, t)
    return t


def mark_grad(t: torch.Tensor, name: str) -> torch.Tensor:
    """Name the gradient that backward will compute for `t` (no-op when not recording). Returns `t`."""
    sink = _sink()
    if sink is not None and t.requires_grad:
        t.register_hook(_grad_hook(sink, name))
    return t


class LandmarkCapture:
    """A sink that keeps a detached copy of every landmark tensor: used for the float64 reference run."""

    def __init__(self) -> None:
        self.tensors: dict[str, torch.Tensor] = {}

    def on_mark(self, name: str, t: torch.Tensor) -> None:
        self.tensors[name] = t.detach().clone()
