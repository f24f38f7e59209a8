"""Follow me: a presenter's view, published to a room (mpviz.app.rooms) that students' sessions follow.

Presenter (presenter mode on): above the page and again at the end of every run (mpviz.app.classroom) the lesson, its
URL state and, on the attention lesson, the stepper's place are published (the stepper reports every move in presenter
mode: one rerun of the presenter's session per step). A room belongs to a presenter key: 256 random bits that only
the presenter's browser keeps (localStorage, assets/components/presenter/presenter_key.js) and that reach the
server only as that component's state. So a reload, a new tab or a page change in that browser keeps the room, and
nothing a student can see or send (a link, the code, the `mpviz_route` cookie, the toggle) presents it. Another
device takes the room over only through a one-time hand-over link shown in the presenter's own sidebar. A presenter
whose room ended (everyone gone for mpviz.app.rooms.DEPARTED_S, the server restarted) is told so and opens a new one by
choice. The room code is the presenter's `mpviz_route` cookie behind the proxy (so every follower is routed to this
replica, deploy/README.md), else six easy-to-type random characters. Above the lesson the presenter sees the follow
link in large type, a QR code of it (drawn here by segno, no network) and how many students follow, refreshed every
AUDIENCE_S seconds.

Follower (`?follow=CODE`): a small fragment polls the room every POLL_S seconds and compares one integer, the
room's version. Only when it changed does anything happen: another page or URL state asks for a full run
(mpviz.app.url.open_view), a new stepper place is sent down the go-to channel (mpviz.app.goto) without any page run.
Stopping keeps the follower where they are. A presenter disconnected for more than GONE_S seconds is said so in a notice
fixed at the top of the follower's screen (wherever they scrolled to), and "is back" when one returns; the sidebar
says the same. Codes that lead nowhere are limited per client (mpviz.app.rooms.LookupLimiter).
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Mapping
from functools import lru_cache
from importlib.resources import files
from urllib.parse import urlencode, urlsplit

import segno
import streamlit as st

# Not st.* API: a session's id and whether it is still connected are what rooms are keyed on; a move fails this
# import (tests/test_rooms.py, tests/test_classroom_browser.py), and presenters can no longer be told apart.
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from mpviz.app import goto, lessons, text
from mpviz.app.client import client_id
from mpviz.app.fragment_page import keep_to_page
from mpviz.app.page import presenting, warn
from mpviz.app.rooms import (
    KEY,
    PRESENTER_KEY,
    ROOMS,
    Lookup,
    Room,
    RoomRefused,
    RoomView,
    new_presenter_key,
    random_key,
)
from mpviz.app.stepper import PLACE
from mpviz.app.url import BROWSER_KEYS, KEEP, open_requested_view, open_view

POLL_S = 0.4  # a follower's view trails the presenter's by at most this, plus one round trip
GONE_S = 10.0  # a presenter disconnected this long is gone (a reload reconnects within a few seconds)
BACK_S = 8.0  # how long a follower reads "the presenter is back"
AUDIENCE_S = 2.0  # how often the presenter's count of followers is refreshed (one small rerun of the banner)
ROUTE_COOKIE = "mpviz_route"  # set by the proxy (deploy/nginx.conf.template)
HANDOVER_PARAM = "handover"  # ?handover=TOKEN: a one-time link that moves the presenter key to another device
ROOM = "_room"  # session key: the presenter's room code
FOLLOWED = "_followed"  # session key: (version, RoomView) of the room view this follower last took
PRESENTER_KEY_STATE = "_presenter_key"  # session key: the browser's presenter key, once its component said it
FRESH = "_fresh_presenter_key"  # session key: a new key offered to a browser that holds none
STORED_CODE = "_stored_room"  # session key: the room code the browser kept beside its key
ADOPT = "_adopt_presenter_key"  # session key: a handed-over key the browser is to store
ENDED = "_room_ended"  # session key: the code of this presenter's room that ended (told, not silently replaced)
NEW_ROOM = "_new_room"  # session key: the presenter asked for a new room (or closed the last one)
REFUSED = "_room_refused"  # session key: why no room could be opened (mpviz.app.rooms.RoomRefused.reason)
HANDED = "_handover_link"  # session key: the hand-over link made in this session
GONE = "_presenter_gone"  # session key: whether this follower's presenter is gone (what the sidebar last said)
BACK_AT = "_presenter_back_at"  # session key: when this follower's presenter came back
LOOKUP_WAIT = "_lookup_wait"  # session key: seconds this follower's client must wait before trying a new code

_key_component = st.components.v2.component(
    "mpviz_presenter_key",
    js=files("mpviz.app").joinpath("static", "presenter_key.js").read_text("utf-8"),
)
FOLLOW_CSS = f"<style>{files('mpviz.app').joinpath('static', 'follow.css').read_text(encoding='utf-8')}</style>"


def session_id() -> str:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no-session"


def _alive(session: str) -> bool:
    """Whether a presenter session is still connected (a presenter who reloaded is not: the new one enters)."""
    return not Runtime.exists() or Runtime.instance().is_active_session(session)


def route_key() -> str | None:
    """This browser's proxy route key, if a proxy set one (HttpOnly hides it from page scripts, not from us)."""
    key = st.context.cookies.get(ROUTE_COOKIE)
    return key if isinstance(key, str) and KEY.fullmatch(key) else None


