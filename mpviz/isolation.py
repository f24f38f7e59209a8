"""Keep process-wide dispatcher changes from leaking into other threads' autocast runs.

Streamlit serves every session from threads of one process. Emulating CUDA's autocast policy on CPU registers
kernels at the process-wide AutocastCPU key, which would change what a concurrent plain-CPU autocast run
computes. So: every CPU autocast computation holds `autocast_shared()`; the emulation holds
`autocast_exclusive()` while its kernels are registered. Many plain runs may overlap; an emulated run is alone.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _ReadWriteLock:
    """Writer-preferring readers–writer lock (a waiting writer blocks new readers so it cannot starve)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0
        self._owner: int | None = None

    @contextmanager
    def shared(self) -> Iterator[None]:
        me = threading.get_ident()
        if self._owner == me:  # the exclusive holder may run plain code inside its own region
            yield
            return
        with self._cond:
            self._cond.wait_for(lambda: not self._writer and not self._writers_waiting)
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
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


def autocast_shared():
    """Hold while running anything under CPU autocast (traces, training steps)."""
    return _lock.shared()


def autocast_exclusive():
    """Hold while process-wide autocast kernels are swapped (the CUDA-policy emulation)."""
    return _lock.exclusive()
