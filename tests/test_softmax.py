"""Softmax lab engine: overflow, blur and underflow per format; thresholds checked against brute force."""

import json
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mpviz import formats
from mpviz import softmax as sm
from mpviz.attention import trace_attention
from mpviz.float_edges import exp_thresholds, spacing
from mpviz.model import AttentionConfig, ConfigError
from tests.cli import CliResult, run_cli

FP16_EPS = torch.finfo(torch.float16).eps


def _all_values(dtype: torch.dtype) -> torch.Tensor:
    """Every bit pattern of a 16-bit dtype, as that dtype (65536,)."""
    return torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype)


# ── the headline: naive fp16 softmax overflows from a max logit of 12 ───────────────────────────────────────
rows = st.lists(st.floats(-30, 30), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(rows, st.floats(12, 60), st.integers(0, 40))
def test_naive_fp16_breaks_from_max_logit_12_while_stable_stays_finite_and_normalised(row, peak, at):
    logits = list(row)
    logits.insert(min(at, len(logits)), peak)  # max(logits) ≥ 12
    c = sm.compare(logits, formats=("fp16",), methods=("naive", "stable", "torch"))
    naive = c.variant("fp16", "naive").metrics
    assert naive.nan + naive.inf > 0, "exp(x ≥ 12) is past fp16's max, so naive gives inf/inf = nan"
    for method in ("stable", "torch"):
        v = c.variant("fp16", method)
        assert v.metrics.nan == v.metrics.inf == 0
        # Σp (in float64) of the stored fp16 outputs: each p carries a few half-ulp roundings, Σ n of them.
        assert v.metrics.sum_error <= max(len(logits), 2) * FP16_EPS


def test_upcast_rescues_fp16_and_bf16_never_overflows_at_12():
    c = sm.compare([12.0, 11.0, -3.0], formats=("fp16", "bf16"))
    upcast = c.variant("fp16", "upcast")
    assert upcast.metrics.nan == 0 and upcast.output_dtype == "float32"
    assert all(c.variant("bf16", m).metrics.nan + c.variant("bf16", m).metrics.inf == 0 for m in sm.METHODS)
    assert c.variant("fp16", "naive").grad.nan > 0  # the backward through the broken forward is nan too


def test_large_preset_is_scaled_just_past_fp16s_overflow():
    row = sm.scenario_logits("large")
    assert max(row) >= exp_thresholds(torch.float16).overflow_from
    assert max(row) / 2 < exp_thresholds(torch.float16).overflow_from  # one doubling fewer would not
    assert sm.compare(row, formats=("fp16",), methods=("naive",)).variants[0].metrics.nan > 0


# ── close logits and the formats' spacing ───────────────────────────────────────────────────────────────────
def test_close_preset_10_and_10_01_kept_by_fp32_fp16_merged_by_bf16_e4m3():
    a, b, _ = sm.scenario("close").values
    result = {c.format: c for c in sm.close_logits(a, b)}
    assert result["float32"].distinct and result["float16"].distinct
    assert not result["bfloat16"].distinct and not result["float8_e4m3fn"].distinct
    for c in result.values():
        assert c.distinct == (c.bins[0] != c.bins[1]) == (c.bins[0].hi < b)
    bf = result["bfloat16"]
    assert bf.probs[0] == bf.probs[1] == 0.5 and bf.reference[1] > bf.reference[0]
    assert result["float16"].stored[1] - result["float16"].stored[0] == result["float16"].spacing


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(["fp32", "fp16", "bf16", "e4m3"]), st.floats(-300.0, 300.0), st.floats(-300.0, 300.0))
def test_two_logits_merge_exactly_when_they_share_a_rounding_bin(fmt, a, b):
    (c,) = sm.close_logits(a, b, (fmt,))
    assert c.distinct == (c.stored[0] != c.stored[1]) == (c.bins[0] != c.bins[1])
    assert all(bin_.lo <= v <= bin_.hi for bin_, v in zip(c.bins, (a, b), strict=True))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["fp32", "fp16", "bf16", "e4m3"]), st.floats(0.0, 1000.0))
