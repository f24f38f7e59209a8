"""Heavy computations in worker processes: a native crash, an OOM kill or a runaway run costs one request.

Streamlit serves every session from threads of one process, so a segfault or SIGILL inside torch, or the kernel's
OOM killer, would end every session at once, and a run that never ends would hold its slot for good. A
`WorkerPool` runs such computations in separate processes instead. The contract:

- `pool.run(fn, *args)` runs `fn(*args)` in one of at most `size` worker processes and returns its result. `fn`
  must be a module-level function (pickled by reference); its arguments and result must pickle (tensors,
  dataclasses, bytes do). Callers beyond `size` wait for a free worker.
- An exception raised by `fn` is raised in the caller: the same type and attributes, with the worker's
  traceback added as a note.
- A worker that dies during the call (a signal such as SIGSEGV, SIGILL, SIGKILL from the OOM killer, or an exit)
  raises `WorkerCrashed` in that caller only; the worker is replaced, and calls in the other workers go on.
- A call that runs longer than `time_limit_s` has its worker killed (SIGKILL) and raises `WorkerTimeout`.
- A worker retires after `tasks_per_worker` calls: whatever its heap kept goes back to the OS with the process.
- Workers are started when the pool is made; a retired or crashed one is replaced at once. They never inherit the
  server's threads or locks. On Linux they are forked from one fork server per process (`_ForkServer`: a fresh
  `python -m mpviz.app.serving.workers --fork-server` that imports torch and mpviz once, ~5 s of CPU), so a new
  worker is ready in milliseconds and shares those pages with its siblings; elsewhere each is a fresh interpreter
  of its own. Either way they inherit the environment, so the kernel probe's oneDNN cap (mpviz.kernel_probe)
  holds there too.

- A worker found dead before a call is handed to it (killed while idle, or dead while starting) is replaced
  there and then; the call runs in the replacement, and nobody is told of a failure that was not theirs.

`default_pool()` is the process-wide pool for heavy runs, or None where computations should stay in-process: size
$MPVIZ_WORKERS (default `mpviz.app.serving.admission.default_slots()`, the heavy gate's slots; 0: no pools), time limit
$MPVIZ_RUN_LIMIT_S (default 180 s), $MPVIZ_WORKER_TASKS calls per worker (default 25). `light_pool()` is a second
pool, of $MPVIZ_LIGHT_WORKERS workers (default 1), for light runs, so that they never wait for a heavy one.
No streamlit here: the view (mpviz/app/serving/results.py) decides what runs where and turns WorkerCrashed into words.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar

from mpviz.app.serving.admission import default_slots, env_int, light_slots, return_freed_memory
from mpviz.kernel_probe import ensure_safe_kernels

_log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_TIME_LIMIT_S = 180  # a top-size lesson takes ~30 s on two busy cores; six times that is a runaway
DEFAULT_TASKS_PER_WORKER = 25
STARTUP_LIMIT_S = 120  # for a new worker to import torch and mpviz on a machine that is busy
PING = "ping"  # asked of an idle worker before a call: a worker killed a moment ago may still look alive
PING_LIMIT_S = 5.0  # an idle worker answers at once; one that does not is dead, or too stuck to be given a call
REAP_EVERY_S = 0.05  # how often the fork server collects its exited workers' codes (and passes them on)
# Fork after importing torch, as DataLoader's workers do on Linux (no intra-op thread has started yet); macOS's
# system libraries are not fork-safe, and Windows has no fork: there each worker is a fresh interpreter.
FORK = sys.platform == "linux"


class WorkerCrashed(RuntimeError):
    """The worker process running a call died before answering. `signal` is the signal that killed it (None for
    an exit), `exitcode` the process's exit code (negative: -signal)."""

    def __init__(self, exitcode: int | None, what: str = "") -> None:
        self.exitcode = exitcode
        self.signal = -exitcode if exitcode is not None and exitcode < 0 else None
        self.what = what
        super().__init__(f"the worker process running {what or 'a computation'} died ({self.cause})")

    @property
    def cause(self) -> str:
        """ "SIGSEGV", or "exit 1": short and the same in every language."""
        if self.signal is not None:
            try:
                return signal.Signals(self.signal).name
            except ValueError:
                return f"signal {self.signal}"
        return f"exit {self.exitcode}"


