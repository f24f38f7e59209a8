"""The number formats lesson's view model without a page: settings in, bits, rows and figures out."""

import math

import pytest

from mpviz.attention import AttentionConfig
from mpviz.presentation import memo
from mpviz.presentation.run_config import RunConfig
from mpviz.presentation.view_models import formats as vm


@pytest.fixture(autouse=True, scope="module")
def host():
    """Results shared in this process, for an English viewer, as the app shares them for a class
    (mpviz.presentation.memo.InProcess: tables stay rows)."""
    with memo.hosted(memo.InProcess()) as shared:
        yield shared


def test_a_value_reads_as_text_and_a_bare_pattern_belongs_to_the_first_format():
    assert vm.read_value("0.1", ("fp16",), "nearest") == vm.ValueRead("0.1")
    assert vm.read_value("0x3c00", ("bf16", "fp16"), "nearest").text == "bf16:0x3c00"


def test_unreadable_text_falls_back_to_the_default_and_says_so_inert():
    read = vm.read_value("[x](http://e.x) 1e", ("fp16",), "nearest")
    assert read.text == vm.DEFAULT_VALUE
    assert read.problem.startswith("`[x](http://e.x) 1e` ") and read.problem.count("http://e.x") == 1  # inert code


def test_bits_show_each_field_and_the_line_under_them():
    fp16, e4m3 = vm.bits("0.1", ("fp16", "e4m3"), "nearest")
    assert [f.key for f in fp16.fields] == ["bits-sign-fp16", "bits-exponent-fp16", "bits-mantissa-fp16"]
    assert fp16.fields[2].pressed == (9, 6, 5, 2, 1)  # 0.1 in float16 = 0x2e66
    assert fp16.code == 0x2E66 and "0.0999755859375" in fp16.line
    assert e4m3.emulated is None and fp16.emulated is None


def test_torch_s_saturating_cast_is_named_where_it_differs_from_the_exact_rounding():
    (e4m3,) = vm.bits("500", ("e4m3",), "nearest")
    assert "448.0" in e4m3.line
    (rounded_down,) = vm.bits("500", ("e4m3",), "zero")  # torch casts round to nearest only
    assert "448.0" not in rounded_down.line.split("·")[-1]


def test_tables_have_a_row_per_format_and_are_shared():
    table = vm.summary_table("0.1", ("fp32", "fp16"), "nearest")
    assert len(table) == 2 and vm.summary_table("0.1", ("fp32", "fp16"), "nearest") is table
    assert [row["stored value"] for row in table] == ["0.10000000149011612", "0.0999755859375"]
    assert len(vm.stochastic_table("0.1", ("fp16",))) == 1
    assert len(vm.library_table("0.1", ("fp16", "e4m3"))) == 2
    differing, every = vm.finfo_table(True), vm.finfo_table(False)
    assert len(differing) < len(every)
    assert len(vm.properties_table()) == len(vm.ALL_SHORT)


def test_figures_are_built_once_per_setting():
    line = vm.number_line_figure("0.1", ("fp16",), 0)
    assert vm.number_line_figure("0.1", ("fp16",), 0) is line
    assert vm.number_line_figure("0.1", ("fp16",), "all") is not line
    assert vm.number_line_figure.cached("0.1", ("fp16",), "all")
    marker = vm.value_marker("inf")
    assert marker[1] == math.inf
    assert vm.range_figure(("fp16", "bf16"), (marker,)) is vm.range_figure(("fp16", "bf16"), (marker,))


@pytest.mark.parametrize(("raw", "parsed"), [("fp16,bfloat16,fp16", ["fp16", "bf16"]), ("all", None)])
def test_link_settings_parse_or_refuse(raw, parsed):
    if parsed is None:
        assert vm.parse_zoom(raw) == "all"
        with pytest.raises(ValueError):
            vm.parse_zoom("7")
    else:
        assert vm.parse_formats(raw) == parsed
        with pytest.raises(ValueError):
            vm.parse_formats(",")


def test_a_traced_tensor_gives_its_caption_markers_exponents_and_census():
    rc = RunConfig(AttentionConfig(seq_len=8, d_model=16, n_heads=2), "cpu", "bf16")
    assert "scores" in vm.landmarks(rc)
    scores = vm.tensor_view(rc, "scores")
    assert scores.histogram and len(scores.markers) == 2
    assert 0 < scores.markers[1][1] <= scores.markers[0][1]
    assert len(vm.census_table(rc, "scores")) == len(vm.TRACE_FORMATS)
    assert vm.exponent_figure(rc, "scores") is vm.exponent_figure(rc, "scores")
