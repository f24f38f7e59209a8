"""Navigation from the lesson registry.

The pages live in the package (mpviz/pages), never in a `pages/` folder beside the entry script (app.py or
mpviz/app/entry.py): Streamlit would run a fresh process's first run in its legacy multipage mode from such a folder
and could skip the entry script. tests/test_navigation.py checks that no such folder exists.
"""

from __future__ import annotations

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from mpviz.app import lessons, text


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