class WorkerTimeout(WorkerCrashed):
    """The call ran past the pool's time limit; its worker was killed."""

    def __init__(self, limit_s: float, what: str = "") -> None:
        self.limit_s = limit_s
        super().__init__(-signal.SIGKILL, what)
        self.args = (f"{what or 'a computation'} ran past the {limit_s:g} s limit; its worker was killed",)


# ── the worker process ──────────────────────────────────────────────────────────────────────────────────────
def _portable(exc: BaseException) -> tuple:
    """An exception as (type, args, attributes, traceback text): rebuilt without calling its __init__, so
    exceptions whose __init__ takes other arguments than `args` (mpviz.model.ConfigError) cross over too."""
    return type(exc), exc.args, dict(vars(exc)), "".join(traceback.format_exception(exc))


def _rebuilt(kind: type, args: tuple, state: dict, trace: str) -> BaseException:
    exc = kind.__new__(kind)
    exc.args = args
    exc.__dict__.update(state)
    exc.add_note(f"in the worker process:\n{trace}")
    return exc


def _warm() -> None:
    """What every worker needs before its first call, done once: torch, mpviz (the kernel probe) and autocast's
    dispatch keys (every trace starts by asking for them; their probe's fake tensors import torch._dynamo)."""
    ensure_safe_kernels()  # the server's cap, inherited in the environment, or this machine's stored probe
    import mpviz  # noqa: F401
    from mpviz.policy import autocast_backends

    autocast_backends()


def _serve(conn: Connection) -> None:
    """A worker's loop: receive (fn, args), send ("ok", result) or ("err", portable exception); PING is answered
    with PING; None ends it."""
    _warm()  # a no-op in a forked worker: its fork server did it
    try:
        conn.send(("ready", None))
    except (BrokenPipeError, ConnectionResetError):  # the pool closed (or the server died) while we started
        return
    while True:
        try:
            task = conn.recv()
        except (EOFError, ConnectionResetError):  # the server went away without saying goodbye: nothing to serve
            return
        if task is None:
            return
        if task == PING:
            conn.send(PING)
            continue
        fn, args = task
        try:
            reply = ("ok", fn(*args))
        except Exception as e:
            reply = ("err", _portable(e))
        try:
            conn.send(reply)
        except Exception as e:  # the result or the exception did not pickle: say so instead
            conn.send(("err", _portable(TypeError(f"{fn.__name__}'s answer cannot leave the worker: {e}"))))
        del reply
        return_freed_memory()  # between calls, as the server process does after heavy work


def _fork_server(requests: socket.socket, events: Connection) -> None:
    """The fork server's loop: warm up once, then fork one worker per request (a socket handed over as SCM_RIGHTS
    with the request's number), answer ("forked", number, pid), and pass on each worker's exit code ("exited", pid,
    code) as it reaps it. It ends when the server closes its end; its workers end as their own sockets close, and
    are reaped on the way out."""
    _warm()
    try:
        events.send(("ready",))
    except OSError:  # the server went away while we warmed up
        return
    while True:
        _reap(events)
        if not select.select([requests], [], [], REAP_EVERY_S)[0]:
            continue
        try:
            message, fds, _, _ = socket.recv_fds(requests, 16, 1)
        except OSError:
            message = b""
        if not message:  # the server went away: so do its workers, which must not linger as zombies
            _reap(events, STARTUP_LIMIT_S)
            return
        pid = os.fork()
        if pid == 0:  # the worker: nothing of the fork server's but the warm interpreter
            requests.close()
            events.close()
            try:
                _serve(Connection(fds[0]))
            except BaseException:
                traceback.print_exc()
                os._exit(1)
            os._exit(0)  # not the fork server's exit path (its atexit handlers, its buffers)
        os.close(fds[0])
        try:
            events.send(("forked", int.from_bytes(message, "big"), pid))
        except OSError:
            return


