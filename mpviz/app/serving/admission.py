"""Bounded work and memory for a process that serves many sessions: an admission gate and a byte-bounded cache.

Streamlit runs every session in a thread of one process. Without limits, six visitors opening the largest
config at once run six traces side by side (~0.7 GB each at the top size) and every other page waits on the
CPU. So:

- `AdmissionGate(slots)`: at most `slots` computations run at once; the rest wait in FIFO order and are
  told their place in the queue every tick. A waiter whose callback raises (its session has gone) leaves the
  queue and gives its place back. One client holds at most one place (queued or running); its other callers
  wait behind that one, outside the queue.
- Two lanes: `default_gate()` for heavy computations, `light_gate()` for light ones that run in worker processes
  (mpviz.app.serving.workers has a pool for each), so a small run never waits behind a top-size one.
- `BoundedCache(max_bytes)`: a thread-safe, single-flight memo: concurrent callers of one key share one
  computation; results are evicted least-recently-used first once their estimated bytes pass `max_bytes`;
  a computation that raises is never cached.

`default_gate()` and `default_cache()` are the process-wide instances, sized from the environment:
MPVIZ_HEAVY_SLOTS (default: half the CPUs this process may use, at least 1), MPVIZ_LIGHT_WORKERS (default 1) and
MPVIZ_CACHE_MB (default 256).
No streamlit here: the view wraps its heavy calls in `default_gate().admit(on_wait=...)` and its results in
`default_cache().get_or_compute(...)`.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FunctionType, ModuleType
from typing import Any, TypeVar

import numpy as np

_log = logging.getLogger(__name__)
T = TypeVar("T")

TICK_S = 0.25  # how often a waiter hears its queue position (and may give up)
DEFAULT_CACHE_MB = 256  # a 1.5 GiB replica: ~0.5 GiB idle process + ~0.7 GiB for one top-size trace in flight
ARRAY_OVERHEAD = 112  # bytes of an ndarray / tensor object besides its data (sys.getsizeof of an empty one)


def env_int(name: str, default: int, minimum: int) -> int:
    """$name as an int ≥ minimum; anything else logs a warning and gives `default` (a typo must not stop a server)."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        _log.warning("ignoring %s=%r (want an integer >= %d); using %d", name, raw[:40], minimum, default)
        return default
    return value


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one, e.g. a container's cpuset)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_slots() -> int:
    """$MPVIZ_HEAVY_SLOTS, else half the usable CPUs (at least 1).

    Half, because one torch computation already keeps more than one core busy (intra-op threads) and the
    server's own thread, which runs every other session's page script under the GIL, needs a core to stay
    responsive. On a 2-core replica that is one heavy computation at a time, which also keeps one top-size
    trace's ~0.7 GB peak inside a 1.5 GiB memory limit.
    """
    return env_int("MPVIZ_HEAVY_SLOTS", max(1, usable_cpus() // 2), minimum=1)


def light_slots() -> int:
    """$MPVIZ_LIGHT_WORKERS, else 1: light runs (small traces and lessons, one claim) have a worker of their own.

    One is enough: a light run takes tens of milliseconds to a second, and they wait for each other in order, told
    their place. It costs one more idle worker process per replica (forked, it shares the fork server's torch).
    """
    return env_int("MPVIZ_LIGHT_WORKERS", 1, minimum=1)


# ── admission ───────────────────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class GateStats:
    slots: int
    running: int  # computations holding a slot now
    waiting: int  # callers in the queue now
    admitted: int  # since the gate was made
    abandoned: int  # waiters that left the queue (or the hold behind their own run) because their callback raised
    held: int = 0  # callers held back, outside the queue, behind their own client's run


class AdmissionGate:
    """At most `slots` computations at once in this process; other callers wait, first come first served.

    `with gate.admit(on_wait=callback):` returns at once while a slot is free and nobody is queued; otherwise
    the caller joins the queue and `callback(position)` (1 = next in line) is called right away and then every
    `tick` seconds until a slot is its turn. If the callback raises, the caller leaves the queue, its place goes
    to the one behind it, and the exception propagates. Leaving the `with` block, normally or by an exception,
    frees the slot. A thread that already holds a slot passes straight through a nested `admit` (a heavy
    computation made of heavy parts must not wait for itself).

    `admit(client=key)`: one client (a browser's address) holds at most one place, queued or running. A second
    caller of the same client waits outside the queue, hearing `on_held()` every tick (it may raise to give up,
    as `on_wait`), until the first has finished, and only then joins the queue at its end: ten tabs of one client
    take one place in line, not ten, so everyone else's wait does not grow with one client's tabs.
    """

    def __init__(self, slots: int, tick: float = TICK_S) -> None:
        if not isinstance(slots, int) or isinstance(slots, bool) or slots < 1:
            raise ValueError(f"slots must be a positive int, not {slots!r}")
        self.slots, self.tick = slots, tick
        self._cond = threading.Condition()
        self._queue: deque[object] = deque()  # tickets, oldest first
        self._clients: dict[Hashable, int] = {}  # client → its callers queued or running (at most 1)
        self._running = 0
        self._held_back = 0
        self._admitted = 0
        self._abandoned = 0
        self._held = threading.local()  # depth of this thread's admissions

    def stats(self) -> GateStats:
        with self._cond:
            return GateStats(
                self.slots, self._running, len(self._queue), self._admitted, self._abandoned, self._held_back
            )

    @contextmanager
    def admit(
        self,
        on_wait: Callable[[int], None] | None = None,
        client: Hashable | None = None,
        on_held: Callable[[], None] | None = None,
    ) -> Iterator[None]:
        depth = getattr(self._held, "depth", 0)
        if depth:  # nested: this thread's slot covers it
            self._held.depth = depth + 1
            try:
                yield
            finally:
                self._held.depth = depth
            return
        if client is not None:
            self._wait_for_client(client, on_held)
        try:
            self._wait_for_slot(on_wait)
        except BaseException:
            self._release_client(client)
            raise
        self._held.depth = 1
        try:
            yield
        finally:
            self._held.depth = 0
            with self._cond:
                self._running -= 1
                idle = self._running == 0
                self._cond.notify_all()
            self._release_client(client)
            if idle:
                return_freed_memory()

    def _wait_for_client(self, client: Hashable, on_held: Callable[[], None] | None) -> None:
        """Until `client` has nothing queued or running; then its place is taken for this caller."""
        counted = False
        try:
            while True:
                with self._cond:
                    if not self._clients.get(client):
                        self._clients[client] = 1
                        if counted:
                            self._held_back -= 1
                        return
                    if not counted:
                        self._held_back += 1
                        counted = True
                if on_held is not None:
                    on_held()  # outside the lock: it may be slow, or raise to give up
                with self._cond:
                    if self._clients.get(client):
                        self._cond.wait(self.tick)
        except BaseException:
            with self._cond:
                if counted:
                    self._held_back -= 1
                self._abandoned += 1
            raise

    def _release_client(self, client: Hashable | None) -> None:
        if client is None:
            return
        with self._cond:
            self._clients.pop(client, None)
            self._cond.notify_all()  # a caller of this client held back may now join the queue

    def _wait_for_slot(self, on_wait: Callable[[int], None] | None) -> None:
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
        told: tuple[int, float] | None = None  # (position, when) last passed to on_wait
        try:
            while True:
                with self._cond:
                    if self._queue[0] is ticket and self._running < self.slots:
                        self._queue.popleft()
                        self._running += 1
                        self._admitted += 1
                        self._cond.notify_all()  # the next in line may fit a second free slot
                        return
                    position = self._queue.index(ticket) + 1
                now = time.monotonic()
                if on_wait is not None and (told is None or told[0] != position or now - told[1] >= self.tick):
                    told = (position, now)
                    on_wait(position)  # outside the lock: it may be slow, or raise to give up
                with self._cond:
                    if not (self._queue[0] is ticket and self._running < self.slots):
                        self._cond.wait(self.tick)
        except BaseException:
            with self._cond:
                if ticket in self._queue:
                    self._queue.remove(ticket)
                    self._abandoned += 1
                    self._cond.notify_all()  # the one behind may now be first
            raise


def _load_malloc_trim() -> Callable[[int], int] | None:
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, musl, Windows): nothing to trim
        return None


_malloc_trim = _load_malloc_trim()


def return_freed_memory() -> None:
    """Hand heap pages that heavy work freed back to the OS (glibc's `malloc_trim(0)`; a no-op elsewhere).

    A top-size trace allocates hundreds of MB in many small and mid-size blocks; glibc keeps them in its arenas
    after they are freed, so a replica's RSS would stay near its peak for good. Called when the last heavy
    computation leaves the gate: trimming costs a few ms, once per burst of heavy work.
    """
    if _malloc_trim is not None:
        _malloc_trim(0)


# ── bounded, single-flight cache ────────────────────────────────────────────────────────────────────────────
def estimate_bytes(obj: object) -> int:
    """Rough bytes held by `obj` and everything it owns: array/tensor data exactly, other objects by
    `sys.getsizeof`. Walks dataclasses, dicts, lists, tuples, sets and plain objects' attributes; each object is
    counted once (shared or cyclic references too); classes, functions and modules are not owned, so count 0.
    """
    seen: set[int] = set()  # ids of objects counted
    data: set[tuple[str, int]] = set()  # buffers counted: a view keeps its whole base alive, counted once
    # No tensor exists before torch is imported: this module does not import it, so that the worker pools (which
    # import this module) can start while the server is still importing torch.
    tensor = getattr(sys.modules.get("torch"), "Tensor", ())
    stack: list[object] = [obj]
    total = 0
    while stack:
        o = stack.pop()
        if id(o) in seen or isinstance(o, (type, FunctionType, ModuleType)) or o is None:
            continue
        seen.add(id(o))
        if isinstance(o, np.ndarray):
            root = o
            while isinstance(root.base, np.ndarray):
                root = root.base
            total += ARRAY_OVERHEAD
            if ("array", id(root)) not in data:
                data.add(("array", id(root)))
                total += root.nbytes
            if o.dtype == object:
                stack.extend(o.ravel().tolist())
            continue
        if isinstance(o, tensor):
            storage = o.untyped_storage()
            total += ARRAY_OVERHEAD
            if ("storage", storage.data_ptr()) not in data:
                data.add(("storage", storage.data_ptr()))
                total += storage.nbytes()
            continue
        total += sys.getsizeof(o)
        if isinstance(o, (str, bytes, bytearray, int, float, complex, bool)):
            continue
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset, deque)):
            stack.extend(o)
        elif dataclasses.is_dataclass(o):
            stack.extend(getattr(o, f.name) for f in dataclasses.fields(o))
        elif hasattr(o, "__dict__"):
            stack.extend(vars(o).values())
        elif hasattr(type(o), "__slots__"):
            stack.extend(getattr(o, s) for s in type(o).__slots__ if hasattr(o, s))
    return total


