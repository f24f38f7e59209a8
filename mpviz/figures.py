"""Plotly figure builders for every page: plain functions from mpviz result objects to `go.Figure`.

No streamlit here. Colours are fixed per dtype so a dtype looks the same on every page. Labels that a reader
sees are passed in by the page (`labels=`), so the view layer can translate them; defaults are English.
"""

from __future__ import annotations

import plotly.graph_objects as go

# One colour per dtype, everywhere in the app (colour-blind-safe Okabe–Ito hues).
DTYPE_COLORS: dict[str, str] = {
    "float64": "#000000",
    "float32": "#0072B2",
    "tf32": "#56B4E9",
    "float16": "#D55E00",
    "bfloat16": "#009E73",
    "float8_e4m3fn": "#CC79A7",
    "float8_e5m2": "#E69F00",
    "float8_e4m3fnuz": "#AA4499",
    "float8_e5m2fnuz": "#DDCC77",
    "int64": "#999999",
    "bool": "#BBBBBB",
}
FALLBACK_COLOR = "#777777"
# Bit-field colours for bit layouts: sign, exponent, mantissa.
FIELD_COLORS = {"sign": "#E15759", "exponent": "#4E79A7", "mantissa": "#59A14F"}
LAYOUT = dict(template="plotly_white", font=dict(size=15), margin=dict(l=10, r=10, t=40, b=10))


def dtype_color(dtype: str | None) -> str:
    return DTYPE_COLORS.get(dtype or "", FALLBACK_COLOR)


def _fig(**layout) -> go.Figure:
    return go.Figure(layout={**LAYOUT, **layout})


# ── attention step-through (spine) ───────────────────────────────────────────────────────────────────────────

# ── autocast policy (issue 3) ────────────────────────────────────────────────────────────────────────────────

# ── number formats (issue 4) ─────────────────────────────────────────────────────────────────────────────────

# ── softmax overflow (issue 5) ───────────────────────────────────────────────────────────────────────────────

# ── GradScaler (issue 6) ─────────────────────────────────────────────────────────────────────────────────────
