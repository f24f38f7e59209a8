"""Fair heavy work: a light run never waits behind a heavy one, one client holds one place in the heavy queue,
every wait is said in words with the place in line, and a worker that died idle costs nobody's call."""

import os
import signal
import threading
import time
from pathlib import Path

import pytest

import mpviz.app.client
import mpviz.app.serving.results
from mpviz.app import text
from mpviz.app.serving import admission, workers
from mpviz.app.serving.admission import AdmissionGate
from mpviz.app.serving.workers import WorkerPool
from tests.apptest import failures, page_app


# ── tasks, module-level so that workers import them by name ─────────────────────────────────────────────────
def hold_until(path: str) -> str:
    """A heavy run that lasts until the test lets it end."""
    while not Path(path).exists():
        time.sleep(0.05)
    return "heavy done"


def worker_pid() -> int:
    return os.getpid()


# ── the view's two lanes ────────────────────────────────────────────────────────────────────────────────────
@pytest.fixture(scope="module")
def pools():
    """One heavy worker and one light worker, as a 2-core replica has: started once for the module (each imports
    torch: seconds), started and warm before a test uses them (the tests measure lanes, not torch's import)."""
    heavy, light = WorkerPool(1, time_limit_s=120), WorkerPool(1, time_limit_s=120)
    for pool in (heavy, light):
        pool.run(worker_pid)
    yield heavy, light
    heavy.close()
    light.close()


@pytest.fixture
def lanes(pools, monkeypatch):
    """The two pools as the process's lanes, each with its gate; the process-wide ones are put back afterwards."""
    monkeypatch.setattr(admission, "_gate", AdmissionGate(1))
    monkeypatch.setattr(admission, "_light_gate", AdmissionGate(1))
    workers.set_default_pool(*pools)
    yield pools
    workers.set_default_pool(None)


def test_a_light_page_is_served_while_a_heavy_run_holds_the_heavy_lane(lanes, tmp_path):
    heavy, _ = lanes
    release = tmp_path / "release"
    box: list = []

    def heavy_visitor() -> (
        None
    ):  # what mpviz.app.serving.results.isolated(..., heavy=True) does, without a page around it
        with admission.default_gate().admit():
            box.append(workers.run_isolated(hold_until, str(release), heavy=True))

    holder = threading.Thread(target=heavy_visitor)
    holder.start()
    try:
        deadline = time.monotonic() + 60
        while heavy.stats().busy < 1:
            assert time.monotonic() < deadline, "the heavy run never started"
            time.sleep(0.05)
        at = page_app("mpviz/pages/attention.py", seed="3").run()  # a small config nobody computed yet: light
        assert not failures(at) and len(at.get("bidi_component")) == 1, "the light lesson was served"
        assert heavy.stats().busy == 1 and not box, "while the heavy run still held its lane"
        assert admission.default_gate().stats().running == 1 and admission.light_gate().stats().admitted >= 1
    finally:
        release.touch()
        holder.join(60)
    assert box == ["heavy done"]


def test_every_wait_is_said_in_words_with_the_place_in_line_in_both_languages():
    for lang in ("en", "zh"):
        common, queue = text.load(lang, "common"), text.load(lang, "queue")
        assert "{position}" in common["queued"] and "{position}" in queue["light"]
        assert queue["own"] and "{" not in queue["own"]
        assert queue["light"].format(position=3) != queue["light"]


def test_the_client_is_the_address_a_proxy_on_a_private_network_saw(monkeypatch):
    class Headers:
        def __init__(self, forwarded: list[str]) -> None:
            self.forwarded = forwarded

        def get_all(self, name: str) -> list[str]:
            return self.forwarded if name == "X-Forwarded-For" else []

    class Context:
        def __init__(self, ip, forwarded) -> None:
            self.ip_address, self.headers = ip, Headers(forwarded)

    def client(ip, forwarded=()):
        monkeypatch.setattr(mpviz.app.serving.results.st, "context", Context(ip, list(forwarded)))
        return mpviz.app.client.client_id()

    assert client("93.184.216.34", ["151.101.1.69"]) == "93.184.216.34"  # from the internet: its header proves nothing
    assert client(None, ["151.101.1.69, 140.82.112.3"]) == "140.82.112.3"  # via the local proxy: what it appended
    assert client("10.0.3.4", ["140.82.112.4"]) == "140.82.112.4"  # via an Ingress on the cluster's network
    assert client("10.0.3.4") == "10.0.3.4" and client(None) is None


# ── the gate: one place per client ──────────────────────────────────────────────────────────────────────────
def test_one_client_holds_one_place_and_its_second_run_waits_behind_its_first():
    gate = AdmissionGate(1, tick=0.02)
    first_in, first_out = threading.Event(), threading.Event()
    order: list[str] = []
    held_heard: list[str] = []

    def run(name: str, client: str, on_held=None, hold: threading.Event | None = None) -> None:
        with gate.admit(on_wait=lambda position: None, client=client, on_held=on_held):
            order.append(name)
            if hold is not None:
                first_in.set()
                hold.wait(30)

    first = threading.Thread(target=run, args=("a1", "a", None, first_out))
    first.start()
    assert first_in.wait(30)
    second = threading.Thread(target=run, args=("a2", "a", lambda: held_heard.append("held")))
    second.start()
    deadline = time.monotonic() + 30
    while gate.stats().held < 1:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    other = threading.Thread(target=run, args=("b1", "b"))
    other.start()
    while gate.stats().waiting < 1:  # b1 is queued; a2 is not: a's place is a1's
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert gate.stats().held == 1 and gate.stats().waiting == 1 and held_heard
    first_out.set()
    for t in (first, second, other):
        t.join(30)
    assert order == ["a1", "b1", "a2"], "the other client did not wait for a's second run"
    assert gate.stats() == admission.GateStats(1, 0, 0, 3, 0, 0)


def test_a_held_caller_that_leaves_gives_nothing_back_and_blocks_nobody():
    gate = AdmissionGate(1, tick=0.02)
    raised: list[BaseException] = []

    class Gone(Exception):
        pass

    def leave() -> None:
        raise Gone

    def second_tab() -> None:
        try:
            with gate.admit(client="a", on_held=leave):
                pass
        except Gone as e:
            raised.append(e)

    with gate.admit(client="a"):
        tab = threading.Thread(target=second_tab)
        tab.start()
        tab.join(30)
    assert len(raised) == 1 and gate.stats() == admission.GateStats(1, 0, 0, 1, 1, 0)
    with gate.admit(client="a"):  # a's place was given back when its run ended
        assert gate.stats().running == 1


# ── a worker that died idle ─────────────────────────────────────────────────────────────────────────────────
def _exited(pid: int) -> bool:
    """Whether `pid` has finished dying (a zombie: its files, the socket too, are closed), or is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_a_worker_killed_while_idle_is_replaced_and_the_next_call_succeeds(pools):
    _, pool = pools  # the light lane's one worker, idle between calls
    before = pool.stats()
    dead = pool.run(worker_pid)
    os.kill(dead, signal.SIGKILL)  # killed from outside while it waits for work (the OOM killer, an admin)
    deadline = time.monotonic() + 60
    while not _exited(dead):  # a process with torch's memory takes a moment to finish dying
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert pool.run(worker_pid) != dead, "the next visitor's call ran, in a new worker"
    stats = pool.stats()
    assert stats.replaced_idle == before.replaced_idle + 1 and stats.crashed == before.crashed and stats.live == 1
