"""The number-formats figures draw what the engine's results say, with the words the page hands them."""

import math

import numpy as np

from mpviz.app import text
from mpviz.formats import encode, number_line, resolve_format
from mpviz.presentation.figures import formats as formats_fig
from mpviz.presentation.palette import dtype_color

LABELS = dict(text.load("en", "formats")["figure"])
BITS = dict(text.load("en", "common")["bits"])


def test_bit_layout_has_one_box_per_bit_coloured_by_field_and_the_value_in_its_title():
    enc = encode("0.1", "fp16")  # 0x2e66
    fig = formats_fig.bit_layout_figure(enc, labels=BITS)
    boxes = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(boxes) == 16
    assert [b.opacity == 1.0 for b in boxes] == [bit == "1" for bit in enc.bits]  # set bits solid
    texts = [a.text for a in fig.layout.annotations]
    assert texts[:16] == list(enc.bits) and texts[16:] == [BITS["sign"], BITS["exponent"], BITS["mantissa"]]
    assert repr(enc.value) in fig.layout.title.text and "float16" in fig.layout.title.text
    assert list(fig.data[0].customdata) == list(range(15, -1, -1))  # click → bit position, MSB first


def test_number_line_ticks_every_value_bins_them_and_marks_the_input():
    line = number_line("e4m3", 0.9, 2.1)  # 10 values, complete
    dense = number_line("fp16", 0.9, 2.1, max_points=20)
    empty = number_line("e4m3", 1000.0, 2000.0)  # past e4m3's max (448)
    fig = formats_fig.number_line_figure([line, dense, empty], 0.9, 2.1, 1.3, labels=LABELS)
    ticks = next(t for t in fig.data if t.type == "scatter" and t.mode == "markers")
    assert list(ticks.x) == list(line.values) and set(ticks.y) == {"float8_e4m3fn"}
    bins = next(t for t in fig.data if t.type == "bar")
    assert np.allclose(np.asarray(bins.base) + np.asarray(bins.x), line.edges[1:])  # bin i spans edges[i..i+1]
    notes = {a.text for a in fig.layout.annotations}
    assert LABELS["too_dense"].format(count=dense.count) in notes and LABELS["outside"] in notes
    assert LABELS["value"] in notes and fig.layout.shapes[0].x0 == 1.3  # the input's dashed line
    assert list(fig.layout.yaxis.categoryarray) == ["float8_e4m3fn", "float16", "float8_e4m3fn"]


def test_number_line_over_the_whole_float64_range_has_finite_coordinates():
    big = resolve_format("fp64").max
    lines = [number_line("fp64", -big, big), number_line("tf32", -big, big)]
    fig = formats_fig.number_line_figure(lines, -big, big, None, labels=LABELS)
    xs = [x for t in fig.data for x in t.x] + [a.x for a in fig.layout.annotations]
    assert xs and all(math.isfinite(x) for x in xs)


def test_range_figure_bars_span_each_format_and_the_legend_sits_below_the_axis():
    specs = [resolve_format(n) for n in ("fp16", "bf16")]
    fig = formats_fig.range_figure(specs, {"value": 0.1, "zero": 0.0, "inf": math.inf}, labels=LABELS)
    normal = [t for t in fig.data if t.type == "bar" and t.marker.color in map(dtype_color, ("float16", "bfloat16"))]
    spans = [(t.base[0], t.base[0] + t.x[0]) for t in normal]
    assert np.allclose(spans, [(math.log2(s.smallest_normal), math.log2(s.max)) for s in specs])
    lines = [t for t in fig.data if t.showlegend]
    assert [t.name for t in lines] == ["value: 0.1"]  # zero and inf have no place on a log axis
    assert lines[0].x[0] == math.log2(0.1)
    assert fig.layout.legend.yref == "container" and fig.layout.legend.y == 0  # never over a title
    assert not fig.layout.title.text  # the page's subheader names it


def test_exponent_histogram_counts_and_ranges_share_one_axis():
    hist = [(-3, 5), (-2, 7), (0, 1)]
    specs = [resolve_format(n) for n in ("fp16", "e4m3")]
    fig = formats_fig.format_exponent_figure("scores", hist, specs, labels=LABELS)
    counts = fig.data[0]
    assert (
        list(counts.y) == [5, 7, 1] and list(counts.x) == [-2.5, -1.5, 0.5] and list(counts.customdata) == [-3, -2, 0]
    )
    assert {t.yaxis for t in fig.data[1:]} == {"y2"} and list(fig.layout.yaxis2.categoryarray) == [
        "float16",
        "float8_e4m3fn",
    ]
    lo, hi = fig.layout.xaxis.range
    assert lo <= math.log2(resolve_format("fp16").smallest_subnormal) and hi >= math.log2(resolve_format("fp16").max)
