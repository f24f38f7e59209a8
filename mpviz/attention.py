"""Trace the attention block's forward+backward under autocast and compare every landmark with float64.

`trace_attention(cfg, device, dtype)` is what the step-through page, the CLI and the tests call.
"""

from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass

import torch

from mpviz import landmarks
from mpviz.emulation import cuda_policy_on_cpu
from mpviz.isolation import autocast_shared
from mpviz.kernel_probe import ensure_safe_kernels
from mpviz.model import AttentionConfig, ConfigError, build, parse_autocast_dtype, validate
from mpviz.policy import device_policy
from mpviz.stats import dtype_name
from mpviz.trace import Trace, trace

# Landmarks in the order a reader meets them; gradients of parameters follow as "grad_<param name>".
FORWARD_LANDMARKS = ("x", "x_norm", "q", "k", "v", "scores", "probs", "context", "out", "logits", "loss")
BACKWARD_LANDMARKS = (
    "grad_logits",
    "grad_out",
    "grad_context",
    "grad_probs",
    "grad_scores",
    "grad_q",
    "grad_k",
    "grad_v",
    "grad_x_norm",
)


# Devices that compute somewhere else: "cuda-sim" runs on CPU tensors under CUDA's autocast policy (emulated).
EMULATED_DEVICES = {"cuda-sim": "cpu"}


def available_devices() -> list[str]:
    """Devices this process can trace on: "cpu", "cuda" only when a GPU is really there, always "cuda-sim"."""
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else []) + list(EMULATED_DEVICES)


def compute_device(device: str) -> str:
    """Where `device`'s tensors live: "cuda-sim" → "cpu", others unchanged."""
    return EMULATED_DEVICES.get(device, device)


@dataclass(frozen=True)
class LandmarkError:
    """How far a landmark of the autocast run is from the float64 run of the same model and inputs.

    Normwise, so one tiny reference element cannot blow the figure up: rel = ‖a − ref‖₂ / ‖ref‖₂. Where the
    reference itself is (numerically) zero, e.g. the gradient of k's bias, which softmax makes vanish, `rel` is
    meaningless: callers compare `ref_rms` with their own floor and show `abs_rms` there. Positions where both runs
    hold the same infinity (the −inf mask) count as equal; any other inf/NaN in `a` sets `nonfinite`.
    """

    rel: float  # ‖a − ref‖₂ / ‖ref‖₂ over finite positions (inf when ref is exactly 0 and a is not)
    abs_rms: float  # ‖a − ref‖₂ / √n
    ref_rms: float  # ‖ref‖₂ / √n over finite reference positions
    max_abs: float  # max |a − ref|
    nonfinite: bool  # a holds inf/NaN where the reference does not


@dataclass(frozen=True)
class AttentionTrace:
    config: AttentionConfig
    device: str
    autocast_dtype: str | None  # "float16" | "bfloat16" | None (autocast off)
    trace: Trace
    reference_error: dict[str, LandmarkError]


def landmark_error(a: torch.Tensor, ref: torch.Tensor) -> LandmarkError:
    """How far `a` is from the float64 reference `ref` (see LandmarkError); shapes that differ give all-NaN.
    Computed on `ref`'s device: when both norms come out finite (every value is), in five passes over the values;
    else position by position, as the definition says."""
    if a.shape != ref.shape:
        return LandmarkError(math.nan, math.nan, math.nan, math.nan, False)
    ref = ref.detach().to(torch.float64)
    err_norm, ref_norm, max_abs = _norms(a.detach(), ref)
    if math.isfinite(err_norm) and math.isfinite(ref_norm):  # NaN and inf propagate into a norm: all finite here
        n = max(ref.numel(), 1)
        rel = err_norm / ref_norm if ref_norm > 0 else (0.0 if err_norm == 0 else math.inf)
        return LandmarkError(rel, err_norm / math.sqrt(n), ref_norm / math.sqrt(n), max_abs, False)
    a = a.detach().to(ref.device, torch.float64)
    same_inf = torch.isinf(a) & torch.isinf(ref) & (torch.sign(a) == torch.sign(ref))  # e.g. the -inf mask
    finite = torch.isfinite(ref) & ~same_inf
    bad = ~torch.isfinite(a) & finite
    diff = torch.where(finite & ~bad, a - ref, torch.zeros_like(a))
    r = torch.where(finite, ref, torch.zeros_like(ref))
    n = max(int(finite.sum()), 1)
    err_norm, ref_norm = float(torch.linalg.vector_norm(diff)), float(torch.linalg.vector_norm(r))
    rel = err_norm / ref_norm if ref_norm > 0 else (0.0 if err_norm == 0 else math.inf)
    max_abs = float(diff.abs().max()) if diff.numel() else 0.0
    return LandmarkError(rel, err_norm / math.sqrt(n), ref_norm / math.sqrt(n), max_abs, bool(bad.any()))


