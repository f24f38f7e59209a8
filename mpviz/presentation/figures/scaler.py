"""Figures of the GradScaler lesson: the scale step by step, loss, lost gradients, scaled exponents."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from mpviz.presentation.figures.style import figure, value_log_axis
from mpviz.presentation.palette import autocast_color, dtype_color

if TYPE_CHECKING:
    from mpviz.scaler import RecipeResult, StepRecord
    from mpviz.stats import FormatRange

# Zones of a format's range on the exponent axis (histogram backgrounds).
SCALER_ZONE_COLORS = {"underflow": "#bbbbbb", "subnormal": "#f2c14e", "overflow": "#e76f51"}
ZERO_AXIS_FLOOR = 1e-4  # lost-to-zero axis spans at least 0 … 0.01 %, so a run that lost nothing shows a flat 0


def _finite_or_none(values) -> list:
    """Plotly draws None as a gap; inf/nan would break log axes."""
    return [v if v is not None and math.isfinite(v) else None for v in values]


def _log2_ticks(lo: float, hi: float) -> dict:
    """Tick every power of two from lo to hi (at most ~12 labels), written 2¹⁶ (big enough to read)."""
    a, b = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    stride = max(1, math.ceil((b - a + 1) / 12))
    ks = range(a, b + 1, stride)
    sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return dict(type="log", tickvals=[2.0**k for k in ks], ticktext=[f"2{str(k).translate(sup)}" for k in ks])


def _step_axis(title: str, total_steps: int | None) -> dict:
    """The x axis of per-step charts: fixed to the whole run while it streams in, so it doesn't rescale."""
    return dict(title=title, range=[-0.5, total_steps + 0.5]) if total_steps else dict(title=title)


def scale_trace_figure(
    steps: Sequence[StepRecord], *, labels: dict, total_steps: int | None = None, max_annotations: int = 16
) -> go.Figure:
    """GradScaler's scale per step on a log₂ axis: the scale each step ran with, then where update() left it.

    `steps` are `mpviz.scaler.StepRecord`s of a run with a scaler (maybe the first few of `total_steps`).
    Skipped steps get a ✕, injected infs a ★, growth ▲ and backoff ▼ markers sit on the new scale; up to
    `max_annotations` of those carry ×factor text.
    """
    lab = labels
    fig = figure(height=360, legend=dict(orientation="h", y=1.12))
    if not steps:
        return fig
    xs = [r.step for r in steps] + [steps[-1].step + 1]
    ys = [r.scale_before for r in steps] + [steps[-1].scale_after]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="lines",
            line_shape="hv",
            name=lab["scale_line"],
            line=dict(color=dtype_color("float16"), width=3),
            hovertemplate=f"{lab['step']} %{{x}}: %{{y:g}}<extra></extra>",
        )
    )
    marks = (
        ("skipped", [r for r in steps if r.skipped], "x", "#111111", lambda r: r.scale_before, 0),
        ("injected", [r for r in steps if r.injected], "star", "#CC79A7", lambda r: r.scale_before, 0),
        (
            "grow",
            [r for r in steps if r.scale_change == "grow"],
            "triangle-up",
            "#009E73",
            lambda r: r.scale_after,
            1,
        ),
        (
            "backoff",
            [r for r in steps if r.scale_change == "backoff"],
            "triangle-down",
            "#D55E00",
            lambda r: r.scale_after,
            1,
        ),
    )
    for key, rs, symbol, color, y_of, dx in marks:
        if rs:
            fig.add_trace(
                go.Scatter(
                    x=[r.step + dx for r in rs],
                    y=[y_of(r) for r in rs],
                    mode="markers",
                    name=lab[key],
                    marker=dict(symbol=symbol, size=13, color=color),
                    hovertemplate=f"{lab[key]} · {lab['step']} %{{x}}<extra></extra>",
                )
            )
    events = [r for r in steps if r.scale_change in ("grow", "backoff")]
    if len(events) <= max_annotations:
        for r in events:
            up = r.scale_change == "grow"
            fig.add_annotation(
                x=r.step + 1,
                y=math.log10(r.scale_after),
                showarrow=False,
                text=f"×{r.scale_after / r.scale_before:g}",
                yshift=16 if up else -16,
                font=dict(size=13, color="#333333"),
            )
    finite = [y for y in ys if y and math.isfinite(y)]
    fig.update_yaxes(title=lab["scale"], **_log2_ticks(min(finite), max(finite)))
    fig.update_xaxes(**_step_axis(lab["step"], total_steps and total_steps + 1))
    return fig


