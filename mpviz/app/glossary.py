"""The glossary (mpviz/locales/<lang>/glossary.toml) wherever a term appears: `help=` tooltips for widgets, headings and
metrics, and the glossary page. One file of definitions; the stepper component reads the same tables."""

from __future__ import annotations

from collections.abc import Mapping

from mpviz.app import text


def terms() -> dict[str, Mapping]:
    """Every term of this session's language: key → {term, text}, ordered by the term as shown."""
    words = text.section("glossary")
    tables = {k: v for k, v in words.items() if isinstance(v, Mapping)}
    return dict(sorted(tables.items(), key=lambda kv: kv[1]["term"].casefold()))


def term_help(*keys: str) -> str:
    """A tooltip (markdown) defining `keys`, in the given order: pass it as `help=` where the terms appear."""
    words = text.section("glossary")
    return "\n\n".join(f"**{words[k]['term']}**: {words[k]['text']}" for k in keys)