NORM_CHUNK = 1 << 22  # elements: a larger landmark (a model's embedding gradient) is compared a slice at a time


def _norms(a: torch.Tensor, ref: torch.Tensor) -> tuple[float, float, float]:
    """‖a − ref‖₂, ‖ref‖₂ and max |a − ref| in float64 on ref's device (NaN/inf propagate into the norms), the
    difference made a slice of NORM_CHUNK elements at a time so a large one never costs a float64 copy in full."""
    if ref.numel() <= NORM_CHUNK:
        diff = a.to(ref.device, torch.float64, copy=True).sub_(ref)
        max_abs = max(abs(float(v)) for v in torch.aminmax(diff)) if diff.numel() else 0.0
        return float(torch.linalg.vector_norm(diff)), float(torch.linalg.vector_norm(ref)), max_abs
    a, ref = a.reshape(-1), ref.reshape(-1)
    err2 = ref2 = max_abs = 0.0
    for start in range(0, ref.numel(), NORM_CHUNK):
        r = ref[start : start + NORM_CHUNK]
        diff = a[start : start + NORM_CHUNK].to(ref.device, torch.float64, copy=True).sub_(r)
        err2 += float(torch.linalg.vector_norm(diff)) ** 2
        ref2 += float(torch.linalg.vector_norm(r)) ** 2
        max_abs = max(max_abs, *(abs(float(v)) for v in torch.aminmax(diff)))
    return math.sqrt(err2), math.sqrt(ref2), max_abs


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
    ensure_safe_kernels()  # before the block is built and run: its ops may be this process's first oneDNN kernels
    ac = parse_autocast_dtype(dtype)
    if device not in available_devices():
        raise ConfigError("device", device, available_devices(), "device not available here")
    run_on = compute_device(device)
    validate(cfg, run_on, ac)
    model, x, targets, autocast = _run(cfg, run_on, ac, torch.float32)
    kept = landmarks.LandmarkCapture()
    emulation = cuda_policy_on_cpu() if device == "cuda-sim" else contextlib.nullcontext()
    policy = policy_map("cuda" if device in ("cuda", "cuda-sim") else "cpu") if ac is not None else None
    with emulation, autocast_shared(), trace(model, run_on, on_landmark=kept.on_mark, policy=policy) as t:
        with autocast:
            loss = model(x, targets)
        loss.backward()
    t.device = device
    t.autocast_dtype = dtype_name(ac) if ac is not None else None
    ref = reference_landmarks(cfg, run_on)  # float64, plain CPU for cuda-sim: no emulation involved
    errors = {name: landmark_error(kept.tensors[name], ref[name]) for name in kept.tensors if name in ref}
    return AttentionTrace(cfg, device, t.autocast_dtype, t, errors)


@functools.lru_cache(maxsize=4)
def policy_map(device: str) -> dict[str, str]:
    """op → category of `device`'s probed autocast policy, for telling autocast's casts from an op's own."""
    policy = device_policy(device)
    return {op: category for category, ops in policy.categories.items() for op in ops}