def _reap(events: Connection, wait_s: float = 0) -> None:
    """Collect every exited worker (no zombies) and tell the server its code, as Popen.returncode has it; with
    `wait_s`, wait up to that long for all of them to exit."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # none left
            return
        if pid == 0:
            if time.monotonic() >= deadline:
                return
            time.sleep(REAP_EVERY_S)
            continue
        with contextlib.suppress(OSError):
            events.send(("exited", pid, os.waitstatus_to_exitcode(status)))


def _worker_env() -> dict[str, str]:
    """This process's environment and import path, as multiprocessing passes it: a task's module must import in
    the worker too."""
    root = str(Path(__file__).resolve().parents[3])  # the directory that holds the mpviz package
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, *sys.path) if p)}


class _ForkServer:
    """The server's end of one fork server process (see `_fork_server`): `fork(sock)` asks for a worker on `sock`
    and returns the request's number; `pid(number)` and `exit_code(pid)` wait for what the fork server says.
    A thread reads its messages; when it dies, `alive` turns False and those waits end."""

    def __init__(self) -> None:
        requests, their_requests = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)  # one message per request
        events, their_events = socket.socketpair()
        with their_requests, their_events:
            fds = (their_requests.fileno(), their_events.fileno())
            self.process = subprocess.Popen(
                [sys.executable, "-m", "mpviz.app.serving.workers", "--fork-server", *map(str, fds)],
                pass_fds=fds,
                env=_worker_env(),
            )
        self._requests, self._events = requests, Connection(events.detach())
        self._cond = threading.Condition()
        self._numbers = 0
        self._pids: dict[int, int] = {}
        self._exits: dict[int, int] = {}
        self.alive = True
        threading.Thread(target=self._read, name="mpviz-fork-server", daemon=True).start()

    def fork(self, sock: socket.socket) -> int:
        with self._cond:
            self._numbers += 1
            number = self._numbers
        try:
            socket.send_fds(self._requests, [number.to_bytes(8, "big")], [sock.fileno()])
        except OSError:  # it died: the worker's socket closes with ours, and the pool replaces it
            with self._cond:
                self.alive = False
        return number

    def pid(self, number: int, timeout: float | None = STARTUP_LIMIT_S) -> int | None:
        """The worker's pid once forked (the fork server may still be warming up, for up to `timeout`); None if
        it is not forked by then, or the fork server died first."""
        with self._cond:
            self._cond.wait_for(lambda: number in self._pids or not self.alive, timeout)
            return self._pids.get(number)

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        """`pid`'s exit code once it has exited (waiting up to `timeout`), or None: still running, or unknown
        because the fork server died (its orphans are reaped by init)."""
        with self._cond:
            self._cond.wait_for(lambda: pid in self._exits or not self.alive, timeout)
            return self._exits.get(pid)

    def _read(self) -> None:
        while True:
            try:
                message = self._events.recv()
            except (EOFError, OSError):
                break
            with self._cond:
                if message[0] == "forked":
                    self._pids[message[1]] = message[2]
                elif message[0] == "exited":
                    self._exits[message[1]] = message[2]
                self._cond.notify_all()
        _exited(self.process)
        _log.warning("the fork server (pid %s) ended (exit %s)", self.process.pid, self.process.returncode)
        with self._cond:
            self.alive = False
            self._cond.notify_all()


class _Forked:
    """A forked worker process, as much of subprocess.Popen as `_Worker` uses: its parent is the fork server, which
    reaps it and reports its exit code."""

    def __init__(self, server: _ForkServer, number: int) -> None:
        self._server, self._number = server, number
        self.returncode: int | None = None

    @property
    def pid(self) -> int | None:
        return self._server.pid(self._number)

    def poll(self) -> int | None:
        return self._wait(0)

    def wait(self, timeout: float | None = None) -> int | None:
        code = self._wait(timeout)
        if code is None and self._server.alive:
            raise subprocess.TimeoutExpired(f"worker pid {self.pid}", timeout or 0)
        return code

    def kill(self) -> None:
        if self.returncode is None and (pid := self.pid) is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def _wait(self, timeout: float | None) -> int | None:
        if self.returncode is None and (pid := self._server.pid(self._number, timeout)) is not None:
            self.returncode = self._server.exit_code(pid, timeout)  # (up to twice `timeout` in all: a bound)
        return self.returncode


_forks: _ForkServer | None = None
_forks_lock = threading.Lock()


def _fork_server_now() -> _ForkServer:
    """This process's fork server, started on first use and again if it died."""
    global _forks
    with _forks_lock:
        if _forks is None or not _forks.alive:
            _forks = _ForkServer()
        return _forks


