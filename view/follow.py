"""Follow me: a presenter's view, published to a room (view.rooms) that students' sessions follow.

Presenter (presenter mode on): at the end of every run app.py publishes the lesson, its URL state and, on the
attention lesson, the stepper's place (the stepper reports every move in presenter mode: one rerun of the
presenter's session per step). The room code is the presenter's `mpviz_route` cookie, so behind the proxy every
follower is routed to this replica (deploy/README.md); without the proxy it is a short random code.

Follower (`?follow=CODE`): a small fragment polls the room every POLL_S seconds and compares one integer, the
room's version. Only when it changed does anything happen: another page or URL state asks for a full run
(view.url.open_view), a new stepper place is sent down the go-to channel (view.goto) without any page run. Stopping
keeps the follower where they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode, urlsplit

import streamlit as st

# Not st.* API: a session's id and whether it is still connected are what rooms are keyed on; a move fails this
# import (tests/test_rooms.py, tests/test_classroom_browser.py), and presenters can no longer be told apart.
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from mpviz import lessons
from view import goto, text
from view.page import presenting
from view.rooms import KEY, ROOMS, Room, RoomView, random_key
from view.stepper import PLACE
from view.url import BROWSER_KEYS, KEEP, open_view

POLL_S = 0.5  # a follower's view trails the presenter's by at most this, plus one round trip
ROUTE_COOKIE = "mpviz_route"  # set by the proxy (deploy/nginx.conf.template)
ROOM = "_room"  # session key: the presenter's room code
FOLLOWED = "_followed"  # session key: (version, RoomView) of the room view this follower last took


def session_id() -> str:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no-session"


def _alive(session: str) -> bool:
    """Whether a room's owner is still connected (a presenter who reloaded is not: the new session takes over)."""
    return not Runtime.exists() or Runtime.instance().is_active_session(session)


def route_key() -> str | None:
    """This browser's proxy route key, if a proxy set one (HttpOnly hides it from page scripts, not from us)."""
    key = st.context.cookies.get(ROUTE_COOKIE)
    return key if isinstance(key, str) and KEY.fullmatch(key) else None


# ── presenter ───────────────────────────────────────────────────────────────────────────────────────────────
def room_code() -> str:
    """This presenter's room, opened on first use: the route key (routes followers here), else a random code."""
    code = st.session_state.get(ROOM)
    if code is None:
        code = ROOMS.open(route_key() or random_key(), session_id(), _alive)
        st.session_state[ROOM] = code
    return code


def publish(lesson: lessons.Lesson) -> None:
    """End of a presenter's run: this view is the room's (followers see a new version only if it changed). Out of
    presenter mode, a room this session held is closed."""
    if not presenting():
        if (code := st.session_state.pop(ROOM, None)) is not None:
            ROOMS.close(code, session_id())
        return
    query = {k: v for k, v in st.query_params.to_dict().items() if k not in KEEP and k not in BROWSER_KEYS}
    place = st.session_state.get(PLACE) if lesson.url_in_browser else None
    if ROOMS.publish(room_code(), session_id(), RoomView(lesson.slug, query, place)) < 0:
        st.session_state.pop(ROOM, None)  # another session took the code over: open a new room next run


def follow_link(code: str) -> str:
    base = urlsplit(st.context.url or "http://localhost:8501")
    return f"{base.scheme}://{base.netloc}/?{urlencode({'follow': code})}"


# ── follower ────────────────────────────────────────────────────────────────────────────────────────────────
def following() -> str:
    """The room code this session follows, or ""."""
    return st.session_state.get("follow", "")


def _news(code: str) -> Room | None:
    """The room, if it has a view this follower has not taken yet."""
    room = ROOMS.get(code)
    seen = st.session_state.get(FOLLOWED)
    if room is None or room.view is None or (seen is not None and seen[0] == room.version):
        return None
    return room


def _take(room: Room, *, in_fragment: bool) -> bool:
    """Take the room's view; True when that needs a full run (another page or URL state, requested here)."""
    seen = st.session_state.get(FOLLOWED)
    st.session_state[FOLLOWED] = (room.version, room.view)
    view = room.view
    if seen is None or not view.same_place(seen[1]):
        open_view(view.page, view.query)
        if view.stepper:
            goto.plan(view.page, dict(view.stepper))
        return True
    if view.stepper and view.stepper != seen[1].stepper:
        goto.plan(view.page, dict(view.stepper))  # later full runs keep mounting it (delivered once, by id)
        if in_fragment:
            planned = st.session_state[goto.PENDING]
            goto.mount(planned["id"], planned["target"], key="goto_follow")
    return False


def join() -> None:
    """Top of a run, before any widget: a follower takes the room's newest view (applied by this same run)."""
    if (code := following()) and (room := _news(code)) is not None:
        _take(room, in_fragment=False)


@st.fragment(run_every=POLL_S)
def _poll() -> None:
    """A follower's tick: one dictionary look-up and one integer compared, unless the presenter moved."""
    code = following()
    if code and (room := _news(code)) is not None and _take(room, in_fragment=True):
        st.rerun(scope="app")


def stop_following() -> None:
    st.session_state["follow"] = ""
    st.session_state.pop(FOLLOWED, None)


# ── the sidebar ─────────────────────────────────────────────────────────────────────────────────────────────
def sidebar(words: Mapping) -> None:
    """Presenter: the room's link to hand out. Follower: whom they follow, a way to stop, and the poll."""
    sb = st.sidebar
    if presenting():
        code = room_code()
        sb.markdown(words["room"].format(code=text.echo(code)))
        sb.code(follow_link(code), language=None, wrap_lines=True)
    if code := following():
        known = ROOMS.get(code) is not None
        sb.info(words["following" if known else "waiting"].format(code=text.echo(code)), icon="📡")
        sb.button(words["stop_following"], on_click=stop_following, key="stop_following")
        with sb:
            _poll()
