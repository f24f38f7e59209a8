"""RunWatch and Pacer: what a viewer of a training run sees, as plain state (no torch, no Streamlit)."""

import pytest

from mpviz.run_watch import Pacer, Plan, RunWatch, WatchState


def watched(key="a", steps=(0, 1, 2)) -> RunWatch:
    w = RunWatch()
    w.plan(key)
    w.begin(key)
    for k in steps:
        w.show(k)
    return w


def test_a_new_config_is_shown_and_finishing_leaves_nothing_to_replay():
    w = RunWatch()
    assert w.plan("a") is Plan.SHOW and w.state is WatchState.IDLE
    w.begin("a")
    w.show(0)
    w.finish()
    assert w.state is WatchState.FINISHED and w.steps == [0]
    assert w.plan("a") is Plan.SHOW  # shown again whole (from the shared result) on the next script run


def test_stop_keeps_the_steps_shown_and_is_planned_until_replay_or_a_new_config():
    w = watched()
    w.stop()
    assert w.state is WatchState.STOPPED and w.steps == [0, 1, 2]
    assert w.plan("a") is Plan.SHOW_STOPPED
    assert w.plan("a") is Plan.SHOW_STOPPED  # every later script run too (e.g. moving the inspector)
    w.request_replay()
    assert w.plan("a") is Plan.REPLAY
    assert w.plan("a") is Plan.SHOW_STOPPED  # a replay request is used once; begin() would have cleared it
    assert w.plan("b") is Plan.SHOW and w.steps == [] and w.state is WatchState.IDLE


def test_replay_is_asked_once_and_begin_starts_from_step_zero():
    w = watched()
    w.finish()
    w.request_replay()
    assert w.plan("a") is Plan.REPLAY
    w.begin("a")
    assert w.state is WatchState.WATCHING and w.steps == []
    assert w.plan("a") is Plan.SHOW


def test_an_interrupted_watch_without_stop_is_shown_again():
    w = watched()  # another widget changed mid-run: Streamlit interrupted the script, nobody pressed Stop
    assert w.state is WatchState.WATCHING
    assert w.plan("a") is Plan.SHOW


def test_stop_and_finish_outside_a_watch_change_nothing_and_show_needs_begin():
    w = RunWatch()
    w.stop()
    w.finish()
    assert w.state is WatchState.IDLE
    with pytest.raises(RuntimeError):
        w.show(0)
    w = watched()
    w.finish()
    w.stop()  # a Stop click that arrives after the last step: the run is finished, not stopped
    assert w.state is WatchState.FINISHED


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_pacer_shows_the_first_step_at_once_then_rate_per_second():
    clock = Clock()
    p = Pacer(5.0, clock)
    p.start()
    assert p.visible(10) == 1 and p.wait(0) == 0.0
    assert p.wait(1) == pytest.approx(0.2)
    clock.t += 0.2
    assert p.visible(10) == 2 and p.wait(1) == 0.0
    clock.t += 10
    assert p.visible(10) == 10  # never more than have arrived
    assert p.visible(3) == 3


def test_pacer_without_a_rate_shows_everything_that_arrived():
    p = Pacer(None, Clock())
    p.start()
    assert p.visible(7) == 7 and p.wait(6) == 0.0
    assert Pacer(float("inf"), Clock()).visible(4) == 4


@pytest.mark.parametrize("rate", [0.0, -1.0, float("nan")])
def test_pacer_refuses_a_rate_that_never_shows_anything(rate):
    with pytest.raises(ValueError):
        Pacer(rate)
