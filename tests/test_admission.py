"""Admission gate and bounded cache: concurrency limits, FIFO order, giving a place back, single flight, bytes."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from mpviz.app.serving import admission
from mpviz.app.serving.admission import AdmissionGate, BoundedCache, estimate_bytes

TIMEOUT = 30  # generous: only to turn a deadlock into a failure, never a speed assertion


def _until(condition, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


class _Inside:
    """How many workers are inside the gate now, and the most there ever were."""

    def __init__(self) -> None:
        self.lock, self.now, self.peak = threading.Lock(), 0, 0

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


class _Worker(threading.Thread):
    """Enters the gate, records the order of admission, holds its slot until released."""

    inside = _Inside()

    def __init__(self, gate: AdmissionGate, name: str, log: list, on_wait=None) -> None:
        super().__init__(daemon=True)
        self.gate, self.label, self.log, self.on_wait = gate, name, log, on_wait
        self.release = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with self.gate.admit(on_wait=self.on_wait):
                self.inside.enter()
                self.log.append(self.label)
                assert self.release.wait(TIMEOUT)
                self.inside.leave()
        except BaseException as e:  # checked by the test
            self.error = e


@pytest.mark.parametrize("slots", [1, 2, 3])
def test_n_plus_2_heavy_requests_run_at_most_n_at_once_all_finish_in_fifo_order(slots):
    gate = AdmissionGate(slots, tick=0.01)
    log: list[str] = []
    inside = _Inside()
    workers = [_Worker(gate, f"w{i}", log) for i in range(slots + 2)]
    for w in workers:
        w.inside = inside
    for i, w in enumerate(workers):  # start one by one so the queue order is known
        w.start()
        if i < slots:
            _until(lambda i=i: len(log) == i + 1, "a free slot to be taken")
        else:
            _until(lambda i=i: gate.stats().waiting == i - slots + 1, "the queue to grow")
    assert log == [f"w{i}" for i in range(slots)]
    for w in workers:
        w.release.set()
        w.join(TIMEOUT)
        assert not w.is_alive() and w.error is None
    assert inside.peak == slots  # never more than `slots` inside at once
    assert log == [f"w{i}" for i in range(slots + 2)]  # first come, first served
    s = gate.stats()
    assert (s.running, s.waiting, s.admitted, s.abandoned) == (0, 0, slots + 2, 0)


class SessionGone(Exception):
    pass


def test_a_waiter_whose_callback_raises_gives_its_place_back():
    gate = AdmissionGate(1, tick=0.01)
    log: list[str] = []
    holder = _Worker(gate, "holder", log)
    holder.start()
    _until(lambda: log == ["holder"], "the holder")

    leave = threading.Event()
    seen_by_leaver: list[int] = []

    def leaver_callback(position: int) -> None:
        seen_by_leaver.append(position)
        if leave.is_set():
            raise SessionGone

    seen_by_stayer: list[int] = []
    leaver = _Worker(gate, "leaver", log, on_wait=leaver_callback)
    leaver.start()
    _until(lambda: gate.stats().waiting == 1, "the leaver to queue")
    stayer = _Worker(gate, "stayer", log, on_wait=seen_by_stayer.append)
    stayer.start()
    _until(lambda: gate.stats().waiting == 2 and 2 in seen_by_stayer, "the stayer to queue behind")
    assert seen_by_leaver[0] == 1

    leave.set()
    leaver.join(TIMEOUT)
    assert isinstance(leaver.error, SessionGone)  # the callback's exception propagates
    _until(lambda: 1 in seen_by_stayer, "the stayer to move up")
    assert gate.stats().waiting == 1 and gate.stats().abandoned == 1

    holder.release.set()
    _until(lambda: log == ["holder", "stayer"], "the stayer to be admitted")
    stayer.release.set()
    stayer.join(TIMEOUT)
    assert gate.stats().running == 0 and gate.stats().waiting == 0


def test_the_callback_is_called_every_tick_while_waiting():
    gate = AdmissionGate(1, tick=0.01)
    log: list[str] = []
    holder = _Worker(gate, "holder", log)
    holder.start()
    _until(lambda: log == ["holder"], "the holder")
    calls: list[int] = []
    waiter = _Worker(gate, "waiter", log, on_wait=calls.append)
    waiter.start()
    _until(lambda: len(calls) >= 5, "several ticks")  # nothing changed: the ticks alone keep calling it
    assert set(calls) == {1}
    holder.release.set()
    waiter.release.set()
    waiter.join(TIMEOUT)
    assert waiter.error is None and log == ["holder", "waiter"]


def test_a_holder_that_raises_frees_its_slot_and_nested_admission_does_not_deadlock():
    gate = AdmissionGate(1)
    with pytest.raises(RuntimeError), gate.admit():
        raise RuntimeError("the computation failed")
    assert gate.stats().running == 0
    with gate.admit(), gate.admit(), gate.admit():  # a heavy computation made of heavy parts
        assert gate.stats().running == 1
    assert gate.stats() == admission.GateStats(1, 0, 0, 2, 0)


def test_freed_memory_goes_back_to_the_os_once_the_last_heavy_computation_leaves(monkeypatch):
    trims: list[int] = []
    monkeypatch.setattr(admission, "return_freed_memory", lambda: trims.append(1))
    gate = AdmissionGate(2)
    with gate.admit():
        with gate.admit():  # nested: still inside
            pass
        assert trims == []
    assert trims == [1]
    monkeypatch.undo()  # the real one: a no-op off glibc, and it never raises
    admission.return_freed_memory()


def test_bad_slot_counts_are_refused():
    for slots in (0, -1, 1.5, True):
        with pytest.raises(ValueError):
            AdmissionGate(slots)


def test_slots_and_cache_size_come_from_the_environment(monkeypatch, caplog):
    monkeypatch.setenv("MPVIZ_HEAVY_SLOTS", "3")
    assert admission.default_slots() == 3
    for bad in ("0", "-2", "many", "1e3"):
        monkeypatch.setenv("MPVIZ_HEAVY_SLOTS", bad)
        with caplog.at_level("WARNING", logger="mpviz.app.serving.admission"):
            assert admission.default_slots() == max(1, admission.usable_cpus() // 2)
        assert "MPVIZ_HEAVY_SLOTS" in caplog.text
    monkeypatch.setattr(admission, "_gate", None)
    monkeypatch.setattr(admission, "_cache", None)
    monkeypatch.setenv("MPVIZ_HEAVY_SLOTS", "2")
    monkeypatch.setenv("MPVIZ_CACHE_MB", "5")
    assert admission.default_gate().slots == 2 and admission.default_gate() is admission.default_gate()
    assert admission.default_cache().max_bytes == 5 * 2**20 and admission.default_cache() is admission.default_cache()


# ── cache ───────────────────────────────────────────────────────────────────────────────────────────────────
def test_eight_concurrent_callers_of_one_key_share_one_computation():
    cache = BoundedCache(10**6)
    calls = []
    go = threading.Event()

    def compute():
        calls.append(1)
        assert go.wait(TIMEOUT)
        return np.arange(10)

    results: list = [None] * 8

    def call(i: int) -> None:
        results[i] = cache.get_or_compute("k", compute)

    threads = [threading.Thread(target=call, args=(i,), daemon=True) for i in range(8)]
    for t in threads:
        t.start()
    _until(lambda: len(calls) == 1 and sum(t.is_alive() for t in threads) == 8, "all callers to arrive")
    time.sleep(0.05)  # let the seven joiners block on the flight
    go.set()
    for t in threads:
        t.join(TIMEOUT)
    assert len(calls) == 1
    assert all(r is results[0] for r in results)
    s = cache.stats()
    assert s.misses == 1 and s.hits + s.shared == 7 and s.entries == 1


def test_least_recently_used_entries_go_first_once_the_bytes_pass_the_limit():
    cache = BoundedCache(3000)
    size = lambda v: v.nbytes  # noqa: E731
    for key in "abc":
        cache.get_or_compute(key, lambda: np.zeros(1000, np.uint8), size_of=size)
    assert cache.stats().bytes == 3000 and cache.stats().entries == 3
    cache.get_or_compute("a", lambda: pytest.fail("a is stored"), size_of=size)  # a becomes most recent
    cache.get_or_compute("d", lambda: np.zeros(1500, np.uint8), size_of=size)  # evicts b, then c
    assert "a" in cache and "d" in cache and "b" not in cache and "c" not in cache
    s = cache.stats()
    assert (s.bytes, s.entries, s.evictions) == (2500, 2, 2)
    big = cache.get_or_compute("huge", lambda: np.zeros(4000, np.uint8), size_of=size)
    assert big.nbytes == 4000 and "huge" not in cache and cache.stats().too_large == 1  # returned, not stored


def test_an_exception_is_not_cached_and_a_waiter_computes_for_itself():
    cache = BoundedCache(10**6)
    attempts = []

    def flaky():
        attempts.append(1)
        if len(attempts) == 1:
            raise ValueError("first try fails")
        return "ok"

    with pytest.raises(ValueError):
        cache.get_or_compute("k", flaky)
    assert "k" not in cache and cache.stats().failures == 1
    assert cache.get_or_compute("k", flaky) == "ok" and len(attempts) == 2

    # A waiter whose owner fails (its session left) starts again instead of inheriting the owner's error.
    started, fail = threading.Event(), threading.Event()

    def owner_fn():
        started.set()
        assert fail.wait(TIMEOUT)
        raise SessionGone

    owner_error: list[BaseException] = []
    waiter_result: list[str] = []

    def owner():
        try:
            cache.get_or_compute("j", owner_fn)
        except SessionGone as e:
            owner_error.append(e)

    t1 = threading.Thread(target=owner, daemon=True)
    t1.start()
    assert started.wait(TIMEOUT)
    t2 = threading.Thread(target=lambda: waiter_result.append(cache.get_or_compute("j", lambda: "mine")), daemon=True)
    t2.start()
    time.sleep(0.05)
    fail.set()
    t1.join(TIMEOUT)
    t2.join(TIMEOUT)
    assert len(owner_error) == 1 and waiter_result == ["mine"] and cache.get_or_compute("j", str) == "mine"


@dataclass(frozen=True)
class _Result:
    name: str
    samples: dict
    rows: tuple


def test_estimate_bytes_counts_array_data_once_and_walks_containers():
    a = np.zeros(10_000)  # 80 kB
    view = a[:10]  # keeps all of a alive: its bytes are a's, counted once
    r = _Result("x", {"a": a, "view": view, "t": torch.zeros(1000)}, (a, [1.5, "text"]))
    n = estimate_bytes(r)
    assert 80_000 + 4_000 < n < 80_000 + 4_000 + 5_000
    assert estimate_bytes(np.zeros(10)) < estimate_bytes(np.zeros(1000))
    cyclic: list = []
    cyclic.append(cyclic)
    assert estimate_bytes(cyclic) > 0
    assert estimate_bytes(None) == 0 and estimate_bytes(int) == 0


def test_a_stampede_never_exceeds_the_slots():
    gate, inside, done = AdmissionGate(3, tick=0.01), _Inside(), []

    def work(i: int) -> None:
        with gate.admit(on_wait=lambda position: None):
            inside.enter()
            time.sleep(0.002)
            inside.leave()
        done.append(i)

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert sorted(done) == list(range(24)) and 1 <= inside.peak <= 3
    assert gate.stats().running == gate.stats().waiting == 0


def test_a_caller_waiting_for_another_s_computation_hears_ticks_and_can_leave():
    cache = BoundedCache(max_bytes=10**6)
    started, release = threading.Event(), threading.Event()

    def slow():
        started.set()
        release.wait(10)
        return 7

    owner = threading.Thread(target=lambda: cache.get_or_compute("k", slow))
    owner.start()
    started.wait(10)
    ticks = []

    def leave():
        ticks.append(1)
        if len(ticks) == 2:
            raise RuntimeError("the session has gone")

    with pytest.raises(RuntimeError):
        cache.get_or_compute("k", lambda: 0, on_wait=leave)
    assert len(ticks) == 2  # it waited, heard two ticks, then left
    release.set()
    owner.join(10)
    assert cache.get_or_compute("k", lambda: 0) == 7  # the owner's computation went on and was cached
