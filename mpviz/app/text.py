"""Words: every user-facing string lives in `mpviz/locales/<lang>/<section>.toml`, one section per lesson plus `common`.

mpviz.presentation.locales reads the files (without Streamlit, so the CLI's lesson file reads them too); its names are
this module's as well. Pages look their words up (`section("scaler")["title"]`) and fill templates with `str.format`.
Templates are trusted; what a visitor typed is not: anything user-supplied that is echoed into markdown goes
through `echo` first, which renders it as inert inline code (no links, images or emphasis can come out of it).
"""

from __future__ import annotations

from types import MappingProxyType

import streamlit as st

from mpviz.presentation.locales import DEFAULT_LANGUAGE as DEFAULT_LANGUAGE
from mpviz.presentation.locales import LANGUAGES as LANGUAGES
from mpviz.presentation.locales import LOCALES as LOCALES
from mpviz.presentation.locales import load as load
from mpviz.presentation.locales import plain as plain

ECHO_MAX_CHARS = 60  # user text is cut to this length before it is shown back


def language() -> str:
    """The language of this session's view."""
    lang = st.session_state.get("lang", DEFAULT_LANGUAGE)
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


def section(name: str) -> MappingProxyType:
    """The words of `name` (a lesson slug or "common") in this session's language."""
    return load(language(), name)


def reason(error: Exception) -> str:
    """Why the engine refused a setting (a `mpviz.model.ConfigError`), in this session's language: the engine's
    reason is a stable phrase, and common.toml's [reasons] table holds its words (tests check every phrase the
    engine can raise is there)."""
    code = getattr(error, "reason", "")
    return section("common")["reasons"].get(code, code)


def echo(raw: object) -> str:
    """User-supplied text, made safe to place in markdown: one line, cut to ECHO_MAX_CHARS, as inline code.

    Inside a code span markdown renders nothing (no link, image, emphasis or HTML); backticks, which could close
    the span, become a look-alike modifier letter.
    """
    text = " ".join(str(raw).split())
    if len(text) > ECHO_MAX_CHARS:
        text = text[: ECHO_MAX_CHARS - 1] + "…"
    return f"`{text.replace('`', 'ˋ') or ' '}`"
