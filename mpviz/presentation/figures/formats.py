"""Figures of the number-formats lesson: bit boxes, number lines, ranges, exponent histograms."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from mpviz.presentation.figures.style import figure
from mpviz.presentation.palette import FIELD_COLORS, dtype_color, ink

if TYPE_CHECKING:
    from mpviz.formats import Encoding, FormatSpec, NumberLine


def bit_layout_figure(enc: Encoding, *, labels: dict) -> go.Figure:
    """One box per bit of a `mpviz.formats.Encoding`, MSB left, coloured by field (1 = solid, 0 = pale).

    The decoded value is in the title. An invisible marker sits on each box with customdata = bit position
    (0 = least significant), so `st.plotly_chart(..., on_select="rerun")` can report which bit was clicked.
    """
    lab = labels
    n = len(enc.bits)
    widths = (
        ("sign", len(enc.bits) - len(enc.exponent_bits) - len(enc.mantissa)),
        ("exponent", len(enc.exponent_bits)),
        ("mantissa", len(enc.mantissa)),
    )
    field_of = [name for name, w in widths for _ in range(w)]  # per box, MSB first
    font = 18 if n <= 16 else 13 if n <= 32 else 9
    fig = figure(
        title=lab["title"].format(format=enc.format, value=repr(enc.value), cls=enc.cls),
        height=150,
        showlegend=False,
        xaxis=dict(visible=False, range=[-0.6, n - 0.4], fixedrange=True),
        yaxis=dict(visible=False, range=[-0.15, 1.65], fixedrange=True),
        margin=dict(l=10, r=10, t=45, b=5),
    )
    for i, (bit, field) in enumerate(zip(enc.bits, field_of, strict=True)):
        color = FIELD_COLORS[field]
        fig.add_shape(
            type="rect",
            x0=i - 0.46,
            x1=i + 0.46,
            y0=0,
            y1=1,
            line=dict(color=color, width=2),
            fillcolor=color,
            opacity=1.0 if bit == "1" else 0.18,
        )
        fig.add_annotation(
            x=i,
            y=0.5,
            text=bit,
            showarrow=False,
            font=dict(size=font, color=ink(color) if bit == "1" else "#222222"),
        )
    start = 0
    for name, w in widths:
        if w:
            fig.add_annotation(
                x=start + (w - 1) / 2,
                y=1.3,
                text=lab[name],
                showarrow=False,
                font=dict(color=FIELD_COLORS[name], size=14),
            )
        start += w
    positions = list(range(n - 1, -1, -1))
    fig.add_trace(
        go.Scatter(
            x=list(range(n)),
            y=[0.5] * n,
            mode="markers",
            marker=dict(size=22, symbol="square", opacity=0),
            customdata=positions,
            hovertemplate=f"{lab['bit']} %{{customdata}}<extra></extra>",
        )
    )
    return fig


def _pale(color: str, alpha: float) -> str:
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def number_line_figure(
    lines: Sequence[NumberLine], lo: float, hi: float, value: float | None = None, *, labels: dict
) -> go.Figure:
    """Stacked number lines over [lo, hi] (one row per `mpviz.formats.NumberLine`, first on top): alternating
    shaded bars are the round-to-nearest bins, ticks the representable values; a dashed line marks `value`."""
    lab = labels
    rows = [line.format for line in lines]
    fig = figure(
        title=lab.get("number_line_title", ""),
        height=110 + 60 * len(lines),
        showlegend=False,
        barmode="overlay",
        yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=rows),
        xaxis=dict(range=[lo, hi], exponentformat="power"),
    )
    for line in lines:
        color = dtype_color(line.format)
        if line.complete and line.edges is not None and len(line.values):
            left, right = line.edges[:-1], line.edges[1:]
            shade = [_pale(color, 0.35 if i % 2 else 0.15) for i in range(len(left))]
            fig.add_trace(
                go.Bar(
                    y=[line.format] * len(left),
                    x=right - left,
                    base=left,
                    orientation="h",
                    marker_color=shade,
                    width=0.6,
                    hovertemplate=lab["bin_hover"].format(start="%{base:.9g}", width="%{x:.3g}") + "<extra></extra>",
                )
            )
        if not line.count:
            mid = lo / 2 + hi / 2  # (lo + hi) / 2 may overflow
            fig.add_annotation(
                x=mid, y=line.format, showarrow=False, font=dict(size=13), text=lab["outside"], bgcolor="white"
            )
        elif line.complete:
            fig.add_trace(
                go.Scatter(
                    x=line.values,
                    y=[line.format] * len(line.values),
                    mode="markers",
                    marker=dict(symbol="line-ns-open", size=22, color=color, line=dict(width=2, color=color)),
                    hovertemplate="%{x:.17g}<extra>" + line.format + "</extra>",
                )
            )
        else:  # a pale band: the values are closer together than pixels (a thick line: hi - lo may overflow)
            fig.add_trace(
                go.Scatter(
                    x=[line.lo, line.hi],
                    y=[line.format] * 2,
                    mode="lines",
                    line=dict(color=_pale(color, 0.25), width=26),
                    hoverinfo="skip",
                )
            )
            fig.add_annotation(
                x=line.lo / 2 + line.hi / 2,
                y=line.format,
                showarrow=False,
                font=dict(size=13),
                text=lab["too_dense"].format(count=line.count),
                bgcolor="rgba(255,255,255,0.85)",  # readable where the value's dashed line crosses it
            )
    if value is not None and lo <= value <= hi:
        fig.add_vline(  # labelled above the plot area, clear of the rows
            x=value,
            line=dict(color="#333333", dash="dash"),
            annotation=dict(text=lab["value"], yref="paper", y=1.0, yanchor="bottom", showarrow=False),
        )
    return fig


def _range_rows(fig: go.Figure, specs: Sequence[FormatSpec], yaxis: str, lab: dict) -> None:
    """Subnormal (pale) and normal (solid) log2 ranges of each spec as horizontal bars, max marked."""
    for spec in specs:
        color = dtype_color(spec.name)
        lo_sub, lo_norm, hi = (
            math.log2(spec.smallest_subnormal),
            math.log2(spec.smallest_normal),
            math.log2(spec.max),
        )
        if spec.has_subnormals:
            fig.add_trace(
                go.Bar(
                    y=[spec.name],
                    x=[lo_norm - lo_sub],
                    base=[lo_sub],
                    orientation="h",
                    yaxis=yaxis,
                    showlegend=False,
                    marker_color=_pale(color, 0.3),
                    width=0.55,
                    hovertemplate=f"{lab['subnormal']}: 2^{lo_sub:g} … 2^{lo_norm:g}<extra>{spec.name}</extra>",
                )
            )
        fig.add_trace(
            go.Bar(
                y=[spec.name],
                x=[hi - lo_norm],
                base=[lo_norm],
                orientation="h",
                yaxis=yaxis,
                marker_color=color,
                width=0.55,
                showlegend=False,
                hovertemplate=f"{lab['normal']}: 2^{lo_norm:g} … 2^{hi:.4f}<extra>{spec.name}</extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[hi],
                y=[spec.name],
                yaxis=yaxis,
                mode="markers",
                marker=dict(symbol="x", size=12, color="#222222"),
                showlegend=False,
                hovertemplate=f"{lab['max']} = {spec.max:.6g}<extra>{spec.name}</extra>",
            )
        )


def range_figure(specs: Sequence[FormatSpec], markers: dict[str, float] | None = None, *, labels: dict) -> go.Figure:
    """Each `FormatSpec`'s subnormal and normal range on a log2 axis (max marked ×), with labelled vertical
    lines at log2|x| of every finite non-zero marker (the current value, a tensor's extremes …), named in a
    legend below the axis (so it never meets the title, whatever the width)."""
    lab = labels
    names = [s.name for s in specs]
    shown = {name: x for name, x in (markers or {}).items() if x and math.isfinite(x)}
    legend_rows = len(shown)  # at most one row per entry, on the narrowest screen
    fig = figure(
        title=lab.get("range_title", ""),
        height=110 + 45 * len(specs) + 24 * legend_rows,
        barmode="overlay",
        xaxis=dict(title=lab["log2"]),
        yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=names),
        showlegend=bool(shown),
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, x=0),
        margin=dict(l=10, r=10, t=40 if lab.get("range_title") else 10, b=60 + 24 * legend_rows),
    )
    _range_rows(fig, specs, "y", lab)
    dashes = ("dash", "dot", "dashdot", "longdash")
    for i, (name, x) in enumerate(shown.items()):  # a vertical line across all rows, named in the legend
        fig.add_trace(
            go.Scatter(
                x=[math.log2(abs(x))] * 2,
                y=[names[0], names[-1]],
                mode="lines",
                name=f"{name}: {x:.4g}",
                line=dict(color="#333333", dash=dashes[i % len(dashes)], width=2),
                showlegend=True,
            )
        )
    return fig


def format_exponent_figure(
    name: str, log2_hist: Sequence[tuple[int, int]], specs: Sequence[FormatSpec], *, labels: dict
) -> go.Figure:
    """Top: counts of a tensor's elements per floor(log2|x|) (`TensorStats.log2_hist`). Bottom, same x axis:
    each spec's subnormal / normal range, so what falls outside a format's range is read off directly."""
    lab = labels
    exps = [e for e, _ in log2_hist]
    counts = [c for _, c in log2_hist]
    fig = figure(
        title=lab["hist_title"].format(name=name) if "hist_title" in lab else "",
        height=260 + 45 * len(specs),
        showlegend=False,
        barmode="overlay",
        xaxis=dict(title=lab["log2"], anchor="y2"),
        yaxis=dict(domain=[0.45, 1.0], title=lab["count"]),
        yaxis2=dict(
            domain=[0.0, 0.36],
            autorange="reversed",
            categoryorder="array",
            categoryarray=[s.name for s in specs],
        ),
    )
    fig.add_trace(
        go.Bar(
            x=[e + 0.5 for e in exps],
            y=counts,
            width=1.0,
            marker_color="#555555",
            hovertemplate="[2^%{customdata}, 2^(%{customdata}+1)): %{y}<extra></extra>",
            customdata=exps,
        )
    )
    _range_rows(fig, specs, "y2", lab)
    # Show the histogram and every range no wider than 2^64 whole; wider ones (bfloat16) run off the edges.
    narrow = [s for s in specs if math.log2(s.max / s.smallest_subnormal) <= 64] or list(specs)
    lo = min([*exps, *(math.log2(s.smallest_subnormal) for s in narrow)]) - 2
    hi = max([e + 1 for e in exps] + [math.log2(s.max) for s in narrow]) + 2
    fig.update_xaxes(range=[lo, hi])
    return fig
