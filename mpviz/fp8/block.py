"""The attention block with its q/k/v/out projections under a low-precision recipe, traced and measured.

`run(Fp8Config(recipe="mxfp8", outlier=1000))` builds mpviz's attention block (mpviz.model, fp32, no autocast),
replaces the four projections' GEMMs by the recipe's (the other ops stay fp32, as in torchao and Transformer
Engine), multiplies one element of the input x by `outlier`, and runs one forward and backward inside
`mpviz.trace`. Each projection runs three GEMMs, each with two quantised operands laid out contraction-last:

    forward      y  = input · weightᵀ            (input, weight)
    grad_input   dx = grad_output · weight        (grad_output, weightᵀ)
    grad_weight  dW = grad_outputᵀ · input        (grad_outputᵀ, inputᵀ)

Where torch._scaled_mm takes the recipe's scales (one fp32 scale per tensor or per row) the GEMM *is*
`aten._scaled_mm` on the fp8 payloads, so the trace shows the real fp8 op with its fp8 inputs and scales. Block
scales (MXFP8's e8m0, NVFP4's e4m3) are a layout this torch's CPU kernel refuses: there the GEMM is an emulation,
labelled as one (`Gemm.emulated`): the operands are dequantised exactly, then multiplied in float32. On a machine
with CUDA the same GEMMs can run on the GPU (`device="cuda"`); nobody has measured that path here.

The delayed recipe first runs `Recipe.amax_history` untraced steps on the clean input (same weights) to fill
each operand's amax history; the traced step then scales from that history, so an outlier that appears only
now saturates instead of rescaling the tensor.
"""

from __future__ import annotations

import math
import numbers
import time
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from mpviz.fp8.quantize import Quantized, QuantizedTensor, measure, outcomes, quantize
from mpviz.fp8.recipes import RECIPE_NAMES, Recipe, recipe
from mpviz.model import AttentionConfig, ConfigError, build, validate
from mpviz.model_bundle import model_bundle
from mpviz.trace import TensorInfo, Trace, trace

__all__ = [
    "MAX_OUTLIER",
    "PROJECTIONS",
    "Fp8Config",
    "Fp8Lesson",
    "Fp8Run",
    "Gemm",
    "lesson",
    "run",
    "stepper_bundle",
    "validate_fp8",
]

PROJECTIONS: tuple[str, ...] = ("attn.q_proj", "attn.k_proj", "attn.v_proj", "attn.out_proj")
MAX_OUTLIER = 1e6  # |K| ceiling: beyond it the outlier alone would overflow what the lesson's figures show
OUTLIER_AT = (0, 0)  # the element of x that the outlier control multiplies
_BLOCK = 32  # the largest block of any recipe: every contraction axis (d_model, seq_len) must be a multiple


@dataclass(frozen=True)
class Fp8Config:
    """One run of the fp8 lesson: the recipe, the outlier factor K on x[0, 0], the attention block."""

    recipe: str = "tensorwise"
    outlier: float = 1.0
    attention: AttentionConfig = field(default_factory=lambda: AttentionConfig(seq_len=32))


def validate_fp8(cfg: Fp8Config) -> Fp8Config:
    """`cfg` unchanged if it can run, else ConfigError naming the field ("recipe", "outlier", "seq_len", …)."""
    if not isinstance(cfg.recipe, str) or cfg.recipe not in RECIPE_NAMES:
        raise ConfigError("recipe", cfg.recipe, RECIPE_NAMES, "unknown choice")
    k = cfg.outlier
    if isinstance(k, bool) or not isinstance(k, numbers.Real) or not math.isfinite(k) or not 0 < abs(k) <= MAX_OUTLIER:
        raise ConfigError("outlier", k, MAX_OUTLIER, "must be finite, non-zero, at most the limit in size")
    att = validate(cfg.attention)
    for name in ("seq_len", "d_model"):
        if getattr(att, name) % _BLOCK:
            raise ConfigError(name, getattr(att, name), _BLOCK, "must be a multiple of the block")
    return cfg


