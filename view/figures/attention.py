"""Figures of the attention lesson: dataflow diagram, exponent histogram, heatmap, error bars."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from view.figures.style import LAYOUT, dtype_color, figure

# Where each landmark sits in the dataflow diagram: (column, row). Forward on top, its gradients underneath.
DATAFLOW_LAYOUT: dict[str, tuple[float, float]] = {
    "x": (0, 1),
    "x_norm": (1, 1),
    "q": (2, 2),
    "k": (2, 1),
    "v": (2, 0),
    "scores": (3, 1.5),
    "probs": (4, 1.5),
    "context": (5, 1),
    "out": (6, 1),
    "logits": (7, 1),
    "loss": (8, 1),
    "grad_q": (1.6, -1.2),
    "grad_k": (1.6, -2.2),
    "grad_v": (1.6, -3.2),
    "grad_scores": (3, -1.7),
    "grad_probs": (4.4, -1.7),
}
DATAFLOW_EDGES = (
    ("x", "x_norm"),
    ("x_norm", "q"),
    ("x_norm", "k"),
    ("x_norm", "v"),
    ("q", "scores"),
    ("k", "scores"),
    ("scores", "probs"),
    ("probs", "context"),
    ("v", "context"),
    ("context", "out"),
    ("x", "out"),
    ("out", "logits"),
    ("logits", "loss"),
    ("grad_probs", "grad_scores"),
    ("grad_scores", "grad_q"),
    ("grad_scores", "grad_k"),
    ("grad_probs", "grad_v"),
)


def dataflow_figure(dtypes: dict[str, str], current: str | None = None, title: str = "") -> go.Figure:
    """The layer as a graph of its landmark tensors, each box filled with its dtype's colour.

    `dtypes` maps landmark → dtype of the tensor the trace measured; landmarks missing from it (e.g. scores and
    probs under fused SDPA) are drawn hollow. `current` gets a thick outline.
    """
    fig = figure(title=title, height=360, showlegend=False)
    arrow = dict(
        xref="x",
        yref="y",
        axref="x",
        ayref="y",
        text="",
        showarrow=True,
        arrowhead=2,
        arrowwidth=1.2,
        arrowcolor="#aaaaaa",
        standoff=18,
        startstandoff=18,
    )
    fig.update_layout(  # one layout update: adding 17 annotations one by one costs ~40 ms per page run
        annotations=[
            dict(
                arrow,
                x=DATAFLOW_LAYOUT[b][0],
                y=DATAFLOW_LAYOUT[b][1],
                ax=DATAFLOW_LAYOUT[a][0],
                ay=DATAFLOW_LAYOUT[a][1],
            )
            for a, b in DATAFLOW_EDGES
        ]
    )
    names = list(DATAFLOW_LAYOUT)
    xs, ys = zip(*(DATAFLOW_LAYOUT[n] for n in names), strict=True)
    fills = [dtype_color(dtypes[n]) if n in dtypes else "white" for n in names]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers+text",
            text=names,
            textfont=dict(size=14),
            showlegend=False,
            textposition=["middle left" if n in ("grad_q", "grad_k", "grad_v") else "top center" for n in names],
            customdata=[dtypes.get(n, "—") for n in names],
            hovertemplate="%{text}: %{customdata}<extra></extra>",
            marker=dict(
                size=[34 if n == current else 24 for n in names],
                color=fills,
                symbol="square",
                line=dict(
                    width=[5 if n == current else 1.5 for n in names],
                    color=["#111111" if n == current else "#666666" for n in names],
                ),
            ),
        )
    )
    for dt in sorted(set(dtypes.values())):  # legend: one entry per dtype present
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=dt,
                showlegend=True,
                marker=dict(size=14, color=dtype_color(dt), symbol="square"),
            )
        )
    fig.update_layout(showlegend=True, legend=dict(orientation="h", y=-0.05))
    fig.update_xaxes(visible=False, range=[-0.6, 8.6])
    fig.update_yaxes(visible=False, range=[-3.8, 2.8])
    return fig


def exponent_histogram_figure(
    hist: tuple[tuple[int, int], ...], dtype: str, ranges: list, labels: dict | None = None
) -> go.Figure:
    """Counts of floor(log2|x|) as bars, above strips that show each format's zones on the same exponent axis.

    `ranges` are `mpviz.stats.FormatRange`s: per format, exponents below its underflow point round to zero,
    then subnormal, normal, and from its overflow point on ±inf (or saturation). The axis spans the data and the
    first (narrowest) format's zones; wider formats' zones run off the edges, which is the point.
    """
    lab = {
        "count": "elements",
        "exponent": "binary exponent  ⌊log₂|x|⌋",
        "underflow": "→ 0",
        "subnormal": "subnormal",
        "normal": "normal",
        "overflow": "→ inf",
        **(labels or {}),
    }
    n = len(ranges)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.72, 0.28], vertical_spacing=0.04)
    exps = [e for e, _ in hist]
    lo = min([*exps, math.floor(math.log2(ranges[0].underflow_at))]) - 3
    hi = max([*exps, math.ceil(math.log2(ranges[0].overflow_at))]) + 3
    fig.add_trace(
        go.Bar(
            x=exps,
            y=[c for _, c in hist],
            marker_color=dtype_color(dtype),
            name=dtype,
            hovertemplate="2^%{x}: %{y}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    zone_colors = {"underflow": "#bbbbbb", "subnormal": "#f2c14e", "normal": "#8fd694", "overflow": "#e76f51"}
    for i, r in enumerate(ranges):
        edges = [lo, math.log2(r.underflow_at), math.log2(r.smallest_normal), math.log2(r.overflow_at), hi]
        for (zone, color), x0, x1 in zip(zone_colors.items(), edges, edges[1:], strict=False):
            fig.add_trace(
                go.Bar(
                    x=[x1 - x0],
                    base=[x0],
                    y=[r.dtype],
                    orientation="h",
                    marker_color=color,
                    name=lab[zone],
                    showlegend=i == 0,
                    hovertemplate=f"{r.dtype} {lab[zone]}: 2^{x0:.1f} … 2^{x1:.1f}<extra></extra>",
                ),
                row=2,
                col=1,
            )
    fig.update_layout(
        **LAYOUT, height=380 + 24 * n, barmode="overlay", bargap=0.05, legend=dict(orientation="h", y=1.08)
    )
    fig.update_yaxes(title_text=lab["count"], row=1, col=1)
    fig.update_xaxes(title_text=lab["exponent"], range=[lo, hi], row=2, col=1)
    return fig


def heatmap_figure(matrix, title: str = "", colorbar: str = "", selected: tuple[int, int] | None = None) -> go.Figure:
    """A matrix as a heatmap, plus an invisible scatter over the cell centres so a click selects a cell.

    (Streamlit returns empty selections for go.Heatmap; a selected scatter point has x = column, y = row.)
    """
    m = np.asarray(matrix, dtype=np.float32)
    rows, cols = np.meshgrid(np.arange(m.shape[0]), np.arange(m.shape[1]), indexing="ij")
    fig = figure(title=title, height=min(640, 160 + 12 * m.shape[0]))
    fig.add_trace(go.Heatmap(z=m, colorscale="Viridis", colorbar=dict(title=colorbar), hoverinfo="skip"))
    fig.add_trace(
        go.Scatter(
            x=cols.ravel(),
            y=rows.ravel(),
            mode="markers",
            marker=dict(opacity=0, size=max(6, 360 // max(m.shape))),  # about one cell wide
            text=[f"{v:.4g}" for v in m.ravel()],
            hovertemplate="row %{y}, col %{x}: %{text}<extra></extra>",
            showlegend=False,
        )
    )
    fig.update_yaxes(autorange="reversed", title="query row")
    fig.update_xaxes(title="key column")
    if selected is not None:  # (row, col) outlined
        r, c = selected
        fig.add_shape(type="rect", x0=c - 0.5, x1=c + 0.5, y0=r - 0.5, y1=r + 0.5, line=dict(color="#E15759", width=3))
    fig.update_layout(clickmode="event+select", hovermode="closest")
    return fig


def reference_error_figure(errors: dict, current: str | None = None, title: str = "") -> go.Figure:
    """Relative error vs the float64 run per landmark, as horizontal bars on a log axis; current one dark."""
    names = list(errors)[::-1]  # first landmark on top
    vals = [max(errors[n].rel, 1e-12) for n in names]
    fig = figure(title=title, height=140 + 22 * len(names))
    fig.add_trace(
        go.Bar(
            y=names,
            x=vals,
            orientation="h",
            customdata=[errors[n].max_abs for n in names],
            marker_color=["#111111" if n == current else "#4E79A7" for n in names],
            hovertemplate="%{y}<br>max rel %{x:.3g}<br>max abs %{customdata:.3g}<extra></extra>",
        )
    )
    fig.update_xaxes(type="log", title="max |a − ref| / max |ref|")
    fig.update_yaxes(tickfont=dict(size=12))
    return fig
