"""Claims from the fp8 world (Transformer Engine's documentation, torchao's source), checked on the attention block.

Unlike the tutorial claims, these come from documentation and library source, not from the seed tutorials: their
sources are keys here (`SOURCES`; their titles, and the heading or function where each claim is made, are in
the locales). Each check runs the fp8 lesson's block (mpviz.fp8.block, untraced:
only the measurements are needed) or torch's own casts, and judges the claim part by part.

    101 fp8_formats_by_role   TE: e4m3 (more precision) for activations and weights, e5m2 (more range) for gradients
    102 mxfp8_needs_no_e5m2   TE: with a scale per block of 32, e4m3 alone gives gradients enough dynamic range
    103 nvfp4_two_level       torchao: the per-tensor scale lets block scales use e4m3's range up to its max
    104 fp8_cast_saturates    torchao: since PyTorch 2.12, an eager cast to fp8 saturates
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import torch

from mpviz.claims.verdicts import Checked, Part, judged
from mpviz.formats import resolve_format
from mpviz.fp8.block import Fp8Config, Fp8Run, run
from mpviz.fp8.quantize import QuantizedTensor, measure, quantize
from mpviz.fp8.recipes import Recipe

__all__ = [
    "CLAIM_SPECS",
    "SOURCES",
    "CastEvidence",
    "FormatRoleEvidence",
    "MxGradientEvidence",
    "Nvfp4Evidence",
    "check_fp8_cast_saturates",
    "check_fp8_formats_by_role",
    "check_mxfp8_needs_no_e5m2",
    "check_nvfp4_two_level",
]

SOURCE_TE_FP8 = "te:fp8_primer"  # Transformer Engine's user guide, "Using FP8 with Transformer Engine"
SOURCE_TE_MXFP8 = "te:mxfp8"  # Transformer Engine's user guide, low precision training › MXFP8
SOURCE_TORCHAO_NVFP4 = "torchao:nvfp4_tensor.py"  # torchao 0.18.0, torchao/prototype/mx_formats/nvfp4_tensor.py
SOURCE_TORCHAO_FLOAT8 = "torchao:float8_utils.py"  # torchao 0.18.0, torchao/float8/float8_utils.py

# The sources these claims cite (their titles and the headings or functions where each claim is made are words:
# mpviz/locales/*/claims.toml, `[sources]` and each claim's `section`).
SOURCES: tuple[str, ...] = (SOURCE_TE_FP8, SOURCE_TE_MXFP8, SOURCE_TORCHAO_NVFP4, SOURCE_TORCHAO_FLOAT8)


_NVFP4_BLOCK = 16  # elements per NVFP4 block (mpviz.fp8.recipes)


@cache
def _block(recipe: str) -> Fp8Run:
    """The lesson's default block under `recipe`, untraced (its measurements only), once per process."""
    return run(Fp8Config(recipe=recipe), traced=False)


def _gradients(res: Fp8Run) -> list[QuantizedTensor]:
    return [t for t in res.tensors if t.role == "grad_output"]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


# The tensorwise recipe with e4m3 for gradients too: what the gradients would lose without e5m2.
_ALL_E4M3 = Recipe("tensorwise_e4m3", "float8_e4m3fn", "float8_e4m3fn", "tensor", "float32")


# ── 101: e4m3 forward, e5m2 backward ────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class FormatRoleEvidence:
    e4m3_eps: float
    e5m2_eps: float
    e4m3_range: float  # log2(max / smallest subnormal)
    e5m2_range: float
    gradient_range: float  # the widest dynamic range (log2) among the block's gradient operands
    activation_range: float  # … among its activation operands (inputs of the GEMMs, x excluded)
    gradient_error_e5m2: float  # mean relative error of the gradient operands as tensorwise stores them (e5m2)
    gradient_error_e4m3: float  # … stored in e4m3 instead, with the same per-tensor scaling


