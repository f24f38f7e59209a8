"""The softmax lesson's view model without a page: a row and settings in, verdicts, rows and figures out."""

import math

import pytest

from mpviz import softmax as sm
from mpviz.attention import AttentionConfig
from mpviz.presentation import memo
from mpviz.presentation.run_config import RunConfig
from mpviz.presentation.view_models import softmax as vm


@pytest.fixture(autouse=True, scope="module")
def host():
    """Results shared in this process, for an English viewer, as the app shares them for a class
    (mpviz.presentation.memo.InProcess: tables stay rows)."""
    with memo.hosted(memo.InProcess()) as shared:
        yield shared


FORMATS = ("float32", "float16", "bfloat16")


def test_typed_logits_are_read_or_replaced_by_the_close_pair_with_the_reason():
    assert vm.listed("1, 2, 3") == vm.Logits((1.0, 2.0, 3.0))
    bad = vm.listed("1, **x**")
    assert bad.values == vm.CLOSE and "`1, **x**`" in bad.problem


def test_a_generator_out_of_its_limits_falls_back_to_the_large_preset_and_says_why():
    good = vm.generated(sm.LogitGenerator(length=5))
    assert len(good.values) == 5 and good.problem is None
    bad = vm.generated(sm.LogitGenerator(length=sm.LIMITS.max_len + 1))
    assert bad.values == vm.scenario("large") and bad.problem


def test_the_large_preset_names_naive_fp16_as_broken_and_max_subtraction_as_the_fix():
    logits = vm.scenario("large")
    found = vm.probabilities(logits, FORMATS, "dot")
    assert "float16 · naive" in found.verdict
    assert [fmt for fmt, _ in found.badges] == list(FORMATS)
    assert found.bars_cropped is None
    assert len(vm.metrics_table(logits, FORMATS, "dot")) == len(FORMATS) * len(sm.METHODS)
    assert len(vm.quantized_table(logits, FORMATS, "dot")) == 2
    assert vm.quantized_note(logits, FORMATS, "dot")


def test_figures_are_shared_per_setting_and_the_log_switch_is_part_of_the_key():
    logits = vm.scenario("close")
    bars = vm.bars_figure(logits, FORMATS, "dot", True)
    assert vm.bars_figure(logits, FORMATS, "dot", True) is bars
    assert vm.bars_figure(logits, FORMATS, "dot", False) is not bars
    assert vm.errors_figure(logits, FORMATS, "dot") is vm.errors_figure(logits, FORMATS, "dot")
    assert vm.exp_figure(FORMATS) is vm.exp_figure(FORMATS)
    assert [line.split(":")[0] for line in vm.exp_notes(FORMATS).splitlines()] == [f"- {f}" for f in FORMATS]


def test_the_sweep_says_where_each_format_fails():
    logits = vm.scenario("large")
    intro, lines = vm.sweep_lines(logits, ("float32", "float16"))
    assert lines.count("- ") >= 2 and "float16" in lines and intro
    assert vm.sweep.cached(logits, ("float32", "float16"))
    assert vm.sweep_figure(logits, ("float32", "float16"), "max_rel_error") is not None


def test_close_logits_report_bins_and_a_measured_counterexample():
    table = vm.close_table(1000.0, 1000.25, FORMATS)
    assert len(table) == len(FORMATS)
    note = vm.close_note(1000.0, 1000.25, FORMATS)
    assert "float16" in note


def test_a_traced_score_row_comes_with_its_caption():
    rc = RunConfig(AttentionConfig(seq_len=8, d_model=16, n_heads=2), "cpu", "bf16")
    heads, rows = vm.score_shape(rc)
    assert (heads, rows) == (2, 8)
    row = vm.score_row(rc, 1, 3)
    assert sum(v == -math.inf for v in row.values) == 4 and "Head 1, row 3" in row.caption
    sdpa = RunConfig(AttentionConfig(seq_len=8, d_model=16, n_heads=2, attention="sdpa"), "cpu", "bf16")
    assert vm.score_shape(sdpa) is None


@pytest.mark.parametrize(("parse", "good", "bad"), [(vm.parse_scale, "0.5", "0.3"), (vm.parse_formats, "float16", "x")])
def test_link_settings_parse_or_refuse(parse, good, bad):
    parse(good)
    with pytest.raises(ValueError):
        parse(bad)
    assert vm.bounded(float, 0.0, 1.0)("1") == 1.0
    with pytest.raises(ValueError):
        vm.bounded(float, 0.0, 1.0)("nan")
