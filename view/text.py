"""Words: every user-facing string lives in `locales/<lang>/<section>.toml`, one section per lesson plus `common`.

Pages look their words up (`section("scaler")["title"]`) and fill templates with `str.format`. Templates are
trusted; what a visitor typed is not: anything user-supplied that is echoed into markdown goes through `echo`
first, which renders it as inert inline code (no links, images or emphasis can come out of it).
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import streamlit as st

LOCALES = Path(__file__).resolve().parent.parent / "locales"
LANGUAGES = ("en", "zh")  # view.language picks one per session
DEFAULT_LANGUAGE = "en"
ECHO_MAX_CHARS = 60  # user text is cut to this length before it is shown back


def _frozen(value: Any) -> Any:
    """Read-only view of a parsed TOML table: one copy is shared by every session of the process."""
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    return value


@cache
def load(lang: str, section_name: str) -> MappingProxyType:
    """The words of one section in one language, parsed once per process."""
    with open(LOCALES / lang / f"{section_name}.toml", "rb") as f:
        return _frozen(tomllib.load(f))


@cache
def plain(lang: str, section_name: str) -> dict:
    """The words of one section as plain dicts, for JSON (a browser component's text); one shared object per
    process: never mutate it."""

    def thaw(value: Any) -> Any:
        return {k: thaw(v) for k, v in value.items()} if isinstance(value, MappingProxyType) else value

    return thaw(load(lang, section_name))


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