# ── presenter ───────────────────────────────────────────────────────────────────────────────────────────────
def _key_told() -> None:
    """The key component's state changed: its value is read by the rerun this starts."""


def presenter_key() -> str | None:
    """Mount the presenter key component (every full presenter run) and return the browser's key, once it said it.

    The browser keeps one key (creating it from the fresh one offered here if it has none, or storing a handed-over
    one) and reports it with the room code it kept beside it."""
    fresh = st.session_state.setdefault(FRESH, new_presenter_key())
    data = {"fresh": fresh}
    if adopt := st.session_state.get(ADOPT):
        data["adopt"] = adopt
    if code := st.session_state.get(ROOM):
        data["code"] = code
    with st.sidebar:
        result = _key_component(
            key="presenter_key", data=data, on_held_change=_key_told, width="stretch", height="content"
        )
    held = result.held
    key = held.get("key") if isinstance(held, dict) else None
    if isinstance(key, str) and PRESENTER_KEY.fullmatch(key) and (adopt is None or key == adopt):
        st.session_state.pop(ADOPT, None)
        st.session_state[PRESENTER_KEY_STATE] = key
        code = held.get("code")
        st.session_state[STORED_CODE] = code if isinstance(code, str) else None
    return st.session_state.get(PRESENTER_KEY_STATE)


def room_code() -> str | None:
    """This presenter's room code, or None while there is none: the browser has not said its key yet, the room it
    held ended (ENDED names it until the presenter opens a new one) or none could be opened (REFUSED says why)."""
    key = st.session_state.get(PRESENTER_KEY_STATE)
    if key is None:
        return None
    if (code := st.session_state.get(ROOM)) is not None:
        return code
    if (room := ROOMS.enter(key, session_id())) is not None:  # a reload, a new tab, a page change: the same room
        code = room.code
    elif not st.session_state.get(NEW_ROOM) and (
        ended := st.session_state.get(ENDED) or st.session_state.get(STORED_CODE)
    ):
        st.session_state[ENDED] = ended  # never silently another code: the presenter chooses a new room
        return None
    else:
        try:
            code = ROOMS.open(key, session_id(), client_id(), route_key() or random_key(), _alive)
        except RoomRefused as refused:
            st.session_state[REFUSED] = refused.reason
            return None
    for told in (ENDED, REFUSED, NEW_ROOM):
        st.session_state.pop(told, None)
    st.session_state[ROOM] = code
    return code


def close_room() -> None:
    """Out of presenter mode: the room this session held closes (turning presenter mode on opens a new one)."""
    if (code := st.session_state.pop(ROOM, None)) is not None:
        ROOMS.close(code, st.session_state.get(PRESENTER_KEY_STATE, ""))
        st.session_state[NEW_ROOM] = True


