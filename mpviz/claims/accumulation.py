"""The accumulation claim: does a bf16 × bf16 matmul add its products in float32, and what does it return?"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from mpviz.claims.devices import AUTOCAST_DTYPE, DEVICES, block_trace, measured_device
from mpviz.claims.op_dtypes import LOW, OpCall, measure_row
from mpviz.claims.verdicts import Checked, Part, judged
from mpviz.formats import round_array
from mpviz.stats import dtype_name


@dataclass(frozen=True)
class AccumulationEvidence:
    """A bf16 dot product whose answer depends on the accumulator's width, and random bf16 matmuls.

    Designed probe: one 1.0 followed by `n_small` copies of `small` (SMALL_FRACTION of bf16's spacing at 1),
    dotted with ones. A bf16 accumulator rounds every partial sum and never moves off 1; a float32 accumulator sums
    exactly and rounds once at the end.
    """

    device: str  # where torch.matmul ran
    dtype: str  # "bfloat16"
    small: float
    spacing_at_one: float  # the dtype's spacing just above 1 (torch.finfo(dtype).eps)
    n_small: int
    exact: float  # the exact sum
    rounded_once: float  # the exact sum rounded once to bf16: what a float32 accumulator gives
    low_accumulator: float  # a bf16 accumulator, rounded after every add, left to right
    measured: float  # torch.matmul of the bf16 operands
    output_dtype: str  # the dtype torch.matmul returned
    exact_partial_sums: tuple[float, ...]  # (n_small + 2,) after 0, 1, … terms
    low_partial_sums: tuple[float, ...]  # the same for the bf16 accumulator
    random_shape: tuple[int, int, int]  # (m, k, n) of the random matmul
    random_match: dict[str, float]  # "matmul" | "float32_accumulator" | "bfloat16_accumulator" → share of
    # the m·n results equal to the exact result rounded once to bf16
    accumulator: str  # "float32" | "bfloat16": the emulation torch.matmul's random results agree with better
    score_dtypes: dict[str, str]  # device → dtype of the attention block's scores (q·kᵀ) under bf16 autocast
    autocast_outputs: dict[str, str | None]  # device → dtype matmul(bf16, bf16) returns under its bf16 autocast
    reduced_precision_reduction: bool  # torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction: when
    # True cuBLAS may reduce bf16 products in reduced precision, so a CPU kernel's accumulator says nothing of CUDA's


ACCUMULATION_SMALL_TERMS = 255
SMALL_FRACTION = 0.25  # each small term is this share of the spacing at 1: a bf16 accumulator drops every one
RANDOM_MATMUL = (64, 1024, 64)


def _accumulate(terms: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Partial sums (k+1, ...) of terms (k, ...) with an accumulator stored in `dtype` after every add."""
    acc = torch.zeros(terms.shape[1:], dtype=dtype)
    sums = [acc]
    for t in terms:
        acc = (acc.to(torch.float64) + t.to(torch.float64)).to(dtype)
        sums.append(acc)
    return torch.stack(sums)


def check_matmul_accumulation() -> Checked:
    """Claim: a bf16 × bf16 matmul accumulates in float32 and returns float32 (so scores reach softmax in
    float32). Parts per device: the matmul under bf16 autocast returns float32; the attention block's scores come
    out float32; and, on the device the products were really summed on (`measured_device`), the accumulation is
    float32-like. The seed speaks of CUDA kernels: CUDA decides. Without a GPU CUDA's accumulation is not
    measured (a CPU kernel says nothing of cuBLAS, which may reduce in bf16: `reduced_precision_reduction`)."""
    low, device = torch.bfloat16, measured_device()
    spacing = torch.finfo(low).eps
    small = spacing * SMALL_FRACTION
    terms = torch.tensor([1.0] + [small] * ACCUMULATION_SMALL_TERMS, dtype=torch.float64)  # (n,)
    exact_sums = torch.cat([torch.zeros(1, dtype=torch.float64), terms.cumsum(0)])  # exact: multiples of 2^-9
    low_sums = _accumulate(terms.to(low), low).to(torch.float64)
    row, col = terms.to(low).reshape(1, -1), torch.ones(terms.numel(), 1, dtype=low)
    result = row.to(device) @ col.to(device)  # (1, 1)

    g = torch.Generator().manual_seed(0)
    m, k, n = RANDOM_MATMUL
    a, b = torch.randn(m, k, generator=g).to(low), torch.randn(k, n, generator=g).to(low)
    exact = (a.double() @ b.double()).numpy()  # products of bf16 values are exact in float64; so is this sum
    once = torch.from_numpy(round_array(exact, "bfloat16"))  # (m, n)
    products = a.double().T.unsqueeze(2) * b.double().unsqueeze(1)  # (k, m, n): the terms, in order
    match = {
        "matmul": (a.to(device) @ b.to(device)).double().cpu() == once,
        "float32_accumulator": _accumulate(products, torch.float32)[-1].to(low).double() == once,
        "bfloat16_accumulator": _accumulate(products, low)[-1].double() == once,
    }
    share = {name: float(hit.double().mean()) for name, hit in match.items()}
    closer_to_f32 = abs(share["matmul"] - share["float32_accumulator"]) < abs(
        share["matmul"] - share["bfloat16_accumulator"]
    )
    once_designed = float(round_array(exact_sums[-1:].numpy(), "bfloat16")[0])
    wide = closer_to_f32 and result.item() == once_designed
    scores = {d: block_trace(d).trace.landmark_event("scores").outputs[0].dtype for d in DEVICES}
    returned = {d: measure_row(OpCall("matmul", (AUTOCAST_DTYPE,) * 2, LOW), d).returned for d in DEVICES}
    ev = AccumulationEvidence(
        device=device,
        dtype=AUTOCAST_DTYPE,
        small=small,
        spacing_at_one=spacing,
        n_small=ACCUMULATION_SMALL_TERMS,
        exact=exact_sums[-1].item(),
        rounded_once=once_designed,
        low_accumulator=low_sums[-1].item(),
        measured=result.item(),
        output_dtype=dtype_name(result.dtype),
        exact_partial_sums=tuple(exact_sums.tolist()),
        low_partial_sums=tuple(low_sums.tolist()),
        random_shape=RANDOM_MATMUL,
        random_match=share,
        accumulator="float32" if wide else "bfloat16",
        score_dtypes=scores,
        autocast_outputs=returned,
        reduced_precision_reduction=torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
    )
    parts = [Part("accumulates_fp32", wide, device)]
    for d in DEVICES:
        parts += [Part("returns_fp32", returned[d] == "float32", d), Part("scores_fp32", scores[d] == "float32", d)]
    headline = {
        "measured": ev.measured,
        "rounded_once": ev.rounded_once,
        "bf16_accumulator": ev.low_accumulator,
        "matmul_matches_rounded_once": share["matmul"],
        "accumulator": ev.accumulator,
    } | {f"{d}_scores": dt for d, dt in scores.items()}
    headline |= {f"{d}_autocast_out": out for d, out in returned.items()}
    return judged(10, parts, ev, headline, about="cuda")
