"""The locale files, read without Streamlit: `mpviz/locales/<lang>/<section>.toml`, parsed once per process.

mpviz.app.text builds a session's words on top of this; the lesson file (mpviz.presentation.lesson_file, written by the
CLI, where no Streamlit runs) reads the same files through here.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib.resources import files
from pathlib import Path
from types import MappingProxyType
from typing import Any

LOCALES = Path(str(files("mpviz").joinpath("locales")))  # package data: en/, zh/
LANGUAGES = ("en", "zh")  # mpviz.app.language picks one per session
DEFAULT_LANGUAGE = "en"


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
