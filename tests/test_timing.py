"""mpviz.timing: the one median timer (bench, the speed claim): quartiles, interleaving, repeat limits."""

from __future__ import annotations

import math

import pytest

from mpviz.model import ConfigError
from mpviz.timing import REPEAT_LIMITS, Spread, check_repeat, median_ms, ratios, time_interleaved


def test_spread_is_the_median_and_quartiles():
    s = Spread.of([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s.median, s.q1, s.q3, s.iqr) == (3.0, 2.0, 4.0, 2.0)
    assert s.relative_spread == pytest.approx(2 / 3)
    one = Spread.of([7.0])
    assert (one.median, one.q1, one.q3, one.relative_spread) == (7.0, 7.0, 7.0, 0.0)
    assert Spread.of([0.0, 0.0]).relative_spread == math.inf
    with pytest.raises(ConfigError):
        Spread.of([])


def test_interleaved_rounds_rotate_the_order_after_one_warm_up_each():
    calls: list[str] = []
    timings = time_interleaved({name: (lambda name=name: calls.append(name)) for name in "abc"}, 3)
    assert calls[:3] == ["a", "b", "c"]  # warm-up
    assert calls[3:] == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]  # nobody always runs first
    assert all(len(t.samples) == 3 and t.median >= 0 for t in timings.values())


def test_ratios_pair_the_same_rounds():
    a, b = Spread.of([2.0, 4.0, 8.0]), Spread.of([1.0, 2.0, 4.0])
    assert ratios(a, b).samples == (2.0, 2.0, 2.0)


@pytest.mark.parametrize("repeat", [0, -5, REPEAT_LIMITS.max_repeat + 1, 10**20, 2.0, True, "3", None])
def test_repeat_outside_the_limits_is_a_config_error(repeat):
    with pytest.raises(ConfigError) as e:
        check_repeat(repeat)
    assert e.value.field == "repeat"
    with pytest.raises(ConfigError):
        median_ms(lambda: pytest.fail("must not run"), repeat)


def test_the_median_timer_times_something():
    assert median_ms(lambda: sum(range(1000)), 3) > 0