def test_gap_counterexamples_are_what_they_claim(fmt, x):
    ex = sm.gap_counterexamples(x, fmt)
    if ex is None:  # only where the format's values run out (inf or saturation)
        assert not math.isfinite(sm.close_logits(x, x, (fmt,))[0].bins[0].hi)
        return
    f = sm.parse_format(fmt)
    assert ex.kept_gap < ex.spacing and ex.kept_stored[0] != ex.kept_stored[1]
    assert ex.merged_gap == spacing(f.storage, ex.merged_stored)  # a full spacing apart ...
    (merged,) = sm.close_logits(*ex.merged, (fmt,))
    assert not merged.distinct and merged.stored[0] == ex.merged_stored  # ... and one value


# ── scenarios, metrics, quantisation ─────────────────────────────────────────────────────────────────
def test_every_preset_gives_a_usable_row_and_compares():
    for s in sm.SCENARIOS:
        if s.from_trace:
            continue
        row = sm.scenario_logits(s.name)
        c = sm.compare(row)
        assert len(c.variants) == len(sm.FORMAT_NAMES) * len(sm.METHODS)
        assert math.isclose(sum(c.reference), 1.0, rel_tol=1e-12)


def test_long_sequence_underflows_in_fp16_not_in_bf16_and_naive_fp16_sum_overflows():
    c = sm.compare(sm.scenario_logits("long"), formats=("fp16", "bf16"), methods=("naive", "stable"))
    assert c.variant("fp16", "stable").metrics.underflow > 0
    assert c.variant("bf16", "stable").metrics.underflow == 0
    naive = c.variant("fp16", "naive")  # no single exp overflows, but Σexp does: every p = e/inf = 0
    assert naive.metrics.nan == 0 and naive.metrics.underflow == len(c.logits)


def test_close_logits_swap_the_argmax_in_bf16():
    c = sm.compare(sm.scenario("close").values, formats=("fp16", "bf16"))
    assert not c.variant("fp16", "stable").metrics.argmax_changed
    bf16 = c.variant("bf16", "stable").metrics
    assert bf16.argmax_changed and bf16.order_lost == 1


@settings(max_examples=40, deadline=None)
@given(rows, st.sampled_from(["fp32", "fp16", "bf16", "e4m3"]))
def test_kl_is_never_negative_and_zero_only_for_an_exact_output(row, fmt):
    """KL(ref‖p/Σp) as a sum of non-negative terms: rounding noise can no longer show as a negative divergence."""
    for v in sm.compare(row, formats=(fmt,)).variants:
        kl = v.metrics.kl
        assert math.isnan(kl) == (v.metrics.nan + v.metrics.inf > 0)
        assert math.isnan(kl) or kl >= 0.0


def test_large_preset_float32_kl_is_rounding_sized_and_positive():
    c = sm.compare(sm.scenario_logits("large"), formats=("fp32",))
    assert all(0.0 <= v.metrics.kl < 1e-12 for v in c.variants)  # it used to read -3.48e-08


def test_summary_names_broken_flushed_reordered_and_rescued_variants():
    c = sm.compare(sm.scenario_logits("large"), formats=("fp32", "fp16", "bf16"))
    summary = c.summary()
    assert [(v.format, v.method) for v in summary.broken] == [("float16", "naive")]
    assert [(v.format, v.method) for v in summary.rescued_by_max_subtraction] == [("float16", "stable")]
    assert {(v.format, v.method) for v in summary.flushed} == {
        (v.format, v.method) for v in c.variants if v.metrics.underflow
    } and ("float16", "stable") in {(v.format, v.method) for v in summary.flushed}
    assert all(v.metrics.argmax_changed for v in summary.argmax_moved)


def test_metrics_count_underflow_only_where_float64_is_positive():
    c = sm.compare([0.0, -math.inf, -30.0], formats=("fp16", "fp32"), methods=("stable",))
    assert c.reference[1] == 0.0
    # e^-30 ≈ 9e-14 flushes to 0 in fp16; the masked entry is 0 in float64 too, so it does not count
    assert c.variant("fp16", "stable").metrics.underflow == 1
    assert c.variant("fp32", "stable").metrics.underflow == 0
    assert c.variant("fp16", "stable").metrics.kl == math.inf


def test_fp32_gradients_match_float64_for_both_losses():
    for loss in sm.LOSSES:
        c = sm.compare([2.0, -1.0, 0.5, 3.0], formats=("fp32",), methods=("stable", "torch"), loss=loss)
        for v in c.variants:
            assert v.grad.max_rel_error < 1e-5 and v.grad.nan == 0


