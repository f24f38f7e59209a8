"""mpviz.app.memo: the key is made from the function and every argument, so no input can be left out of it."""

import math
from dataclasses import dataclass

import pytest

import mpviz.app.serving.results  # noqa: F401  the app's store: what the caching tests below use
from mpviz.presentation.memo import freeze, memoised


@dataclass(frozen=True)
class _Settings:
    value: float
    names: tuple


def test_values_that_compare_equal_but_show_differently_are_different_keys():
    assert freeze(0.0) != freeze(-0.0)  # the formats lesson shows both zeros' bits
    assert freeze(1) != freeze(1.0) != freeze(True)
    assert freeze([1, 2]) != freeze((1, 2))
    assert freeze((0.0, 1.0)) != freeze((-0.0, 1.0)) != freeze([-0.0, 1.0])  # a row of floats, keyed by its bytes
    assert freeze((1.0, 2.0)) != freeze((1.0, 2)) and freeze((1.0, 2.0)) == freeze((1.0, 2.0))
    assert freeze(math.nan) == freeze(float("nan"))  # NaN keys the same result as itself
    assert freeze({"a": 1, "b": 2}) == freeze({"b": 2, "a": 1})
    assert freeze(_Settings(-0.0, ("x",))) != freeze(_Settings(0.0, ("x",)))


def test_an_argument_that_is_no_plain_value_is_refused():
    with pytest.raises(TypeError, match="plain value"):
        freeze(object())


calls: list[tuple] = []


@memoised
def _square(x: float, *, label: str = "") -> tuple:
    calls.append((x, label))
    return (x * x, label)


@memoised(returns="table")
def _rows(n: int) -> list[dict]:
    return [{"i": i} for i in range(n)]


def test_each_distinct_call_is_computed_once_and_shared():
    calls.clear()
    assert not _square.cached(3.0)
    assert _square(3.0) == (9.0, "")
    assert _square(3.0) == (9.0, "")
    assert _square.cached(3.0)
    _square(3.0, label="b")
    _square(-0.0)
    _square(0.0)
    assert calls == [(3.0, ""), (3.0, "b"), (-0.0, ""), (0.0, "")]


def test_a_table_is_one_arrow_table_shared():
    assert not _rows.cached(3)
    table = _rows(3)
    assert table.num_rows == 3 and _rows(3) is table and _rows.cached(3)