def check_fp8_formats_by_role() -> Checked:
    """Claim: activations and weights need more precision (e4m3), gradients more dynamic range (e5m2). Parts: e4m3
    has the finer spacing; e5m2 the wider range; this block's gradients span a wider range than its activations.
    The gradients' errors in both formats are shown, not judged."""
    e4, e5 = resolve_format("e4m3"), resolve_format("e5m2")
    res = _block("tensorwise")
    grads = _gradients(res)
    acts = [t for t in res.tensors if t.role == "input" and t.gemm is not None]
    given = {name: g for name, _, g, _ in res.operands}
    as_e4m3 = [measure(t.name, t.gemm, given[t.name], quantize(given[t.name], _ALL_E4M3, t.role)) for t in grads]
    ev = FormatRoleEvidence(
        e4m3_eps=e4.eps,
        e5m2_eps=e5.eps,
        e4m3_range=math.log2(e4.max / e4.smallest_subnormal),
        e5m2_range=math.log2(e5.max / e5.smallest_subnormal),
        gradient_range=max(t.dynamic_range or 0.0 for t in grads),
        activation_range=max(t.dynamic_range or 0.0 for t in acts),
        gradient_error_e5m2=_mean([t.rel_error for t in grads]),
        gradient_error_e4m3=_mean([t.rel_error for t in as_e4m3]),
    )
    parts = [
        Part("e4m3_more_precise", ev.e4m3_eps < ev.e5m2_eps),
        Part("e5m2_wider_range", ev.e5m2_range > ev.e4m3_range),
        Part("gradients_wider", ev.gradient_range > ev.activation_range),
    ]
    headline = {"gradient_range": ev.gradient_range, "activation_range": ev.activation_range}
    return judged(101, parts, ev, headline)


# ── 102: MXFP8 needs no e5m2 ────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class MxGradientEvidence:
    e4m3_range: float  # log2(max / smallest subnormal)
    block_range: float  # the widest dynamic range within one block of 32, over the block's gradient operands
    underflow: float  # the largest underflow share among the gradient operands under MXFP8 (e4m3)
    error_mxfp8: float  # mean relative error of the gradient operands under MXFP8 (e4m3, block scales)
    error_tensorwise: float  # … under tensorwise scaling (e5m2, one scale per tensor)


def check_mxfp8_needs_no_e5m2() -> Checked:
    """Claim: with one scale per block of 32, e4m3 gives gradients enough dynamic range: no e5m2 needed. Parts:
    every block of this block's gradients spans less than e4m3's range; no gradient element underflows; the
    gradients' error is below tensorwise e5m2's."""
    e4 = resolve_format("e4m3")
    mx, tw = _gradients(_block("mxfp8")), _gradients(_block("tensorwise"))
    ev = MxGradientEvidence(
        e4m3_range=math.log2(e4.max / e4.smallest_subnormal),
        block_range=max(t.max_block_dynamic_range or 0.0 for t in mx),
        underflow=max(t.underflow for t in mx),
        error_mxfp8=_mean([t.rel_error for t in mx]),
        error_tensorwise=_mean([t.rel_error for t in tw]),
    )
    parts = [
        Part("blocks_fit_e4m3", ev.block_range < ev.e4m3_range),
        Part("nothing_underflows", ev.underflow == 0),
        Part("error_below_e5m2", ev.error_mxfp8 < ev.error_tensorwise),
    ]
    headline = {"block_range": ev.block_range, "error_mxfp8": ev.error_mxfp8, "error_tensorwise": ev.error_tensorwise}
    return judged(102, parts, ev, headline)


# ── 103: NVFP4's two levels of scales ───────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class Nvfp4Evidence:
    amax_block_scale: float  # the e4m3 scale of the block holding x's amax (two-level, as the recipe stores it)
    e4m3_max: float
    gradient: str  # the gradient operand with the smallest amax
    gradient_amax: float
    single_level_below: float  # share of its block scales (amax / e2m1 max, no tensor scale) below e4m3's normals
    two_level_below: float  # share of its stored block scales clamped at e4m3's smallest normal (with the tensor scale)
    non_power_of_two: float  # share of x's block scales that are not powers of two


