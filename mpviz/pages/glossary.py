"""Glossary: every term the lessons use, defined once (mpviz/locales/<lang>/glossary.toml)."""

import streamlit as st

from mpviz.app import glossary, text
from mpviz.app.page import page_header

page_header(text.section("glossary"))
st.markdown("\n\n".join(f"**{t['term']}** — {t['text']}" for t in glossary.terms().values()))
