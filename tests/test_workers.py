"""Worker processes (mpviz.workers): a crash, a kill or a runaway run costs the one call that hit it; the pool
replaces the worker, and calls running in the other workers finish."""

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from mpviz.model import ConfigError
from mpviz.workers import WorkerCrashed, WorkerPool, WorkerTimeout


# ── tasks, module-level so that workers import them by name ─────────────────────────────────────────────────
def pid() -> int:
    return os.getpid()


def sleep_then(seconds: float, value: object) -> object:
    time.sleep(seconds)
    return value


def note_pid_then_sleep(path: str, seconds: float) -> int:
    Path(path).write_text(str(os.getpid()))
    time.sleep(seconds)
    return os.getpid()


def die_by(signum: int) -> None:
    os.kill(os.getpid(), signum)


def refuse() -> None:
    raise ConfigError("seq_len", 10**6, 4096, "too long")


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(2, time_limit_s=60)
    yield p
    p.close()


def _in_thread(fn, *args) -> tuple[threading.Thread, list]:
    box: list = []
    t = threading.Thread(target=lambda: box.append(fn(*args)))
    t.start()
    return t, box


def _wait_for_pid(path: Path) -> int:
    deadline = time.monotonic() + 60
    while not path.exists() or not path.read_text():
        assert time.monotonic() < deadline, "the task never started"
        time.sleep(0.05)
    return int(path.read_text())


def _gone(p: int) -> bool:
    try:
        os.kill(p, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_worker_returns_results_and_raises_the_callers_own_exceptions(pool):
    assert pool.run(pid) != os.getpid()
    with pytest.raises(ConfigError) as e:
        pool.run(refuse)
    assert (e.value.field, e.value.limit) == ("seq_len", 4096)
    assert any("in the worker process" in n for n in e.value.__notes__)


def test_a_segfault_costs_its_own_call_and_the_others_finish(pool):
    other, box = _in_thread(pool.run, sleep_then, 2.0, "finished")
    with pytest.raises(WorkerCrashed) as e:
        pool.run(die_by, signal.SIGSEGV)
    assert e.value.signal == signal.SIGSEGV and e.value.cause == "SIGSEGV"
    other.join(60)
    assert box == ["finished"]
    assert pool.run(sleep_then, 0, "again") == "again", "the pool replaced the worker"


def test_a_worker_killed_mid_run_costs_its_own_call_and_the_others_finish(pool, tmp_path):
    marker = tmp_path / "pid"
    other, box = _in_thread(pool.run, sleep_then, 3.0, "finished")
    victim, victim_box = _in_thread(lambda: _caught(pool.run, note_pid_then_sleep, str(marker), 60))
    os.kill(_wait_for_pid(marker), signal.SIGKILL)  # as the OOM killer does
    victim.join(60)
    other.join(60)
    (crash,) = victim_box
    assert isinstance(crash, WorkerCrashed) and crash.signal == signal.SIGKILL
    assert box == ["finished"]
    assert pool.stats().crashed >= 1 and pool.run(sleep_then, 0, 1) == 1


def _caught(fn, *args):
    try:
        return fn(*args)
    except WorkerCrashed as e:
        return e


def test_a_runaway_run_is_killed_at_the_time_limit(tmp_path):
    marker = tmp_path / "pid"
    small = WorkerPool(1, time_limit_s=2)
    try:
        with pytest.raises(WorkerTimeout) as e:
            small.run(note_pid_then_sleep, str(marker), 600)
        assert e.value.limit_s == 2
        assert _gone(int(marker.read_text())), "the runaway worker was killed"
        assert small.run(sleep_then, 0, "next") == "next" and small.stats().timed_out == 1
    finally:
        small.close()


def test_workers_retire_after_their_calls_and_a_new_one_takes_over():
    small = WorkerPool(1, tasks_per_worker=2)
    try:
        first, second, third = (small.run(pid) for _ in range(3))
        assert first == second != third
        assert small.stats().recycled == 1
        time.sleep(0.5)
        assert _gone(first), "the retired worker's process ended (its memory went back to the OS)"
    finally:
        small.close()
