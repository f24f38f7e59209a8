"""The gradients claim: what dtype do activations, their gradients and the parameters' gradients have?

Read from the traced attention block (forward and backward) under fp16 autocast, the setting the claim is made
for: each activation landmark next to its gradient's landmark (`grad_<name>`), and every parameter's gradient
(`grad_<parameter>`, what AccumulateGrad writes into `.grad`). CUDA's backward is emulated on CPU (cuda-sim).
"""

from __future__ import annotations

from dataclasses import dataclass

from mpviz.claims.devices import DEVICES, block_trace, trace_device
from mpviz.claims.verdicts import Checked, Part, judged

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