def publish(lesson: lessons.Lesson) -> None:
    """A presenter's run, above the page and after it: this view is the room's (followers see a new version only
    if it changed). Out of presenter mode, nothing is published (mpviz.app.classroom closes the room)."""
    if not presenting() or (code := room_code()) is None:
        return
    query = {k: v for k, v in st.query_params.to_dict().items() if k not in KEEP and k not in BROWSER_KEYS}
    place = st.session_state.get(PLACE) if lesson.url_in_browser else None
    if ROOMS.publish(code, st.session_state[PRESENTER_KEY_STATE], RoomView(lesson.slug, query, place)) < 0:
        st.session_state.pop(ROOM, None)  # the room ended (idle for hours): say so, never silently open another
        st.session_state[ENDED] = code


def _new_room() -> None:
    st.session_state[NEW_ROOM] = True
    st.session_state.pop(ENDED, None)


def hand_over(base_url: str) -> str | None:
    """A one-time link that makes another device this room's presenter (None without a room)."""
    if (code := room_code()) is None:
        return None
    token = ROOMS.hand_over(st.session_state[PRESENTER_KEY_STATE])
    return f"{base_url}/?{urlencode({'follow': code, HANDOVER_PARAM: token})}"


def take_over_from_link() -> None:
    """Top of a run: a hand-over link (`?handover=TOKEN`) makes this browser a presenter of the room, once; the
    token leaves the URL at once. A used or expired one is said so."""
    if (token := st.query_params.get(HANDOVER_PARAM)) is None:
        return
    del st.query_params[HANDOVER_PARAM]
    key = ROOMS.redeem(token) if isinstance(token, str) else None
    if key is None:
        warn(text.section("classroom")["handover_used"])
        return
    st.session_state[ADOPT] = st.session_state[PRESENTER_KEY_STATE] = key
    st.session_state.pop(ROOM, None)
    st.session_state["present"] = True
    st.session_state["follow"] = ""  # the link carried the code only to reach the room's replica


def follow_link(code: str) -> str:
    base = urlsplit(st.context.url or "http://localhost:8501")
    return f"{base.scheme}://{base.netloc}/?{urlencode({'follow': code})}"


@lru_cache(maxsize=64)
def qr_svg(link: str) -> str:
    """The link as a QR code, an inline SVG drawn in this process (segno): a phone scans it off the projector."""
    return segno.make(link, error="m").svg_inline(scale=6, border=2, dark="#111111", light="#ffffff")


def _no_room(words: Mapping) -> None:
    """What a presenter without a room reads: why, and (for a room that ended) the choice of a new one."""
    if ended := st.session_state.get(ENDED):
        st.warning(words["room_ended"].format(code=text.echo(ended)), icon="📴")
        if st.button(words["new_room"], key="new_room", on_click=_new_room):
            st.rerun(scope="app")  # the sidebar's link too
    elif refused := st.session_state.get(REFUSED):
        st.warning(words[f"room_refused_{refused}"], icon="🚫")
    else:
        st.caption(words["room_opening"])


@st.fragment(run_every=AUDIENCE_S)
def banner(words: Mapping) -> None:
    """The presenter's line above the lesson: the follow link in type a back row can read, how many follow now
    (refreshed every AUDIENCE_S s, by this fragment alone), and the link's QR code in a popover."""
    keep_to_page()  # a tick sent from the page the presenter just left draws nothing there
    if (code := room_code()) is None:
        _no_room(words)
        return
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


def _look(code: str) -> Lookup:
    """This follower's poll of room `code` (mpviz.app.rooms.Lookup); notes whether its presenter is gone or back."""
    look = ROOMS.poll(code, session_id(), client_id(), _alive)
    gone = look.room is not None and look.gone_s > GONE_S
    if st.session_state.get(GONE, False) and not gone and look.room is not None:
        st.session_state[BACK_AT] = time.monotonic()
    st.session_state[GONE] = gone
    st.session_state[LOOKUP_WAIT] = look.wait_s
    return look


