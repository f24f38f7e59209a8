"""Figures of the softmax lesson: probabilities per method and format, error sweeps, exp curves."""

from __future__ import annotations

import plotly.graph_objects as go

from view.figures.style import dtype_color, figure

# Methods keep their format's colour and differ by bar pattern / line dash.
SOFTMAX_PATTERNS = {"naive": "/", "stable": "", "torch": ".", "upcast": "x"}
SOFTMAX_DASHES = {"naive": "dot", "stable": "solid", "torch": "dash", "upcast": "dashdot"}


def _softmax_plottable(values, positive: bool = False) -> list:
    """Plotly gaps for values a (log) axis cannot show: nan, ±inf and, with positive=True, values ≤ 0."""
    return [v if v == v and abs(v) != float("inf") and (v > 0 or not positive) else None for v in values]


def softmax_bars(comparison, max_bars: int = 48, log_y: bool = False, *, labels: dict) -> go.Figure:
    """One panel per format: grouped bars per method, float64 as black dashes, ✕ where an output is nan/inf.

    `comparison` is a `mpviz.softmax.Comparison`. Rows longer than `max_bars` show the `max_bars` entries with
    the largest float64 probability (in index order). With `log_y` a probability flushed to 0 has no bar.
    """
    lab = labels
    ref = comparison.reference
    keep = sorted(sorted(range(len(ref)), key=lambda i: -ref[i])[:max_bars])
    x = [str(i) for i in keep]
    formats = list(dict.fromkeys(v.format for v in comparison.variants))
    fig = figure(title=lab["bars_title"], height=230 * len(formats) + 130, barmode="group", bargap=0.25)
    fig.set_subplots(rows=len(formats), cols=1, shared_xaxes=True, vertical_spacing=0.06, subplot_titles=formats)
    for row, fmt in enumerate(formats, start=1):
        for v in (v for v in comparison.variants if v.format == fmt):
            p = [v.probs[i] for i in keep]
            fig.add_trace(
                go.Bar(
                    x=x,
                    y=_softmax_plottable(p, positive=log_y),
                    name=lab["methods"].get(v.method, v.method),
                    legendgroup=v.method,
                    showlegend=row == 1,
                    marker=dict(color=dtype_color(fmt), pattern_shape=SOFTMAX_PATTERNS.get(v.method, "")),
                    hovertemplate=f"{v.method} · {fmt}<br>%{{x}}: %{{y:.6g}}<extra></extra>",
                ),
                row=row,
                col=1,
            )
            bad = [(xi, pi) for xi, pi in zip(x, p, strict=True) if pi != pi or abs(pi) == float("inf")]
            if bad:
                fig.add_trace(
                    go.Scatter(
                        x=[b[0] for b in bad],
                        y=[max(ref)] * len(bad),
                        mode="markers",
                        marker=dict(symbol="x", size=14, color=dtype_color(fmt)),
                        name=lab["nonfinite"],
                        legendgroup="nonfinite",
                        showlegend=False,
                        text=[str(b[1]) for b in bad],
                        hovertemplate=f"{v.method} · {fmt}<br>%{{x}}: %{{text}}<extra></extra>",
                    ),
                    row=row,
                    col=1,
                )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=[ref[i] for i in keep],
                mode="markers",
                marker=dict(symbol="line-ew", size=26, line=dict(width=3, color=dtype_color("float64"))),
                name=lab["reference"],
                legendgroup="reference",
                showlegend=row == 1,
                hovertemplate="float64<br>%{x}: %{y:.6g}<extra></extra>",
            ),
            row=row,
            col=1,
        )
        fig.update_yaxes(title_text=lab["prob"], type="log" if log_y else "linear", row=row, col=1)
    fig.update_xaxes(type="category", title_text=lab["index"], row=len(formats), col=1)
    fig.update_layout(legend=dict(orientation="h", y=-0.06, yanchor="top", x=0), margin=dict(b=90))
    return fig


