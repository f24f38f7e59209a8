"""Navigation from the lesson registry, and the one workaround it needs.

Streamlit sees a `pages/` folder next to app.py and runs a fresh process's very first script run in its legacy
multipage mode: it lists that folder itself and may execute a page file directly, skipping app.py (so the sidebar
config, the text language and navigation titles would be missing from that run). `st.navigation` switches the mode
off for every later run; `leave_legacy_pages_mode` switches it off for the first one too. tests/test_navigation.py
shows the failure it prevents.
"""

from __future__ import annotations

import streamlit as st
from streamlit.navigation.page import StreamlitPage

# Private API: the class attribute Streamlit reads to pick legacy pages/ mode. If a Streamlit upgrade renames it,
# this import fails loudly (tests/test_navigation.py) instead of the first visitor silently getting the legacy run.
from streamlit.runtime.pages_manager import PagesManager

from mpviz.app import lessons, text


def leave_legacy_pages_mode() -> None:
    """Make app.py's st.navigation the entry point, even on a fresh process's very first run.

    Called from app.py and from `mpviz.app.page.page_header` (which every page calls first), never at import time: a
    rerun raised during an import would break that import for concurrent sessions.
    """
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def navigation() -> tuple[StreamlitPage, lessons.Lesson]:
    """One st.Page per registered lesson, titled and ordered as the registry says; returns the page this run shows
    (call its .run()) and its lesson. The lesson marked `home` is the home page, whose URL path is empty."""
    pages = {}
    for entry in lessons.LESSONS:
        words = text.section(entry.slug)
        title = words.get("nav", words["title"])
        page = st.Page(entry.page, title=title, icon=entry.icon, url_path=entry.slug, default=entry.home)
        pages[page] = entry
    current = st.navigation(list(pages))
    return current, pages[current]
