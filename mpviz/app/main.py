"""The app's shell, run once per page run: page config, the shared sidebar (classroom, run config, share link),
navigation from the lesson registry (mpviz.app.lessons), and the classroom around every lesson (mpviz.app.classroom:
presenter mode, follow-me, the guided lesson); the first run of a server nobody warmed starts its warm-up
(mpviz.app.warm_up). `streamlit run app.py` in a checkout and `mpviz app` (which runs
mpviz/app/serve.py, the same app behind the headers a public host needs) both call `run()`.
"""

from importlib.resources import files

import plotly.io as pio
import streamlit as st

from mpviz.app import classroom, text, warm_up
from mpviz.app.language import choose_language, language_switch
from mpviz.app.navigation import navigation
from mpviz.app.page import guarded, share_link, show_warnings
from mpviz.app.run_config import sidebar_config
from mpviz.app.serving import (
    results,  # noqa: F401  the view models' memo host, installed before any runs
    run_slots,
)
from mpviz.presentation.figures.style import TEMPLATE

pio.templates.default = TEMPLATE  # the app's process, the app's figures (see mpviz.presentation.figures.style)
STYLE = files("mpviz.app").joinpath("static", "style.css").read_text(encoding="utf-8")


def run() -> None:
    """One run of the app's script: Streamlit calls the entry script again for every rerun."""
    warm_up.start_in_server()  # `streamlit run app.py` has no start-up hook: its first run starts the warm-up thread
    with run_slots.page_run():  # a class asking at once is served in turn, not all slowed together
        choose_language()  # before any words: page title, navigation titles, sidebar
        presenter_link = st.query_params.get("present") == "1"  # a projector wants the width: the sidebar starts closed
        st.set_page_config(
            page_title=text.section("common")["app_title"],
            page_icon="🧮",
            layout="wide",
            initial_sidebar_state="collapsed" if presenter_link else "auto",
        )
        st.html(STYLE)
        language_switch()  # the sidebar's first control
        nav, lesson = navigation()
        st.session_state["_page"] = lesson.slug  # which lesson runs: mpviz.app.url records the URL keys it declares
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
