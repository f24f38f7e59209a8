"""Keep process-wide dispatcher changes from leaking into other threads' autocast runs.

Streamlit serves every session from threads of one process. Emulating CUDA's autocast policy on CPU registers
kernels at the process-wide AutocastCPU key, which would change what a concurrent plain-CPU autocast run
computes. So: every CPU autocast computation holds `autocast_shared()`; the emulation holds
`autocast_exclusive()` while its kernels are registered. Many plain runs may overlap; an emulated run is alone.

Who holds the shared side: `mpviz.trace` on a CPU device (for its whole block, so any user code traced through
the public API is safe), and mpviz's own untraced CPU autocast runs. What is NOT protected: plain
`torch.autocast("cpu")` code that runs outside `mpviz.trace` on another thread while an emulation is in flight; it
can meet CUDA's policy there. Wrap such code in `autocast_shared()` to be safe.

The shared side is reentrant on one thread: shared inside shared, and shared inside this thread's exclusive region.
Taking the exclusive side while this thread already holds either side would wait forever, so it raises instead.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager


class _ReadWriteLock:
    """Writer-preferring readers–writer lock (a waiting writer blocks new readers so it cannot starve)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0
        self._owner: int | None = None
        self._held = threading.local()  # this thread's depth of shared holds

    def _depth(self) -> int:
        return getattr(self._held, "depth", 0)

    @contextmanager
    def shared(self) -> Iterator[None]:
        me = threading.get_ident()
        if self._owner == me or self._depth():  # the exclusive holder, or a reader already in: no new wait
            self._held.depth = self._depth() + 1
            try:
                yield
            finally:
                self._held.depth -= 1
            return
        with self._cond:
            self._cond.wait_for(lambda: not self._writer and not self._writers_waiting)
            self._readers += 1
        self._held.depth = 1
        try:
            yield
        finally:
            self._held.depth = 0
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        if self._depth() or self._owner == threading.get_ident():
            raise RuntimeError("this thread already holds the autocast lock: taking it exclusively would deadlock")
        with self._cond:
            self._writers_waiting += 1
            self._cond.wait_for(lambda: not self._writer and self._readers == 0)
            self._writers_waiting -= 1
            self._writer, self._owner = True, threading.get_ident()
        try:
            yield
        finally:
            with self._cond:
                self._writer, self._owner = False, None
                self._cond.notify_all()


_lock = _ReadWriteLock()


def autocast_shared() -> AbstractContextManager[None]:
    """Hold while running anything under CPU autocast (traces, training steps)."""
    return _lock.shared()


def autocast_exclusive() -> AbstractContextManager[None]:
    """Hold while process-wide autocast kernels are swapped (the CUDA-policy emulation)."""
    return _lock.exclusive()
