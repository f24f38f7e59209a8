"""Store one GEMM operand under a recipe, and measure what that did to it.

`quantize(t, recipe, role)` returns the operand as the recipe stores it: the payload (a torch float8 tensor cast by
torch's own `_to_copy`; for NVFP4, e2m1 codes cast by ml_dtypes, one per byte) and its scales, in the arithmetic
of the reference implementations, step for step in float32, so that the bytes equal theirs (tests/test_fp8.py
compares them with torchao's bit for bit):

    tensor / row  scale = fmax / max(amax, 1e-12) in float64, then float32 (torchao `amax_to_scale`); rowwise
                  rounds it down to a power of two; payload = saturate(t · scale); value = payload / scale
    mxfp8         per block of 32: e8m0 scale = 2^(floor(log2 amax) − emax(e4m3)) from amax's float32 exponent
                  field (torchao `to_mx`, FLOOR mode); payload = saturate(t / scale); value = payload · scale
    nvfp4         per tensor: s = amax / (448 · 6) in float32; per block of 16: e4m3 scale = saturate(block amax
                  / 6 / s); payload = e2m1(saturate(t · ((1 / s) / scale))); value = payload · scale · s

Scales and blocks run along the last axis, the GEMM's contraction axis: callers pass operands laid out that way.
`measure(...)` reports, per operand, what Transformer Engine's precision debug tools log per GEMM tensor (amax,
underflow share, dynamic range, blockwise dynamic range) plus the overflow (saturation) share, the error of the
stored values against the float64 values given, and the bits of the scale that the largest element used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import torch

from mpviz.formats import FormatSpec, encode, resolve_format, torch_dtype
from mpviz.fp8.recipes import Recipe

__all__ = ["AMAX_EPS", "OUTCOMES", "Quantized", "QuantizedTensor", "measure", "outcomes", "quantize"]

AMAX_EPS = 1e-12  # the floor torchao puts under an amax before dividing by it (an all-zero tensor gets scale fmax/EPS)
_F32_MIN_NORMAL = torch.finfo(torch.float32).tiny


@dataclass(frozen=True)
class Quantized:
    """One operand as a recipe stores it. Everything is laid out with the contraction axis last."""

    recipe: Recipe
    role: str
    format: str  # element format (canonical name)
    payload: torch.Tensor  # float8 dtype; for e2m1 a uint8 tensor of codes (sign in bit 3), one per element
    scales: torch.Tensor  # float32 () or (rows, 1); e8m0 / e4m3 (rows, cols / block)
    tensor_scale: torch.Tensor | None  # NVFP4's fp32 scale above the block scales
    amax_used: float  # the amax the scale was made from (delayed scaling: the history's, not this tensor's)

    def factors(self) -> torch.Tensor:
        """Per element (float64): what one unit of the payload is worth, i.e. stored value = payload · factor."""
        s = self.scales.to(torch.float64)
        if self.recipe.granularity != "block":
            return (1.0 / s).expand(self.payload.shape)
        if self.tensor_scale is not None:
            s = s * self.tensor_scale.to(torch.float64)
        return s.repeat_interleave(self.recipe.block_size, dim=-1)

    def payload_values(self) -> torch.Tensor:
        """The payload's own values (float64), before any scale."""
        if self.payload.dtype == torch.uint8:
            return torch.from_numpy(self.payload.numpy().view(ml_dtypes.float4_e2m1fn).astype(np.float64))
        return self.payload.to(torch.float64)

    def dequantize(self) -> torch.Tensor:
        """The values the recipe stands for (float64: exact for every scale and payload here)."""
        return self.payload_values() * self.factors()

    def packed(self) -> torch.Tensor:
        """e2m1 codes two to a byte, the first in the low nibble: the layout of torch.float4_e2m1fn_x2."""
        codes = self.payload
        return codes[..., ::2] | (codes[..., 1::2] << 4)


def _to_element(t: torch.Tensor, fmt: str) -> torch.Tensor:
    """Saturate to the format's largest finite value, then store: torch's cast for float8 dtypes, ml_dtypes' for
    e2m1 (torch has no cast to it); both round to nearest, ties to even."""
    spec = resolve_format(fmt)
    t = torch.clamp(t, -spec.max, spec.max)
    dtype = torch_dtype(spec)
    if dtype is not None and dtype.itemsize == 1 and spec.bits == 8:
        return t.to(dtype)
    codes = t.numpy().astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    return torch.from_numpy(codes.copy())


def _fp8_scale(amax: torch.Tensor, fmt: str, power_of_two: bool) -> torch.Tensor:
    """torchao's `amax_to_scale`: fmax / max(amax, EPS) computed in float64, kept in float32."""
    scale = (resolve_format(fmt).max / torch.clamp(amax.to(torch.float64), min=AMAX_EPS)).to(torch.float32)
    return torch.exp2(torch.floor(torch.log2(scale))) if power_of_two else scale