def training_loss_figure(steps: Sequence[StepRecord], *, labels: dict, total_steps: int | None = None) -> go.Figure:
    """Loss per step (log axis); skipped steps marked ✕. Non-finite losses leave gaps."""
    lab = labels
    fig = figure(height=300, showlegend=False)
    fig.add_trace(
        go.Scatter(
            x=[r.step for r in steps],
            y=_finite_or_none(r.loss for r in steps),
            mode="lines",
            name=lab["loss_line"],
            line=dict(color=dtype_color("float32"), width=2),
        )
    )
    skipped = [r for r in steps if r.skipped]
    if skipped:
        fig.add_trace(
            go.Scatter(
                x=[r.step for r in skipped],
                y=_finite_or_none(r.loss for r in skipped),
                mode="markers",
                name=lab["skipped"],
                marker=dict(symbol="x", size=11, color="#111111"),
            )
        )
    fig.update_yaxes(title=lab["loss"], **value_log_axis([r.loss for r in steps]))
    fig.update_xaxes(**_step_axis(lab["step"], total_steps))
    return fig


def zero_fraction_figure(
    steps: Sequence[StepRecord], *, labels: dict, dtype: str = "float16", total_steps: int | None = None
) -> go.Figure:
    """Per step, the share of gradient elements the low-precision backward lost to zero: scaled vs not."""
    lab = labels
    fig = figure(height=300, legend=dict(orientation="h", y=1.15))
    x = [r.step for r in steps]
    fig.add_trace(
        go.Scatter(
            x=x,
            y=[r.zero_grad_fraction_unscaled for r in steps],
            mode="lines",
            name=lab["without_scaling"],
            line=dict(color="#999999", width=2, dash="dash"),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=[r.zero_grad_fraction for r in steps],
            mode="lines",
            name=lab["with_scaling"],
            line=dict(color=dtype_color(dtype), width=3),
        )
    )
    top = max((v for r in steps for v in (r.zero_grad_fraction, r.zero_grad_fraction_unscaled)), default=0.0)
    # Percent with 3 significant digits: fractions are tiny (0.005 %), and fixed decimals print every tick as 0 %.
    fig.update_yaxes(title=lab["zero"], tickformat=".3~p", range=[0, max(top, ZERO_AXIS_FLOOR) * 1.1])
    fig.update_xaxes(**_step_axis(lab["step"], total_steps))
    return fig


def scaled_gradient_histogram_figure(record: StepRecord, fmt: FormatRange, *, labels: dict) -> go.Figure:
    """Exponents of one step's float32 reference gradients, unscaled and × its scale, over `fmt`'s zones.

    `record` is a `StepRecord`, `fmt` a `mpviz.stats.FormatRange` (the autocast dtype's). A bar for exponent e
    spans [e, e+1) — |g| in [2^e, 2^(e+1)) — so the zone edges (log₂ of fmt's underflow point, smallest
    normal and overflow point) sit exactly where values start to flush, lose bits, or overflow. Zone names sit
    in two rows of head room above the tallest bar: the flush and overflow names at the axis ends (so neither
    runs off the plot), the subnormal name one row lower (bfloat16's subnormal zone is too narrow to share one).
    """
    lab = labels
    fig = figure(height=400, barmode="overlay", bargap=0, legend=dict(orientation="h", y=1.02, yanchor="bottom"))
    series = [(lab["before"], record.grad_exponents, "#888888")]
    if record.grad_exponents_scaled:
        series.append(
            (
                lab["after"].format(scale=record.scale_before),
                record.grad_exponents_scaled,
                dtype_color(fmt.dtype),
            )
        )
    exps = [e for _, hist, _ in series for e, _ in hist]
    lo = min([*exps, math.floor(math.log2(fmt.underflow_at))]) - 2
    hi = max([*exps, math.ceil(math.log2(fmt.overflow_at))]) + 2
    edges = {  # zone → (x0, x1, label anchor x, side the label grows to, label row from the top)
        "underflow": (lo, math.log2(fmt.underflow_at), lo, "left", 0),
        "subnormal": (
            math.log2(fmt.underflow_at),
            math.log2(fmt.smallest_normal),
            math.log2(fmt.underflow_at),
            "left",
            1,
        ),
        "overflow": (math.log2(fmt.overflow_at), hi, hi, "right", 0),
    }
    tallest = max((c for _, hist, _ in series for _, c in hist), default=1)
    top = tallest * 1.4  # head room for the two rows of zone names
    for zone, (x0, x1, x, side, row) in edges.items():
        fig.add_vrect(x0=x0, x1=x1, fillcolor=SCALER_ZONE_COLORS[zone], opacity=0.35, line_width=0, layer="below")
        fig.add_annotation(
            x=x,
            y=top,
            yanchor="top",
            yshift=-20 * row,
            xanchor=side,
            text=lab[zone].format(dtype=fmt.dtype),
            showarrow=False,
            font=dict(size=12, color="#333333"),
        )
    for name, hist, color in series:
        fig.add_trace(
            go.Bar(
                x=[e + 0.5 for e, _ in hist],
                y=[c for _, c in hist],
                width=1.0,
                name=name,
                marker=dict(color=color, line=dict(width=0.5, color="white")),
                opacity=0.75,
                customdata=[e for e, _ in hist],
                hovertemplate="2^%{customdata}: %{y}<extra>" + name + "</extra>",
            )
        )
    fig.update_xaxes(title=lab["exponent"], range=[lo, hi])
    fig.update_yaxes(title=lab["count"], range=[0, top])
    return fig


