"""The colours every view shares, without plotly: one colour per dtype (the same in the app's figures, the stepper in
the browser, the notebook widget and the offline lesson file), one per bit field, and which ink reads on each.
"""

from __future__ import annotations

from functools import lru_cache

from mpviz.model import parse_autocast_dtype
from mpviz.stats import dtype_name

__all__ = [
    "DTYPE_COLORS",
    "FALLBACK_COLOR",
    "FIELD_COLORS",
    "INKS",
    "autocast_color",
    "contrast_ratio",
    "dtype_color",
    "ink",
    "relative_luminance",
    "text_color",
]

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


def autocast_color(name: str) -> str:
    """The colour of the dtype an autocast setting ("off" | "fp16" | "bf16" …) computes in; off is float32."""
    dtype = parse_autocast_dtype(name)
    return dtype_color(dtype_name(dtype) if dtype is not None else "float32")
