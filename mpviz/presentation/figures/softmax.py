"""Figures of the softmax lesson: probabilities per method and format, their error, error sweeps, exp curves."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from mpviz.presentation.figures.style import figure, value_log_axis
from mpviz.presentation.palette import dtype_color, text_color

if TYPE_CHECKING:
    from mpviz.softmax import Comparison
    from mpviz.softmax_scale import ExpCurve, Sweep

# Methods keep their format's colour and differ by bar pattern / line dash / marker.
SOFTMAX_PATTERNS = {"naive": "/", "stable": "", "torch": ".", "upcast": "x"}
SOFTMAX_DASHES = {"naive": "dot", "stable": "solid", "torch": "dash", "upcast": "dashdot"}
SOFTMAX_SYMBOLS = {"naive": "circle-open", "stable": "circle", "torch": "diamond", "upcast": "x-thin-open"}
KEY_COLOR = "#555555"  # legend entries that stand for a method, whatever the format's colour
# Legend across the top of the figure (the container, not the plot: a legend that wraps to three rows on a phone
# pushes the plot down instead of running off the top), clear of the tick labels and axis titles below.
TOP_LEGEND = dict(orientation="h", yref="container", y=1, yanchor="top", x=0, itemclick=False, itemdoubleclick=False)
ERROR_ROW_TICKS = 5  # tick labels on one ~170 px error panel: 16 px labels need ~30 px apiece
LABEL_ROW_PX = 26  # vertical distance between stacked labels: one line of presenter-size (18 px) text and a gap


def _softmax_plottable(values, positive: bool = False) -> list:
    """Plotly gaps for values a (log) axis cannot show: nan, ±inf and, with positive=True, values ≤ 0."""
    return [v if v == v and abs(v) != float("inf") and (v > 0 or not positive) else None for v in values]


def _method_key(fig: go.Figure, methods, labels: dict, style) -> None:
    """Legend entries that explain the method encoding once (a grey sample of `style(method)` each), not once
    per format."""
    for m in methods:
        fig.add_trace(go.Scatter(x=[None], y=[None], name=labels["methods"].get(m, m), **style(m)))


def softmax_bars(comparison: Comparison, max_bars: int = 48, log_y: bool = False, *, labels: dict) -> go.Figure:
    """One panel per format: grouped bars per method, float64 as black dashes, ✕ where an output is nan/inf.

    `comparison` is a `mpviz.softmax.Comparison`. Rows longer than `max_bars` show the `max_bars` entries with
    the largest float64 probability (in index order). With `log_y` a probability flushed to 0 has no bar. Each
    panel's y title names its format; the legend sits above the panels, clear of the tick labels below.
    """
    lab = labels
    ref = comparison.reference
    keep = sorted(sorted(range(len(ref)), key=lambda i: -ref[i])[:max_bars])
    x = [str(i) for i in keep]
    formats = list(dict.fromkeys(v.format for v in comparison.variants))
    fig = figure(height=210 * len(formats) + 140, barmode="group", bargap=0.25, legend=TOP_LEGEND)
    fig.set_subplots(rows=len(formats), cols=1, shared_xaxes=True, vertical_spacing=0.05)
    for row, fmt in enumerate(formats, start=1):
        for v in (v for v in comparison.variants if v.format == fmt):
            method = lab["methods"].get(v.method, v.method)
            p = [v.probs[i] for i in keep]
            fig.add_trace(
                go.Bar(
                    x=x,
                    y=_softmax_plottable(p, positive=log_y),
                    name=method,
                    legendgroup=v.method,
                    showlegend=row == 1,
                    marker=dict(color=dtype_color(fmt), pattern_shape=SOFTMAX_PATTERNS.get(v.method, "")),
                    hovertemplate=f"{method} · {fmt}<br>%{{x}}: %{{y:.6g}}<extra></extra>",
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
                        hovertemplate=f"{method} · {fmt}<br>%{{x}}: %{{text}}<extra></extra>",
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
        shown = [ref[i] for i in keep] + [v.probs[i] for v in comparison.variants if v.format == fmt for i in keep]
        axis = value_log_axis(shown) if log_y else dict(type="linear")
        fig.update_yaxes(title_text=lab["prob_row"].format(format=fmt), **axis, row=row, col=1)
    fig.update_xaxes(type="category")
    fig.update_xaxes(title_text=lab["index"], row=len(formats), col=1)
    return fig


def _spread(n: int, k: int) -> list[int]:
    """k indices spread evenly over range(n), first and last included (all of them when n ≤ k)."""
    if n <= k:
        return list(range(n))
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def softmax_errors(comparison: Comparison, max_points: int = 300, *, labels: dict) -> go.Figure:
    """How far each probability is from float64: |p − p₆₄| / p₆₄ against p₆₄, log–log, one panel per format.

    One marker per entry and method (methods by symbol, formats by colour). Entries float64 gives 0 (masked)
    have no relative error and are left out, so are outputs equal to float64 (nothing to draw on a log axis)
    and nan/inf ones (the bars chart marks those); a probability flushed to 0 sits at exactly 1 (100 %).
    Rows longer than `max_points` show that many entries, spread evenly from the least to the most probable.
    """
    lab = labels
    ref = comparison.reference
    by_prob = sorted((i for i, r in enumerate(ref) if r > 0), key=lambda i: ref[i])
    picked = [by_prob[j] for j in _spread(len(by_prob), max_points)]
    formats = list(dict.fromkeys(v.format for v in comparison.variants))
    methods = list(dict.fromkeys(v.method for v in comparison.variants))
    fig = figure(height=190 * len(formats) + 150, legend=TOP_LEGEND)
    fig.set_subplots(rows=len(formats), cols=1, shared_xaxes=True, vertical_spacing=0.05)
    for row, fmt in enumerate(formats, start=1):
        errors = []
        for v in (v for v in comparison.variants if v.format == fmt):
            name = f"{fmt} · {lab['methods'].get(v.method, v.method)}"
            rel = [abs(v.probs[i] - ref[i]) / ref[i] for i in picked]
            errors += _softmax_plottable(rel, positive=True)
            fig.add_trace(
                go.Scatter(
                    x=[ref[i] for i in picked],
                    y=_softmax_plottable(rel, positive=True),
                    mode="markers",
                    name=name,
                    showlegend=False,
                    marker=dict(symbol=SOFTMAX_SYMBOLS.get(v.method, "circle"), size=7, color=dtype_color(fmt)),
                    customdata=picked,
                    hovertemplate=f"{name}<br>%{{customdata}}: p₆₄ %{{x:.3g}} → %{{y:.3g}}<extra></extra>",
                ),
                row=row,
                col=1,
            )
        axis = value_log_axis(errors, max_ticks=ERROR_ROW_TICKS)
        fig.update_yaxes(title_text=lab["error_row"].format(format=fmt), **axis, row=row, col=1)
    _method_key(
        fig,
        methods,
        lab,
        style=lambda m: dict(mode="markers", marker=dict(symbol=SOFTMAX_SYMBOLS.get(m, "circle"), color=KEY_COLOR)),
    )
    fig.update_xaxes(**value_log_axis([ref[i] for i in picked]))  # every row's: shared axes must agree on their type
    fig.update_xaxes(title_text=lab["reference_prob"], row=len(formats), col=1)
    return fig


def _staggered_labels(fig: go.Figure, marks: list[tuple[float, str, str]], x_log: bool, x_range) -> None:
    """Text labels at the top of the plot for vertical marks (x, text, colour), one row each from the top,
    growing towards the middle of the axis so none runs off the plot."""
    lo, hi = (math.log10(v) for v in x_range) if x_log else x_range
    for i, (x, label, color) in enumerate(marks):
        pos = math.log10(x) if x_log else x
        fig.add_annotation(
            x=pos,
            y=1,
            xref="x",
            yref="paper",
            yanchor="top",
            yshift=-LABEL_ROW_PX * i,
            xanchor="right" if pos > (lo + hi) / 2 else "left",
            text=label,
            showarrow=False,
            font=dict(color=color),
            bgcolor="rgba(255,255,255,0.8)",
        )


def softmax_sweep(sweep: Sweep, metric: str = "max_rel_error", *, labels: dict) -> go.Figure:
    """Error (a `SweepCurve` field: max_abs_error | max_rel_error | kl) vs scale, log–log, one line per
    format × method; ✕ on a line where the output was nan/inf, a dashed vertical where each arithmetic dtype's
    exp overflows for this row (`sweep.overflow_scale`), labelled in rows of their own at the top.

    The legend is a key (formats by colour, methods by dash), not one entry per line: twelve entries would
    squeeze the plot on a narrow screen.
    """
    lab = labels
    xs = list(sweep.scales)
    values = [v for c in sweep.curves for v in _softmax_plottable(getattr(c, metric), positive=True) if v]
    top = max(values, default=1.0) * 3
    bottom = max(min(values, default=1e-8), 1e-12) / 3  # errors below 1e-12 leave the plot (visual floor)
    fig = figure(height=560, legend=TOP_LEGEND)
    for c in sweep.curves:
        name = f"{c.format} · {lab['methods'].get(c.method, c.method)}"
        color = dtype_color(c.format)
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=_softmax_plottable(getattr(c, metric), positive=True),
                mode="lines",
                name=name,
                showlegend=False,
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
                    showlegend=False,
                    hovertemplate=f"{name}<br>%{{x:.4g}}: {lab['failed']}<extra></extra>",
                )
            )
    for fmt in dict.fromkeys(c.format for c in sweep.curves):
        fig.add_trace(
            go.Scatter(x=[None], y=[None], mode="lines", name=fmt, line=dict(color=dtype_color(fmt), width=4))
        )
    _method_key(
        fig,
        dict.fromkeys(c.method for c in sweep.curves),
        lab,
        style=lambda m: dict(mode="lines", line=dict(color=KEY_COLOR, dash=SOFTMAX_DASHES.get(m, "solid"), width=2.5)),
    )
    marks = sorted((x, d) for d, x in sweep.overflow_scale.items() if x is not None and xs[0] <= x <= xs[-1])
    texts = []
    for x, dtype in marks:
        near = [d for x2, d in marks if abs(x2 - x) <= 0.02 * x]  # one label for thresholds that coincide
        label = lab["overflow_line"].format(dtype=", ".join(near))
        fig.add_trace(
            go.Scatter(
                x=[x, x],
                y=[bottom, top],
                mode="lines",
                line=dict(color=dtype_color(dtype), dash="dash", width=2),
                showlegend=False,
                hovertemplate=f"{label}: %{{x:.4g}}<extra></extra>",
            )
        )
        if near[0] == dtype:
            texts.append((x, label, text_color(dtype_color(dtype))))
    _staggered_labels(fig, texts, x_log=True, x_range=(xs[0], xs[-1]))
    x_range = [math.log10(xs[0]), math.log10(xs[-1])]
    fig.update_xaxes(**value_log_axis(xs), title=lab["scale"], range=x_range)
    # head room above the ✕ row for the threshold labels: a decade and a bit on the log axis
    y_range = [math.log10(bottom), math.log10(top) + 1.2]
    fig.update_yaxes(type="log", title=lab["error"], exponentformat="power", range=y_range)
    return fig


def softmax_exp(curves: Sequence[ExpCurve], *, labels: dict) -> go.Figure:
    """exp(x) per dtype on a log axis (`mpviz.softmax_scale.exp_curves`), each dtype's max as a dotted horizontal
    line, ✕ where exp first gives inf (on the max line), ○ where it first gives 0 (at its smallest value).

    The curves coincide where finite, so wider-range dtypes are drawn first and thicker: each shows as a band
    around the narrower ones, ending where its own exp overflows or flushes to zero. Max lines that lie within
    a factor 10 of each other (float32's and bfloat16's) share one label, at the left end, away from the ✕.
    """
    lab = labels
    fig = figure(height=520, legend=TOP_LEGEND)
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
                mode="lines",
                line=dict(color=color, dash="dot", width=1.5),
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
    groups: list[list] = []  # max lines within a factor 10: one label
    for c in sorted(spans, key=lambda c: c.thresholds.max):
        if groups and c.thresholds.max / groups[-1][0].thresholds.max < 10:
            groups[-1].append(c)
        else:
            groups.append([c])
    for group in groups:
        fig.add_annotation(
            x=lo,
            y=math.log10(max(c.thresholds.max for c in group)),
            xanchor="left",
            yanchor="bottom",
            text=lab["max_line"].format(dtype=", ".join(c.dtype for c in group)),
            showarrow=False,
            font=dict(color=text_color(dtype_color(group[0].dtype))),
        )
    fig.update_xaxes(title=lab["x"])
    fig.update_yaxes(type="log", title=lab["exp"], exponentformat="power")
    return fig
