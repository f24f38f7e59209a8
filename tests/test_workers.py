"""Worker processes (mpviz.app.serving.workers): a crash, a kill or a runaway run costs the one call that hit it; the
pool replaces the worker, and calls running in the other workers finish."""

import contextlib
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mpviz.app.serving import workers
from mpviz.app.serving.workers import WorkerCrashed, WorkerPool, WorkerTimeout
from mpviz.model import ConfigError


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


# ── on a real server ────────────────────────────────────────────────────────────────────────────────────────
WARM_LINK = "dtype=bf16"  # the attention lesson's default run, computed once and then cached in the server
VICTIM_LINK = "dtype=bf16&seq=512&dim=512&heads=16"  # the largest cold run: its worker is busy for seconds (T=256
# finished in 1.05 s on an idle machine, before the kill at 1.5 s)
CLASS = 10  # sessions opening the warm link while a worker dies


def _workers_of(server_pid: int) -> list[int]:
    """The server's worker processes: those its fork server forked, or its own `python -m
    mpviz.app.serving.workers` children where workers are not forked. Never the fork server itself."""
    from tests.conftest import child_pids

    found = []
    for child in child_pids(server_pid):
        with contextlib.suppress(OSError):  # a worker that just retired
            command = Path(f"/proc/{child}/cmdline").read_bytes()
            if b"mpviz.app.serving.workers" in command:
                found += child_pids(child) if b"--fork-server" in command else [child]
    return found


async def _class_while(base_url: str, server_pid: int, victim_link: str, signum: int | None):
    """A victim opens `victim_link`; 1.5 s in, the server's workers get `signum` (None: nothing happens); meanwhile
    a class opens the warm link. Returns (the victim's run, the class's runs)."""
    import asyncio

    from mpviz.app.websocket_session import open_page

    victim = asyncio.ensure_future(open_page(base_url, victim_link))
    await asyncio.sleep(1.5)
    if signum is not None:
        workers = _workers_of(server_pid)
        assert workers, "the server has no worker processes"
        for p in workers:
            os.kill(p, signum)
    others = await asyncio.gather(*(open_page(base_url, WARM_LINK) for _ in range(CLASS)))
    return await victim, list(others)


async def _one(base_url: str, link: str):
    from mpviz.app.websocket_session import open_page

    return await open_page(base_url, link)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds the server's workers through /proc")
def test_a_worker_crash_on_the_server_costs_one_session_and_the_class_loads(tmp_path, printout):
    from mpviz.app import text
    from mpviz.app.websocket_session import percentile
    from mpviz.app.websocket_session import run as run_sessions
    from tests.conftest import running_server

    crashed = text.load("en", "common")["worker_crashed"].split("(")[0]
    log_path = tmp_path / "server.log"
    with running_server(log_path) as (url, proc):
        assert run_sessions(_one(url, WARM_LINK)).ok  # the class's link, cached from now on
        _, quiet = run_sessions(_class_while(url, proc.pid, VICTIM_LINK, None))
        waves = {"no crash": quiet}
        for signum in (signal.SIGKILL, signal.SIGSEGV):  # as the OOM killer does; as a native fault does
            link = f"{VICTIM_LINK}&seed={int(signum)}"  # a run nobody computed yet: it needs a worker
            victim, others = run_sessions(_class_while(url, proc.pid, link, signum))
            name = signal.Signals(signum).name
            waves[f"worker {name}"] = others
            log = log_path.read_text()[-3000:]
            assert victim.ok and not victim.components, f"{victim.alerts} {victim.exceptions}\n{log}"
            assert any(crashed in a and name in a for a in victim.alerts), f"{victim.alerts}\n{log}"
            assert all(r.ok and len(r.components) == 1 for r in others), log
            assert proc.poll() is None, "the server lives"
            retry = run_sessions(_one(url, link))
            assert retry.ok and len(retry.components) == 1, "the retry computed the run in a new worker"
    lines = []
    for wave, runs in waves.items():
        latencies = [r.latency_s for r in runs]
        lines.append(
            f"  {wave:>14}: {CLASS} sessions open the cached lesson meanwhile, p50 {percentile(latencies, 50):.2f} s,"
            f" p95 {percentile(latencies, 95):.2f} s, failed {sum(not r.ok for r in runs)}"
        )
    head = "a worker dies 1.5 s into one session's cold run (T=512, d=512, H=16) on a real server:\n"
    printout(head + "\n".join(lines))


