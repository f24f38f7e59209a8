"""Words: every user-facing string lives in `mpviz/locales/<lang>/<section>.toml`, one section per lesson plus `common`.

mpviz.presentation.locales reads the files and mpviz.presentation.text words them (without Streamlit, so the view
models and the CLI's lesson file read them too); here they are in the Streamlit session's language. Pages look their
words up (`section("scaler")["title"]`) and fill templates with `str.format`; user text echoed into markdown goes
through `echo` (mpviz.presentation.text).
"""

from __future__ import annotations

from types import MappingProxyType

import streamlit as st

from mpviz.presentation import text as viewer_text
from mpviz.presentation.locales import DEFAULT_LANGUAGE as DEFAULT_LANGUAGE
from mpviz.presentation.locales import LANGUAGES as LANGUAGES
from mpviz.presentation.locales import LOCALES as LOCALES
from mpviz.presentation.locales import load as load
from mpviz.presentation.locales import plain as plain
from mpviz.presentation.text import ECHO_MAX_CHARS as ECHO_MAX_CHARS
from mpviz.presentation.text import echo as echo


def language() -> str:
    """The language of this session's view."""
    lang = st.session_state.get("lang", DEFAULT_LANGUAGE)
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


def section(name: str) -> MappingProxyType:
    """The words of `name` (a lesson slug or "common") in this session's language."""
    return load(language(), name)


def reason(error: Exception) -> str:
    """Why the engine refused a setting, in this session's language (mpviz.presentation.text.reason)."""
    return viewer_text.reason(error, language())
