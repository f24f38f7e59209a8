"""mpviz: step through a real self-attention forward and backward under torch.autocast, op by op.

Entry point: page config, the shared sidebar (classroom, run config, share link), navigation from the lesson
registry, and the classroom around every lesson (view.classroom: presenter mode, follow-me, the guided lesson).
"""

from pathlib import Path

import streamlit as st

from view import classroom, run_slots, text, warm_up
from view.language import choose_language, language_switch
from view.navigation import leave_legacy_pages_mode, navigation
from view.page import guarded, share_link, show_warnings
from view.run_config import sidebar_config

with run_slots.page_run():  # a class asking at once is served in turn, not all slowed together
    choose_language()  # before any words: page title, navigation titles, sidebar
    presenter_link = st.query_params.get("present") == "1"  # a projector wants the width: the sidebar starts closed
    st.set_page_config(
        page_title=text.section("common")["app_title"],
        page_icon="🧮",
        layout="wide",
        initial_sidebar_state="collapsed" if presenter_link else "auto",
    )
    leave_legacy_pages_mode()
    st.html(Path(__file__).with_name("assets").joinpath("style.css").read_text())
    language_switch()  # the sidebar's first control
    nav, lesson = navigation()
    st.session_state["_page"] = lesson.slug  # which lesson runs: view.url records the URL keys it declares
    classroom.start(lesson)  # before any widget: a tour stop or a followed presenter may open another view
    classroom.sidebar()
    st.session_state["_run_config"] = sidebar_config(lesson.run_config)
    show_warnings()
    warm_up.notice()  # a server that just started says how far its warm-up is
    finish_bar = classroom.bar(lesson)
    with guarded(lesson.slug):
        nav.run()
    if finish_bar is not None:
        finish_bar()
    classroom.finish(lesson)
    if not lesson.url_in_browser:  # there the component's own "Copy link" is the link
        share_link(nav.url_path)  # after the page ran: it has written its own state into the URL
