"""At most SLOTS page runs at once in this process; the others wait their turn, roughly in the order they came.

Every session's run of app.py holds a slot from its first line to its last (`page_run`). Streamlit would start them
all at once, on threads that share one GIL: when a class of 30 asks for a page together (a presenter's page change
reaching its followers, a link opened by the whole room), all 30 runs then finish together, at the end, each slowed
by the others. Taken in turn they finish one after another: the first students see the page after one run instead
of after thirty, and the last no later than before. A page change reaching 30 followers (tests/
test_classroom_browser.py, 2 cores, four runs each): p50 0.60-0.69 s → 0.38-0.54 s, p95 0.85-1.02 s → 0.66-0.74 s
(with mpviz.app.follow's poll at 0.4 s instead of 0.5 s); a class of 30 opening one link (tests/test_load.py): p50
0.20 s → 0.14-0.18 s.

A run that is about to wait (for a result another session is computing, for the admission gate, for a worker
process, or pacing a replay) first gives its slot back (`stepped_aside`), so a wait never holds up runs that have
nothing to wait for; it takes a slot again before it draws on. SLOTS is 2, not 1: a run still blocked somewhere
this module does not know of (a first-time probe in a child process) leaves the other slot to everyone else.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

SLOTS = 2
_slots = threading.BoundedSemaphore(SLOTS)
_local = threading.local()  # .holding: whether this thread's page run holds a slot now
_begun = 0  # page runs begun and not ended: waiting for a slot, holding one or stepped aside
_begun_lock = threading.Lock()


def runs_in_progress() -> int:
    """How many page runs have begun and not ended (whatever they wait for): background work (mpviz.app.warm_up)
    yields to them."""
    return _begun


def _holding() -> bool:
    return getattr(_local, "holding", False)


@contextmanager
def page_run() -> Iterator[None]:
    """app.py's whole run: wait for a slot, hold it until the run ends (also by st.rerun, st.stop or an error)."""
    global _begun
    with _begun_lock:
        _begun += 1
    try:
        _slots.acquire()
        _local.holding = True
        try:
            yield
        finally:
            if _holding():
                _local.holding = False
                _slots.release()
    finally:
        with _begun_lock:
            _begun -= 1


@contextmanager
def stepped_aside() -> Iterator[None]:
    """Around a wait inside a page run: the slot is given back meanwhile and taken again afterwards (also when the
    wait ends in an error the page then shows). Outside a page run (a fragment's own rerun, a page test) nothing."""
    if not _holding():
        yield
        return
    _local.holding = False
    _slots.release()
    try:
        yield
    finally:
        _slots.acquire()
        _local.holding = True