def softmax_sweep(sweep, metric: str = "max_rel_error", *, labels: dict) -> go.Figure:
    """Error (a `SweepCurve` field: max_abs_error | max_rel_error | kl) vs scale, log–log, one line per
    format × method; ✕ on a line where the output was nan/inf, a dashed vertical where each arithmetic dtype's
    exp overflows for this row (`sweep.overflow_scale`)."""
    lab = labels
    xs = list(sweep.scales)
    values = [v for c in sweep.curves for v in _softmax_plottable(getattr(c, metric), positive=True) if v]
    top = max(values, default=1.0) * 3
    bottom = max(min(values, default=1e-8), 1e-12) / 3  # errors below 1e-12 leave the plot (visual floor)
    fig = figure(title=lab["sweep_title"], height=560)
    for c in sweep.curves:
        name = f"{c.format} · {lab['methods'].get(c.method, c.method)}"
        color = dtype_color(c.format)
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=_softmax_plottable(getattr(c, metric), positive=True),
                mode="lines",
                name=name,
                legendgroup=name,
                line=dict(color=color, dash=SOFTMAX_DASHES.get(c.method, "solid"), width=2.5),
                hovertemplate=f"{name}<br>%{{x:.4g}} → %{{y:.3g}}<extra></extra>",
            )
        )
        failed = [x for x, bad in zip(xs, c.nonfinite, strict=True) if bad]
        if failed:
            fig.add_trace(
                go.Scatter(
                    x=failed,
                    y=[top] * len(failed),
                    mode="markers",
                    marker=dict(symbol="x", size=9, color=color),
                    name=f"{name}: {lab['failed']}",
                    legendgroup=name,
                    showlegend=False,
                    hovertemplate=f"{name}<br>%{{x:.4g}}: {lab['failed']}<extra></extra>",
                )
            )
    marks = sorted((x, d) for d, x in sweep.overflow_scale.items() if x is not None and xs[0] <= x <= xs[-1])
    for i, (x, dtype) in enumerate(marks):
        near = [d for x2, d in marks if abs(x2 - x) <= 0.02 * x]  # one label for thresholds that coincide
        label = lab["overflow_line"].format(dtype=", ".join(near))
        fig.add_trace(
            go.Scatter(
                x=[x, x],
                y=[bottom, top],
                mode="lines+text",
                line=dict(color=dtype_color(dtype), dash="dash", width=2),
                text=[label if near[0] == dtype else "", ""],
                textposition="top left" if i % 2 == 0 else "top right",
                textfont=dict(color=dtype_color(dtype)),
                showlegend=False,
                hovertemplate=f"{label}: %{{x:.4g}}<extra></extra>",
            )
        )
    fig.update_xaxes(type="log", title=lab["scale"])
    fig.update_yaxes(type="log", title=lab["error"], exponentformat="power")
    return fig


def softmax_exp(curves, *, labels: dict) -> go.Figure:
    """exp(x) per dtype on a log axis (`mpviz.softmax.exp_curves`), each dtype's max as a dotted horizontal
    line, ✕ where exp first gives inf (on the max line), ○ where it first gives 0 (at its smallest value).

    The curves coincide where finite, so wider-range dtypes are drawn first and thicker: each shows as a band
    around the narrower ones, ending where its own exp overflows or flushes to zero.
    """
    lab = labels
    fig = figure(title=lab["exp_title"], height=520)
    lo, hi = curves[0].x[0], curves[0].x[-1]
    spans = sorted(curves[1:], key=lambda c: c.thresholds.underflow_from - c.thresholds.overflow_from)
    for i, c in enumerate([*spans, curves[0]]):
        color = dtype_color(c.dtype)
        truth = c.dtype == "float64"
        width = 1.5 if truth else 3 + 4 * (len(spans) - 1 - i)
        fig.add_trace(
            go.Scatter(
                x=list(c.x),
                y=_softmax_plottable(c.y, positive=True),
                mode="lines",
                name=c.dtype,
                line=dict(color=color, width=width, dash="dot" if truth else "solid"),
                hovertemplate=f"{c.dtype}: exp(%{{x:.6g}}) = %{{y:.4g}}<extra></extra>",
            )
        )
        if truth:
            continue
        t = c.thresholds
        fig.add_trace(
            go.Scatter(
                x=[lo, hi],
                y=[t.max, t.max],
                mode="lines+text",
                line=dict(color=color, dash="dot", width=1.5),
                text=[lab["max_line"].format(dtype=c.dtype), ""][:: 1 if i % 2 == 0 else -1],
                textposition="top right" if i % 2 == 0 else "top left",
                textfont=dict(color=color),
                showlegend=False,
                hoverinfo="skip",
            )
        )
        smallest = min((y for y in c.y if y > 0), default=t.max)
        over = lab["overflow_point"].format(dtype=c.dtype, x=f"{t.overflow_from:.8g}")
        under = lab["underflow_point"].format(dtype=c.dtype, x=f"{t.underflow_from:.8g}")
        fig.add_trace(
            go.Scatter(
                x=[t.overflow_from, t.underflow_from],
                y=[t.max, smallest],
                mode="markers",
                marker=dict(symbol=["x", "circle-open"], size=16, color=color, line=dict(width=3, color=color)),
                text=[over, under],
                showlegend=False,
                hovertemplate="%{text}<extra></extra>",
            )
        )
    fig.update_xaxes(title=lab["x"])
    fig.update_yaxes(type="log", title=lab["exp"], exponentformat="power")
    return fig
