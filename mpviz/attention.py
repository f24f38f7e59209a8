"""Trace the attention block's forward+backward under autocast and compare every landmark with float64.

`trace_attention(cfg, device, dtype)` is what the step-through page, the CLI and the tests call.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import torch

from mpviz import landmarks
from mpviz.isolation import autocast_shared
from mpviz.model import AttentionConfig, ConfigError, build, parse_autocast_dtype, validate
from mpviz.stats import dtype_name
from mpviz.trace import Trace, trace

# Landmarks in the order a reader meets them; gradients of parameters follow as "grad_<param name>".
FORWARD_LANDMARKS = ("x", "x_norm", "q", "k", "v", "scores", "probs", "context", "out", "logits", "loss")
BACKWARD_LANDMARKS = ("grad_probs", "grad_scores", "grad_q", "grad_k", "grad_v")


def available_devices() -> list[str]:
    """Devices this process can trace on: always "cpu", "cuda" only when a GPU is really there."""
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@dataclass(frozen=True)
class ReferenceError:
    """How far a landmark of the autocast run is from the float64 run of the same model and inputs."""

    max_abs: float
    max_rel: float  # max |a - ref| / max |ref|: normwise, so exact zeros in ref (e.g. a k-bias grad) don't explode


@dataclass(frozen=True)
class AttentionTrace:
    config: AttentionConfig
    device: str
    autocast_dtype: str | None  # "float16" | "bfloat16" | None (autocast off)
    trace: Trace
    reference_error: dict[str, ReferenceError]


def _error(a: torch.Tensor, ref: torch.Tensor) -> ReferenceError:
    a, ref = a.detach().to("cpu", torch.float64), ref.to("cpu", torch.float64)
    if a.shape != ref.shape:
        return ReferenceError(math.nan, math.nan)
    both_inf = torch.isinf(a) & torch.isinf(ref) & (torch.sign(a) == torch.sign(ref))  # e.g. the -inf mask
    diff = torch.where(both_inf, torch.zeros_like(a), (a - ref).abs())
    finite_ref = ref[torch.isfinite(ref)].abs()
    max_abs = diff.max().item() if diff.numel() else 0.0
    scale = finite_ref.max().item() if finite_ref.numel() else 0.0
    return ReferenceError(max_abs, max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else math.inf))


def _run(cfg: AttentionConfig, device: str, dtype: torch.dtype | None, model_dtype: torch.dtype):
    model, x, targets = build(cfg, device=device, dtype=model_dtype)
    autocast = (
        torch.autocast(device_type=torch.device(device).type, dtype=dtype)
        if dtype is not None
        else contextlib.nullcontext()
    )
    return model, x, targets, autocast


def reference_landmarks(cfg: AttentionConfig, device: str = "cpu") -> dict[str, torch.Tensor]:
    """Every landmark tensor of a float64 run without autocast (the 'truth' for error bars)."""
    model, x, targets, _ = _run(cfg, device, None, torch.float64)
    sink = landmarks.LandmarkCapture()
    with landmarks.recording(sink, model):
        model(x, targets).backward()
    return sink.tensors


def trace_attention(
    cfg: AttentionConfig, device: str = "cpu", dtype: str | torch.dtype | None = "bf16"
) -> AttentionTrace:
    """Forward + backward of the attention block under autocast(`dtype`), every op traced, errors vs float64.

    Raises ConfigError for configs outside `mpviz.model.LIMITS` or devices this process cannot use.
    """
    ac = dtype if isinstance(dtype, torch.dtype) or dtype is None else parse_autocast_dtype(dtype)
    if device not in available_devices():
        raise ConfigError("device", device, available_devices(), "device not available here")
    validate(cfg, device, ac)
    model, x, targets, autocast = _run(cfg, device, ac, torch.float32)
    kept = landmarks.LandmarkCapture()
    with autocast_shared(), trace(model, device=device, on_landmark=kept.on_mark) as t:
        with autocast:
            loss = model(x, targets)
        loss.backward()
    t.autocast_dtype = dtype_name(ac) if ac is not None else None
    ref = reference_landmarks(cfg, device)
    errors = {name: _error(kept.tensors[name], ref[name]) for name in kept.tensors if name in ref}
    return AttentionTrace(cfg, device, t.autocast_dtype, t, errors)
