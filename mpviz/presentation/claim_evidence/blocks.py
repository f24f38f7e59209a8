"""What a claim's evidence view returns: the blocks of its card, as data (no Streamlit), which the claims page draws.

A view is a function of one claim's `Checked` that returns a tuple of blocks: markdown text (`str`: explanations,
small captions, tables written as markdown), `Figure`s (built once with the card, shared by every session),
`Columns` side by side, `Details` folded into an expander, `Code`. Consecutive texts are drawn as one markdown
element: a card is a handful of elements, not dozens (each element costs the server per session, and a class of
30 opening the page pays it thirty times on one GIL).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Union

import plotly.graph_objects as go

from mpviz.presentation.figures.shared import SharedFigure

__all__ = ["Block", "Code", "Columns", "Details", "Figure", "caption", "figure", "markdown_table", "merged"]


@dataclass(frozen=True)
class Figure:
    """A plotly figure, drawn full width under the element key `key` (unique on the page)."""

    key: str
    figure: SharedFigure = field(repr=False, compare=False)


@dataclass(frozen=True)
class Columns:
    """Blocks side by side, one tuple per column; `widths` as st.columns takes them (None: equal)."""

    columns: tuple[tuple[Block, ...], ...]
    widths: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Details:
    """Detail few readers open: always folded into an expander titled `title` (`folded`), or folded only in
    presenter mode (mpviz.app.page.expert) and shown as usual otherwise."""

    title: str
    blocks: tuple[Block, ...]
    folded: bool = True


@dataclass(frozen=True)
class Code:
    """A code block (st.code, wrapped lines)."""

    code: str
    language: str | None = "python"


Block = Union[str, Figure, Columns, Details, Code]  # noqa: UP007 (a runtime alias: `|` of classes and str works too, but reads worse)


def figure(key: str, build: Callable[[], go.Figure]) -> Figure:
    """The figure `build()` draws, made shareable once (its dict serialised once for every session)."""
    return Figure(key, SharedFigure(build()))


def caption(line: str) -> str:
    """A small grey line of markdown (st.caption's look, inside a card's one markdown element)."""
    return f":small[:gray[{line}]]" if line else ""


def _cell(value: object) -> str:
    """A table cell on one line: a `|` would end the cell, a newline the row."""
    return " ".join(str(value).split()).replace("|", "\\|")


def markdown_table(rows: Sequence[dict]) -> str:
    """Rows (dicts with the same keys) as a markdown table: every cell wraps on a narrow screen, nothing scrolls."""
    if not rows:
        return ""
    head = list(rows[0])
    lines = ["| " + " | ".join(map(_cell, head)) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(row.get(k, "")) for k in head) + " |" for row in rows]
    return "\n".join(lines)


def merged(blocks: Iterable[Block]) -> tuple[Block, ...]:
    """`blocks` with every run of consecutive texts joined into one markdown text (empty texts dropped)."""
    out: list[Block] = []
    for block in blocks:
        if isinstance(block, str):
            if not block:
                continue
            if out and isinstance(out[-1], str):
                out[-1] = out[-1] + "\n\n" + block
                continue
        out.append(block)
    return tuple(out)
