"""Value statistics: the batched, exact fast path against a slow reference; format ranges against formats.encode."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mpviz import stats
from mpviz.formats import FORMAT_NAMES, encode, resolve_format
from mpviz.stats import RANGE_FORMATS, FormatRange, StatsBatch, TensorStats, sample_values, tensor_stats


def reference_stats(t: torch.Tensor) -> TensorStats:
    """The definition, one element at a time: Python floats, exact Fractions for mean and variance."""
    values = t.detach().to(torch.float64).reshape(-1).tolist()  # every floating dtype here is exact in float64
    finite = [v for v in values if math.isfinite(v)]
    n = len(values)
    nonzero = [abs(v) for v in finite if v != 0]
    if finite:
        s1 = sum(Fraction(v) for v in finite)
        s2 = sum(Fraction(v) ** 2 for v in finite)
        k = len(finite)
        mean = float(s1 / k)
        try:
            std = math.sqrt(float((k * s2 - s1 * s1) / (k * k)))
        except OverflowError:  # a variance past float64's range
            std = math.inf
        mn, mx = min(finite) + 0.0, max(finite) + 0.0
        amax = max(abs(v) for v in finite)
    else:
        mean = std = mn = mx = amax = math.nan
    ranges = [FormatRange.of(d) for d in RANGE_FORMATS]
    normal = torch.finfo(t.dtype).smallest_normal
    return TensorStats(
        numel=n,
        min=mn,
        max=mx,
        abs_max=amax,
        mean=mean,
        std=std,
        nan=sum(math.isnan(v) for v in values),
        posinf=sum(v == math.inf for v in values),
        neginf=sum(v == -math.inf for v in values),
        zero=len(finite) - len(nonzero),
        subnormal=sum(a < normal for a in nonzero),
        overflow_frac={r.dtype: sum(r.overflows(a) for a in nonzero) / max(n, 1) for r in ranges},
        underflow_frac={r.dtype: sum(r.underflows(a) for a in nonzero) / max(n, 1) for r in ranges},
        log2_hist=tuple(sorted(Counter(math.frexp(a)[1] - 1 for a in nonzero).items())),
    )


def _same(a: TensorStats, b: TensorStats) -> bool:
    """Field by field, bit for bit (NaN equals NaN, and 0.0 is not -0.0)."""
    for f in dataclasses.fields(TensorStats):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, float):
            if not ((x == y and math.copysign(1, x) == math.copysign(1, y)) or (x != x and y != y)):
                return False
        elif x != y:
            return False
    return True


def _edge_values() -> list[float]:
    out = [0.0, -0.0, math.nan, math.inf, -math.inf, 1.0, -1.0, 1e-45, -1e-45, 2.0**-126, 2.0**-149, 3e38]
    for dt in RANGE_FORMATS:
        r = FormatRange.of(dt)
        for x in (r.overflow_at, r.underflow_at, r.max, r.smallest_subnormal, r.smallest_normal):
            x32 = np.float32(x)
            out += [float(x32), float(np.nextafter(x32, np.float32(0))), float(np.nextafter(x32, np.float32(np.inf)))]
    return out


def _corpus() -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    edges = torch.tensor(_edge_values(), dtype=torch.float32)
    wide = torch.randn(3000, generator=g) * torch.exp2(torch.randint(-140, 120, (3000,), generator=g).float())
    out = [
        edges,
        edges.to(torch.float64),
        edges.half(),
        edges.bfloat16(),
        edges.to(torch.float8_e4m3fn),
        edges.to(torch.float8_e5m2),
        wide,
        wide.bfloat16(),
        wide.half(),
        wide.to(torch.float64) * 1e200,  # float64 beyond float32's range
        torch.randn(7, 5, 3, generator=g).half().transpose(0, 2),  # non-contiguous
        torch.full((10,), -0.0),
        torch.full((4, 4), math.nan),
        torch.tensor(2.5),  # 0-dim
        torch.empty(0, 4),  # empty
        torch.empty(0, dtype=torch.float64),
        torch.tensor([6e-8, 3e-8, 2.98e-8, -1e-40, 1e-40]),  # fp16 / bf16 underflow neighbourhood
        torch.arange(-20.0, 20.0).exp2(),
        torch.tensor([1e300, -1e300, 1e-310], dtype=torch.float64),  # float64 subnormal, huge variance
    ]
    return out


@pytest.mark.parametrize("t", _corpus(), ids=lambda t: f"{str(t.dtype)[6:]}{list(t.shape)}")
def test_tensor_stats_equal_the_reference(t):
    got, want = tensor_stats(t), reference_stats(t)
    assert _same(got, want), (got, want)


def test_one_batch_of_many_tensors_equals_each_alone():
    corpus = _corpus()
    batch = StatsBatch()
    tickets = [batch.add(t).ticket for t in corpus]
    for ticket, t in zip(tickets, corpus, strict=True):
        assert _same(batch.result(ticket), reference_stats(t)), t


def test_pieces_streaming_and_flushes_do_not_change_the_numbers(monkeypatch):
    """Small tensors copied and flushed part way, large ones streamed block by block (contiguous, transposed,
    expanded): the same statistics."""
    small = dataclasses.replace(stats._F32, block=64)
    monkeypatch.setattr(stats, "_F32", small)
    monkeypatch.setitem(stats._LAYOUTS, np.dtype(np.float32), small)
    corpus = [t for t in _corpus() if t.dtype != torch.float64]
    corpus += [corpus[6][:600].view(20, 30).t(), corpus[7][:60].view(1, 60).expand(5, 60), corpus[6][:40]]
    batch = StatsBatch(max_pending=100)
    added = [batch.add(t) for t in corpus]
    assert batch.flushes > 1 and sum(a.values is None for a in added) > 3
    for a, t in zip(added, corpus, strict=True):
        assert _same(batch.result(a.ticket), reference_stats(t)), t
        assert a.nonfinite == {k for k, n in zip(("nan", "posinf", "neginf"), _nonfinite(t), strict=True) if n}


def _nonfinite(t: torch.Tensor) -> tuple[int, int, int]:
    x = t.double()
    return int(x.isnan().sum()), int((x == math.inf).sum()), int((x == -math.inf).sum())


def test_sampled_statistics_are_exact_where_read_in_full_and_the_samples_elsewhere(monkeypatch):
    """Past `sample_above`, min/max, the non-finite and overflow figures are the whole tensor's, bit for bit; the
    rest are those of the evenly spaced sample (in memory order: a transpose samples the same elements), scaled."""
    monkeypatch.setattr(stats, "SAMPLE_SIZE", 16)
    corpus = [t for t in _corpus() if t.numel() > 100]
    g = torch.Generator().manual_seed(1)
    corpus += [(torch.randn(40, 30, generator=g) * 300).to(torch.float8_e4m3fn), corpus[0].repeat(9).view(-1, 4).t()]
    batch = StatsBatch(sample_above=100)
    for t in corpus:
        added = batch.add(t)
        got, want = batch.result(added.ticket), reference_stats(t)
        assert added.values is None and got.sampled == 16
        assert added.nonfinite == {k for k, n in zip(("nan", "posinf", "neginf"), _nonfinite(t), strict=True) if n}
        exact = ("numel", "min", "max", "abs_max", "nan", "posinf", "neginf", "overflow_frac")
        assert _same(dataclasses.replace(want, **{f: getattr(got, f) for f in exact}), want), t
        flat = stats._dense_flat(t)
        sample = reference_stats(flat[:: flat.numel() // 16][:16])
        assert got.underflow_frac == sample.underflow_frac
        # the sample's mean and std are float64 sums, not exact ones: equal to ~1e-12 of the spread
        if math.isnan(sample.mean):
            assert math.isnan(got.mean)
        else:
            assert got.mean == pytest.approx(sample.mean, rel=1e-12, abs=1e-12 * sample.std)
            assert got.std == pytest.approx(sample.std, rel=1e-12)
        scale = t.numel() / 16
        assert got.log2_hist == tuple((e, round(c * scale)) for e, c in sample.log2_hist)
        assert got.zero == round(sample.zero * scale)
    assert tensor_stats(corpus[0]).sampled == 0  # sampling is asked for, never the default


def test_a_batch_keeps_no_reference_and_copies_at_once():
    t = torch.ones(8)
    batch = StatsBatch()
    ticket = batch.add(t).ticket
    t.mul_(3)  # changed after it was added: the statistics are of the values at add time
    assert batch.result(ticket).max == 1.0


def test_statistics_do_not_depend_on_element_order():
    x = torch.randn(64, 48) * torch.logspace(-30, 30, 48)
    a, b = tensor_stats(x), tensor_stats(x.t().contiguous()[torch.randperm(48)])
    assert _same(a, b)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=0, max_size=80), st.sampled_from(["float32", "bfloat16", "half"]))
def test_any_bit_patterns_equal_the_reference(bits, dtype):
    t = torch.tensor(np.array(bits, dtype=np.uint32).view(np.float32)).to(getattr(torch, dtype))
    assert _same(tensor_stats(t), reference_stats(t))


def test_samples_of_empty_and_zero_dim_tensors():
    assert sample_values(torch.randn(0, 4), 8, 2).shape == (1, 0, 4)
    assert sample_values(torch.randn(0, 2, 4), 8, 2).shape == (0, 2, 4)
    assert sample_values(torch.randn(3, 0), 8, 2).shape == (1, 3, 0)
    assert sample_values(torch.tensor(1.5), 8, 2).tolist() == [[[1.5]]]


# ── format ranges agree with formats.encode ──────────────────────────────────────────────────────────────────
RANGE_NAMES = [n for n in FORMAT_NAMES if n not in ("float64", "float32")]


@pytest.mark.parametrize("name", RANGE_NAMES)
def test_overflow_and_underflow_agree_with_encode_at_and_around_every_threshold(name):
    r, spec = FormatRange.of(name), resolve_format(name)
    for x in (r.overflow_at, r.max, r.underflow_at, r.smallest_subnormal, r.smallest_normal):
        if x == 0:
            continue
        for v in (x, math.nextafter(x, 0), math.nextafter(x, math.inf), x * (1 - 2**-20), x * (1 + 2**-20)):
            enc = encode(v, spec)
            assert r.overflows(v) == enc.overflow, (name, v)
            assert r.underflows(v) == (spec.has_zero and enc.value == 0), (name, v)


def test_e4m3fn_does_not_overflow_at_464_but_fp16_does_at_65520():
    e4m3, fp16 = FormatRange.of(torch.float8_e4m3fn), FormatRange.of(torch.float16)
    assert encode(464.0, "e4m3").value == 448.0 and not e4m3.overflows(464.0) and e4m3.overflows(464.5)
    assert encode(65520.0, "fp16").overflow and fp16.overflows(65520.0)
    s = tensor_stats(torch.tensor([464.0, 465.0, 65520.0, 65519.0]))
    assert s.overflow_frac["float8_e4m3fn"] == 1.0 * 3 / 4  # 465, 65520, 65519; not 464
    assert s.overflow_frac["float16"] == 1 / 4


@pytest.mark.parametrize("name", RANGE_NAMES)
def test_what_overflow_becomes_is_measured(name):
    r, spec = FormatRange.of(name), resolve_format(name)
    assert r.overflow_to == ("inf" if spec.has_inf else "nan" if spec.has_nan else "saturate")
    if spec.torch_dtype is None:
        assert r.torch_overflow_to is None
        return
    past = torch.tensor([r.overflow_at * 1.01]).to(getattr(torch, spec.torch_dtype)).double().item()
    assert r.torch_overflow_to == ("nan" if math.isnan(past) else "inf" if math.isinf(past) else "saturate")


def test_e4m3fn_overflow_is_nan_exactly_rounded_and_saturation_in_torch():
    r = FormatRange.of(torch.float8_e4m3fn)
    assert (r.overflow_to, r.torch_overflow_to) == ("nan", "saturate")
    assert FormatRange.of(torch.float16).overflow_to == "inf"
