"""The session's language: from the link (`?lang=zh` / `?lang=en`), else the browser's, else English; switched in
the sidebar.

app.py calls `choose_language` before anything renders words (the navigation titles are words too). It costs a
dictionary lookup per run and no extra rerun: the switch is a keyed widget, so a click's own rerun already starts
in the new language. The language is left out of a link only where it changes nothing: English, for a browser
that asks for English. So a link from a Chinese view says `lang=zh`, and an English choice made in a Chinese
browser survives a reload.
"""

from __future__ import annotations

import streamlit as st

from mpviz.app import text
from mpviz.app.url import UrlParam, parse_choice, seed_from_url

KEY = "lang"
NAMES = {"en": "English", "zh": "中文"}  # each language in its own words: the switch reads the same in both


def browser_language(locale: str | None) -> str:
    """The UI language for a browser's `navigator.language`: any Chinese (zh, zh-CN, zh-Hans, zh-TW …) → "zh"."""
    primary = (locale or "").replace("_", "-").split("-")[0].lower()
    return "zh" if primary == "zh" else text.DEFAULT_LANGUAGE


def choose_language() -> str:
    """Put this session's language into session state (URL first, then the browser) and keep the URL in step."""
    browser = browser_language(st.context.locale)
    # default = the browser's language: a link without ?lang opens in the reader's own language; a bad value warns.
    seed_from_url([UrlParam(KEY, browser, parse_choice(text.LANGUAGES))])
    lang = st.session_state[KEY]
    if lang == browser == text.DEFAULT_LANGUAGE:
        if KEY in st.query_params:
            del st.query_params[KEY]
    elif st.query_params.get(KEY) != lang:
        st.query_params[KEY] = lang
    return lang


def language_switch() -> None:
    """The "English / 中文" control at the top of the sidebar; its rerun starts in the chosen language."""
    st.sidebar.segmented_control(
        text.section("common")["language"],  # for screen readers; hidden on screen
        text.LANGUAGES,
        key=KEY,
        format_func=NAMES.get,
        required=True,
        label_visibility="collapsed",
    )