def test_linear_int8_flushes_small_probabilities_log2_keeps_them():
    probs = sm.compare(sm.scenario_logits("peak"), formats=("fp32",)).reference
    linear, log2 = sm.quantize_probs(probs)
    tiny = sum(0 < p < linear.step / 2 for p in probs)
    assert tiny > 0 and linear.metrics.underflow == tiny
    assert linear.metrics.max_abs_error <= linear.step / 2
    assert log2.metrics.underflow == sum(0 < p < log2.smallest_nonzero * 2 ** (-log2.step / 2) for p in probs)
    kept = [(q, p) for q, p in zip(log2.values, probs, strict=True) if p >= log2.smallest_nonzero]
    assert all(abs(q / p - 1) <= 2 ** (log2.step / 2) - 1 + 1e-12 for q, p in kept)


# ── input checking ──────────────────────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize("text", ["abc", "", "1,,x", "nan", "inf,1", "-inf,-inf", "1e7", "1," * 9000])
def test_bad_logits_raise_config_error(text):
    with pytest.raises(ConfigError) as e:
        sm.parse_logits(text)
    assert e.value.field == "logits"


def test_parse_accepts_commas_spaces_and_masked_entries():
    assert sm.parse_logits("-5, 3  -inf") == (-5.0, 3.0, -math.inf)


def test_generator_limits_are_enforced():
    with pytest.raises(ConfigError):
        sm.LogitGenerator(length=sm.LIMITS.max_len + 1).logits()
    with pytest.raises(ConfigError):
        sm.LogitGenerator(scale=0.0).logits()
    with pytest.raises(ConfigError):
        sm.scenario_logits("nope")


# ── attention trace rows ────────────────────────────────────────────────────────────────────────────────────
def test_score_row_is_a_masked_row_of_the_traced_scores():
    t = trace_attention(AttentionConfig(seq_len=8, d_model=16, n_heads=2), "cpu", "bf16").trace
    assert sm.score_sample_shape(t) == (2, 8, 8)
    row = sm.score_row(t, head=1, row=2)
    assert row.dtype == "bfloat16" and len(row.values) == 8
    assert all(math.isfinite(v) for v in row.values[:3]) and all(v == -math.inf for v in row.values[3:])
    assert sm.score_row(t, 0, -1).row == 7
    with pytest.raises(ConfigError):
        sm.score_row(t, head=2, row=0)
    sdpa = trace_attention(AttentionConfig(seq_len=8, d_model=16, n_heads=2, attention="sdpa"), "cpu", "bf16")
    with pytest.raises(ConfigError):
        sm.score_sample_shape(sdpa.trace)


# ── CLI ─────────────────────────────────────────────────────────────────────────────────────────────────────
def _cli(capsys, *args: str) -> CliResult:
    return run_cli(capsys, "softmax", *args)


def test_cli_json_reports_nan_for_naive_fp16(capsys):
    r = _cli(capsys, "--logits", "12,1,-3", "--dtype", "fp16", "--method", "naive", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    (v,) = d["variants"]
    assert v["format"] == "float16" and v["method"] == "naive" and v["metrics"]["nan"] > 0
    assert "nan" in v["probs"] and d["thresholds"][0]["overflow_from"] == 11.09375


@pytest.mark.parametrize("args", [["--logits", "-5,3"], ["--logits=-5,3"], ["--scenario", "close"]])
def test_cli_accepts_negative_lists_and_scenarios(args, capsys):
    r = _cli(capsys, *args)
    assert r.returncode == 0, r.stderr
    assert "float16" in r.stdout and "naive" in r.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--logits", "abc"],
        ["--scenario", "nope"],
        ["--logits", "1,2", "--dtype", "fp7"],
        ["--logits", "1", "--method", "x"],
        [],
    ],
)
def test_cli_bad_input_exits_2_with_one_line(args, capsys):
    r = _cli(capsys, *args)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "error" in r.stderr


def test_format_spellings_come_from_the_one_format_registry():
    assert {a: n for a, n in formats.ALIASES.items() if n in sm.FORMAT_NAMES} == sm.FORMAT_ALIASES
    assert {sm.parse_format(a).name for a in ("half", "fp16", "torch.float16", "F16")} == {"float16"}
    assert sm.parse_format("e4m3").name == "float8_e4m3fn"
    for name in ("e5m2", "fp64", "fp8", "", "１６"):  # real formats this lab does not run, and nonsense
        with pytest.raises(ConfigError):
            sm.parse_format(name)
