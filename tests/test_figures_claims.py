"""The claims lesson's figure builders draw what a small result says, with the words the page hands them."""

import math
from types import SimpleNamespace

from mpviz import claims, formats
from mpviz.app import text
from mpviz.presentation.figures import claims as claims_fig
from mpviz.timing import Spread

WORDS = text.load("en", "claims")
LABELS = dict(WORDS["labels"])
NUMBER_LINE_LABELS = {**text.load("en", "formats")["figure"], "number_line_title": "bins title"}


def _annotation_texts(fig) -> list[str]:
    return [a.text for a in fig.layout.annotations]


def test_close_scores_figure_marks_each_score_and_where_each_format_stores_it():
    pair = claims.score_pair(10.0, 10.01)
    lo, hi = 9.9, 10.1
    lines = [formats.number_line(f.format, lo, hi) for f in pair.formats]
    fig = claims_fig.close_scores_figure(lines, [pair], labels=LABELS, number_line_labels=NUMBER_LINE_LABELS)
    assert fig.layout.title.text == "bins title"
    assert {"10", "10.01"} <= set(_annotation_texts(fig))  # a label over each score's dotted line
    assert [s.x0 for s in fig.layout.shapes if s.line.dash == "dot"] == [10.0, 10.01]
    stored = [t for t in fig.data if t.type == "scatter" and t.hovertext]  # the dots; ticks hover by template
    assert {t.y[0]: tuple(t.x) for t in stored} == {"float16": (10.0, 10.0078125), "bfloat16": (10.0, 10.0)}
    fp16_dots = next(t for t in stored if t.y[0] == "float16")
    assert fp16_dots.hovertext[1] == LABELS["stored"].format(value=10.01, stored=10.0078125, format="float16")


def _spread(*xs: float) -> Spread:
    return Spread.of(xs)


def test_speed_figure_draws_median_speedups_with_their_quartiles_and_the_claimed_band():
    rows = tuple(
        claims.SpeedRow(
            dtype,
            matmul_ms=2.0,
            step_ms=4.0,
            matmul_speedup=mm.median,
            step_speedup=st.median,
            matmul=_spread(2.0),
            step=_spread(4.0),
            matmul_speedup_spread=mm,
            step_speedup_spread=st,
        )
        for dtype, mm, st in (
            ("float32", _spread(1, 1, 1), _spread(1, 1, 1)),
            ("bfloat16", _spread(1.5, 2.0, 3.0), _spread(1.2, 1.4, 1.6)),
            ("float16", _spread(0.02, 0.03, 0.04), _spread(0.1, 0.2, 0.3)),
        )
    )
    ev = claims.SpeedEvidence(
        "cpu", 2, 64, claims.SPEED_BLOCK, 3, rows, "AVX2", "cuda", (), (), claims.MAX_RELATIVE_SPREAD,
        *claims.quartile_verdicts(rows),
    )  # fmt: skip
    fig = claims_fig.speed_figure(ev, labels=LABELS)
    bars = {t.name: t for t in fig.data if t.type == "bar"}
    assert list(bars) == ["float32", "bfloat16", "float16"]
    bf16 = bars["bfloat16"]
    assert list(bf16.y) == [2.0, 1.4]
    mm, st = rows[1].matmul_speedup_spread, rows[1].step_speedup_spread
    assert list(bf16.error_y.array) == [mm.q3 - mm.median, st.q3 - st.median]
    assert list(bf16.error_y.arrayminus) == [mm.median - mm.q1, st.median - st.q1]
    assert list(bf16.hovertext) == [LABELS["ms"].format(ms=2.0), LABELS["ms"].format(ms=4.0)]
    assert list(bf16.x) == [
        LABELS["matmul"].format(n=64),
        LABELS["step"].format(seq=claims.SPEED_BLOCK.seq_len, dim=claims.SPEED_BLOCK.d_model),
    ]
    assert LABELS["claimed"] in _annotation_texts(fig) and LABELS["iqr"].format(repeat=3) in _annotation_texts(fig)
    assert fig.layout.yaxis.title.text == LABELS["speedup"] and fig.layout.yaxis.type == "log"
    low, high = fig.layout.yaxis.range  # every quartile is on the axis (log10 units)
    fp16_mm = rows[2].matmul_speedup_spread
    assert low < math.log10(fp16_mm.q1) and math.log10(mm.q3) < high


def test_accumulation_figure_draws_both_running_sums_and_the_two_end_points():
    ev = SimpleNamespace(
        exact_partial_sums=(0.0, 1.0, 1.25, 1.5),
        low_partial_sums=(0.0, 1.0, 1.0, 1.0),
        rounded_once=1.5,
        measured=1.5,
        dtype="bfloat16",
        device="cpu",
    )
    fig = claims_fig.accumulation_figure(ev, labels=LABELS)
    by_name = {t.name: t for t in fig.data}
    assert list(by_name[LABELS["exact"]].y) == [0.0, 1.0, 1.25, 1.5]
    assert list(by_name[LABELS["low_accumulator"].format(dtype="bfloat16")].y) == [0.0, 1.0, 1.0, 1.0]
    once = by_name[LABELS["rounded_once"].format(dtype="bfloat16")]
    measured = by_name[LABELS["measured"].format(device=LABELS["device_names"]["cpu"])]  # the device in words
    assert (list(once.x), list(once.y)) == ([3], [1.5]) and (list(measured.x), list(measured.y)) == ([3], [1.5])
    assert fig.layout.xaxis.title.text == LABELS["terms"] and fig.layout.yaxis.title.text == LABELS["partial_sum"]