def check_nvfp4_two_level() -> Checked:
    """Claim (torchao's `per_tensor_amax_to_scale`): dividing the per-tensor scale by both e4m3's and e2m1's
    largest values lets block scales use e4m3's full range, up to its max where a block's max is the tensor's.
    Parts: the amax's block gets scale e4m3 max; without the tensor scale a small gradient's block scales fall
    below e4m3's normal range (why the tensor scale is there)."""
    res = _block("nvfp4")
    e4, e2 = resolve_format("e4m3"), resolve_format("e2m1")
    x = res.tensors[0]
    grad = min(_gradients(res), key=lambda t: t.amax)
    given = next(g for name, _, g, _ in res.operands if name == grad.name)
    stored = next(q for name, _, _, q in res.operands if name == grad.name)
    block_amax = given.detach().abs().reshape(given.shape[0], -1, _NVFP4_BLOCK).amax(dim=-1).to(torch.float64)
    scales_x = res.operands[0][3].scales.to(torch.float64)
    ev = Nvfp4Evidence(
        amax_block_scale=x.scale_of_amax,
        e4m3_max=e4.max,
        gradient=grad.name,
        gradient_amax=grad.amax,
        single_level_below=float((block_amax / e2.max < e4.smallest_normal).double().mean()),
        two_level_below=float((stored.scales.to(torch.float64) <= e4.smallest_normal).double().mean()),
        non_power_of_two=float((torch.frexp(scales_x).mantissa != 0.5).double().mean()),
    )
    parts = [  # what is left at e4m3's floor even with the tensor scale is shown, not judged: the claim is the top
        Part("amax_block_uses_max", ev.amax_block_scale == ev.e4m3_max),
        Part("single_level_out_of_range", ev.single_level_below > 0),
    ]
    headline = {"single_level_below": ev.single_level_below, "two_level_below": ev.two_level_below}
    return judged(103, parts, ev, headline)


# ── 104: casts to fp8 saturate ──────────────────────────────────────────────────────────────────────────────
CAST_PROBES = (1000.0, -1e6)  # beyond e4m3's largest value, and beyond e5m2's


@dataclass(frozen=True)
class CastEvidence:
    probes: tuple[float, ...]
    e4m3: tuple[float, ...]  # torch's eager cast of each probe to float8_e4m3fn
    e5m2: tuple[float, ...]  # … to float8_e5m2
    e4m3_max: float
    e5m2_max: float


def check_fp8_cast_saturates() -> Checked:
    """Claim (torchao's `to_fp8_saturated`): in PyTorch 2.12 and newer, an eager cast to fp8 saturates finite
    values past the largest one. Parts, per format: each probe comes back as ±max, not inf or NaN."""
    probe = torch.tensor(CAST_PROBES, dtype=torch.float32)
    e4 = tuple(probe.to(torch.float8_e4m3fn).float().tolist())
    e5 = tuple(probe.to(torch.float8_e5m2).float().tolist())
    f4, f5 = resolve_format("e4m3"), resolve_format("e5m2")
    ev = CastEvidence(CAST_PROBES, e4, e5, f4.max, f5.max)
    parts = [  # per format, the probes past its largest value: each must come back as ±max
        Part(
            "saturates",
            all(abs(v) == f.max for p, v in zip(CAST_PROBES, out, strict=True) if abs(p) > f.max),
            subject=name,
        )
        for name, f, out in (("float8_e4m3fn", f4, e4), ("float8_e5m2", f5, e5))
    ]
    return judged(104, parts, ev, {"e4m3": e4, "e5m2": e5})


# Registered in mpviz.claims.registry (Claim(**spec)): ids from 101 keep them apart from the tutorial claims.
CLAIM_SPECS: tuple[dict, ...] = (
    dict(id=101, key="fp8_formats_by_role", seeds=(SOURCE_TE_FP8,), check=check_fp8_formats_by_role, topic="formats"),
    dict(id=102, key="mxfp8_needs_no_e5m2", seeds=(SOURCE_TE_MXFP8,), check=check_mxfp8_needs_no_e5m2, topic="formats"),
    dict(id=103, key="nvfp4_two_level", seeds=(SOURCE_TORCHAO_NVFP4,), check=check_nvfp4_two_level, topic="formats"),
    dict(
        id=104,
        key="fp8_cast_saturates",
        seeds=(SOURCE_TORCHAO_FLOAT8,),
        check=check_fp8_cast_saturates,
        topic="formats",
    ),
)
