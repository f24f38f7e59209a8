"""Figures of the tutorial-claims lesson: close scores, speed, accumulation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from mpviz.presentation.figures.formats import number_line_figure
from mpviz.presentation.figures.style import figure
from mpviz.presentation.palette import dtype_color, ink

if TYPE_CHECKING:
    from mpviz.claims import AccumulationEvidence, ScorePair, SpeedEvidence
    from mpviz.formats import NumberLine


def close_scores_figure(
    lines: Sequence[NumberLine], pairs: Sequence[ScorePair], *, labels: dict, number_line_labels: dict
) -> go.Figure:
    """Number lines (`mpviz.formats.NumberLine`s, one per format) with every score of `pairs`
    (`mpviz.claims.ScorePair`s) as a dotted vertical line and a dot where each format stores it."""
    lab = labels
    fig = number_line_figure(lines, lines[0].lo, lines[0].hi, labels=number_line_labels)
    for pair in pairs:
        for i, score in enumerate(pair.scores):  # the second label of a pair sits higher: close scores
            fig.add_vline(x=score, line=dict(color="#555555", dash="dot", width=1.5))
            fig.add_annotation(
                x=score,
                y=1.0,
                yref="paper",
                yanchor="bottom",
                yshift=18 * i,
                showarrow=False,
                text=f"{score:g}",
                font=dict(size=13),
            )
        for result in pair.formats:
            fig.add_trace(
                go.Scatter(
                    x=list(result.stored),
                    y=[result.format] * 2,
                    mode="markers",
                    marker=dict(size=14, color=dtype_color(result.format), line=dict(width=2, color="white")),
                    hovertext=[
                        lab["stored"].format(value=v, stored=s, format=result.format)
                        for v, s in zip(pair.scores, result.stored, strict=True)
                    ],
                    hoverinfo="text",
                )
            )
    fig.update_layout(margin=dict(l=10, r=10, t=60, b=10))  # room above for the score labels
    return fig


def speed_figure(evidence: SpeedEvidence, *, labels: dict) -> go.Figure:
    """Speed of each dtype relative to float32 (`mpviz.claims.SpeedEvidence`): one matmul and one training step,
    median per-round speedup with its interquartile range as error bars, on a log axis with 1× marked and the
    claimed 2–3× band shaded."""
    lab = labels
    groups = [
        lab["matmul"].format(n=evidence.matmul_n),
        lab["step"].format(seq=evidence.block.seq_len, dim=evidence.block.d_model),
    ]
    fig = figure(
        height=420,
        barmode="group",
        legend=dict(orientation="h", yanchor="top", y=-0.22, x=0),
        margin=dict(l=10, r=10, t=40, b=90),  # room below for two-line group names and the legend
    )
    fig.add_hrect(y0=2, y1=3, fillcolor="#009E73", opacity=0.12, line_width=0, layer="below")
    fig.add_hline(y=1, line=dict(color=dtype_color("float32"), dash="dash"))
    fig.add_annotation(
        x=1,
        xref="paper",
        y=math.log10(3),
        xanchor="right",
        yanchor="bottom",
        showarrow=False,
        text=lab["claimed"],
        font=dict(size=13, color="#333333"),
    )
    for row in evidence.rows:
        speed = [row.matmul_speedup, row.step_speedup]
        spreads = [row.matmul_speedup_spread, row.step_speedup_spread]
        fig.add_bar(
            name=row.dtype,
            x=groups,
            y=speed,
            text=[f"{s:.2g}×" for s in speed],
            textposition="inside",  # at the bar's foot: the error bar owns the space above its top
            insidetextanchor="start",
            textangle=0,
            textfont=dict(color=ink(dtype_color(row.dtype))),
            marker_color=dtype_color(row.dtype),
            error_y=dict(
                type="data",
                symmetric=False,
                array=[sp.q3 - s for sp, s in zip(spreads, speed, strict=True)],
                arrayminus=[s - sp.q1 for sp, s in zip(spreads, speed, strict=True)],
                color="#333333",
            ),
            hovertext=[lab["ms"].format(ms=row.matmul_ms), lab["ms"].format(ms=row.step_ms)],
        )
    fig.add_annotation(
        x=0,
        xref="paper",
        y=1,
        yref="paper",
        yanchor="bottom",
        xanchor="left",
        showarrow=False,
        text=lab["iqr"].format(repeat=evidence.repeat),
        font=dict(size=12, color="#555555"),
    )
    values = [
        v for r in evidence.rows for sp in (r.matmul_speedup_spread, r.step_speedup_spread) for v in (sp.q1, sp.q3)
    ]
    lo, hi = math.log10(min([*values, 1.0])) - 0.3, math.log10(max([*values, 3.0])) + 0.3
    fig.update_yaxes(title=lab["speedup"], type="log", range=[lo, hi], dtick=1)  # a tick per decade
    fig.update_xaxes(tickangle=0)
    return fig


def accumulation_figure(evidence: AccumulationEvidence, *, labels: dict) -> go.Figure:
    """The designed dot product of `mpviz.claims.AccumulationEvidence`: the exact running sum and a low-precision
    accumulator's, term by term, with the once-rounded exact sum and torch.matmul's answer at the end."""
    lab = labels
    fig = figure(height=380, legend=dict(orientation="h", yanchor="top", y=-0.3, x=0))  # below: it may wrap
    steps = list(range(len(evidence.exact_partial_sums)))
    end = steps[-1]
    fig.add_scatter(
        x=steps,
        y=list(evidence.exact_partial_sums),
        mode="lines",
        name=lab["exact"],
        line=dict(color=dtype_color("float64"), width=2),
    )
    fig.add_scatter(
        x=steps,
        y=list(evidence.low_partial_sums),
        mode="lines",
        name=lab["low_accumulator"].format(dtype=evidence.dtype),
        line=dict(color=dtype_color(evidence.dtype), width=3, dash="dash"),
    )
    fig.add_scatter(
        x=[end],
        y=[evidence.rounded_once],
        mode="markers",
        name=lab["rounded_once"].format(dtype=evidence.dtype),
        marker=dict(symbol="circle-open", size=22, line=dict(width=3, color=dtype_color("float32"))),
    )
    fig.add_scatter(
        x=[end],
        y=[evidence.measured],
        mode="markers",
        name=lab["measured"].format(device=lab["device_names"].get(evidence.device, evidence.device)),
        marker=dict(symbol="diamond", size=12, color="#111111"),
    )
    fig.update_xaxes(title=lab["terms"])
    fig.update_yaxes(title=lab["partial_sum"])
    return fig
