"""A piece of view state a link reproduces (`?key=value`): its key, default, and how to read and write it.

Plain values, no Streamlit: a view model declares its lesson's params (the scaler's knobs), and the app seeds them
into a session and mirrors them back into the URL (mpviz.app.url).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["UrlParam", "dump_bool", "parse_bool", "parse_choice"]


@dataclass(frozen=True)
class UrlParam:
    """One piece of view state that lives in `?key=...`: its default and how to read it from a string."""

    key: str
    default: Any
    parse: Callable[[str], Any]
    dump: Callable[[Any], str] = str
    aliases: tuple[str, ...] = ()  # older keys of the same state, still read from shared links


def parse_bool(raw: str) -> bool:
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(raw)


def dump_bool(value: bool) -> str:
    return "1" if value else "0"


def parse_choice(choices: Iterable[str]) -> Callable[[str], str]:
    allowed = tuple(choices)

    def parse(raw: str) -> str:
        if raw not in allowed:
            raise ValueError(raw)
        return raw

    return parse
