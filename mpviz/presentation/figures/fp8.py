"""Figures of the fp8 lesson: what storing the block's input x did to each element, and the underflow share of
every quantised tensor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from mpviz.fp8.quantize import OUTCOMES, QuantizedTensor
from mpviz.presentation.figures.style import figure
from mpviz.presentation.palette import FALLBACK_COLOR, FIELD_COLORS, dtype_color

# One colour per outcome (mpviz.fp8.quantize.OUTCOMES order): zero given, kept, flushed to zero, saturated.
OUTCOME_COLORS = ("#ffffff", "#d9d9d9", FIELD_COLORS["exponent"], FIELD_COLORS["sign"])


def outcome_map_figure(codes: np.ndarray, *, labels: Mapping) -> go.Figure:
    """One cell per element of x (rows = tokens, columns = features), coloured by what storing it did. The legend
    is one invisible marker per outcome (a heatmap has no legend of its own); `labels` holds the words: "outcomes"
    (per OUTCOMES name), "x_title", "y_title", "hover"."""
    n = len(OUTCOMES)
    scale = [[edge, OUTCOME_COLORS[i]] for i in range(n) for edge in (i / n, (i + 1) / n)]
    names = np.array([labels["outcomes"][o] for o in OUTCOMES])[codes]
    fig = figure(
        height=340,
        xaxis=dict(title=labels["x_title"], constrain="domain"),
        yaxis=dict(title=labels["y_title"], autorange="reversed", scaleanchor="x"),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0),
    )
    fig.add_heatmap(
        z=codes,
        zmin=-0.5,
        zmax=n - 0.5,
        colorscale=scale,
        showscale=False,
        customdata=names,
        hovertemplate=labels["hover"],
        xgap=1,
        ygap=1,
    )
    for i, name in enumerate(OUTCOMES):
        fig.add_scatter(
            x=[None],
            y=[None],
            mode="markers",
            name=labels["outcomes"][name],
            marker=dict(color=OUTCOME_COLORS[i], size=12, symbol="square", line=dict(color="#555555", width=1)),
        )
    return fig


def underflow_figure(tensors: Sequence[QuantizedTensor], *, labels: Mapping) -> go.Figure:
    """Per quantised tensor, the share of its non-zero elements flushed to zero and the share saturated; bars in
    the colour of the element format. `labels`: "underflow", "overflow", "share_title"."""
    fig = figure(
        height=380,
        barmode="group",
        yaxis=dict(title=labels["share_title"], tickformat=".0%", rangemode="tozero"),
        xaxis=dict(tickangle=-60, automargin=True),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0),
    )
    names = [t.name for t in tensors]
    colors = [dtype_color(t.format) if dtype_color(t.format) != FALLBACK_COLOR else "#7b1fa2" for t in tensors]
    fig.add_bar(name=labels["underflow"], x=names, y=[t.underflow for t in tensors], marker=dict(color=colors))
    fig.add_bar(
        name=labels["overflow"],
        x=names,
        y=[t.overflow for t in tensors],
        marker=dict(color=colors, pattern_shape="/", line=dict(color="#333333", width=1)),
    )
    return fig