def join() -> None:
    """Top of a run, before any widget: a follower takes the room's newest view (applied by this same run)."""
    if (code := following()) and (room := _news(_look(code).room)) is not None:
        _take(room, in_fragment=False)


def _notice():
    """The box of the notice fixed at the top of a follower's screen (follow.css)."""
    return st.container(key="follow_notice")


@st.fragment(run_every=POLL_S)
def poll(words: Mapping) -> None:
    """A follower's tick: one dictionary look-up and one integer compared, unless the presenter moved. A notice
    fixed at the top of the screen says the presenter has left (after GONE_S s) and then that they are back; when
    that changes, the whole page runs once so that the sidebar says the same."""
    keep_to_page()  # a tick sent from the page this follower just left draws nothing there
    code = following()
    if not code:
        return
    said = st.session_state.get(GONE, False)
    look = _look(code)
    # The fixed notice's box only when there is something to say: a quiet tick sends nothing (75 ticks a second
    # for a class of 30, each on the one GIL the page runs need)
    if look.wait_s > 0:
        _notice().warning(words["lookups_limited"].format(s=math.ceil(look.wait_s)), icon="⏳")
    elif st.session_state[GONE]:
        _notice().warning(words["presenter_gone"].format(code=text.echo(code), s=int(look.gone_s)), icon="📴")
    elif time.monotonic() - st.session_state.get(BACK_AT, float("-inf")) < BACK_S:
        _notice().success(words["presenter_back"].format(code=text.echo(code)), icon="📡")
    if st.session_state[GONE] != said:
        st.rerun(scope="app")  # rare (a presenter leaves or comes back): the sidebar follows
    if (room := _news(look.room)) is not None and _take(room, in_fragment=True):
        # Another page: switch to it from here (one run of the new page), not via a rerun of this page whose
        # classroom.start would then switch (two runs per follower; with a class of them queued on one GIL, the
        # difference is what a page change waits for).
        open_requested_view(st.session_state.get("_page", ""))
        st.rerun(scope="app")


def stop_following() -> None:
    st.session_state["follow"] = ""
    for key in (FOLLOWED, GONE, BACK_AT):
        st.session_state.pop(key, None)


# ── the sidebar ─────────────────────────────────────────────────────────────────────────────────────────────
def _hand_over_clicked() -> None:
    base = urlsplit(st.context.url or "http://localhost:8501")
    st.session_state[HANDED] = hand_over(f"{base.scheme}://{base.netloc}")


def sidebar(words: Mapping) -> None:
    """Presenter: the room's link to hand out, and (folded) a one-time link to present from another device.
    Follower: whom they follow, whether the presenter is there, and a way to stop (the poll runs above the lesson:
    `poll`)."""
    sb = st.sidebar
    if presenting():
        presenter_key()
        if (code := room_code()) is not None:
            sb.markdown(words["room"].format(code=text.echo(code)))
            sb.code(follow_link(code), language=None, wrap_lines=True)
            # open once a link is made: a rerun that remounts the sidebar's elements must not fold the link away
            with sb.expander(words["handover"], expanded=HANDED in st.session_state):
                st.caption(words["handover_help"])
                st.button(words["handover_make"], key="handover_make", on_click=_hand_over_clicked)
                if link := st.session_state.get(HANDED):
                    st.code(link, language=None, wrap_lines=True)
    if code := following():
        st.html(FOLLOW_CSS)
        if (wait := st.session_state.get(LOOKUP_WAIT, 0.0)) > 0:
            sb.warning(words["lookups_limited"].format(s=math.ceil(wait)), icon="⏳")
        elif ROOMS.get(code) is None:
            sb.info(words["waiting"].format(code=text.echo(code)), icon="📡")
        elif st.session_state.get(GONE, False):
            sb.warning(words["following_gone"].format(code=text.echo(code)), icon="📴")
        else:
            sb.info(words["following"].format(code=text.echo(code)), icon="📡")
        sb.button(words["stop_following"], on_click=stop_following, key="stop_following")