@dataclass(frozen=True)
class Gemm:
    """One GEMM of a projection as the recipe ran it."""

    name: str  # "attn.q_proj.forward" | ".grad_input" | ".grad_weight"
    op: str  # "aten._scaled_mm.default", or "aten.mm.default" for the emulation's float32 matmul
    emulated: bool  # block scales: dequantised operands multiplied in float32, not an fp8 kernel
    a: str  # the quantised operands' names
    b: str
    shape: tuple[int, int]  # of the output
    rel_error: float  # output against the float64 product of the unquantised operands
    event: int | None  # index of this GEMM's op in the trace


@dataclass(frozen=True)
class Fp8Run:
    config: Fp8Config
    trace: Trace
    tensors: tuple[QuantizedTensor, ...]  # x first, then every GEMM operand in execution order
    gemms: tuple[Gemm, ...]
    loss: float
    trace_seconds: float  # the traced forward + backward
    analysis_seconds: float  # measuring every quantised tensor and GEMM against float64
    # x, then every GEMM operand, as (name, GEMM or None, the values given, what the recipe stored): for
    # cross-checks and figures; and each GEMM's output, in the order of `gemms`.
    operands: tuple[tuple[str, str | None, torch.Tensor, Quantized], ...] = field(default=(), repr=False, compare=False)
    outputs: tuple[torch.Tensor, ...] = field(default=(), repr=False, compare=False)

    @property
    def recipe(self) -> Recipe:
        return recipe(self.config.recipe)

    def tensor(self, name: str) -> QuantizedTensor:
        return next(t for t in self.tensors if t.name == name)


class _Recorder:
    """What the recipe's GEMMs did during one step; the delayed recipe's amax histories across steps."""

    def __init__(self, rec: Recipe, device: str) -> None:
        self.recipe, self.device = rec, device
        self.history: dict[str, list[float]] = {}
        self.operands: list[tuple[str, str, torch.Tensor, Quantized]] = []
        self.gemms: list[tuple[str, str, str, torch.Tensor, torch.Tensor, torch.Tensor, bool]] = []

    def start_step(self) -> None:
        self.operands.clear()
        self.gemms.clear()

    def _quantize(self, name: str, t: torch.Tensor, role: str) -> Quantized:
        past = self.history.setdefault(name, [])
        q = quantize(t, self.recipe, role, past[-self.recipe.amax_history :] if self.recipe.amax_history else ())
        past.append(float(torch.amax(torch.abs(t.detach()))))
        return q

    def gemm(self, name: str, a: torch.Tensor, role_a: str, b: torch.Tensor, role_b: str) -> torch.Tensor:
        """a (M, K) · b (N, K)ᵀ with both operands stored by the recipe; float32 out."""
        a, b = a.detach().contiguous(), b.detach().contiguous()
        qa = self._quantize(f"{name}.{role_a}", a, role_a)
        qb = self._quantize(f"{name}.{role_b}", b, role_b)
        if self.recipe.scaled_mm:
            # _scaled_mm multiplies by the dequantisation factors: the reciprocals of torchao-style scales.
            scale_b = qb.scales.reciprocal()
            out = torch._scaled_mm(
                qa.payload.to(self.device),
                qb.payload.to(self.device).t(),
                scale_a=qa.scales.reciprocal().to(self.device),
                scale_b=(scale_b.t() if scale_b.dim() else scale_b).to(self.device),
                out_dtype=torch.float32,
            ).cpu()
        else:  # emulation: exact dequantisation, float32 matmul (no CPU kernel takes block scales)
            out = torch.mm(qa.dequantize().to(torch.float32), qb.dequantize().to(torch.float32).t())
        self.operands += [(f"{name}.{role_a}", name, a, qa), (f"{name}.{role_b}", name, b, qb)]
        self.gemms.append((name, f"{name}.{role_a}", f"{name}.{role_b}", a, b, out, not self.recipe.scaled_mm))
        return out


