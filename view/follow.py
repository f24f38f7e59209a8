"""Follow me: a presenter's view, published to a room (view.rooms) that students' sessions follow.

Presenter (presenter mode on): above the page and again at the end of every run (view.classroom) the lesson, its URL
state and, on the attention lesson, the stepper's place are published (the stepper reports every move in presenter
mode: one rerun of the presenter's session per step). The room code is the presenter's `mpviz_route` cookie, so
behind the proxy every follower is routed to this replica (deploy/README.md); without the proxy it is a short random
code. The code is kept in the presenter's URL (`?room=CODE`), so a presenter who reloads takes the same room back
and the class keeps following. Above the lesson the presenter sees the follow link in large type, a QR code of it
(drawn here by segno, no network) and how many students follow, refreshed every AUDIENCE_S seconds.

Follower (`?follow=CODE`): a small fragment polls the room every POLL_S seconds and compares one integer, the
room's version. Only when it changed does anything happen: another page or URL state asks for a full run
(view.url.open_view), a new stepper place is sent down the go-to channel (view.goto) without any page run. Stopping
keeps the follower where they are. A presenter disconnected for more than GONE_S seconds is said so, above the
lesson, until one takes the room again.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from functools import lru_cache
from urllib.parse import urlencode, urlsplit

import segno
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
from view.url import BROWSER_KEYS, KEEP, open_requested_view, open_view

POLL_S = 0.4  # a follower's view trails the presenter's by at most this, plus one round trip
GONE_S = 10.0  # a presenter disconnected this long is gone (a reload reconnects within a few seconds)
AUDIENCE_S = 2.0  # how often the presenter's count of followers is refreshed (one small rerun of the banner)
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
    """This presenter's room, opened on first use: the code in the URL's `room` if this presenter may take it
    (it is free or its presenter is gone, and behind the proxy it routes here), else the route key (routes
    followers here), else a random code. The URL's `room` is then this room's code."""
    code = st.session_state.get(ROOM)
    if code is None:
        key = route_key()
        wanted = st.session_state.get("room") or None
        if wanted and key is not None and wanted.split("-")[0] != key:
            wanted = None  # its followers are routed to another replica
        code = ROOMS.open(key or random_key(), session_id(), _alive, exact=wanted)
        st.session_state[ROOM] = code
        st.session_state["room"] = code
    return code


def close_room() -> None:
    """Out of presenter mode: the room this session held closes, and the URL forgets it."""
    if (code := st.session_state.pop(ROOM, None)) is not None:
        ROOMS.close(code, session_id())
    st.session_state["room"] = ""


def publish(lesson: lessons.Lesson) -> None:
    """A presenter's run, above the page and after it: this view is the room's (followers see a new version only
    if it changed). Out of presenter mode, nothing is published (view.classroom closes the room)."""
    if not presenting():
        return
    query = {k: v for k, v in st.query_params.to_dict().items() if k not in KEEP and k not in BROWSER_KEYS}
    place = st.session_state.get(PLACE) if lesson.url_in_browser else None
    if ROOMS.publish(room_code(), session_id(), RoomView(lesson.slug, query, place)) < 0:
        st.session_state.pop(ROOM, None)  # another session took the code over: open a new room next run
        st.session_state["room"] = ""


def follow_link(code: str) -> str:
    base = urlsplit(st.context.url or "http://localhost:8501")
    return f"{base.scheme}://{base.netloc}/?{urlencode({'follow': code})}"


@lru_cache(maxsize=64)
def qr_svg(link: str) -> str:
    """The link as a QR code, an inline SVG drawn in this process (segno): a phone scans it off the projector."""
    return segno.make(link, error="m").svg_inline(scale=6, border=2, dark="#111111", light="#ffffff")


@st.fragment(run_every=AUDIENCE_S)
def banner(words: Mapping) -> None:
    """The presenter's line above the lesson: the follow link in type a back row can read, how many follow now
    (refreshed every AUDIENCE_S s, by this fragment alone), and the link's QR code in a popover."""
    code = room_code()
    link = follow_link(code)
    row = st.container(horizontal=True, vertical_alignment="center", key="room_banner")
    row.markdown(words["room_banner"].format(link=text.echo(link)))
    row.markdown(words["audience"].format(n=ROOMS.audience(code)))
    with row.popover(words["qr"]):
        st.html(f"<div class='mpviz-qr' role='img' aria-label='{html.escape(link, quote=True)}'>{qr_svg(link)}</div>")
        st.markdown(text.echo(link))