def _mx_scale(block_amax: torch.Tensor, fmt: str) -> tuple[torch.Tensor, torch.Tensor]:
    """e8m0 scales (biased exponent bytes) and their float32 values, from each block's amax (FLOOR mode)."""
    emax = resolve_format(fmt).emax
    bits = block_amax.to(torch.float32).view(torch.int32)
    exponent = ((bits >> 23) & 0xFF) - 127  # the float32 exponent field: floor(log2 amax) for a normal amax
    biased = (torch.clamp(exponent - emax, min=-127, max=128) + 127).to(torch.uint8)
    biased = torch.where(torch.isnan(block_amax), 255, biased).to(torch.uint8)  # e8m0's NaN pattern
    value = torch.clamp((biased.to(torch.int32) << 23).view(torch.float32), min=_F32_MIN_NORMAL)
    return biased.view(torch.float8_e8m0fnu), value


def quantize(t: torch.Tensor, recipe: Recipe, role: str, history: Sequence[float] = ()) -> Quantized:
    """`t` (2-D, contraction axis last, any float dtype) stored as `recipe` stores an operand playing `role`.

    `history` is the delayed recipe's amax history (the amaxes of this operand in earlier steps, oldest first);
    with an empty history a delayed scale starts from the tensor's own amax, as on a first step."""
    if t.dim() != 2:
        raise ValueError(f"an operand is a matrix; got {t.dim()} dimensions")
    fmt = recipe.element_format(role)
    hp = t.detach().to(torch.float32).contiguous()
    if recipe.granularity == "block" and hp.shape[-1] % recipe.block_size:
        raise ValueError(f"the contraction axis ({hp.shape[-1]}) is not a multiple of the block ({recipe.block_size})")
    amax = torch.amax(torch.abs(hp)) if hp.numel() else torch.zeros(())
    if recipe.granularity in ("tensor", "row"):
        if recipe.granularity == "row":
            used = torch.amax(torch.abs(hp), dim=-1, keepdim=True)
        elif recipe.amax_history and history:
            used = torch.tensor(max(history), dtype=torch.float32)
        else:
            used = amax
        scale = _fp8_scale(used, fmt, recipe.power_of_two_scales)
        payload = _to_element(hp * scale, fmt)
        return Quantized(recipe, role, fmt, payload, scale, None, float(torch.amax(used)))
    blocks = hp.reshape(hp.shape[0], -1, recipe.block_size)
    block_amax = torch.amax(torch.abs(blocks), dim=-1)
    if not recipe.tensor_scale:
        stored, value = _mx_scale(block_amax, fmt)
        payload = _to_element((blocks / value.unsqueeze(-1)).reshape(hp.shape), fmt)
        return Quantized(recipe, role, fmt, payload, stored, None, float(amax))
    element_max, scale_fmt = resolve_format(fmt).max, resolve_format(recipe.scale_format)
    tensor_scale = amax.to(torch.float32) / (scale_fmt.max * element_max)
    block_scale = torch.clamp((block_amax / element_max) / tensor_scale, min=scale_fmt.smallest_normal)
    stored = torch.clamp(block_scale, max=scale_fmt.max).to(torch_dtype(scale_fmt))
    reciprocal = (1.0 / tensor_scale) / stored.to(torch.float32)
    payload = _to_element((blocks * reciprocal.unsqueeze(-1)).reshape(hp.shape), fmt)
    return Quantized(recipe, role, fmt, payload, stored, tensor_scale, float(amax))


@dataclass(frozen=True)
class QuantizedTensor:
    """What storing one operand did to it (the CLI's JSON row, the page's table row)."""

    name: str  # "x", "q_proj.forward.input", "q_proj.grad_weight.grad_output", ...
    gemm: str | None  # the GEMM it feeds ("q_proj.forward"), None for the block's input x
    role: str
    format: str  # element format
    scale_format: str
    granularity: str
    shape: tuple[int, ...]
    amax: float  # of the values given
    amax_used: float  # the amax the scale came from (delayed: the history's largest)
    scale_count: int
    scale_min: float  # the values the scales stand for (per recipe convention: multiplier for fp8, factor else)
    scale_max: float
    scale_of_amax: float  # the scale the largest element was stored with
    scale_bits: str  # that scale's bit pattern in scale_format
    tensor_scale: float | None  # NVFP4's per-tensor fp32 scale
    underflow: float  # share of non-zero elements stored as zero
    overflow: float  # share of elements that would round past the largest value: saturated to it instead
    rel_error: float  # ‖stored − given‖ / ‖given‖, in float64
    dynamic_range: float | None  # log2(amax) − log2(smallest non-zero |x|); None without two non-zero elements
    format_dynamic_range: float  # log2(format max / smallest subnormal)
    max_block_dynamic_range: float | None  # the largest dynamic range within one scale's share (row or block)

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def _rounds_past_max(v: torch.Tensor, spec: FormatSpec) -> torch.Tensor:
    """Where |v| lies past the midpoint between the format's largest value and the next one its exponent would
    allow: stored, it saturates to max. Merely above max does not count: a per-tensor scale rounded to float32
    can put the amax a hair above max, and rounding brings it back. A value exactly on the midpoint counts as
    kept."""
    return v.abs() > spec.max + 2.0 ** (spec.emax - spec.mantissa_bits) / 2