class _RecipeLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, path: str, rec: _Recorder):
        ctx.save_for_backward(x, weight)
        ctx.path, ctx.rec = path, rec
        return rec.gemm(f"{path}.forward", x, "input", weight, "weight") + bias

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        rec, path = ctx.rec, ctx.path
        grad_x = rec.gemm(f"{path}.grad_input", g, "grad_output", weight.t(), "weight")
        grad_w = rec.gemm(f"{path}.grad_weight", g.t(), "grad_output", x.t(), "input")
        return grad_x, grad_w, g.sum(0), None, None


class _ProjectionUnderRecipe(nn.Module):
    """An nn.Linear's own parameters, its GEMMs run by the recipe (parameter names stay those of the Linear)."""

    def __init__(self, linear: nn.Linear, path: str, rec: _Recorder) -> None:
        super().__init__()
        self.weight, self.bias, self.path, self.rec = linear.weight, linear.bias, path, rec

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _RecipeLinear.apply(x, self.weight, self.bias, self.path, self.rec)


def _step(model: nn.Module, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    loss = model(x, targets)
    loss.backward()
    return loss


def _prepared(cfg: Fp8Config, device: str) -> tuple[nn.Module, torch.Tensor, torch.Tensor, _Recorder]:
    """The block with its projections under the recipe, its input x with the outlier, its targets, its recorder;
    for the delayed recipe, after the earlier steps that fill the amax histories."""
    validate_fp8(cfg)
    if device != "cpu" and not (device == "cuda" and torch.cuda.is_available()):
        raise ConfigError("device", device, ("cpu", "cuda"), "device not available here")
    rec = _Recorder(recipe(cfg.recipe), device)
    model, x, targets = build(cfg.attention)
    for path in PROJECTIONS:
        parent, _, leaf = path.rpartition(".")
        owner = model.get_submodule(parent)
        setattr(owner, leaf, _ProjectionUnderRecipe(getattr(owner, leaf), path, rec))
    x_hist = rec.history.setdefault("x", [])
    for _ in range(rec.recipe.amax_history):  # delayed scaling: earlier steps, clean input, fill the histories
        _step(model, x, targets)
        x_hist.append(float(torch.amax(torch.abs(x * cfg.attention.input_scale))))
        model.zero_grad(set_to_none=True)
    rec.start_step()
    x = x.clone()
    x[OUTLIER_AT] *= cfg.outlier
    return model, x, targets, rec


def stepper_bundle(recipe_name: str, outlier: float) -> bytes:
    """The stepper's lesson bundle (mpviz.model_bundle; UTF-8 JSON, as mpviz.app.stepper takes it) of one forward and
    backward of the page's block under the recipe, autocast off: every op, the recipe's own among them (amax,
    scale, the cast to fp8, the fp8 GEMM with its fp8 inputs and scales, or the emulation's dequantised matmul)."""
    model, x, targets, _ = _prepared(Fp8Config(recipe=recipe_name, outlier=outlier), "cpu")
    return model_bundle(model, (x, targets), dtype=None, reference=False).to_json().encode()


def run(cfg: Fp8Config = Fp8Config(), device: str = "cpu", traced: bool = True) -> Fp8Run:
    """Trace one forward and backward of the block under `cfg.recipe` and measure every quantised tensor.

    `device="cuda"` (only where torch.cuda.is_available()) runs the fp8 GEMMs with CUDA's _scaled_mm; the block
    and every measurement stay on the CPU. `traced=False` runs the step without mpviz.trace (no events, no GEMM
    event indices): the same numbers, several times faster, for checks that need only the measurements."""
    model, x, targets, rec = _prepared(cfg, device)
    x_hist = rec.history["x"]
    started = time.perf_counter()
    with trace(model, device="cpu") if traced else nullcontext(Trace(device="cpu")) as t:
        loss = _step(model, x, targets)
    finished = time.perf_counter()
    x_in = x * cfg.attention.input_scale
    history = x_hist[-rec.recipe.amax_history :] if rec.recipe.amax_history else ()
    operands = [("x", None, x_in, quantize(x_in, rec.recipe, "input", history)), *rec.operands]
    tensors = [measure(name, gemm, given, q) for name, gemm, given, q in operands]
    gemms: list[Gemm] = []
    for name, a_name, b_name, a, b, out, emulated in rec.gemms:
        ref = a.to(torch.float64) @ b.to(torch.float64).t()
        norm = float(torch.linalg.vector_norm(ref))
        rel = float(torch.linalg.vector_norm(out.to(torch.float64) - ref)) / norm if norm > 0 else 0.0
        op = "aten.mm.default" if emulated else "aten._scaled_mm.default"
        event = _nth_event(t, op, sum(1 for g in gemms if g.op == op))
        gemms.append(Gemm(name, op, emulated, a_name, b_name, tuple(out.shape), rel, event))
    return Fp8Run(
        cfg,
        t,
        tuple(tensors),
        tuple(gemms),
        float(loss.detach()),
        finished - started,
        time.perf_counter() - finished,
        tuple(operands),
        tuple(g[5] for g in rec.gemms),
    )


def _nth_event(t: Trace, op: str, n: int) -> int | None:
    """The index of the n-th (from 0) event running `op` in the projections' GEMMs."""
    hits = [e.index for e in t.events if e.op == op and e.module in PROJECTIONS]
    return hits[n] if n < len(hits) else None


@dataclass(frozen=True)
class Fp8Lesson:
    """What the fp8 page shows of one run: small, picklable (it comes back from a worker process)."""

    recipe: Recipe
    outlier: float
    tensors: tuple[QuantizedTensor, ...]
    gemms: tuple[Gemm, ...]
    gemm_inputs: tuple[TensorInfo, ...]  # the first forward GEMM's inputs as traced (payloads, scales)
    x_outcomes: np.ndarray  # per element of x: mpviz.fp8.quantize.OUTCOMES codes
    events: int
    trace_seconds: float
    analysis_seconds: float
    cuda_max_abs_difference: float | None  # CUDA's _scaled_mm outputs against the CPU's; None without CUDA
    cuda_refused: str | None = None  # CUDA's _scaled_mm refused these operands: its message (never measured here)


def lesson(recipe_name: str, outlier: float) -> Fp8Lesson:
    """The page's run: the default block under `recipe_name` with x[0, 0] × `outlier` (ConfigError if unusable).
    Where CUDA is available and the recipe's GEMMs are _scaled_mm, the same GEMMs also run there and their largest
    difference from the CPU's outputs is reported."""
    cfg = Fp8Config(recipe=recipe_name, outlier=outlier)
    res = run(cfg)
    first = res.trace.events[res.gemms[0].event] if res.gemms and res.gemms[0].event is not None else None
    _, _, x, stored = res.operands[0]
    cuda = refused = None
    if torch.cuda.is_available() and res.recipe.scaled_mm:  # unmeasured here: no GPU in this project's sessions
        try:
            on_gpu = run(cfg, device="cuda")
            cuda = max(float((a - b).abs().max()) for a, b in zip(res.outputs, on_gpu.outputs, strict=True))
        except (RuntimeError, ValueError) as e:  # a layout or dtype CUDA's kernel does not take: say so, not crash
            refused = str(e).splitlines()[0][:200]
    return Fp8Lesson(
        res.recipe,
        outlier,
        res.tensors,
        res.gemms,
        first.inputs if first is not None else (),
        outcomes(x, stored),
        len(res.trace.events),
        res.trace_seconds,
        res.analysis_seconds,
        cuda,
        refused,
    )
