"""Glossary: every term the lessons use, defined once (locales/<lang>/glossary.toml)."""

import streamlit as st

from view import glossary, text
from view.page import page_header

page_header(text.section("glossary"))
st.markdown("\n\n".join(f"**{t['term']}** — {t['text']}" for t in glossary.terms().values()))
