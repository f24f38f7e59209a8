"""mpviz.formats vs torch's and ml_dtypes' casts: every pattern of the ≤16-bit formats, sampled floats."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpviz.formats import (
    EMULATED_FROM,
    FORMAT_NAMES,
    ROUNDINGS,
    SHORT_NAMES,
    FormatInputError,
    all_formats,
    bind_pattern,
    decode,
    encode,
    finfo_checks,
    library_casts,
    library_disagreements,
    number_line,
    numpy_dtype,
    resolve_format,
    round_array,
    stochastic_rounding,
    storage_census,
    torch_cast_differs,
    torch_dtype,
    zoom_window,
)
from tests.cli import CliResult, run_cli

SMALL = [s.name for s in all_formats() if s.bits <= 16]  # every pattern of these is checked
WITH_DTYPE = [s.name for s in all_formats() if s.numpy_dtype]
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _library_values(name: str) -> np.ndarray:
    """Every pattern 0 … 2^bits-1 of `name`, decoded by numpy/ml_dtypes, as float64."""
    spec = resolve_format(name)
    codes = np.arange(1 << spec.bits, dtype=np.uint16 if spec.bits == 16 else np.uint8)
    with np.errstate(invalid="ignore"):
        return codes.view(numpy_dtype(spec)).astype(np.float64)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


# ── names and specs ─────────────────────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    "name, canonical",
    [
        ("fp16", "float16"),
        ("torch.bfloat16", "bfloat16"),
        ("half", "float16"),
        ("e4m3", "float8_e4m3fn"),
        ("float8_e5m2fnuz", "float8_e5m2fnuz"),
        ("E2M1", "float4_e2m1fn"),
        ("tf32", "tf32"),
        ("fp64", "float64"),
        ("float32", "float32"),
        ("e8m0", "float8_e8m0fnu"),
        ("e3m2", "float6_e3m2fn"),
    ],
)
def test_names_resolve(name, canonical):
    assert resolve_format(name).name == canonical


def test_unknown_name_is_a_clear_value_error():
    with pytest.raises(ValueError, match=r"unknown number format 'fp12'.*fp16"):
        resolve_format("fp12")


@pytest.mark.parametrize("name", WITH_DTYPE)
def test_spec_matches_ml_dtypes_finfo(name):
    spec, fi = resolve_format(name), ml_dtypes.finfo(numpy_dtype(resolve_format(name)))
    assert (spec.bits, spec.exponent_bits, spec.mantissa_bits) == (fi.bits, fi.nexp, fi.nmant)
    assert (spec.max, spec.smallest_normal, spec.smallest_subnormal, spec.eps) == (
        float(fi.max),
        float(fi.smallest_normal),
        float(fi.smallest_subnormal),
        float(fi.eps),
    )
    if spec.bits > 16:
        return
    vals = _library_values(name)  # and the flags match what the patterns hold
    assert spec.has_inf == bool(np.isinf(vals).any())
    assert spec.has_nan == bool(np.isnan(vals).any())
    assert spec.max == np.nanmax(vals[np.isfinite(vals)])


def test_tf32_is_float32_range_with_float16_mantissa_and_labelled_emulated():
    tf32, f32, f16 = resolve_format("tf32"), resolve_format("fp32"), resolve_format("fp16")
    assert tf32.emulated and tf32.numpy_dtype is None and tf32.torch_dtype is None
    assert EMULATED_FROM["tf32"] == ("float32", "float16")  # what the page's sentence about tf32 is filled from
    assert (tf32.exponent_bits, tf32.mantissa_bits, tf32.bits) == (f32.exponent_bits, f16.mantissa_bits, 19)
    assert tf32.smallest_normal == f32.smallest_normal and tf32.eps == f16.eps
    assert encode(1 + 2**-11 + 2**-20, "tf32").value == 1 + 2**-10  # 10 fraction bits kept, rounded to nearest


# ── every bit pattern of the 4-, 6-, 8- and 16-bit formats ──────────────────────────────────────────────────
@pytest.mark.parametrize(  # 65,536 patterns each for the 16-bit formats: seconds, so those run in the full suite
    "name", [pytest.param(n, marks=pytest.mark.slow) if resolve_format(n).bits == 16 else n for n in SMALL]
)
def test_every_pattern_decodes_like_the_library_and_round_trips(name):
    spec = resolve_format(name)
    lib = _library_values(name)
    for code in range(1 << spec.bits):
        d = decode(f"0b{code:b}", spec)
        assert d.code == code
        assert _same(d.value, lib[code]), (hex(code), d.value, lib[code])
        if d.cls == "nan":
            assert encode(d.value, spec).cls == "nan"
            continue
        back = encode(d.value, spec)
        assert back.bits == d.bits and back.abs_error == 0 and not (back.overflow or back.underflow)
        assert encode(d.hex, spec).bits == d.bits  # hex input is decode


@pytest.mark.parametrize("name", SMALL)
def test_neighbours_are_the_adjacent_library_values(name):
    spec = resolve_format(name)
    lib = _library_values(name)
    ordered = np.unique(lib[~np.isnan(lib)])  # ascending, -0 and +0 merged
    for code in range(0, 1 << spec.bits, 7 if spec.bits == 16 else 1):
        d = decode(f"0b{code:b}", spec)
        if d.cls == "nan":
            assert d.next_up is None and d.next_down is None
            continue
        i = int(np.searchsorted(ordered, d.value))
        assert d.next_up == (ordered[i + 1] if i + 1 < len(ordered) else None)
        assert d.next_down == (ordered[i - 1] if i > 0 else None)


# ── casts: mpviz vs torch vs ml_dtypes ──────────────────────────────────────────────────────────────────────
def _grid() -> np.ndarray:
    """Every float16 and bfloat16 value and the midpoints between neighbours (ties!), float32-exact."""
    with np.errstate(invalid="ignore"):
        bf16 = np.arange(1 << 16, dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)
    f16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float64)
    vals = np.unique(np.concatenate([f16, bf16])[np.isfinite(np.concatenate([f16, bf16]))])
    mids = (vals[:-1] + vals[1:]) / 2
    return np.concatenate([vals, mids, [np.inf, -np.inf, np.nan, 1e30, -1e30]]).astype(np.float32).astype(np.float64)


def _e8m0_quirk(name: str, x: np.ndarray) -> np.ndarray:
    """float32 subnormals in (2^-127, 2^-126): torch and ml_dtypes both round them up to 2^-126 in e8m0,
    exact nearest rounding gives 2^-127 below 1.5·2^-127 (shown by library_disagreements, tested below)."""
    a = np.abs(x)
    return (a > 2.0**-127) & (a < 2.0**-126) if name == "float8_e8m0fnu" else np.zeros(a.shape, bool)


@pytest.mark.parametrize("name", [n for n in WITH_DTYPE if n not in ("float64", "float32")])
def test_round_array_matches_the_library_on_every_half_precision_value_and_tie(name):
    spec = resolve_format(name)
    x = _grid()
    with np.errstate(all="ignore"):
        lib = x.astype(numpy_dtype(spec)).astype(np.float64)
    ours = round_array(x, spec)
    differ = ~((ours == lib) & (np.signbit(ours) == np.signbit(lib)) | (np.isnan(ours) & np.isnan(lib)))
    if not spec.has_nan:  # no NaN to store: ml_dtypes and mpviz both store a zero, possibly of another sign
        differ &= ~np.isnan(x)
    differ &= ~_e8m0_quirk(name, x)
    assert not differ.any(), (x[differ][:5], ours[differ][:5], lib[differ][:5])


@FAST
@given(x=st.floats(width=32, allow_nan=False), name=st.sampled_from([n for n in SMALL]))
def test_encode_equals_the_libraries_where_they_agree(x, name):
    spec = resolve_format(name)
    casts = {c.library: c for c in library_casts(x, spec)}
    ours = casts.pop("mpviz")
    assert encode(x, spec).value == round_array(np.array([x]), spec)[0] or math.isnan(ours.value)
    lib_bits = {c.bits for c in casts.values()}
    if len(lib_bits) == 1 and not _e8m0_quirk(name, np.array([x]))[0]:
        assert ours.bits == lib_bits.pop()


@FAST
@given(
    x=st.floats(allow_nan=False, allow_infinity=False),
    name=st.sampled_from(FORMAT_NAMES),
    rounding=st.sampled_from(ROUNDINGS),
)
def test_neighbours_bracket_the_input(x, name, rounding):
    e = encode(x, name, rounding)
    if e.overflow or e.invalid or e.saturated:
        return
    if e.next_down is not None:
        assert e.next_down <= x
    if e.next_up is not None:
        assert x <= e.next_up
    if rounding == "down":
        assert e.value <= x
    if rounding == "up":
        assert e.value >= x
    if rounding == "zero":
        assert abs(e.value) <= abs(x)
    if rounding == "nearest" and e.next_up is not None and e.next_down is not None and math.isfinite(e.next_up):
        assert abs(e.value - x) <= min(abs(e.next_up - x), abs(e.next_down - x))


@FAST
@given(x=st.floats(allow_nan=False, allow_infinity=False))
def test_float64_and_float32_match_numpy(x):
    assert encode(x, "fp64").value == x
    assert encode(x, "fp64").bits == format(np.array(x).view(np.uint64).item(), "064b")
    with np.errstate(over="ignore"):
        f32 = np.float32(x)
    assert encode(x, "fp32").bits == format(f32.view(np.uint32).item(), "032b")


def test_torch_and_ml_dtypes_round_float64_through_float32_while_numpy_and_mpviz_do_not():
    x = 1 + 2**-11 + 2**-40  # just above a float16 tie; float32 cannot hold the 2^-40
    casts = {c.library: c.value for c in library_casts(x, "fp16")}
    assert casts == {"torch": 1.0, "numpy": 1 + 2**-10, "mpviz": 1 + 2**-10}
    assert encode(1 + 2**-8 + 2**-40, "bf16").value == 1 + 2**-7  # ml_dtypes and torch: 1.0 (listed below)
    probes = {d.probe: d for d in library_disagreements("bf16")}
    assert "tie_plus_2^-40" in probes


def test_torch_s_own_cast_is_reported_only_where_it_stores_other_bits_than_the_rounding_shown():
    stored = encode("500", "e4m3")  # past e4m3fn's range: the exact rounding has no inf, so NaN
    assert math.isnan(stored.value) and torch_cast_differs(500.0, stored).value == 448.0  # torch saturates
    assert torch_cast_differs(0.1, encode("0.1", "e4m3")) is None
    assert torch_cast_differs(500.0, encode("500", "e4m3", "zero")) is None  # torch's casts round to nearest only
    assert torch_cast_differs(math.nan, encode("nan", "fp16")) is None  # NaN is NaN, whatever its payload
    assert torch_cast_differs(0.1, encode("0.1", "e3m2")) is None  # no torch dtype to ask


def test_disagreements_e4m3fn_saturation_and_e5m2fnuz_eps_are_measured():
    twice = {d.probe: {c.library: c.value for c in d.casts} for d in library_disagreements("e4m3")}["twice_max"]
    assert twice["ml_dtypes"] != twice["ml_dtypes"] and twice["mpviz"] != twice["mpviz"]  # NaN in both
    assert twice["torch"] == 448.0  # torch saturates (as measured on torch 2.13)
    bad = [(c.format, c.field) for c in finfo_checks() if not c.agree]
    assert ("float8_e5m2fnuz", "eps") in bad
    for c in finfo_checks():  # ml_dtypes is right wherever measured from torch's own bit patterns
        assert c.measured == c.ml_dtypes, c


def test_e8m0_float32_subnormal_quirk_is_listed():
    probe = {d.probe: d for d in library_disagreements("e8m0")}["float32_subnormal"]
    values = {c.library: c.value for c in probe.casts}
    assert values == {"torch": 2.0**-126, "ml_dtypes": 2.0**-126, "mpviz": 2.0**-127}


@pytest.mark.parametrize("name", [n for n in WITH_DTYPE if resolve_format(n).torch_dtype])
def test_disagreements_never_involve_mpviz_and_ml_dtypes_except_double_rounding(name):
    for d in library_disagreements(name):
        libs = {c.library: c.bits for c in d.casts}
        numpy_side = libs.get("numpy", libs.get("ml_dtypes"))
        assert numpy_side == libs["mpviz"] or d.probe in ("tie_plus_2^-40", "float32_subnormal"), d


# ── examples with known answers ─────────────────────────────────────────────────────────────────────────────
def test_fp16_1e_minus_7_is_a_subnormal_bit_for_bit():
    d = encode("1e-7", "fp16").to_dict()
    assert d["bits"] == "0000000000000010" and d["class"] == "subnormal"
    assert d["value"] == 2 * 2.0**-24 and d["exponent"] == {"bits": "00000", "raw": 0, "unbiased": -14}
    assert d["next_down"] == 2.0**-24 and d["next_up"] == 3 * 2.0**-24 and d["ulp"] == 2.0**-24
    assert math.isclose(d["abs_error"], 2**-23 - 1e-7) and not (d["overflow"] or d["underflow"])


@pytest.mark.parametrize(
    "value, fmt, rounding, expect",
    [
        ("65504", "fp16", "nearest", dict(value=65504.0, hex="0x7bff", overflow=False)),
        ("65519.99", "fp16", "nearest", dict(value=65504.0, overflow=False)),
        ("65520", "fp16", "nearest", dict(value=math.inf, cls="inf", overflow=True, saturated=False)),
        ("1e6", "fp16", "zero", dict(value=65504.0, overflow=True, saturated=True)),
        ("-1e6", "fp16", "up", dict(value=-65504.0, overflow=True, saturated=True)),
        ("-1e6", "fp16", "down", dict(value=-math.inf, overflow=True)),
        ("2.98e-8", "fp16", "nearest", dict(value=0.0, underflow=True, cls="zero")),
        ("-2.98e-8", "fp16", "nearest", dict(bits="1000000000000000", underflow=True)),
        ("2.98e-8", "fp16", "up", dict(value=2.0**-24, cls="subnormal", underflow=False)),
        ("10.01", "fp16", "nearest", dict(value=10.0078125)),
        ("10.01", "bf16", "nearest", dict(value=10.0)),
        ("-0", "fp16", "nearest", dict(bits="1000000000000000", sign=1, cls="zero")),
        ("-0", "e4m3fnuz", "nearest", dict(bits="00000000", sign=0)),  # no negative zero
        ("-1e-9", "e5m2fnuz", "nearest", dict(bits="00000000", underflow=True)),
        ("500", "e4m3", "nearest", dict(cls="nan", overflow=True, saturated=False)),
        ("464", "e4m3", "nearest", dict(value=448.0)),  # tie between 448 (even) and the NaN slot
        ("inf", "e4m3", "nearest", dict(cls="nan", overflow=True)),
        ("inf", "e2m1", "nearest", dict(value=6.0, saturated=True)),
        ("nan", "e2m1", "nearest", dict(value=0.0, invalid=True)),
        (
            "3",
            "e8m0",
            "nearest",
            dict(value=4.0),
        ),  # only powers of two; measured: ties go up, as in both libs
        ("-1", "e8m0", "nearest", dict(cls="nan", invalid=True)),
        ("0", "e8m0", "nearest", dict(cls="nan", invalid=True)),
        ("1e-300", "e8m0", "nearest", dict(value=2.0**-127)),  # no zero: the smallest value
        (
            "0.1",
            "fp64",
            "nearest",
            dict(hex="0x3fb999999999999a", abs_error=float(Fraction(0.1) - Fraction(1, 10))),
        ),
        ("1e400", "fp64", "nearest", dict(value=math.inf, overflow=True)),
        ("fp16:0x3c00", "bf16", "nearest", dict(value=1.0, input="fp16:0x3c00")),
        ("0b0011110000000000", "fp16", "nearest", dict(value=1.0)),
    ],
)
def test_known_answers(value, fmt, rounding, expect):
    e = encode(value, fmt, rounding)
    for key, want in expect.items():
        got = getattr(e, key)
        if key == "abs_error":
            assert math.isclose(got, want, rel_tol=1e-12)
        else:
            assert _same(got, want) if isinstance(want, float) else got == want, (key, got, want)


def test_integers_and_numpy_scalars_are_exact():
    assert encode(10**400, "fp64").overflow and encode(2**53 + 1, "fp64").value == 2.0**53
    assert encode(np.float32(0.1), "fp32").abs_error == 0 and encode(np.int64(-3), "e8m0").invalid


def test_nan_payloads_survive_decode_and_encode_gives_the_quiet_nan():
    d = decode("0x7e01", "fp16")
    assert d.cls == "nan" and d.mantissa == "1000000001" and d.sign == 0
    assert decode("1111110000000001", "fp16").cls == "nan" and decode("0xfc01", "fp16").sign == 1
    assert decode("0xfc00", "fp16").value == -math.inf
    assert encode("nan", "fp16").hex == "0x7e00" == f"0x{np.array(np.nan, np.float16).view(np.uint16).item():04x}"
    assert encode("-nan", "fp16").sign == 1
    assert decode("0x80", "e4m3fnuz").cls == "nan" and decode("0x7f", "e4m3").cls == "nan"
    assert decode("0xff", "e8m0").cls == "nan" and decode("0x00", "e8m0").value == 2.0**-127


@pytest.mark.parametrize(
    "bad", ["", "abc", "1e", "0x", "0xzz", "--1", "1.2.3", "x" * 300, "snan", "-0x3c00", "fp99:0x1"]
)
def test_bad_values_are_value_errors(bad):
    with pytest.raises(ValueError):
        encode(bad, "fp16")


@pytest.mark.parametrize("bad, fmt", [("0x1ffff", "fp16"), ("0101", "fp16"), ("0x100", "e4m3"), ("0b10000", "e2m1")])
def test_bad_patterns_are_value_errors(bad, fmt):
    with pytest.raises(ValueError, match="bit"):
        decode(bad, fmt)


@pytest.mark.parametrize(
    "bad, fmt, reason, fields",
    [
        ("abc <img src=x>", "fp16", "not_a_number", {}),
        ("x" * 300, "fp16", "bad_length", {"limit": 200}),
        ("0x1ffff", "fp16", "pattern_too_wide", {"format": "float16", "bits": 16, "given": 17}),
        ("fp99:0x1", "fp16", "unknown_format", {"known": ", ".join(SHORT_NAMES.values())}),
    ],
)
def test_value_errors_carry_a_code_and_facts_but_never_the_input(bad, fmt, reason, fields):
    with pytest.raises(FormatInputError) as caught:
        encode(bad, fmt)
    assert (caught.value.reason, caught.value.fields) == (reason, fields)
    assert not any(bad[:5] in str(v) for v in caught.value.fields.values())  # a view may show fields unescaped


def test_bad_rounding_is_a_value_error():
    with pytest.raises(ValueError, match="rounding"):
        encode(1.0, "fp16", "sideways")


# ── stochastic rounding, census, number line ────────────────────────────────────────────────────────────────
def test_stochastic_rounding_is_unbiased_where_nearest_is_not():
    s = stochastic_rounding("0.1", "bf16", draws=20_000, seed=1)
    assert s.down == 0.099609375 and s.up == 0.10009765625 and s.nearest == s.up
    assert math.isclose(s.p_up, (0.1 - s.down) / (s.up - s.down), rel_tol=1e-12)
    assert math.isclose(s.expected, 0.1, rel_tol=1e-15)
    sigma = (s.up - s.down) * math.sqrt(s.p_up * (1 - s.p_up) / s.draws)
    assert abs(s.sample_mean - 0.1) < 5 * sigma < abs(s.nearest_bias)


def test_stochastic_rounding_of_bit_patterns_uses_the_patterns_own_value():
    s = stochastic_rounding("fp32:0x3dcccccd", "bf16")  # float32's 0.1
    assert s.down == 0.099609375 and s.up == 0.10009765625
    assert s.expected == float.fromhex("0x1.99999ap-4")
    nan = stochastic_rounding("fp16:0x7e01", "bf16")
    assert math.isnan(nan.p_up) and math.isnan(nan.nearest)


def test_zoom_window_never_overflows_or_collapses():
    big, tiny = 1.7976931348623157e308, 5e-324
    assert zoom_window(-big, 0, big) == (-big, -(2.0**1023))
    assert zoom_window(tiny, 1, big)[1] > tiny
    assert zoom_window(0.1, 0, 448) == (0.0625, 0.125)
    assert zoom_window(0.0, 2, 448) == (-32.0, 32.0)
    # a window wider than float64 can say: the whole range (these raised OverflowError)
    for value, zoom in [(math.inf, 1), (1e308, 6), (-1e308, 6), (tiny, 1000), (0.0, 10**6)]:
        assert zoom_window(value, zoom, big) == (-big, big), (value, zoom)


@pytest.mark.parametrize("zoom", [-1, 1.5, True, "2"])
def test_zoom_window_refuses_what_is_not_a_zoom_level(zoom):
    with pytest.raises(FormatInputError, match="zoom"):
        zoom_window(1.0, zoom, 448)


def test_stochastic_rounding_next_to_float64_max_does_not_overflow():
    s = stochastic_rounding("1.797e308", "fp64")
    assert s.down <= s.sample_mean <= s.up and math.isfinite(s.sample_mean)


def test_bit_positions_patterns_and_bare_patterns_are_the_specs():
    fp16 = resolve_format("fp16")
    assert fp16.bit_positions == {"sign": (15,), "exponent": (14, 13, 12, 11, 10), "mantissa": tuple(range(9, -1, -1))}
    assert [p for ps in resolve_format("e8m0").bit_positions.values() for p in ps] == list(range(7, -1, -1))
    assert fp16.code_from_bits([13, 12, 11, 10]) == 0x3C00 and fp16.pattern_text(0x3C00) == "fp16:0x3c00"
    assert encode(fp16.pattern_text(0x3C00), "bf16").value == 1.0
    with pytest.raises(FormatInputError):
        fp16.code_from_bits([16])
    assert bind_pattern("0x3c00", "fp16") == "fp16:0x3c00" and bind_pattern(" 0b1 ", "e2m1") == "e2m1:0b1"
    assert bind_pattern("bf16:0x3f80", "fp16") == "bf16:0x3f80" and bind_pattern("0.1", "fp16") == "0.1"


def test_storage_census_counts_outcomes():
    x = np.array([0.0, 1.0, 1e5, -1e5, 1e-9, 1e-6, np.nan, np.inf])
    c = storage_census(x, "fp16")
    assert (c.total, c.nonfinite, c.zero, c.overflow, c.underflow, c.subnormal, c.normal) == (
        8,
        2,
        1,
        2,
        1,
        1,
        1,
    )
    assert storage_census(x, "bf16").overflow == 0


def test_number_line_lists_every_value_and_its_rounding_bin():
    line = number_line("e4m3", 0.9, 2.1)
    assert line.complete and line.count == 10 and list(line.values[:2]) == [0.9375, 1.0]
    for v, lo, hi in zip(line.values, line.edges[:-1], line.edges[1:], strict=True):
        assert lo < v < hi
        assert encode((lo + v) / 2, "e4m3").value == v == encode((v + hi) / 2, "e4m3").value
    wide = number_line("fp32", 1.0, 2.0, max_points=100)
    assert not wide.complete and wide.count == 2**23 + 1 and len(wide.values) <= 100 and wide.edges is None


def test_torch_dtypes_exist_where_the_spec_says():
    for spec in all_formats():
        assert (torch_dtype(spec) is not None) == (spec.torch_dtype is not None)


# ── CLI ─────────────────────────────────────────────────────────────────────────────────────────────────────
def _cli(capsys, *args: str) -> CliResult:
    return run_cli(capsys, "bits", *args)


def test_cli_json_has_every_documented_field(capsys):
    r = _cli(capsys, "1e-7", "--format", "fp16", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert {
        "format",
        "input",
        "value",
        "bits",
        "sign",
        "exponent",
        "mantissa",
        "class",
        "ulp",
        "abs_error",
        "rel_error",
        "next_up",
        "next_down",
        "overflow",
        "underflow",
    } <= set(d)
    assert (d["format"], d["input"], d["bits"], d["class"]) == (
        "float16",
        "1e-7",
        "0000000000000010",
        "subnormal",
    )
    assert set(d["exponent"]) >= {"raw", "unbiased"}


def test_cli_values_starting_with_minus_and_strict_json(capsys):
    r = _cli(capsys, "-inf", "--format", "e4m3", "--json", "--rounding", "zero")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["class"] == "nan" and d["value"] == "nan" and d["overflow"] is True
    r = _cli(capsys, "-0", "--format", "fp16")
    assert r.returncode == 0 and "1 00000 0000000000" in r.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("abc", "--format", "fp16"),
        ("1", "--format", "fp12"),
        ("0x1ffff", "--format", "fp16"),
        ("1", "--format", "fp16", "--rounding", "odd"),
        ("--format", "fp16"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(args, capsys):
    r = _cli(capsys, *args)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "error" in r.stderr
