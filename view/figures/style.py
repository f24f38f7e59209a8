"""The look every figure shares: one colour per dtype (the same on every page and in the browser component), one
colour per bit field, one base layout. Figures are plain functions from mpviz results to `go.Figure`; every word a
reader sees arrives in a `labels` dict from the page's locale file, so figures hold no English of their own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from functools import cache, lru_cache
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

from mpviz.model import parse_autocast_dtype
from mpviz.stats import dtype_name

# One colour per dtype, everywhere in the app. Chosen by search, starting from Okabe–Ito's hues (the float32 blue,
# float16 orange and bfloat16 green stay close to them), for what tests/test_palette.py checks: every pair apart by
# CIEDE2000 ΔE in normal vision and as a protanope, a deuteranope and a tritanope sees it (Machado 2009), the five
# dtypes that share the stepper's graph twice as far; text on each (near-black or white, see ink()) at 4.5:1; each
# colour on the white page at 3:1 (WCAG's contrast for lines and markers), so no pale yellow or light grey.
DTYPE_COLORS: dict[str, str] = {
    "float64": "#000000",
    "float32": "#3E5EB0",
    "tf32": "#2198FF",
    "float16": "#A75007",
    "bfloat16": "#0B8F64",
    "float8_e4m3fn": "#DA68D2",
    "float8_e5m2": "#BE6712",
    "float8_e4m3fnuz": "#A3008C",
    "float8_e5m2fnuz": "#738E46",
    "float8_e8m0fnu": "#5F0874",
    "float6_e2m3fn": "#15A4A2",
    "float6_e3m2fn": "#1D472F",
    "float4_e2m1fn": "#031E24",
    "int64": "#965770",
    "bool": "#EE5C8C",
}
FALLBACK_COLOR = "#505050"  # unknown dtypes: a neutral grey, apart from every dtype colour as well
# Bit-field colours for bit layouts: sign, exponent, mantissa. Each is drawn as text on white (a released bit) and
# under white text (a pressed bit), so each contrasts at least 4.5:1 with white; they stay apart under the three
# colour-vision deficiencies (tests/test_palette.py), though position and label tell the fields apart as well.
FIELD_COLORS = {"sign": "#C2185B", "exponent": "#1565C0", "mantissa": "#33691E"}
INKS = ("#111111", "#ffffff")  # text drawn on a colour: whichever contrasts more (as the stepper's words.js ink())
MAX_LOG_LABELS = 8  # tick labels on a log axis, at most about this many
# The template is plotly's default rather than a key of LAYOUT: named in a figure's layout, plotly validates and
# copies the whole template into every figure (about 60 ms a figure on this machine, per session and run: what a
# class of followers queued for on a page change); as the default it is attached as is, and the JSON is the same.
pio.templates.default = "plotly_white"
LAYOUT = dict(font=dict(size=15), margin=dict(l=10, r=10, t=40, b=10))
# Presenter mode (a projector at the back of a classroom): text at least these sizes, in px.
PRESENTER_FONT = {"text": 18, "axis": 16, "axis_title": 18, "legend": 16, "title": 22}
PRESENTER_INK = "#111111"


def relative_luminance(color: str) -> float:
    """WCAG 2's relative luminance of a "#rrggbb" colour."""
    channels = (int(color[k : k + 2], 16) / 255 for k in (1, 3, 5))
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2's contrast ratio of two "#rrggbb" colours, 1 to 21 (text needs 4.5, large text and graphics 3)."""
    dark, light = sorted((relative_luminance(a), relative_luminance(b)))
    return (light + 0.05) / (dark + 0.05)


@lru_cache(maxsize=256)
def ink(background: str) -> str:
    """The text colour for `background`: near-black or white, whichever contrasts more."""
    return max(INKS, key=lambda c: contrast_ratio(c, background))


def text_color(color: str, background: str = "#ffffff") -> str:
    """`color`, darkened just enough to read as text on `background` (4.5:1): a label keeps its line's hue. Dtype
    colours are only held to 3:1 on white, enough for a line or a marker but not for a word."""
    rgb = [int(color[k : k + 2], 16) for k in (1, 3, 5)]
    for step in range(21):  # 5% nearer black each step; black itself passes on any background lighter than 4.5:1's
        shade = "#" + "".join(f"{round(c * (1 - step / 20)):02x}" for c in rgb)
        if contrast_ratio(shade, background) >= 4.5:
            return shade
    return ink(background)


def dtype_color(dtype: str | None) -> str:
    return DTYPE_COLORS.get(dtype or "", FALLBACK_COLOR)


def figure(**layout: Any) -> go.Figure:
    """An empty figure with the shared layout, `layout` on top."""
    return go.Figure(layout={**LAYOUT, **layout})


def autocast_color(name: str) -> str:
    """The colour of the dtype an autocast setting ("off" | "fp16" | "bf16" …) computes in; off is float32."""
    dtype = parse_autocast_dtype(name)
    return dtype_color(dtype_name(dtype) if dtype is not None else "float32")


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
