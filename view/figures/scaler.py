"""Figures of the GradScaler lesson: the scale step by step, loss, lost gradients, scaled exponents."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from view.figures.style import autocast_color, dtype_color, figure

# Zones of a format's range on the exponent axis (histogram backgrounds).
SCALER_ZONE_COLORS = {"underflow": "#bbbbbb", "subnormal": "#f2c14e", "overflow": "#e76f51"}
# Autocast choice → the dtype whose colour draws it.


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


def scale_trace_figure(steps, *, labels: dict, total_steps: int | None = None, max_annotations: int = 16) -> go.Figure:
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
            hovertemplate="step %{x}: %{y:g}<extra></extra>",
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
                    hovertemplate=f"{lab[key]} · step %{{x}}<extra></extra>",
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


def training_loss_figure(steps, *, labels: dict, total_steps: int | None = None) -> go.Figure:
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
    fig.update_yaxes(title=lab["loss"], type="log")
    fig.update_xaxes(**_step_axis(lab["step"], total_steps))
    return fig


def zero_fraction_figure(steps, *, labels: dict, dtype: str = "float16", total_steps: int | None = None) -> go.Figure:
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
    fig.update_yaxes(title=lab["zero"], tickformat=".2~%", rangemode="tozero")
    fig.update_xaxes(**_step_axis(lab["step"], total_steps))
    return fig


def scaled_gradient_histogram_figure(record, fmt, *, labels: dict) -> go.Figure:
    """Exponents of one step's float32 reference gradients, unscaled and × its scale, over `fmt`'s zones.

    `record` is a `StepRecord`, `fmt` a `mpviz.stats.FormatRange` (the autocast dtype's). A bar for exponent e
    spans [e, e+1) — |g| in [2^e, 2^(e+1)) — so the zone edges (log₂ of fmt's underflow point, smallest
    normal and overflow point) sit exactly where values start to flush, lose bits, or overflow.
    """
    lab = labels
    fig = figure(height=380, barmode="overlay", bargap=0, legend=dict(orientation="h", y=1.15))
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
    edges = {
        "underflow": (lo, math.log2(fmt.underflow_at)),
        "subnormal": (math.log2(fmt.underflow_at), math.log2(fmt.smallest_normal)),
        "overflow": (math.log2(fmt.overflow_at), hi),
    }
    for zone, (x0, x1) in edges.items():
        fig.add_vrect(
            x0=x0,
            x1=x1,
            fillcolor=SCALER_ZONE_COLORS[zone],
            opacity=0.35,
            line_width=0,
            layer="below",
            annotation_text=lab[zone].format(dtype=fmt.dtype),
            annotation_position="top left",
            annotation_font_size=12,
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
    fig.update_yaxes(title=lab["count"])
    return fig


def recipes_loss_figure(results, *, labels: dict) -> go.Figure:
    """Loss curves of `mpviz.scaler.RecipeResult`s on one chart, coloured by autocast dtype (dashed: no scaler
    where fp16 would want one). `labels` may rename recipes by their key."""
    lab = labels
    fig = figure(height=380, legend=dict(orientation="h", y=1.12))
    for r in results:
        dash = "dash" if r.dtype == "fp16" and not r.scaler else "solid"
        fig.add_trace(
            go.Scatter(
                x=list(range(len(r.losses))),
                y=_finite_or_none(r.losses),
                mode="lines",
                name=lab.get(r.recipe, r.recipe),
                line=dict(color=autocast_color(r.dtype), width=3, dash=dash),
            )
        )
    fig.update_yaxes(title=lab["loss"], type="log")
    fig.update_xaxes(title=lab["step"])
    return fig