def recipes_loss_figure(results: Sequence[RecipeResult], *, labels: dict, reference: str = "fp32") -> go.Figure:
    """Loss curves of `mpviz.scaler.RecipeResult`s, and below them each recipe's loss relative to `reference`'s.

    Coloured by autocast dtype (dashed: fp16 without a scaler). Recipes that train alike draw on top of one
    another, so the reference is a wide pale band under the others and the lower panel shows what the eye
    cannot: loss / reference loss − 1 per step. `labels` names recipes by their key.
    """
    lab = labels
    ref = next((r for r in results if r.recipe == reference), None)
    fig = figure(height=520 if ref else 380, legend=dict(orientation="h", y=1.02, yanchor="bottom"))
    if ref is not None:
        fig.set_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.62, 0.38], vertical_spacing=0.08)
    where = dict(row=1, col=1) if ref is not None else {}
    for r in sorted(results, key=lambda r: r.recipe != reference):  # the reference first: drawn underneath
        base = r is ref
        name = lab.get(r.recipe, r.recipe)
        color = autocast_color(r.dtype)
        fig.add_trace(
            go.Scatter(
                x=list(range(len(r.losses))),
                y=_finite_or_none(r.losses),
                mode="lines",
                name=name,
                legendgroup=r.recipe,
                opacity=0.35 if base else 1.0,
                line=dict(color=color, width=12 if base else 2.5, dash=_recipe_dash(r)),
                hovertemplate=f"{name}<br>%{{x}}: %{{y:.5g}}<extra></extra>",
            ),
            **where,
        )
        if ref is None or base:
            continue
        rel = [
            b / a - 1 if a and math.isfinite(a) and math.isfinite(b) else None
            for a, b in zip(ref.losses, r.losses, strict=True)
        ]
        fig.add_trace(
            go.Scatter(
                x=list(range(len(rel))),
                y=rel,
                mode="lines",
                name=name,
                legendgroup=r.recipe,
                showlegend=False,
                line=dict(color=color, width=2.5, dash=_recipe_dash(r)),
                hovertemplate=f"{name}<br>%{{x}}: %{{y:+.3~p}}<extra></extra>",
            ),
            row=2,
            col=1,
        )
    if ref is None:
        fig.update_yaxes(title=lab["loss"], **value_log_axis([v for r in results for v in r.losses]))
        fig.update_xaxes(title=lab["step"])
        return fig
    fig.add_hline(y=0, line=dict(color=autocast_color(ref.dtype), width=6), opacity=0.35, row=2, col=1)
    fig.update_yaxes(title=lab["loss"], **value_log_axis([v for r in results for v in r.losses]), row=1, col=1)
    fig.update_yaxes(
        title=lab["vs_reference"].format(reference=lab.get(reference, reference)), tickformat=".3~p", row=2, col=1
    )
    fig.update_xaxes(title=lab["step"], row=2, col=1)
    return fig


def _recipe_dash(r: RecipeResult) -> str:
    """fp16 without a scaler is the recipe that should have one: dashed."""
    return "dash" if r.dtype == "fp16" and not r.scaler else "solid"
