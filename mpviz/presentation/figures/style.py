"""The look every figure shares: one colour per dtype (the same on every page and in the browser component), one
colour per bit field, one base layout. Figures are plain functions from mpviz results to `go.Figure`; every word a
reader sees arrives in a `labels` dict from the page's locale file, so figures hold no English of their own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from functools import cache
from typing import Any

import plotly.graph_objects as go

MAX_LOG_LABELS = 8  # tick labels on a log axis, at most about this many
# The figures' template, which the app makes plotly's default (mpviz.app.main) rather than a key of LAYOUT: named in
# a figure's layout, plotly validates and copies the whole template into every figure (about 60 ms a figure, per
# session and run: what a class of followers queued for on a page change); as the default it is attached as is.
# Setting it is the app's business: importing the figures changes no global (a notebook keeps its own default).
TEMPLATE = "plotly_white"
LAYOUT = dict(font=dict(size=15), margin=dict(l=10, r=10, t=40, b=10))
# Presenter mode (a projector at the back of a classroom): text at least these sizes, in px.
PRESENTER_FONT = {"text": 18, "axis": 16, "axis_title": 18, "legend": 16, "title": 22}
PRESENTER_INK = "#111111"


def figure(**layout: Any) -> go.Figure:
    """An empty figure with the shared layout, `layout` on top."""
    return go.Figure(layout={**LAYOUT, **layout})


def value_log_axis(values: Iterable[float | None], max_ticks: int = MAX_LOG_LABELS) -> dict:
    """A log axis whose ticks each say their value: 1-2-(3)-5-(7) ticks over up to three decades, thinned to 1-3 or
    to powers of ten (one every few decades) so that at most about `max_ticks` labels share the axis: a short
    panel passes a smaller number. (Plotly's own labels write the ticks between powers of ten as a bare digit, "5"
    for 0.5, and crowd them on a short axis until they overprint.)"""
    positive = [v for v in values if v is not None and 0 < v < math.inf]
    if not positive:
        return dict(type="log")
    lo, hi = math.floor(math.log10(min(positive))), math.ceil(math.log10(max(positive)))
    under_a_decade = max(positive) < 10 * min(positive)  # a single power of ten might be all the axis shows

    def within(mantissas) -> list[float]:
        ticks = [m * 10.0**e for e in range(lo, hi + 1) for m in mantissas]
        return [t for t in ticks if 10.0**lo <= t <= 10.0**hi]

    candidates = [within(m) for m in ((1, 2, 3, 5, 7), (1, 2, 5), (1, 3)) if under_a_decade or hi - lo <= 3]
    ticks = next((t for t in candidates if len(t) <= max_ticks), None)
    if ticks is None or len(ticks) < 2:
        ticks = [10.0**e for e in range(lo, hi + 1, max(1, math.ceil((hi - lo) / max_ticks)))]
    text = [f"{t:g}".replace("e-0", "e-").replace("e+0", "e").replace("e+", "e") for t in ticks]
    return dict(type="log", tickvals=ticks, ticktext=text)


_AXIS = re.compile(r"[xy]axis\d*")  # every cartesian axis a layout names (xaxis, yaxis2, …)


def presented_spec(spec: dict) -> dict:
    """A figure's dict (`fig.to_dict()`) for presenter mode: larger, darker text; explicit sizes below the minimum
    raised, never lowered. Text inside traces (bit boxes, bar labels) keeps its size, which its geometry was made
    for. Works on the plain dict, never building plotly objects: copying a figure through plotly's validators cost
    a presenter 65-135 ms per page. `spec` is not changed: what the copy changes is copied, the rest shared."""
    size, ink = PRESENTER_FONT, PRESENTER_INK
    layout = dict(spec.get("layout", {}))
    _raise(layout, ("font",), size["text"], ink)
    _raise(layout, ("legend", "font"), size["legend"])
    _raise(layout, ("title", "font"), size["title"])
    if layout["title"].get("text"):  # plotly centres the title in the top margin: room for the larger line
        _raise(layout, ("margin",), round(2.4 * size["title"]), key="t")
    _raise(layout, ("hoverlabel", "font"), size["axis"])
    for axis in dict.fromkeys(["xaxis", "yaxis", *filter(_AXIS.fullmatch, layout)]):  # the two base axes always
        _raise(layout, (axis, "tickfont"), size["axis"], ink)
        _raise(layout, (axis, "title", "font"), size["axis_title"], ink)
    data = [dict(trace) for trace in spec.get("data", [])]
    for trace in data:
        if _has_colorbar(trace.get("type", "scatter")):
            _raise(trace, ("colorbar", "tickfont"), size["axis"])
    return {**spec, "data": data, "layout": layout}


def _raise(tree: dict, path: tuple[str, ...], minimum: int, color: str | None = None, key: str = "size") -> None:
    """`tree[path…][key]` raised to at least `minimum` (and its colour set). Each dict on the path is copied before
    it is changed, so the figure the copy was made from keeps its own."""
    node = tree
    for name in path:
        node[name] = node = dict(node.get(name) or {})
    node[key] = max(node.get(key) or 0, minimum)
    if color is not None:
        node["color"] = color


@cache
def _has_colorbar(trace_type: str) -> bool:
    """Whether plotly's trace type has a colorbar of its own (heatmap, contour …; a scatter's is its marker's)."""
    return "colorbar" in go.Figure({"data": [{"type": trace_type}], "layout": {"template": {}}}).data[0]
