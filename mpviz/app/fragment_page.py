"""A ticking fragment's run that outlived its page is sent back to the page the session is on.

A `st.fragment(run_every=...)` tick (a follower's poll, a presenter's audience count: mpviz/app/follow.py) asks the
server to run that fragment on the page the browser showed when the tick fired. A tick sent while the session
switches pages (a follower taking the presenter's new page) waits behind the switch's run and then runs with the
old page: Streamlit takes that as another page change, resets the session's page to the old one, and the browser
clears the new page's elements for it; the next tick swaps back again, but only fragments run from then on, so the
new lesson stays blank (its stepper never drew) until something asks for a full run. Seen in Chromium on a loaded
2-core machine in 5 of 8 presenter page walks (tests/test_page_walk.py), with the stepper's key and Back fixes (3 of
4) and without them (2 of 4); the websocket showed the tick's run carrying the page the follower had left.

So each ticking fragment calls `keep_to_page()` first: a full run notes the page it ran; a fragment run on another
page switches back to that page (one full run, which draws it again) instead of drawing anything.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from mpviz.app import lessons

__all__ = ["keep_to_page"]

SHOWN = "_full_run_page"  # session key: the script hash of the page the last full run drew


def keep_to_page() -> None:
    """In a full run: note its page. In a fragment's own run on another page than that: switch to the page the
    session is on (st.session_state["_page"], set by app.py), with the URL's state as it is; this run ends here."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    if not ctx.fragment_ids_this_run:
        st.session_state[SHOWN] = ctx.page_script_hash
        return
    shown = st.session_state.get(SHOWN)
    if shown is None or shown == ctx.page_script_hash or "_page" not in st.session_state:
        return
    st.switch_page(lessons.lesson(st.session_state["_page"]).page, query_params=st.query_params.to_dict())
