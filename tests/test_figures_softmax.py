"""The softmax lesson's figures draw what the engine's results say, with the words the page hands them.

Results come from the engine on tiny rows (milliseconds); each test states what that row does.
"""

import math

import plotly.graph_objects as go
import pytest

from mpviz import softmax as sm
from mpviz import softmax_scale
from mpviz.app import text
from mpviz.presentation.figures import softmax as softmax_fig
from mpviz.presentation.figures import style

WORDS = text.load("en", "softmax")
LABELS = {**WORDS["fig"], "methods": WORDS["methods"]}
LARGE = (12.0, 1.0, -20.0)  # fp16: naive gives inf/inf = nan and e/inf = 0, max-subtracted flushes e^-32 to 0


@pytest.fixture(scope="module")
def large():
    return sm.compare(LARGE, formats=("fp32", "fp16"))


def test_bars_one_panel_per_format_with_nan_marks_and_the_float64_reference(large):
    fig = softmax_fig.softmax_bars(large, log_y=True, labels=LABELS)
    assert [fig.layout[f"yaxis{i or ''}"].title.text for i in ("", 2)] == ["p in float32", "p in float16"]
    reference = [t for t in fig.data if t.name == LABELS["reference"]]
    assert len(reference) == 2 and list(reference[0].y) == list(large.reference)
    marks = [t for t in fig.data if t.name == LABELS["nonfinite"]]
    assert len(marks) == 1 and list(marks[0].x) == ["0"]  # naive fp16: exp(12) = inf, so p[0] = inf/inf
    stable16 = next(t for t in fig.data if t.name == "max-subtracted" and t.yaxis == "y2")
    assert stable16.y[2] is None  # flushed to 0: no bar on the log axis
    legend = fig.layout.legend  # at the top of the figure, clear of the tick labels and axis title below
    assert (legend.yref, legend.y, legend.yanchor) == ("container", 1, "top")
    ticks = fig.layout.yaxis.ticktext
    assert len(set(ticks)) == len(ticks) and all(t[0] != "0" or t.startswith("0.") for t in ticks)
    assert softmax_fig.softmax_bars(large, log_y=False, labels=LABELS).layout.yaxis.type == "linear"


def test_errors_plot_each_probabilitys_relative_error_with_flushed_ones_at_one(large):
    fig = softmax_fig.softmax_errors(large, labels=LABELS)
    points = [t for t in fig.data if t.x != (None,)]
    assert len(points) == 2 * len(sm.METHODS)
    stable16 = next(t for t in points if t.name == "float16 · max-subtracted")
    order = sorted(range(3), key=lambda i: large.reference[i])  # x runs from the least probable entry up
    assert list(stable16.x) == [large.reference[i] for i in order] and list(stable16.customdata) == order
    assert stable16.y[0] == 1.0  # e^-32 flushed to 0: a relative error of exactly 1
    naive16 = next(t for t in points if t.name == "float16 · naive")
    assert list(naive16.y) == [1.0, 1.0, None]  # e/inf = 0 for the others; nan has no error to draw
    key = [t.name for t in fig.data if t.x == (None,)]
    assert key == [LABELS["methods"][m] for m in sm.METHODS]
    assert fig.layout.xaxis2.title.text == LABELS["reference_prob"] and fig.layout.xaxis.type == "log"


def test_errors_show_at_most_max_points_entries_spread_over_the_row():
    c = sm.compare(sm.LogitGenerator(length=200, spread=3.0).logits(), formats=("bf16",), methods=("stable",))
    (trace,) = [t for t in softmax_fig.softmax_errors(c, max_points=20, labels=LABELS).data if t.x != (None,)]
    assert len(trace.x) == 20 and trace.x[0] == min(c.reference) and trace.x[-1] == max(c.reference)


def test_sweep_legend_is_a_key_and_threshold_labels_stay_inside_the_plot():
    sweep = softmax_scale.sweep([1.0, 0.5, -1.0], formats=("fp32", "fp16", "bf16"))
    fig = softmax_fig.softmax_sweep(sweep, "max_rel_error", labels=LABELS)
    shown = [t.name for t in fig.data if t.showlegend is not False]
    assert shown == ["float32", "float16", "bfloat16", *(LABELS["methods"][m] for m in sm.METHODS)]
    notes = {a.text: a for a in fig.layout.annotations}
    assert set(notes) == {"float16: exp overflows", "float32, bfloat16: exp overflows"}  # coinciding: one label
    mid = sum(fig.layout.xaxis.range) / 2
    for a in notes.values():
        assert a.xanchor == ("right" if a.x > mid else "left")  # each grows towards the middle
    assert len({a.yshift for a in notes.values()}) == 2  # one row each
    assert list(fig.layout.xaxis.ticktext) == ["0.1", "1", "10", "100", "1000"]  # no bare "2" and "5" per decade


def test_exp_shares_one_label_between_maxima_that_coincide():
    curves = softmax_scale.exp_curves(("fp32", "fp16", "bf16"))
    fig = softmax_fig.softmax_exp(curves, labels=LABELS)
    labels = sorted(a.text for a in fig.layout.annotations)
    assert labels == ["bfloat16, float32 max", "float16 max"]
    assert {a.x for a in fig.layout.annotations} == {curves[0].x[0]}  # at the left end, away from the ✕ marks
    assert [t.name for t in fig.data if t.showlegend is not False] == ["float32", "bfloat16", "float16", "float64"]
    assert math.isclose(fig.layout.annotations[0].y, math.log10(3.4e38), rel_tol=0.01) or math.isclose(
        fig.layout.annotations[1].y, math.log10(3.4e38), rel_tol=0.01
    )


def test_log_axis_labels_thin_out_to_fit_a_short_panel():
    """bfloat16's error panel spans 1e-4..0.1: 1-2-5 ticks there are ten 16 px labels in ~170 px, which touched."""
    assert style.value_log_axis([1e-4, 0.1])["ticktext"] == [
        "0.0001",
        "0.0003",
        "0.001",
        "0.003",
        "0.01",
        "0.03",
        "0.1",
    ]
    assert style.value_log_axis([1e-4, 0.1], max_ticks=5)["ticktext"] == ["0.0001", "0.001", "0.01", "0.1"]
    assert style.value_log_axis([2.0, 5.0])["ticktext"] == ["1", "2", "3", "5", "7", "10"]  # under a decade


def test_presenter_copy_keeps_a_larger_title_inside_the_figure_and_inks_axis_titles(large):
    fig = go.Figure(style.presented_spec(softmax_fig.softmax_bars(large, log_y=True, labels=LABELS).to_dict()))
    assert fig.layout.yaxis.title.font.color == style.PRESENTER_INK
    titled = go.Figure(style.presented_spec(style.figure(title="a title", margin=dict(t=40)).to_dict()))
    assert titled.layout.margin.t >= 2 * style.PRESENTER_FONT["title"]