# ── follower ────────────────────────────────────────────────────────────────────────────────────────────────
def following() -> str:
    """The room code this session follows, or ""."""
    return st.session_state.get("follow", "")


def _elsewhere(view: RoomView) -> bool:
    """Whether this session runs another lesson than `view`'s: a view taken whose page run never came (a rerun lost
    in a race of reruns) is taken again, instead of leaving the student there until the presenter moves."""
    return st.session_state.get("_page", view.page) != view.page


def _news(room: Room | None) -> Room | None:
    """The room, if it has a view this follower has not taken yet (or took, and is not on its page)."""
    seen = st.session_state.get(FOLLOWED)
    if room is None or room.view is None:
        return None
    if seen is not None and seen[0] == room.version and not _elsewhere(room.view):
        return None
    return room


def _take(room: Room, *, in_fragment: bool) -> bool:
    """Take the room's view; True when that needs a full run (another page or URL state, requested here). The
    presenter's stepper place goes down the go-to channel, which also scrolls the follower's step card into view."""
    seen = st.session_state.get(FOLLOWED)
    st.session_state[FOLLOWED] = (room.version, room.view)
    view = room.view
    place = {**view.stepper, "scroll": "card"} if view.stepper else None
    if seen is None or not view.same_place(seen[1]) or _elsewhere(view):
        open_view(view.page, view.query)
        if place:
            goto.plan(view.page, place)
        return True
    if place and view.stepper != seen[1].stepper:
        goto.plan(view.page, place)  # later full runs keep mounting it (delivered once, by id)
        if in_fragment:
            planned = st.session_state[goto.PENDING]
            goto.mount(planned["id"], planned["target"], key="goto_follow")
    return False


def join() -> None:
    """Top of a run, before any widget: a follower takes the room's newest view (applied by this same run)."""
    if (code := following()) and (room := _news(ROOMS.poll(code, session_id(), _alive)[0])) is not None:
        _take(room, in_fragment=False)


@st.fragment(run_every=POLL_S)
def poll(words: Mapping) -> None:
    """A follower's tick: one dictionary look-up and one integer compared, unless the presenter moved; and, once
    the presenter has been disconnected for GONE_S seconds, a line that says so (gone again when one is back)."""
    code = following()
    if not code:
        return
    room, gone_s = ROOMS.poll(code, session_id(), _alive)
    if gone_s > GONE_S:
        st.warning(words["presenter_gone"].format(code=text.echo(code), s=int(gone_s)), icon="📴")
    if (room := _news(room)) is not None and _take(room, in_fragment=True):
        # Another page: switch to it from here (one run of the new page), not via a rerun of this page whose
        # classroom.start would then switch (two runs per follower; with a class of them queued on one GIL, the
        # difference is what a page change waits for).
        open_requested_view(st.session_state.get("_page", ""))
        st.rerun(scope="app")


def stop_following() -> None:
    st.session_state["follow"] = ""
    st.session_state.pop(FOLLOWED, None)


# ── the sidebar ─────────────────────────────────────────────────────────────────────────────────────────────
def sidebar(words: Mapping) -> None:
    """Presenter: the room's link to hand out. Follower: whom they follow and a way to stop (the poll runs above
    the lesson: `poll`)."""
    sb = st.sidebar
    if presenting():
        code = room_code()
        sb.markdown(words["room"].format(code=text.echo(code)))
        sb.code(follow_link(code), language=None, wrap_lines=True)
    if code := following():
        known = ROOMS.get(code) is not None
        sb.info(words["following" if known else "waiting"].format(code=text.echo(code)), icon="📡")
        sb.button(words["stop_following"], on_click=stop_following, key="stop_following")
