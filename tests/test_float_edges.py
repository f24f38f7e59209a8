"""Float edges measured by the engine (exp thresholds, spacing, rounding bins) against brute force and torch."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mpviz.float_edges import exp_thresholds, spacing, torch_cast_bin

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float8_e4m3fn]


def _all_values(dtype: torch.dtype) -> torch.Tensor:
    """Every bit pattern of a 16-bit dtype, as that dtype (65536,)."""
    return torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype)


def _stored(x: float, dtype: torch.dtype) -> float:
    return torch.tensor([x], dtype=torch.float64).to(dtype).double().item()


# ── exp thresholds vs brute force ───────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_exp_thresholds_match_a_scan_of_every_16_bit_input(dtype):
    x = _all_values(dtype)  # (65536,)
    finite = torch.isfinite(x)
    e = torch.exp(x)
    t = exp_thresholds(dtype)
    assert t.overflow_from == x[finite & torch.isinf(e)].double().min().item()
    assert t.largest_finite_input == x[finite & torch.isfinite(e)].double().max().item()
    assert t.underflow_from == x[finite & (e == 0)].double().max().item()
    assert t.smallest_nonzero_input == x[finite & (e > 0)].double().min().item()
    assert t.largest_finite_input < t.log_max < t.overflow_from  # ln(max) lies between two stored inputs


def test_fp32_threshold_is_the_first_input_whose_exp_is_inf():
    t = exp_thresholds(torch.float32)
    below = torch.nextafter(torch.tensor(t.overflow_from), torch.tensor(0.0))
    assert math.isinf(torch.exp(torch.tensor(t.overflow_from)).item())
    assert math.isfinite(torch.exp(below).item()) and below.item() == t.largest_finite_input


# ── spacing ─────────────────────────────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("x", [0.75, 1.0, 3.0, 10.0, 10.01, 100.0, 1000.0])
def test_spacing_is_eps_times_the_binade_for_normal_numbers(dtype, x):
    binade = 2.0 ** math.floor(math.log2(torch.tensor(x, dtype=torch.float64).to(dtype).item()))
    assert spacing(dtype, x) == torch.finfo(dtype).eps * binade


# ── rounding bins ───────────────────────────────────────────────────────────────────────────────────────────
@settings(max_examples=150, deadline=None)
@given(st.sampled_from(DTYPES), st.floats(-300.0, 300.0, allow_nan=False))
def test_a_bin_is_exactly_the_values_stored_as_its_value(dtype, x):
    b = torch_cast_bin(x, dtype)
    assert b.lo <= x <= b.hi and b.stored == _stored(x, dtype)
    assert _stored(b.lo, dtype) == _stored(b.hi, dtype) == b.stored  # both ends belong to it ...
    for outside in (math.nextafter(b.lo, -math.inf), math.nextafter(b.hi, math.inf)):  # ... the next float64 not
        if math.isfinite(outside):
            assert _stored(outside, dtype) != b.stored


def test_the_gap_does_not_decide_the_bins_do():
    """fp16 near 10: 10.0039 and 10.0040 (0.0001 apart) stay apart, a full spacing apart merges."""
    fp16 = torch.float16
    a, b = torch_cast_bin(10.0039, fp16), torch_cast_bin(10.0040, fp16)
    assert (a.stored, b.stored) == (10.0, 10.0078125) and a.hi < 10.0040
    c, d = torch_cast_bin(10.01171875, fp16), torch_cast_bin(10.01953125, fp16)
    assert c == d and c.stored == 10.015625 and spacing(fp16, 10.01) == 10.01953125 - 10.01171875


def test_midpoints_round_to_the_even_neighbour_so_even_bins_are_wider():
    even, odd = torch_cast_bin(10.0, torch.float16), torch_cast_bin(10.0078125, torch.float16)
    assert even.lo <= 9.99609375 and even.hi >= 10.00390625  # both midpoints of 10.0 are in its bin
    assert odd.lo > 10.00390625 and odd.hi < 10.01171875  # neither of 10.0078125's is
    assert even.width > spacing(torch.float16, 10.0) > odd.width


def test_bins_at_zero_and_past_the_largest_value():
    zero = torch_cast_bin(0.0, torch.float16)
    assert zero.stored == 0.0 and zero.lo == -zero.hi and _stored(zero.hi, torch.float16) == 0.0
    assert zero.hi == pytest.approx(torch.finfo(torch.float16).smallest_normal * 2.0**-11, rel=1e-6)
    over = torch_cast_bin(70000.0, torch.float16)
    assert over.stored == math.inf and over.hi == math.inf and over.lo > torch.finfo(torch.float16).max
    saturated = torch_cast_bin(1000.0, torch.float8_e4m3fn)  # torch's cast to e4m3fn saturates instead of inf
    assert saturated.stored == 448.0 and saturated.hi == math.inf


def test_a_bin_needs_a_finite_value():
    with pytest.raises(ValueError):
        torch_cast_bin(math.nan, torch.float16)
