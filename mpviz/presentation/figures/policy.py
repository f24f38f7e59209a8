"""Figures of the autocast-policy lesson: ops per category, and the ATen ops one probed call ran."""

from __future__ import annotations

import plotly.graph_objects as go

from mpviz.presentation.figures.style import figure
from mpviz.presentation.palette import FALLBACK_COLOR, FIELD_COLORS, dtype_color


def category_color(category: str, low_dtype: str = "float16") -> str:
    """A category in the colour of the dtype it computes in: low precision, float32, or neutral/alarm."""
    if category == "lower_precision_fp":
        return dtype_color(low_dtype)
    if category.startswith("fp32"):
        return dtype_color("float32")
    return FIELD_COLORS["sign"] if category == "banned" else FALLBACK_COLOR


PATTERNS = ("", "/", "x", ".")  # one hatching per device, in order


def policy_counts_figure(
    counts: dict[str, dict[str, int]],
    category_names: dict[str, str],
    low_dtypes: dict[str, str] | None = None,
    *,
    labels: dict,
) -> go.Figure:
    """Ops per autocast category, one group of bars per category and one bar per device.

    `counts` maps device label → category → count (as `DevicePolicy.counts()`); `category_names` maps
    category → the name shown; `low_dtypes` maps device label → its autocast dtype, which colours that
    device's lower_precision_fp bar. Bars carry their count. Colour says the dtype a category computes in, so
    devices differ by hatching only, and the legend shows each device's hatching on a neutral swatch (a legend
    swatch in one bar's colour would claim a colour for the whole device).
    """
    fig = figure(
        height=380,
        barmode="group",
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0, itemclick=False, itemdoubleclick=False),
        uniformtext=dict(minsize=11, mode="show"),  # every count at one size, even where a bar is narrow
    )
    cats = list(category_names)
    for n, (device, by_cat) in enumerate(counts.items()):
        low = (low_dtypes or {}).get(device, "float16")
        pattern = PATTERNS[n % len(PATTERNS)]
        fig.add_bar(
            name=device,
            legendgroup=device,
            offsetgroup=device,
            showlegend=False,
            x=[category_names[c] for c in cats],
            y=[by_cat.get(c, 0) for c in cats],
            text=[by_cat.get(c, 0) for c in cats],
            textposition="outside",
            cliponaxis=False,
            marker=dict(
                color=[category_color(c, low) for c in cats],
                pattern_shape=pattern,
                line=dict(color="#333333", width=1),
            ),
        )
        fig.add_bar(  # the legend entry: this device's hatching, no colour of its own (sharing the bars' slot)
            name=device,
            legendgroup=device,
            offsetgroup=device,
            x=[None],
            y=[None],
            marker=dict(color="white", pattern_shape=pattern, pattern_fgcolor="#333333", line=dict(color="#333333")),
        )
    fig.update_yaxes(title=labels["count"])
    fig.update_xaxes(title=labels["category"], tickangle=-45)
    return fig


def call_steps_figure(steps: list, title: str = "") -> go.Figure:
    """The ATen ops one probed call ran (`CallProbe.steps`), left to right, each coloured by its output dtype.

    Casts are diamonds, compute ops squares. Each is labelled with its op and output dtype (labels alternate
    above and below so long names do not collide); the hover shows the input dtypes too.
    """
    fig = figure(title=title, height=210, showlegend=False, margin=dict(l=10, r=10, t=30, b=10))
    for i, s in enumerate(steps):
        short = s.op.removeprefix("aten.").rsplit(".", 1)[0]
        outs = ", ".join(s.outputs) or "—"
        fig.add_scatter(
            x=[i],
            y=[0],
            mode="markers+text",
            marker=dict(
                size=30,
                color=dtype_color(s.outputs[0] if s.outputs else None),
                symbol="diamond" if s.is_cast else "square",
            ),
            text=[f"{short}<br>→ {outs}"],
            textposition="bottom center" if i % 2 == 0 else "top center",
            hovertext=f"{s.op}<br>{', '.join(s.inputs) or '—'} → {outs}",
            hoverinfo="text",
        )
    fig.update_xaxes(visible=False, range=[-0.8, max(len(steps), 1) - 0.2])
    fig.update_yaxes(visible=False, range=[-1.3, 1.3])
    return fig
