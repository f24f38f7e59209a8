"""Start here: the guided lesson's stops at a glance, each one click away (mpviz/app/tour.py opens them)."""

import streamlit as st

from mpviz.app import text, tour
from mpviz.app.page import page_header

TEXT = text.section("tour")
page_header(TEXT)
at = st.session_state.get("tour", 0)
begin = TEXT["resume"].format(n=at) if at else TEXT["begin"]
st.button(begin, on_click=tour.open_stop, args=(at or 1,), type="primary", key="tour_begin")
for n, stop in enumerate(tour.stops(), start=1):  # two elements a stop: a class opening this page waits on each
    words = tour.stop_words(stop)
    st.markdown(TEXT["stop_line"].format(n=n, title=words["title"], question=tour.fill(words["question"], stop)))
    st.button(
        TEXT["open_stop"].format(n=n) + " " + TEXT["on_lesson"].format(lesson=tour.lesson_title(stop.page)),
        on_click=tour.open_stop,
        args=(n,),
        key=f"tour_open_{n}",
        type="tertiary",
    )
