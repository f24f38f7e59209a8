"""The words a view model shows: `mpviz/locales/<lang>/<section>.toml` (mpviz.presentation.locales), in the language
of the viewer asking, which the memo's host says (mpviz.presentation.memo.language: the app's session, "en" without a
host), or in the `lang` handed in.

Templates are trusted; what a visitor typed is not: anything user-supplied that is echoed into markdown goes through
`echo` first, which renders it as inert inline code (no links, images or emphasis can come out of it). The app's
mpviz.app.text is these words in a Streamlit session's language.
"""

from __future__ import annotations

from types import MappingProxyType

from mpviz.presentation import memo
from mpviz.presentation.locales import load

__all__ = ["ECHO_MAX_CHARS", "echo", "reason", "section"]

ECHO_MAX_CHARS = 60  # user text is cut to this length before it is shown back


def section(name: str, lang: str | None = None) -> MappingProxyType:
    """The words of `name` (a lesson slug or "common") in `lang`, or else in the asking viewer's language."""
    return load(lang or memo.language(), name)


def reason(error: Exception, lang: str | None = None) -> str:
    """Why the engine refused a setting (a `mpviz.model.ConfigError`), in words: the engine's reason is a stable
    phrase, and common.toml's [reasons] table holds its words (tests check every phrase the engine can raise is
    there)."""
    code = getattr(error, "reason", "")
    return section("common", lang)["reasons"].get(code, code)


def echo(raw: object) -> str:
    """User-supplied text, made safe to place in markdown: one line, cut to ECHO_MAX_CHARS, as inline code.

    Inside a code span markdown renders nothing (no link, image, emphasis or HTML); backticks, which could close
    the span, become a look-alike modifier letter.
    """
    text = " ".join(str(raw).split())
    if len(text) > ECHO_MAX_CHARS:
        text = text[: ECHO_MAX_CHARS - 1] + "…"
    return f"`{text.replace('`', 'ˋ') or ' '}`"