def _exited(process: subprocess.Popen | _Forked) -> None:
    """Wait a little for a process whose socket closed, so that its exit code (or signal) is known."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(5)


class _Worker:
    """One worker process (forked by this process's fork server, or `python -m mpviz.app.serving.workers <fd>`)
    and our end of its socket.

    Not multiprocessing's spawn or forkserver: those re-run the parent's `__main__` in the child, and under
    Streamlit `__main__` is the page script being run (which would start workers of its own). A plain interpreter
    on this module imports only mpviz.
    """

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        with theirs:
            if FORK:
                server = _fork_server_now()
                self.process: subprocess.Popen | _Forked = _Forked(server, server.fork(theirs))
            else:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "mpviz.app.serving.workers", str(theirs.fileno())],
                    pass_fds=(theirs.fileno(),),
                    env=_worker_env(),
                )
        self.conn = Connection(ours.detach())
        self.tasks = 0
        self.ready = False  # its "ready" has been read: the time limit counts from the call, not the start

    def wait_ready(self) -> None:
        """Read the worker's "ready" (it has imported mpviz); WorkerTimeout if it never comes."""
        if self.ready:
            return
        if not self.conn.poll(STARTUP_LIMIT_S):
            raise WorkerTimeout(STARTUP_LIMIT_S, "starting a worker")
        try:
            self.conn.recv()
        except (EOFError, OSError):  # died while starting: the call's recv sees the same and reports the crash
            return
        self.ready = True

    def died_idle(self) -> bool:
        """Whether it is gone before being handed a call (killed from outside, or died starting). A process
        killed a moment ago can still look alive (its other threads are still exiting, its socket still open),
        so an idle worker that looks alive is asked: one that does not answer PING within PING_LIMIT_S is gone."""
        if not self.ready or self.process.poll() is not None or self.conn.poll(0):
            return True
        try:
            self.conn.send(PING)
            return not self.conn.poll(PING_LIMIT_S) or self.conn.recv() != PING
        except (EOFError, OSError):
            return True

    def stop(self, kill: bool = False) -> None:
        """End the process: politely when idle, by SIGKILL when it is running a call that must not finish."""
        if not kill:
            try:
                self.conn.send(None)
            except OSError:
                kill = True
        if kill:
            self.process.kill()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.conn.close()


@dataclass(frozen=True)
class PoolStats:
    size: int
    live: int  # worker processes now
    busy: int  # of those, running a call
    waiting: int  # callers waiting for a free worker
    calls: int  # calls answered or failed, since the pool was made
    crashed: int  # calls whose worker died
    timed_out: int  # calls whose worker was killed at the time limit
    recycled: int  # workers retired after tasks_per_worker calls
    replaced_idle: int = 0  # workers found dead before a call was handed to them: replaced, nobody's call failed


class WorkerPool:
    """At most `size` worker processes running callers' functions one call at a time each (see module doc)."""

    def __init__(
        self,
        size: int,
        time_limit_s: float = DEFAULT_TIME_LIMIT_S,
        tasks_per_worker: int = DEFAULT_TASKS_PER_WORKER,
    ) -> None:
        if size < 1 or tasks_per_worker < 1 or time_limit_s <= 0:
            raise ValueError(f"bad pool settings: size {size}, {tasks_per_worker} tasks, {time_limit_s} s")
        self.size, self.time_limit_s, self.tasks_per_worker = size, time_limit_s, tasks_per_worker
        self._cond = threading.Condition()
        self._idle: list[_Worker] = [_Worker() for _ in range(size)]
        self._live = size
        self._waiting = 0
        self._counts = dict.fromkeys(("calls", "crashed", "timed_out", "recycled", "replaced_idle"), 0)
        self._closed = False

    def stats(self) -> PoolStats:
        with self._cond:
            busy = self._live - len(self._idle)
            return PoolStats(self.size, self._live, busy, self._waiting, **self._counts)

    def run(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` in a worker; raises what `fn` raised, WorkerCrashed, or WorkerTimeout."""
        task = pickle.dumps((fn, args))  # here, not in the worker: a task that cannot pickle costs no worker
        what = getattr(fn, "__qualname__", repr(fn))
        worker = self._acquire()
        healthy = False
        try:
            worker = self._alive(worker)
            try:
                worker.conn.send_bytes(task)
                answered = worker.conn.poll(self.time_limit_s)
            except OSError:  # it died in the instant since `_alive` looked: the same as dying now
                answered = True
            if not answered:
                self._count("timed_out")
                _log.warning("%s ran past %g s: killing worker pid %s", what, self.time_limit_s, worker.process.pid)
                raise WorkerTimeout(self.time_limit_s, what)
            try:
                status, value = worker.conn.recv()
            except (EOFError, OSError):
                _exited(worker.process)
                self._count("crashed")
                _log.error(
                    "worker pid %s died running %s (exit %s)", worker.process.pid, what, worker.process.returncode
                )
                raise WorkerCrashed(worker.process.returncode, what) from None
            healthy = True
            if status == "err":
                raise _rebuilt(*value)
            return value
        finally:
            self._count("calls")
            self._release(worker, healthy)

    def close(self) -> None:
        """Stop the idle workers now and busy ones as they finish; `run` refuses new calls."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._live -= len(idle)
            self._cond.notify_all()
        for w in idle:
            w.stop()

    def _alive(self, worker: _Worker, tries: int = 2) -> _Worker:
        """`worker` ready for a call, or, if it died while idle (or starting), a fresh one in its place: a death
        nobody's call caused is logged, never reported to the caller who happens to come next. After `tries`
        workers dead on arrival the last is handed on as it is, and the call reports what is wrong."""
        for attempt in range(tries):
            worker.wait_ready()
            if attempt == tries - 1 or not worker.died_idle():
                return worker
            _exited(worker.process)
            pid, code = worker.process.pid, worker.process.returncode
            _log.warning("worker pid %s died while idle (exit %s): replaced", pid, code)
            self._count("replaced_idle")
            worker.stop(kill=True)
            worker = _Worker()
        return worker

    # ── bookkeeping ─────────────────────────────────────────────────────────────────────────────────────────
    def _count(self, name: str) -> None:
        with self._cond:
            self._counts[name] += 1

    def _acquire(self) -> _Worker:
        with self._cond:
            self._waiting += 1
            try:
                while not self._closed and not self._idle and self._live >= self.size:
                    self._cond.wait()
                if self._closed:
                    raise RuntimeError("the worker pool is closed")
                if self._idle:
                    return self._idle.pop()
                self._live += 1  # a crashed or retired worker's place: start its replacement outside the lock
            finally:
                self._waiting -= 1
        try:
            return _Worker()
        except BaseException:
            with self._cond:
                self._live -= 1
                self._cond.notify()
            raise

    def _release(self, worker: _Worker, healthy: bool) -> None:
        """Back to the idle list, or, when it crashed or has served its calls, stopped and replaced at once: the
        replacement imports torch while nobody waits for it, so the next call finds it ready."""
        worker.tasks += 1
        if healthy and worker.tasks < self.tasks_per_worker:
            with self._cond:
                if not self._closed:
                    self._idle.append(worker)
                    self._cond.notify()
                    return
        worker.stop(kill=not healthy)
        replacement = None if self._closed else self._spawn_quietly()
        with self._cond:
            if healthy:
                self._counts["recycled"] += 1
            if replacement is not None and not self._closed:
                self._idle.append(replacement)
                replacement = None
            else:
                self._live -= 1  # its place is taken again by the next caller (_acquire)
            self._cond.notify()
        if replacement is not None:  # the pool closed while it started
            replacement.stop()

    @staticmethod
    def _spawn_quietly() -> _Worker | None:
        try:
            return _Worker()
        except Exception:  # out of processes or memory now: the next caller tries again, and reports it
            _log.exception("could not start a replacement worker")
            return None


# ── the process-wide pools ──────────────────────────────────────────────────────────────────────────────────
_pool_lock = threading.Lock()
_pool: WorkerPool | None = None
_light_pool: WorkerPool | None = None
_pool_made = False


def _make_pools() -> None:
    global _pool, _light_pool, _pool_made
    size = env_int("MPVIZ_WORKERS", default_slots(), minimum=0)
    if size:
        limit = env_int("MPVIZ_RUN_LIMIT_S", DEFAULT_TIME_LIMIT_S, minimum=1)
        tasks = env_int("MPVIZ_WORKER_TASKS", DEFAULT_TASKS_PER_WORKER, minimum=1)
        _pool = WorkerPool(size, limit, tasks)
        _light_pool = WorkerPool(light_slots(), limit, tasks)
    _pool_made = True


def default_pool() -> WorkerPool | None:
    """The process-wide pool for heavy runs (made on first use with the light one, see the module doc), or None
    with MPVIZ_WORKERS=0."""
    with _pool_lock:
        if not _pool_made:
            _make_pools()
        return _pool


def light_pool() -> WorkerPool | None:
    """The process-wide pool for light runs ($MPVIZ_LIGHT_WORKERS workers, default 1), or None with
    MPVIZ_WORKERS=0: a small run never waits for a worker busy with a top-size one."""
    with _pool_lock:
        if not _pool_made:
            _make_pools()
        return _light_pool


def set_default_pool(pool: WorkerPool | None, light: WorkerPool | None = None) -> None:
    """Make `pool` the process-wide pool for heavy runs and `light` (default: `pool` too) the one for light runs;
    None: compute in-process, e.g. for tests that patch the engine."""
    global _pool, _light_pool, _pool_made
    with _pool_lock:
        _pool, _light_pool, _pool_made = pool, light if light is not None else pool, True


def run_isolated(fn: Callable[..., T], *args: Any, heavy: bool = False) -> T:
    """`fn(*args)` in a worker of the heavy or the light pool, or in this process when there is no pool."""
    pool = default_pool() if heavy else light_pool()
    return fn(*args) if pool is None else pool.run(fn, *args)


if __name__ == "__main__":  # a fork server (`_ForkServer`) or a worker (`_Worker`) on the sockets it was handed
    if sys.argv[1] == "--fork-server":
        _fork_server(socket.socket(fileno=int(sys.argv[2])), Connection(int(sys.argv[3])))
    else:
        _serve(Connection(int(sys.argv[1])))