@dataclass(frozen=True)
class CacheStats:
    max_bytes: int
    bytes: int  # estimated bytes held now
    entries: int
    hits: int  # answered from a stored result
    shared: int  # answered by waiting for another caller's computation of the same key
    misses: int  # computations started
    evictions: int
    too_large: int  # results bigger than max_bytes: returned, never stored
    failures: int  # computations that raised (never stored)


class _Flight:
    """One computation in progress; waiters block on `done`."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.ok = False
        self.value: Any = None


class BoundedCache:
    """Thread-safe memo, single-flight per key, least-recently-used entries evicted past `max_bytes`.

    `get_or_compute(key, fn)` returns the stored result for `key`, or joins a computation of `key` already
    running in another thread, or runs `fn()` itself. A computation that raises stores nothing and the
    exception goes to its own caller only: callers that were waiting for it start again (one of them
    computes), so one session's failure, e.g. leaving while queued at the gate, never becomes another's.
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, not {max_bytes}")
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()  # key → (value, bytes), LRU first
        self._flights: dict[Hashable, _Flight] = {}
        self._bytes = 0
        self._counts = dict.fromkeys(("hits", "shared", "misses", "evictions", "too_large", "failures"), 0)

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(self.max_bytes, self._bytes, len(self._entries), **self._counts)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def get_or_compute(
        self,
        key: Hashable,
        fn: Callable[[], T],
        size_of: Callable[[Any], int] = estimate_bytes,
        on_wait: Callable[[], None] | None = None,
    ) -> T:
        """The cached value of `key`, or `fn()` computed once for every concurrent caller of the same key.

        A caller waiting for another's computation has `on_wait()` called every TICK_S seconds; if it raises (the
        caller's session has gone), the caller stops waiting and the exception propagates (the computation goes on
        for the others).
        """
        while True:
            with self._lock:
                if key in self._entries:
                    self._entries.move_to_end(key)
                    self._counts["hits"] += 1
                    return self._entries[key][0]
                flight = self._flights.get(key)
                owner = flight is None
                if owner:
                    flight = self._flights[key] = _Flight()
                    self._counts["misses"] += 1
            if owner:
                return self._compute(key, fn, size_of, flight)
            while not flight.done.wait(TICK_S):
                if on_wait is not None:
                    on_wait()
            if flight.ok:
                with self._lock:
                    self._counts["shared"] += 1
                return flight.value
            # the owner's computation raised: try again (this caller may become the owner)

    def _compute(self, key: Hashable, fn: Callable[[], T], size_of: Callable[[Any], int], flight: _Flight) -> T:
        try:
            value = fn()
            size = size_of(value)
        except BaseException:
            with self._lock:
                self._counts["failures"] += 1
                del self._flights[key]
            flight.done.set()
            raise
        with self._lock:
            del self._flights[key]
            if size > self.max_bytes:
                self._counts["too_large"] += 1
            else:
                self._entries[key] = (value, size)
                self._bytes += size
                while self._bytes > self.max_bytes:
                    _, (_, freed) = self._entries.popitem(last=False)
                    self._bytes -= freed
                    self._counts["evictions"] += 1
        flight.value, flight.ok = value, True
        flight.done.set()
        return value


# ── the process-wide instances ──────────────────────────────────────────────────────────────────────────────
_defaults_lock = threading.Lock()
_gate: AdmissionGate | None = None
_light_gate: AdmissionGate | None = None
_cache: BoundedCache | None = None


def default_gate() -> AdmissionGate:
    """The process-wide gate for heavy computations, made on first use with `default_slots()`."""
    global _gate
    with _defaults_lock:
        if _gate is None:
            _gate = AdmissionGate(default_slots())
        return _gate


def light_gate() -> AdmissionGate:
    """The process-wide gate for light computations run in worker processes: as many slots as light workers
    (`light_slots()`), so a light run waits only for other light runs, never behind a heavy one, and hears its
    place in that line."""
    global _light_gate
    with _defaults_lock:
        if _light_gate is None:
            _light_gate = AdmissionGate(light_slots())
        return _light_gate


def default_cache() -> BoundedCache:
    """The process-wide cache, made on first use with $MPVIZ_CACHE_MB megabytes (default DEFAULT_CACHE_MB)."""
    global _cache
    with _defaults_lock:
        if _cache is None:
            _cache = BoundedCache(env_int("MPVIZ_CACHE_MB", DEFAULT_CACHE_MB, minimum=0) * 2**20)
        return _cache
