"""The GradScaler lesson's figures draw what the records say, with the words the page hands them.

Records are written by hand (no training): each test states the run it draws.
"""

import math

import pytest
import torch

from mpviz.app import text
from mpviz.presentation.figures import scaler as scaler_fig
from mpviz.scaler import RecipeResult, StepMemory, StepRecord
from mpviz.stats import FormatRange

LABELS = dict(text.load("en", "scaler")["labels"])


def record(step: int, before: float | None, after: float | None, **changes) -> StepRecord:
    fields = dict(
        step=step,
        loss=2.0 / (step + 1),
        scale_before=before,
        scale_after=after,
        growth_tracker=0,
        found_inf=False,
        skipped=False,
        params_finite=True,
        injected=False,
        grad_norm=1.0,
        zero_grad_fraction=0.0,
        zero_grad_fraction_unscaled=0.0,
        grad_exponents=((-20, 5), (-10, 40), (-3, 8)),
        grad_exponents_scaled=((-4, 5), (6, 40), (13, 8)) if before else (),
        step_ms=1.0,
    )
    return StepRecord(**{**fields, **changes})


# step 1: inf injected → skipped, backoff 256 → 128; step 3: growth 128 → 256
RUN = (
    record(0, 256.0, 256.0),
    record(1, 256.0, 128.0, injected=True, found_inf=True, skipped=True, loss=math.inf),
    record(2, 128.0, 128.0, zero_grad_fraction=0.00005, zero_grad_fraction_unscaled=0.00035),
    record(3, 128.0, 256.0, zero_grad_fraction_unscaled=0.0002),
)


def trace(fig, name: str):
    return next(t for t in fig.data if t.name == name)


def test_scale_trace_marks_skips_injections_growth_and_backoff_where_they_happened():
    fig = scaler_fig.scale_trace_figure(RUN, labels=LABELS, total_steps=4)
    scale = trace(fig, LABELS["scale_line"])
    assert list(scale.x) == [0, 1, 2, 3, 4] and list(scale.y) == [256, 256, 128, 128, 256]
    assert list(trace(fig, LABELS["skipped"]).x) == [1] and list(trace(fig, LABELS["injected"]).x) == [1]
    assert list(trace(fig, LABELS["backoff"]).x) == [2] and list(trace(fig, LABELS["backoff"]).y) == [128]
    assert list(trace(fig, LABELS["grow"]).x) == [4] and list(trace(fig, LABELS["grow"]).y) == [256]
    assert sorted(a.text for a in fig.layout.annotations) == ["×0.5", "×2"]
    assert fig.layout.yaxis.title.text == LABELS["scale"] and list(fig.layout.yaxis.ticktext) == ["2⁷", "2⁸"]
    assert fig.layout.xaxis.range == (-0.5, 5.5)  # the whole run, so a run being shown fills the axis in


def test_training_loss_leaves_a_gap_for_an_infinite_loss_and_marks_skips():
    fig = scaler_fig.training_loss_figure(RUN, labels=LABELS)
    assert trace(fig, LABELS["loss_line"]).y[1] is None
    assert list(trace(fig, LABELS["skipped"]).x) == [1]
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.title.text == LABELS["loss"]
    ticks = fig.layout.yaxis.ticktext  # each tick says its value (not a bare "5" for 0.5), none twice
    assert len(set(ticks)) == len(ticks) and "0.5" in ticks and "1" in ticks


def test_zero_fraction_ticks_read_tiny_percentages_and_a_loss_free_run_still_has_an_axis():
    fig = scaler_fig.zero_fraction_figure(RUN, labels=LABELS, dtype="float16")
    assert list(trace(fig, LABELS["with_scaling"]).y) == [0.0, 0.0, 0.00005, 0.0]
    assert list(trace(fig, LABELS["without_scaling"]).y) == [0.0, 0.0, 0.00035, 0.0002]
    assert fig.layout.yaxis.tickformat == ".3~p"  # significant digits: 0.005 %, not 0 %
    assert fig.layout.yaxis.range == pytest.approx((0, 0.00035 * 1.1))
    clean = scaler_fig.zero_fraction_figure(RUN[:2], labels=LABELS)
    assert clean.layout.yaxis.range[1] > 0  # nothing lost: a flat line at 0, on an axis that still reads


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_histogram_zones_sit_at_the_formats_edges_with_labels_that_cannot_overprint(dtype):
    fmt = FormatRange.of(dtype)
    fig = scaler_fig.scaled_gradient_histogram_figure(RUN[0], fmt, labels=LABELS)
    assert [t.name for t in fig.data] == [LABELS["before"], LABELS["after"].format(scale=256)]
    assert [list(t.customdata) for t in fig.data] == [[-20, -10, -3], [-4, 6, 13]]
    x0s = sorted(shape.x0 for shape in fig.layout.shapes)
    lo, hi = fig.layout.xaxis.range
    assert x0s == [lo, math.log2(fmt.underflow_at), math.log2(fmt.overflow_at)]
    notes = {a.text: a for a in fig.layout.annotations}
    under, sub, over = (notes[LABELS[z].format(dtype=fmt.dtype)] for z in ("underflow", "subnormal", "overflow"))
    assert (under.x, under.xanchor) == (lo, "left") and (over.x, over.xanchor) == (hi, "right")  # inside the plot
    assert sub.yshift != under.yshift  # its own row: bfloat16's subnormal zone is narrower than its name
    assert fig.layout.yaxis.range[1] > 40  # head room above the tallest bar for the two rows of names


def recipe(name: str, dtype: str, scaler: bool, losses: tuple) -> RecipeResult:
    return RecipeResult(name, dtype, scaler, losses, (), 0.0, (), None, 1.0, StepMemory(1, 2))


def test_recipes_draw_the_reference_as_a_band_and_each_recipe_relative_to_it():
    results = (
        recipe("fp32", "off", False, (2.0, 1.0)),
        recipe("bf16", "bf16", False, (2.0, 1.01)),
        recipe("fp16", "fp16", False, (2.0, math.nan)),
    )
    labels = {**LABELS, "fp32": "F", "bf16": "B", "fp16": "H"}
    fig = scaler_fig.recipes_loss_figure(results, labels=labels)
    band = fig.data[0]
    assert band.name == "F" and band.line.width > 3 * trace(fig, "B").line.width  # drawn first, underneath
    relative = [t for t in fig.data if t.yaxis == "y2"]
    assert [t.name for t in relative] == ["B", "H"]
    assert relative[0].y == pytest.approx((0.0, 0.01)) and relative[1].y[1] is None
    assert trace(fig, "H").line.dash == "dash"
    assert fig.layout.yaxis2.title.text == LABELS["vs_reference"].format(reference="F")