# ── on the page ─────────────────────────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    "failure, words",
    [(WorkerCrashed(-signal.SIGSEGV, "lesson_json"), "SIGSEGV"), (WorkerTimeout(180, "lesson_json"), "180 s")],
)
def test_a_lost_worker_shows_a_message_and_a_retry_button_not_a_traceback(monkeypatch, failure, words):
    import mpviz.app.serving.results
    from mpviz.app import text
    from tests.apptest import failures, page_app

    def lost(fn, *args, **lane):
        raise failure

    monkeypatch.setattr(mpviz.app.serving.results, "run_isolated", lost)
    at = page_app("mpviz/pages/attention.py").run()
    assert not failures(at) and not at.get("bidi_component")
    common = text.load("en", "common")
    key = "worker_timeout" if isinstance(failure, WorkerTimeout) else "worker_crashed"
    shown = " ".join(e.value for e in at.error)
    assert common[key].split("(")[0] in shown and words in shown
    (retry,) = [b for b in at.button if b.label == common["retry"]]
    monkeypatch.setattr(mpviz.app.serving.results, "run_isolated", lambda fn, *args, **lane: fn(*args))
    retry.click().run()
    assert not at.error and len(at.get("bidi_component")) == 1, "the retry computed the lesson"


def test_a_worker_whose_server_vanished_ends_quietly():
    """A server killed outright resets its workers' sockets (unread data on its side makes the close a reset):
    a worker then exits, without a traceback in the server's log."""
    ours, theirs = socket.socketpair()
    with theirs:
        worker = subprocess.Popen(
            [sys.executable, "-m", "mpviz.app.serving.workers", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stderr=subprocess.PIPE,
            text=True,
        )
    assert ours.recv(1, socket.MSG_PEEK), "the worker said it is ready (left unread)"
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = reset, as a kill does
    ours.close()
    _, stderr = worker.communicate(timeout=60)
    assert worker.returncode == 0 and "Traceback" not in stderr, stderr


# ── the fork server ─────────────────────────────────────────────────────────────────────────────────────────
def parent_pid() -> int:
    return os.getppid()


@pytest.mark.skipif(not workers.FORK, reason="workers are forked on Linux only")
def test_workers_are_forked_by_one_warm_fork_server_and_a_dead_one_is_replaced():
    first, second = WorkerPool(1), WorkerPool(1)
    try:
        server = workers._fork_server_now()
        assert first.run(parent_pid) == second.run(parent_pid) == server.process.pid != os.getpid()
        assert first.run(pid) != second.run(pid), "each pool has a worker of its own"
        server.process.kill()  # its workers go on (init adopts them); new ones come from a new fork server
        server.process.wait(10)
        assert first.run(sleep_then, 0, "still") == "still"
        with pytest.raises(WorkerCrashed):
            first.run(die_by, signal.SIGKILL)  # its code is lost with its parent: a crash all the same
        assert first.run(parent_pid) == workers._fork_server_now().process.pid != server.process.pid
    finally:
        first.close()
        second.close()


@pytest.mark.skipif(not workers.FORK, reason="workers are forked on Linux only")
def test_a_fork_server_whose_server_vanished_ends_quietly_with_its_workers():
    requests, their_requests = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    events, their_events = socket.socketpair()
    ours, theirs = socket.socketpair()
    with their_requests, their_events:
        fds = (their_requests.fileno(), their_events.fileno())
        forks = subprocess.Popen(
            [sys.executable, "-m", "mpviz.app.serving.workers", "--fork-server", *map(str, fds)],
            pass_fds=fds,
            stderr=subprocess.PIPE,
            text=True,
        )
    with theirs:
        socket.send_fds(requests, [(1).to_bytes(8, "big")], [theirs.fileno()])
    assert ours.recv(1, socket.MSG_PEEK), "the forked worker said it is ready"
    from tests.conftest import child_pids

    (worker,) = child_pids(forks.pid)
    for end in (ours, requests, events):
        end.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = reset, as a kill does
        end.close()
    _, stderr = forks.communicate(timeout=60)
    assert forks.returncode == 0 and "Traceback" not in stderr, stderr
    deadline = time.monotonic() + 30
    while not _gone(worker):
        assert time.monotonic() < deadline, "the forked worker outlived its server"
        time.sleep(0.1)
