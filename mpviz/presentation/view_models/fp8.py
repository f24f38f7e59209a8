"""The fp8 lesson's view model: one recipe's run of the attention block's projection GEMMs (mpviz.fp8.block), and
what the page draws of it: the outlier's map, the tensors' underflow shares, one row per quantised tensor and per
GEMM. Every result is memoised by function and arguments; the runs go to the app's worker pool."""

from __future__ import annotations

import plotly.graph_objects as go

from mpviz.fp8 import block
from mpviz.fp8.recipes import RECIPE_NAMES
from mpviz.presentation import text
from mpviz.presentation.figures import fp8 as fp8_fig
from mpviz.presentation.memo import memoised

__all__ = [
    "OUTLIERS",
    "RECIPE_NAMES",
    "gemm_rows",
    "outlier_figure",
    "run",
    "share",
    "shares_figure",
    "stepper_bundle",
    "tensor_rows",
]

OUTLIERS = (1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6)  # the outlier control's stops: K, the factor on x[0, 0]


def share(v: float) -> str:
    return f"{v:.2%}"


@memoised(words=False, worker=True)
def run(recipe: str, outlier: float) -> block.Fp8Lesson:
    """The page's run of the block under `recipe` with x[0, 0] × `outlier` (mpviz.fp8.block.lesson)."""
    return block.lesson(recipe, outlier)


@memoised(words=False, worker=True)
def stepper_bundle(recipe: str, outlier: float) -> bytes:
    """The stepper's bundle of the same block: a second traced run, made only when the stepper is asked for."""
    return block.stepper_bundle(recipe, outlier)


@memoised(returns="figure")
def outlier_figure(recipe: str, outlier: float) -> go.Figure:
    return fp8_fig.outcome_map_figure(run(recipe, outlier).x_outcomes, labels=text.section("fp8")["fig"])


@memoised(returns="figure")
def shares_figure(recipe: str, outlier: float) -> go.Figure:
    return fp8_fig.underflow_figure(run(recipe, outlier).tensors, labels=text.section("fp8")["fig"])


@memoised(returns="table")
def tensor_rows(recipe: str, outlier: float) -> list[dict]:
    """One row per quantised tensor: its format, amax, scale (and the scale's bits), shares, error, ranges."""
    cols = text.section("fp8")["columns"]
    return [
        {
            cols["name"]: t.name,
            cols["format"]: t.format,
            cols["amax"]: t.amax,
            cols["scale"]: t.scale_of_amax,
            cols["scale_bits"]: t.scale_bits if t.scale_format != "float32" else f"fp32 {int(t.scale_bits, 2):08x}",
            cols["underflow"]: share(t.underflow),
            cols["overflow"]: share(t.overflow),
            cols["rel_error"]: t.rel_error,
            cols["range"]: f"{t.dynamic_range or 0:.1f} / {t.format_dynamic_range:.1f}",
            cols["block_range"]: "—" if t.max_block_dynamic_range is None else f"{t.max_block_dynamic_range:.1f}",
        }
        for t in run(recipe, outlier).tensors
    ]


@memoised(returns="table")
def gemm_rows(recipe: str, outlier: float) -> list[dict]:
    """One row per GEMM: the op that ran, real or emulated, its operands' formats, its error."""
    words = text.section("fp8")
    cols = words["columns"]
    return [
        {
            cols["gemm"]: g.name,
            cols["op"]: g.op,
            cols["kind"]: words["emulated_label" if g.emulated else "real_label"],
            cols["operands"]: f"{g.a} · {g.b}",
            cols["rel_error"]: g.rel_error,
        }
        for g in run(recipe, outlier).gemms
    ]