def _dynamic_range(a: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """log2(max |a|) − log2(min non-zero |a|), over everything or along `dim` (nan where nothing is non-zero)."""
    nonzero = torch.where(a > 0, a, torch.inf)
    high = a.amax() if dim is None else a.amax(dim=dim)
    low = nonzero.amin() if dim is None else nonzero.amin(dim=dim)
    return torch.where(high > 0, torch.log2(high) - torch.log2(low), torch.nan)


def _float_or_none(v: torch.Tensor) -> float | None:
    v = float(v)
    return None if math.isnan(v) else v


def measure(name: str, gemm: str | None, given: torch.Tensor, q: Quantized) -> QuantizedTensor:
    """Measure `q` against `given`, the values it was made from (any float dtype; compared in float64)."""
    x = given.detach().to(torch.float64).reshape(q.payload.shape)
    a = x.abs()
    stored = q.dequantize()
    factors = q.factors()
    nonzero = a > 0
    n = max(x.numel(), 1)
    spec = resolve_format(q.format)
    underflow = int((nonzero & (stored == 0)).sum()) / max(int(nonzero.sum()), 1)
    overflow = int(_rounds_past_max(x / factors, spec).sum()) / n
    norm = float(torch.linalg.vector_norm(x))
    rel = float(torch.linalg.vector_norm(stored - x)) / norm if norm > 0 else 0.0
    if q.recipe.granularity == "tensor":
        block_range = None
    else:
        per = a if q.recipe.granularity == "row" else a.reshape(a.shape[0], -1, q.recipe.block_size)
        ranges = _dynamic_range(per, dim=-1)
        block_range = _float_or_none(ranges.nan_to_num(nan=-math.inf).amax()) if ranges.numel() else None
        block_range = None if block_range == -math.inf else block_range
    at_amax = int(torch.argmax(a)) if x.numel() else 0
    scales = q.scales.to(torch.float64).reshape(-1)
    if q.recipe.granularity == "tensor":
        own = scales[0]
    elif q.recipe.granularity == "row":
        own = scales[at_amax // x.shape[-1]]
    else:
        own = scales[at_amax // q.recipe.block_size]
    small = spec.smallest_subnormal if spec.has_subnormals else spec.smallest_normal
    return QuantizedTensor(
        name=name,
        gemm=gemm,
        role=q.role,
        format=q.format,
        scale_format=q.recipe.scale_format,
        granularity=q.recipe.granularity,
        shape=tuple(x.shape),
        amax=float(a.max()) if x.numel() else 0.0,
        amax_used=q.amax_used,
        scale_count=int(scales.numel()),
        scale_min=float(scales.min()),
        scale_max=float(scales.max()),
        scale_of_amax=float(own),
        scale_bits=encode(float(own), q.recipe.scale_format).bits,
        tensor_scale=None if q.tensor_scale is None else float(q.tensor_scale),
        underflow=underflow,
        overflow=overflow,
        rel_error=rel,
        dynamic_range=_float_or_none(_dynamic_range(a)) if int(nonzero.sum()) > 1 else None,
        format_dynamic_range=math.log2(spec.max / small),
        max_block_dynamic_range=block_range,
    )


OUTCOMES: tuple[str, ...] = ("zero", "kept", "flushed", "saturated")  # per element, codes 0 … 3 of `outcomes`


def outcomes(given: torch.Tensor, q: Quantized) -> np.ndarray:
    """Per element of `given` (int8, q's layout): 0 zero already, 1 kept (stored non-zero, within range),
    2 flushed to zero, 3 saturated (would round past the format's largest value); see OUTCOMES."""
    x = given.detach().to(torch.float64).reshape(q.payload.shape)
    stored, factors = q.dequantize(), q.factors()
    beyond = _rounds_past_max(x / factors, resolve_format(q.format))
    codes = torch.where(x == 0, 0, torch.where(stored == 0, 2, torch.where(beyond, 3, 1)))
    return codes.to(torch.int8).numpy()
