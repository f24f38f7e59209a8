"""Count a model step's ops before tracing it, for `mpviz.show`'s op cap: a model far past it refused in seconds.

Tracing costs about half a millisecond an op, so a model far past `mpviz.model_bundle.MAX_EVENTS` (a stack of
12,000 Linear layers runs ~190,000 ops) would trace for many seconds before the cap stopped it. `ops_past_cap` runs
the same step (forward under the same autocast, backward from the same loss) under a bare counting dispatch mode,
which costs microseconds an op, and stops at the first op past the cap. A bare dispatch mode sees the ops
`mpviz.trace` records (tests/test_trace.py compares them), so the count is the trace's.

Only a model with many parameter tensors is counted (OPS_PER_PARAMETER): the count is for models far past the cap,
and a GPT-2-small step would pay one more untraced forward + backward for it.

The user's model is left as it was: the step runs through `torch.func.functional_call` with the parameters
detached (the same memory, no copy: gradients go to those stand-ins, never to the model's `.grad`) and the buffers
copied (BatchNorm's running statistics and anything the forward updates in place change only in the copies); the
random state is forked, so the trace's own run draws what it would have drawn.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["OPS_PER_PARAMETER", "ops_past_cap"]

# Real models run ~10 ops per parameter tensor (GPT-2: 1,635 ops, 148 tensors; a Linear stack 8 per tensor): one
# with fewer than cap / OPS_PER_PARAMETER tensors is left to the trace's own cap (so is a loop over few parameters).
OPS_PER_PARAMETER = 8


class _PastCap(Exception):
    """Raised inside the counting mode at the op past the cap: the rest of the step never runs."""


class _Counter(TorchDispatchMode):
    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap, self.count = cap, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.namespace != "prim":  # as mpviz.trace counts: prims are device queries, not computation
            self.count += 1
            if self.count > self.cap:
                raise _PastCap
        return func(*args, **(kwargs or {}))


def _stand_in(t: torch.Tensor, copy: bool) -> torch.Tensor:
    d = t.detach()
    return (d.clone() if copy else d).requires_grad_(t.requires_grad)


def ops_past_cap(
    model: nn.Module,
    inputs: Sequence[Any],
    kwargs: Mapping[str, Any],
    loss_fn: Callable[[Any], torch.Tensor],
    cap: int,
    autocast: contextlib.AbstractContextManager | None = None,
) -> int | None:
    """`cap + 1` when one forward (under `autocast`) + backward of `model(*inputs, **kwargs)` from `loss_fn`'s loss
    runs more than `cap` ops (counting stopped there); else None: under the cap, a model with too few parameter
    tensors to come near it (see the module docstring), or a step that raised (the trace then says why)."""
    if sum(1 for _ in model.parameters()) * OPS_PER_PARAMETER <= cap:
        return None
    state = {n: _stand_in(p, copy=False) for n, p in model.named_parameters()}
    state |= {n: _stand_in(b, copy=True) for n, b in model.named_buffers()}
    counter = _Counter(cap)
    try:
        with torch.random.fork_rng(devices=[]), counter:
            with autocast or contextlib.nullcontext():
                out = torch.func.functional_call(
                    model, state, tuple(inputs), dict(kwargs), tie_weights=True, strict=False
                )
            loss = loss_fn(out)
            del out
            if isinstance(loss, torch.Tensor) and loss.requires_grad and loss.numel() == 1:
                (loss if loss.dim() == 0 else loss.reshape(())).backward()  # as model_bundle: no extra view
    except _PastCap:
        return counter.count
    except Exception:  # the trace runs the same step and words what went wrong
        return None
    return None
