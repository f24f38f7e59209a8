"""Page runs take turns (mpviz.app.serving.run_slots): at most SLOTS at once, and a run that waits for a shared result
gives its slot back, so waits never hold up the others and a computation never waits for a slot held by its own
waiters."""

import threading
import time

import pytest

from mpviz.app.serving import results, run_slots
from mpviz.app.serving.admission import default_cache

WAIT_S = 30  # generous: these threads only wait for each other


def _threads(targets) -> list[threading.Thread]:
    threads = [threading.Thread(target=t, daemon=True) for t in targets]
    for t in threads:
        t.start()
    return threads


def _joined(threads) -> None:
    for t in threads:
        t.join(WAIT_S)
    assert not any(t.is_alive() for t in threads), "every run ended"


def _all_slots_free() -> bool:
    taken = [run_slots._slots.acquire(timeout=WAIT_S) for _ in range(run_slots.SLOTS)]
    for ok in taken:
        if ok:
            run_slots._slots.release()
    return all(taken)


def test_at_most_slots_page_runs_at_once_and_every_slot_comes_back():
    lock, running, most = threading.Lock(), [0], [0]

    def run() -> None:
        with run_slots.page_run():
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            time.sleep(0.02)
            with lock:
                running[0] -= 1

    _joined(_threads([run] * 8))
    assert most[0] == run_slots.SLOTS
    assert _all_slots_free()


class _Stopped(BaseException):
    """Like Streamlit's stop and rerun exceptions, which a page's `except Exception` must not catch."""


def test_a_run_ended_by_an_error_or_a_rerun_gives_its_slot_back():
    for error in (RuntimeError("page failed"), _Stopped()):
        with pytest.raises(type(error)), run_slots.page_run():
            raise error
    with pytest.raises(RuntimeError), run_slots.page_run(), run_slots.stepped_aside():
        raise RuntimeError("a wait that failed")
    assert _all_slots_free()


def test_a_waiting_run_steps_aside_and_a_plain_run_goes_on_meanwhile():
    default_cache().clear()
    release, started = threading.Event(), threading.Event()
    done = []

    def slow() -> str:
        started.set()
        release.wait(WAIT_S)
        return "result"

    def computing() -> None:
        with run_slots.page_run():
            done.append(("computing", results.shared(("run slots", "slow"), slow)))

    def waiting() -> None:
        started.wait(WAIT_S)
        with run_slots.page_run():
            done.append(("waiting", results.shared(("run slots", "slow"), slow)))

    def plain() -> None:
        started.wait(WAIT_S)
        time.sleep(0.1)  # the other two are inside their runs, waiting for the result
        with run_slots.page_run():
            done.append(("plain", None))

    threads = _threads([computing, waiting, plain])
    threads[2].join(WAIT_S)
    assert done == [("plain", None)], "both waits gave their slots back: the plain run was not held up"
    release.set()
    _joined(threads)
    assert sorted(done) == [("computing", "result"), ("plain", None), ("waiting", "result")]
    assert _all_slots_free()


def test_a_computation_is_never_stuck_behind_runs_that_wait_for_it():
    """Every slot held by a run that waits for a figure whose builder itself needs a shared result: the builder's
    run steps aside for that, and must get a slot back to finish; the waiters have stepped aside too."""
    default_cache().clear()
    building = threading.Event()
    done = []

    def figure():
        building.set()
        time.sleep(0.2)  # the waiters arrive while it builds
        return results.shared(("run slots", "input"), lambda: 41) + 1

    def build() -> None:
        with run_slots.page_run():
            done.append(results.shared(("run slots", "figure"), figure))

    def wait_for_it() -> None:
        building.wait(WAIT_S)
        with run_slots.page_run():
            done.append(results.shared(("run slots", "figure"), figure))

    _joined(_threads([build] + [wait_for_it] * run_slots.SLOTS))
    assert done == [42] * (run_slots.SLOTS + 1)
    assert _all_slots_free()


def test_outside_a_page_run_stepping_aside_changes_nothing():
    with run_slots.stepped_aside():
        assert not run_slots._holding()
    assert _all_slots_free()
