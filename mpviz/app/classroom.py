"""The classroom around every lesson: presenter mode, follow-me, the guided lesson's bar. app.py calls `start`
first in every run, `sidebar` with the sidebar, `bar` above the page and `finish` after it.

URL keys (all pages): `present=1` presenter mode, `follow=CODE` follow a presenter's room, `tour=N` the guided
lesson's stop N and `reveal=1` its answer shown (mpviz/app/tour.py), `handover=TOKEN` a one-time link that moves a
presenter to another device (mpviz/app/follow.py). Which room a presenter holds is never in the URL (a presenter key in
the browser, mpviz/app/follow.py); `room=` of older links is dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files

import streamlit as st

from mpviz.app import follow, goto, lessons, text, tour
from mpviz.app.page import presenting
from mpviz.app.rooms import parse_code
from mpviz.app.url import UrlParam, dump_bool, open_requested_view, parse_bool, seed_from_url, write_url

PARAMS = [
    UrlParam("present", False, parse_bool, dump_bool),
    UrlParam("follow", "", parse_code),
    *tour.url_params(),
]
PRESENTER_CSS = f"<style>{files('mpviz.app').joinpath('static', 'presenter.css').read_text(encoding='utf-8')}</style>"


def start(lesson: lessons.Lesson) -> None:
    """Top of a run, before any widget: read the classroom keys, let a follower take the presenter's newest view,
    and apply a view that a tour stop or the presenter asked for (which may switch the page)."""
    seed_from_url(PARAMS)
    if "room" in st.query_params:  # older presenter links named the room: it is no longer theirs to name
        del st.query_params["room"]
    follow.take_over_from_link()
    follow.join()
    open_requested_view(lesson.slug)
    seed_from_url(PARAMS)  # `tour` again, if the opened view changed it


def sidebar() -> None:
    """The presenter-mode toggle, the room or the room followed; presenter mode's styles."""
    words = text.section("classroom")
    st.sidebar.toggle(words["present"], key="present", help=words["present_help"])
    if presenting():
        st.html(PRESENTER_CSS)
    else:
        follow.close_room()
    follow.sidebar(words)
    write_url(PARAMS)


def bar(lesson: lessons.Lesson) -> Callable[[], None] | None:
    """Above the page: in presenter mode this view published to the room, the follow link, for the class to read
    off the screen, and how many follow; a follower's poll (and word that the presenter is gone); the guided
    lesson's bar while a stop is open. Returns what finishes the bar after the page ran."""
    words = text.section("classroom")
    if presenting():
        # Published before the page runs as well as after: a page change reaches the followers while the
        # presenter's own run of the new page goes on (what the page then writes into the URL, its settings off
        # their defaults, follows at `finish`).
        follow.publish(lesson)
        follow.banner(words)
    if follow.following():
        follow.poll(words)
    return tour.bar(lesson)


def finish(lesson: lessons.Lesson) -> None:
    """After the page ran: publish a presenter's view; deliver a planned go-to (a stop's place, the presenter's)."""
    follow.publish(lesson)
    goto.mount_planned(lesson.slug)
