"""The autocast-policy figures draw what the engine's results say, with the words the page hands them."""

from mpviz.app import text
from mpviz.policy import CallStep
from mpviz.presentation.figures import policy as policy_fig
from mpviz.presentation.palette import dtype_color

LABELS = dict(text.load("en", "policy")["figure"])


def test_counts_bars_carry_each_devices_counts_and_the_legend_claims_no_colour():
    counts = {
        "CPU": {"lower_precision_fp": 24, "fp32": 100, "promote": 3},
        "CUDA": {"lower_precision_fp": 35, "fp32": 59},
    }
    names = {"lower_precision_fp": "lower_precision_fp", "fp32": "fp32", "promote": "promote"}
    fig = policy_fig.policy_counts_figure(counts, names, {"CPU": "bfloat16", "CUDA": "float16"}, labels=LABELS)
    bars = [t for t in fig.data if not t.showlegend and t.showlegend is not None]
    assert [list(b.y) for b in bars] == [[24, 100, 3], [35, 59, 0]]
    assert [list(b.text) for b in bars] == [["24", "100", "3"], ["35", "59", "0"]]  # each bar says its count
    # colour = the dtype the category computes in: the low-precision bar in each device's autocast dtype
    assert list(bars[0].marker.color)[:2] == [dtype_color("bfloat16"), dtype_color("float32")]
    assert list(bars[1].marker.color)[:2] == [dtype_color("float16"), dtype_color("float32")]
    assert bars[0].marker.pattern.shape != bars[1].marker.pattern.shape  # devices differ by hatching
    legend = [t for t in fig.data if t.showlegend is not False]
    assert [t.name for t in legend] == ["CPU", "CUDA"] and {t.marker.color for t in legend} == {"white"}
    assert [t.marker.pattern.shape for t in legend] == [b.marker.pattern.shape for b in bars]
    assert {t.offsetgroup for t in legend} == {b.offsetgroup for b in bars}  # no empty slot per group
    assert fig.layout.yaxis.title.text == LABELS["count"] and fig.layout.xaxis.title.text == LABELS["category"]


def test_call_steps_draw_every_op_in_order_casts_as_diamonds_coloured_by_output():
    steps = [
        CallStep("aten._to_copy.default", ("bfloat16",), ("float32",), True),
        CallStep("aten._softmax.default", ("float32",), ("float32",), False),
    ]
    fig = policy_fig.call_steps_figure(steps)
    assert [t.x[0] for t in fig.data] == [0, 1]
    assert [t.marker.symbol for t in fig.data] == ["diamond", "square"]
    assert [t.marker.color for t in fig.data] == [dtype_color("float32")] * 2
    assert [t.text[0] for t in fig.data] == ["_to_copy<br>→ float32", "_softmax<br>→ float32"]
    assert fig.data[0].textposition != fig.data[1].textposition  # labels alternate so long names do not collide
    assert "bfloat16 → float32" in fig.data[0].hovertext
