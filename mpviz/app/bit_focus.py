"""Keep the keyboard on a flipped bit of the formats page (assets/components/bitfocus/bitfocus.js).

A flip reruns the page and Streamlit draws the field's pills anew, which drops focus to the page's body; this
invisible component puts it back on the same bit once the rerun has drawn it.
"""

from __future__ import annotations

from importlib.resources import files

import streamlit as st

__all__ = ["keep_bit_focus"]

_component = st.components.v2.component(
    "mpviz_bit_focus",
    js=files("mpviz.app").joinpath("static", "bitfocus.js").read_text("utf-8"),
)


def keep_bit_focus() -> None:
    """Mount the focus keeper (once per page run; it takes no space)."""
    _component(key="bit_focus", data=None, width="stretch", height="content")
