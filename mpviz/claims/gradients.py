"""The gradients claims: what dtype do activations, their gradients and the parameters' gradients have (claim 17),
and does running backward() inside the autocast region change them (claim 49)?

Read from the traced attention block (forward and backward) under fp16 autocast, the setting the claim is made
for: each activation landmark next to its gradient's landmark (`grad_<name>`), and every parameter's gradient
(`grad_<parameter>`, what AccumulateGrad writes into `.grad`). CUDA's backward is emulated on CPU (cuda-sim).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

import torch

from mpviz.claims.devices import AUTOCAST_DTYPE, DEVICES, block_trace, trace_device
from mpviz.claims.verdicts import Checked, Part, judged
from mpviz.emulation import cuda_policy_on_cpu
from mpviz.isolation import autocast_shared
from mpviz.model import AttentionConfig, build
from mpviz.stats import dtype_name

GRADIENT_DTYPE = "float16"  # the claim is made for fp16 training
ACTIVATIONS = ("x_norm", "q", "scores", "probs", "context", "out", "logits")  # landmarks with a gradient landmark


@dataclass(frozen=True)
class DeviceGradients:
    device: str  # "cpu" | "cuda"
    trace_device: str  # where the block ran: "cpu", "cuda-sim" (emulated, backward included) or "cuda"
    activations: dict[str, tuple[str, str]]  # activation → (its dtype, its gradient's dtype)
    parameter_grads: dict[str, str]  # parameter name → dtype of its .grad

    @property
    def grads_follow_forward(self) -> bool:
        """Every activation's gradient has the activation's own dtype."""
        return all(fwd == grad for fwd, grad in self.activations.values())


@dataclass(frozen=True)
class GradientsEvidence:
    autocast_dtype: str
    devices: tuple[DeviceGradients, ...]

    def on(self, device: str) -> DeviceGradients:
        return next(d for d in self.devices if d.device == device)


def _gradients(device: str) -> DeviceGradients:
    trace = block_trace(device, GRADIENT_DTYPE).trace

    def dtype(name: str) -> str:
        return trace.landmark_event(name).outputs[0].dtype

    present = [a for a in ACTIVATIONS if a in trace.landmarks and f"grad_{a}" in trace.landmarks]
    params = sorted(n.removeprefix("grad_") for n in trace.landmarks if n.startswith("grad_") and "." in n)
    return DeviceGradients(
        device=device,
        trace_device=trace_device(device),
        activations={a: (dtype(a), dtype(f"grad_{a}")) for a in present},
        parameter_grads={p: dtype(f"grad_{p}") for p in params},
    )


def check_gradients_low_precision() -> Checked:
    """Claim: under fp16 mixed precision activations and gradients are both stored in fp16. Parts per device:
    each activation of the block is fp16, each activation's gradient is fp16 (a part per activation: the claim
    says all of them, and the ones that are not fp16 say where), and the parameters' .grad is fp16. The seed's
    model is `.cuda()` under `autocast()`: CUDA decides, CPU is measured beside it."""
    runs = tuple(_gradients(d) for d in DEVICES)
    parts = []
    for r in runs:
        parts += [Part("activation_low", a == GRADIENT_DTYPE, r.device, name) for name, (a, _) in r.activations.items()]
        parts += [
            Part("activation_grad_low", g == GRADIENT_DTYPE, r.device, name) for name, (_, g) in r.activations.items()
        ]
        parts.append(
            Part("parameter_grads_low", all(g == GRADIENT_DTYPE for g in r.parameter_grads.values()), r.device)
        )
    headline: dict[str, object] = {}
    for r in runs:
        headline[f"{r.device}_parameter_grad_dtypes"] = tuple(sorted(set(r.parameter_grads.values())))
        headline[f"{r.device}_activation_grad_dtypes"] = tuple(sorted({g for _, g in r.activations.values()}))
    return judged(17, parts, GradientsEvidence(GRADIENT_DTYPE, runs), headline, about="cuda")


# ── backward() inside the autocast region (claim 49) ────────────────────────────────────────────────────────
BACKWARD_BLOCK = AttentionConfig(seq_len=8, d_model=32, n_heads=2)  # one step takes milliseconds


@dataclass(frozen=True)
class BackwardPlacement:
    device: str  # "cpu" | "cuda"
    trace_device: str  # where it ran: "cpu", "cuda-sim" (CUDA's policy on CPU, backward included) or "cuda"
    parameters: int
    differing: int  # parameters whose .grad differs, bit for bit, between backward inside and outside autocast
    grad_dtypes: tuple[str, ...]  # the .grad dtypes with backward inside autocast
    error: str | None  # what torch raised with backward inside autocast; None when it ran


@dataclass(frozen=True)
class BackwardPlacementEvidence:
    autocast_dtype: str
    devices: tuple[BackwardPlacement, ...]

    def on(self, device: str) -> BackwardPlacement:
        return next(d for d in self.devices if d.device == device)


def _grads(where: str, inside: bool) -> dict[str, torch.Tensor]:
    """The block's parameter gradients after one bf16-autocast forward, backward run inside or after the region.
    `where`: "cpu", "cuda-sim" (CUDA's policy emulated on CPU) or "cuda" (a real GPU)."""
    device = "cuda" if where == "cuda" else "cpu"
    model, x, targets = build(BACKWARD_BLOCK, device)
    guard = cuda_policy_on_cpu() if where == "cuda-sim" else nullcontext() if where == "cuda" else autocast_shared()
    with guard:
        with torch.autocast(device, dtype=getattr(torch, AUTOCAST_DTYPE)):
            loss = model(x, targets)
            if inside:
                loss.backward()
        if not inside:
            loss.backward()
    return {n: p.grad.detach().cpu() for n, p in model.named_parameters()}


def _placement(device: str) -> BackwardPlacement:
    where = trace_device(device)
    outside = _grads(where, inside=False)
    try:
        inside, error = _grads(where, inside=True), None
    except Exception as e:  # torch refusing it is a measurement to show
        inside, error = {}, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    differing = sum(n not in inside or not torch.equal(g, inside[n]) for n, g in outside.items())
    dtypes = tuple(sorted({dtype_name(g.dtype) for g in inside.values()}))
    return BackwardPlacement(device, where, len(outside), differing, dtypes, error)


def check_backward_inside_autocast_changes_nothing() -> Checked:
    """Claim: wrapping backward() in autocast is redundant (backward follows the forward's dtypes), if confusing,
    and usually raises no error. Parts per device: backward inside the region runs; it gives the same gradients,
    bit for bit, as backward after it. The seed's script enables autocast only on CUDA: CUDA decides (on a CPU
    build through the emulation of CUDA's policy, backward included)."""
    runs = tuple(_placement(d) for d in DEVICES)
    parts = []
    for r in runs:
        parts += [Part("runs", r.error is None, r.device), Part("same_gradients", not r.differing, r.device)]
    headline: dict[str, object] = {f"{r.device}_differing": r.differing for r in runs}
    return judged(49, parts, BackwardPlacementEvidence(AUTOCAST_DTYPE, runs), headline, about="cuda")
