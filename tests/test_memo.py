"""mpviz.presentation.memo: the key is made from the function, every argument and the viewer's language (unless the
result holds no words), so no input can be left out of it; engine runs are handed to the host picklable, for its
workers."""

import math
import pickle
from dataclasses import dataclass

import pytest

import mpviz.app.serving.results  # noqa: F401  the app's store: what the caching tests below use
from mpviz import claims
from mpviz.model import AttentionConfig
from mpviz.presentation import memo, runs
from mpviz.presentation.memo import freeze, memoised
from mpviz.presentation.run_config import RunConfig


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


@pytest.fixture
def in_process():
    """A host of this process's own (memo.InProcess), put back as it was afterwards."""
    with memo.hosted(memo.InProcess()) as host:
        yield host


wordless_calls: list[int] = []


@memoised(words=False)
def _wordless(n: int) -> int:
    wordless_calls.append(n)
    return n * 2


@memoised
def _worded(n: int) -> str:
    return f"{n} in {memo.language()}"


def test_a_result_without_words_is_one_for_every_language_and_a_worded_one_is_one_per_language(in_process):
    wordless_calls.clear()
    in_process.lang = "zh"
    assert _wordless(4) == 8 and _worded(4) == "4 in zh"
    in_process.lang = "en"
    assert _wordless.cached(4) and _wordless(4) == 8 and wordless_calls == [4]
    assert not _worded.cached(4) and _worded(4) == "4 in en"


def test_in_the_app_a_zh_and_an_en_session_share_a_result_without_words():
    import streamlit as st

    wordless_calls.clear()
    try:
        st.session_state["lang"] = "zh"
        assert _wordless(21) == 42 and _worded(21) == "21 in zh"
        st.session_state["lang"] = "en"
        assert _wordless(21) == 42 and wordless_calls == [21]
        assert _worded(21) == "21 in en"
    finally:
        st.session_state.pop("lang", None)


class _Recording(memo.InProcess):
    """Keeps what the memo hands over for each call: whether it may run in a worker, and the computation."""

    def __init__(self) -> None:
        super().__init__()
        self.handed: list[tuple[bool, bool]] = []

    def share(self, returns, key, compute, heavy, worker):
        self.handed.append((heavy, worker))
        return compute() if not worker else pickle.loads(pickle.dumps(compute))()  # as a worker receives it


def test_an_engine_run_is_handed_over_picklable_for_a_worker_with_its_lane():
    with memo.hosted(_Recording()) as host:
        cfg = RunConfig(AttentionConfig(seq_len=4, d_model=8, n_heads=2), "cpu", "off")
        assert runs.attention_trace(cfg).trace.story()  # by name: the worker calls the undecorated function
        assert host.handed == [(runs.heavy_trace(cfg), True)]


def test_the_tour_and_the_claims_page_share_one_check_per_claim(in_process, monkeypatch):
    """The tour's verdict counts and the claims lesson read the same memoised checks: each claim measured once."""
    from mpviz.app import tour
    from mpviz.presentation.view_models import claims as claims_lesson

    checked: list[int] = []

    @dataclass(frozen=True)
    class _Stub:
        id: int
        on_demand: bool = False

        def check(self) -> claims.Checked:
            checked.append(self.id)
            return claims.Checked(self.id, "holds", {}, None, {})

    monkeypatch.setattr(claims, "claim", _Stub)
    fast = [c.id for c in claims.CLAIMS if not c.on_demand]
    assert claims_lesson.measured(fast[0]).verdict == "holds"
    counts = tour._verdict_facts(None, None)
    assert counts["holds"] == len(fast) and sorted(checked) == sorted(fast)  # the page's first check not redone
    assert claims_lesson.measured(fast[-1]).claim == fast[-1] and len(checked) == len(fast)  # shared, not redone
