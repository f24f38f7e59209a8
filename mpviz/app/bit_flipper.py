"""The formats page's bit flipper: every selected format's stored pattern as ONE in-browser component
(assets/components/bitflip/bitflip.js), instead of a group of pills per field (a dozen widgets and their labels per
page run, which a class of 30 paid for on one GIL).

Each bit is a button (Tab, Enter, Space, click); a flip is the component's "flip" trigger {short, position}, turned
here into the value text of the flipped pattern before the page's rerun reads its widgets. The component redraws in
place, so the keyboard stays on the flipped bit.
"""

from __future__ import annotations

import re
from importlib.resources import files

import streamlit as st

from mpviz import formats
from mpviz.presentation import palette
from mpviz.presentation.view_models import formats as vm

__all__ = ["FLIPPER_KEY", "bit_flipper", "flipped_value", "flipper_data"]

FLIPPER_KEY = "bits"
_STATIC = files("mpviz.app").joinpath("static")
_component = st.components.v2.component(
    "mpviz_bit_flipper",
    js=_STATIC.joinpath("bitflip.js").read_text("utf-8"),
    css=_STATIC.joinpath("bitflip.css").read_text("utf-8"),
)
_COLOURED = re.compile(r":\w+\[(.*)\]")  # the locale's ":red[sign]": the component colours the label itself


def flipper_data(shown: tuple[vm.FormatBits, ...], bit_words: str) -> dict:
    """What the component draws: per format its badge, caption, fields (bits most significant first) and line."""
    out = []
    for bits in shown:
        colour = palette.dtype_color(bits.name)
        fields = []
        for field in bits.fields:
            name = field.key.split("-")[1]  # "bits-<field>-<short>"
            ink = palette.FIELD_COLORS[name]
            label = _COLOURED.sub(r"\1", field.label)
            pressed = set(field.pressed)
            ones = [[p, int(p in pressed)] for p in field.positions]
            fields.append({"field": name, "label": label, "color": ink, "ink": palette.ink(ink), "bits": ones})
        badge = [colour, palette.ink(colour)]
        out.append(
            {"short": bits.short, "name": bits.name, "badge": badge, "emulated": bits.emulated, "line": bits.line}
            | {"fields": fields}
        )
    return {"formats": out, "words": {"bit": bit_words}}


def flipped_value(shown: tuple[vm.FormatBits, ...], flip: object) -> str | None:
    """The value text of a shown format's pattern with one bit flipped, or None for a flip that names no shown bit
    (a stale or forged message: nothing changes)."""
    position = flip.get("position") if isinstance(flip, dict) else None
    bits = next((b for b in shown if isinstance(flip, dict) and b.short == flip.get("short")), None)
    if bits is None or type(position) is not int or not any(position in f.positions for f in bits.fields):
        return None
    return formats.resolve_format(bits.short).pattern_text(bits.code ^ 1 << position)


def bit_flipper(shown: tuple[vm.FormatBits, ...], bit_words: str, *, value_key: str) -> None:
    """Mount the flipper for `shown` (`bit_words`: a bit's accessible name, "{field} bit {position}"). A flip sets
    the session's `value_key` to the flipped pattern's value text before the rerun it starts draws any widget."""

    def flipped() -> None:  # this run's patterns: the flip is of the bit the reader saw
        if (value := flipped_value(shown, st.session_state[FLIPPER_KEY].get("flip"))) is not None:
            st.session_state[value_key] = value

    _component(key=FLIPPER_KEY, data=flipper_data(shown, bit_words), on_flip_change=flipped, width="stretch")
