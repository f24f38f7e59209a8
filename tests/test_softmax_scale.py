"""Softmax as the logits grow: the sweep's failures against each dtype's measured exp threshold, exp curves."""

import math

import torch

from mpviz import softmax_scale as ss
from mpviz.float_edges import exp_thresholds


def test_sweep_fails_naive_fp16_at_its_threshold_and_never_fails_stable():
    row = [1.0, 0.5, -1.0, 0.25]
    sw = ss.sweep(row, formats=("fp32", "fp16", "bf16"))
    t16 = sw.overflow_scale["float16"]
    assert t16 == exp_thresholds(torch.float16).overflow_from  # max logit = largest |logit| here
    naive16 = sw.curve("float16", "naive")
    for x, bad in zip(sw.scales, naive16.nonfinite, strict=True):
        if x >= t16:
            assert bad
        if x * (1 + math.log(len(row)) / x) < t16:  # n·exp(x) still below the max: nothing can overflow
            assert not bad
    assert all(c.first_nonfinite is None for c in sw.curves if c.method != "naive")
    stable16 = sw.curve("float16", "stable")
    assert stable16.first_underflow is not None and stable16.first_underflow < t16


def test_naive_vs_stable_summarises_each_format_from_its_curves():
    sw = ss.sweep([1.0, 0.5, -1.0, 0.25], formats=("fp32", "fp16", "e4m3"))
    summary = {f.format: f for f in sw.naive_vs_stable()}
    assert list(summary) == ["float32", "float16", "float8_e4m3fn"]
    for fmt, f in summary.items():
        naive, stable = sw.curve(fmt, "naive"), sw.curve(fmt, "stable")
        assert f.naive_first_nonfinite == naive.first_nonfinite and f.stable_first_underflow == stable.first_underflow
        assert f.exp_overflow_scale == sw.overflow_scale[naive.compute_dtype]
    assert summary["float8_e4m3fn"].exp_overflow_scale == sw.overflow_scale["float32"]  # e4m3 computes in fp32
    assert summary["float16"].naive_first_nonfinite >= summary["float16"].exp_overflow_scale
    only_torch = ss.sweep([1.0, -1.0], formats=("fp16",), methods=("torch",))
    assert only_torch.naive_vs_stable() == ()  # nothing to compare


def test_exp_curves_end_where_each_format_overflows_and_flushes():
    curves = ss.exp_curves(("fp32", "fp16", "bf16"))
    assert [c.dtype for c in curves] == ["float64", "float32", "float16", "bfloat16"]
    for c in curves[1:]:
        t = c.thresholds
        finite = [x for x, y in zip(c.x, c.y, strict=True) if 0 < y < math.inf]
        assert t.underflow_from < min(finite) and max(finite) < t.overflow_from
        assert all(y == math.inf for x, y in zip(c.x, c.y, strict=True) if x >= t.overflow_from)
