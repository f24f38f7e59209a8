"""Scaffolding every page shares: its header, the warnings queued while reading config, dtype badges, and the two
helpers that adapt a page to presenter mode (`chart` for every plotly figure, `expert` for tables that only experts
read)."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import ModuleType
from urllib.parse import urlencode, urlsplit

import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from mpviz import contracts
from mpviz.app import text
from mpviz.app.serving.workers import WorkerCrashed, WorkerTimeout
from mpviz.presentation.figures.shared import SharedFigure
from mpviz.presentation.figures.style import presented_spec
from mpviz.presentation.palette import dtype_color, ink

Container = DeltaGenerator | ModuleType  # where an element goes: `st` itself, a column, a placeholder


def page_header(words: Mapping) -> None:
    """Every page starts here: title, one paragraph of introduction (from its locale file). In
    presenter mode the introduction is folded away: a projector's first screen is the lesson itself."""
    st.title(words["title"])
    if presenting():
        with st.expander(text.section("classroom")["about"]):
            st.markdown(words["intro"])
        return
    st.markdown(words["intro"])


log = logging.getLogger("mpviz.view")


@contextmanager
def guarded(section: str) -> Iterator[None]:
    """Run one section of a page so that, if it raises, only that section is lost.

    The visitor sees a short message with an error id; the server log gets the full traceback under the same id.
    Streamlit's own control flow (st.stop, st.rerun) derives from BaseException and passes through untouched.
    """
    try:
        yield
    except WorkerCrashed as e:  # the worker process died, not this page: say so, offer the same run again
        log.warning("section %r of %s: %s", section, st.context.url or "?", e)
        worker_crash(e, section)
    except Exception:
        error_id = secrets.token_hex(4)
        log.exception("section %r of %s failed [error id %s]", section, st.context.url or "?", error_id)
        st.error(text.section("common")["section_failed"].format(id=error_id), icon="🛠️")


def worker_crash(e: WorkerCrashed, where: str) -> None:
    """Tell the visitor that their run's worker process died or was stopped (mpviz.app.serving.workers), and offer to
    run it again: the failure was not cached, so the button's rerun computes it afresh. Nobody else's run was
    touched."""
    words = text.section("common")
    if isinstance(e, WorkerTimeout):
        st.error(words["worker_timeout"].format(limit=e.limit_s), icon="⏱️")
    else:
        st.error(words["worker_crashed"].format(cause=e.cause), icon="🛠️")
    st.button(words["retry"], key=f"retry:{where}", icon="🔄")


def warn(message: str) -> None:
    """Queue a warning for this run (shown at the top of the page by `show_warnings`). Echo user text with
    `mpviz.app.text.echo` before it goes into `message`."""
    st.session_state.setdefault("_warnings", []).append(message)


def show_warnings() -> None:
    for message in st.session_state.pop("_warnings", []):
        st.warning(message, icon="⚠️")


def dtype_badge(dtype: str | None) -> str:
    """Inline HTML: the dtype's name on its fixed colour (same colours as every plot)."""
    name, color = dtype or "—", dtype_color(dtype)
    return (
        f"<span style='background:{color};color:{ink(color)};border-radius:0.4em;"
        f"padding:0.05em 0.45em;font-family:monospace;font-size:0.95em'>{name}</span>"
    )


# This browser's role in a class (presenter mode, a room, a room followed, a hand-over), never part of a link to a
# view: one list (mpviz/contracts/personal_keys.json), which the stepper's "Copy link" (place.js) imports too.
PERSONAL_KEYS: tuple[str, ...] = contracts.PERSONAL_KEYS


def presenting() -> bool:
    """Whether this session is in presenter mode (`?present=1`, the sidebar toggle): larger type for a projector."""
    return bool(st.session_state.get("present", False))


def chart(fig: go.Figure, *, where: Container = st, key: str | None = None) -> None:
    """Show a plotly figure, full width; in presenter mode with projector-sized text (a copy: figures are shared
    and stay free of Streamlit; a shared figure's copy is made once). `where` is the container (a column, a
    placeholder)."""
    if presenting():
        fig = fig.presented() if isinstance(fig, SharedFigure) else SharedFigure.of_spec(presented_spec(fig.to_dict()))
    where.plotly_chart(fig, width="stretch", key=key)


def row(where: Container = st) -> DeltaGenerator:
    """Widgets side by side that wrap on a narrow screen: one block for the browser, where `st.columns(n)` sends
    n + 1 (a class pays for every block of every run)."""
    return where.container(horizontal=True, vertical_alignment="bottom", gap="medium")


@contextmanager
def expert(title: str, *, where: Container = st, heading: str = "subheader", help: str | None = None) -> Iterator[None]:
    """A section only experts need (library disagreements, every finfo field, long op tables, tables too wide for a
    projector at 1024 px): shown as usual under its title (`heading` "subheader" with an optional `help`, "bold", or
    "none" for no title), folded into a closed expander titled `title` in presenter mode, so the lesson's main
    points stay on the screen."""
    if presenting():
        with where.expander(title):
            yield
        return
    with where.container():
        if heading == "subheader":
            st.subheader(title, help=help)
        elif heading == "bold":
            st.markdown(f"**{title}**")
        yield


@contextmanager
def reference(title: str, key: str, *, where: Container = st, expanded: bool = False) -> Iterator[bool]:
    """A reference section few readers open (library disagreements, every finfo field, a fifteen-column table): a
    closed expander titled `title` in every mode (`expanded`: open at first), whose contents the caller builds only
    while it is open (the yielded bool; `key` keeps it open across reruns). A class opening the page pays nothing
    for it. `title` must not change with what it holds, and `expanded` counts as given on the session's first run of
    the section: Streamlit's identity of an expander includes both, and a new identity remounts it (the field being
    typed in loses focus, and the section may close under the reader)."""
    at_first = st.session_state.setdefault(f"_expanded_at_first:{key}", expanded)
    box = where.expander(title, expanded=at_first, key=key, on_change="rerun")
    with box:
        yield box.open


def share_link(url_path: str) -> None:
    """The link that reopens this exact view: this page plus every piece of state in the URL (the language too),
    without this browser's role in a class (PERSONAL_KEYS)."""
    words = text.section("common")
    base = urlsplit(st.context.url or "http://localhost:8501")
    query = {k: v for k, v in st.query_params.to_dict().items() if k not in PERSONAL_KEYS}
    if lang := st.session_state.get("lang"):  # the address bar leaves English out for an English browser; a link
        query["lang"] = lang  # may reach a Chinese one (README: links keep the language)
    query = urlencode(query)
    link = f"{base.scheme}://{base.netloc}/{url_path}" + (f"?{query}" if query else "")
    st.sidebar.caption(f"**{words['share']}**: {words['share_help']}")  # one element: every page run sends it
    st.sidebar.code(link, language=None, wrap_lines=True)
