"""The "Number formats" page in AppTest: renders, flips bits, reads bad URLs and bad text calmly."""

import numpy as np
import pytest
import torch
from ml_dtypes import float8_e4m3fn
from streamlit.testing.v1 import AppTest

from mpviz.formats import EMULATED_FROM, SHORT_NAMES, resolve_format
from tests.apptest import failures, page_app
from tests.hostile import unsafe_markup

PAGE = "mpviz/pages/formats.py"


def _open(**params: str) -> AppTest:
    at = page_app(PAGE, **params).run()
    assert not failures(at), failures(at)
    return at


def _pills(at: AppTest, key: str):
    return next(b for b in at.get("button_group") if b.key == key)


def _text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def _stored(at: AppTest) -> dict[str, str]:
    """The summary table: format → stored value."""
    table = at.dataframe[0].value
    return dict(zip(table["format"], table["stored value"], strict=True))


def _query(at: AppTest) -> dict[str, str]:
    return {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}


def test_default_view_shows_bits_charts_and_tables():
    at = _open()
    assert at.title[0].value == "Number formats"
    assert not at.warning
    assert len(at.get("plotly_chart")) == 3  # number line, trace histogram, range chart
    assert _pills(at, "bits-mantissa-fp16").value == [9, 6, 5, 2, 1]  # 0.1 in float16 = 0x2e66
    assert "0.0999755859375" in _text(at)
    assert len(at.dataframe) >= 7


def test_clicking_a_bit_flips_it_and_every_format_follows():
    at = _open()
    pills = _pills(at, "bits-mantissa-fp16")
    pills.set_value([*pills.value, 0]).run()
    assert not failures(at)
    assert at.text_input(key="value").value == "fp16:0x2e67"
    assert _pills(at, "bits-mantissa-fp16").value == [9, 6, 5, 2, 1, 0]
    assert _stored(at)["float16"] == _stored(at)["float32"] == "0.10003662109375"  # fp32 holds it exactly
    _pills(at, "bits-sign-bf16").set_value([15]).run()  # flip bf16's sign: every format goes negative
    assert at.text_input(key="value").value.startswith("bf16:0xbd")
    assert _stored(at)["bfloat16"] == "-0.10009765625"
    assert all(v.startswith("-") for v in _stored(at).values())


def test_bit_pattern_input_belongs_to_the_first_format():
    at = _open(value="0x3c00", fmts="fp16,bf16,e5m2")
    assert not at.warning
    assert _stored(at) == {"float16": "1.0", "bfloat16": "1.0", "float8_e5m2": "1.0"}  # each format, by name
    assert _pills(at, "bits-exponent-bf16").value == [13, 12, 11, 10, 9, 8, 7]


def test_the_emulated_layout_is_read_from_its_spec():
    at = _open(fmts="tf32,fp16")
    tf32 = resolve_format("tf32")
    exp_from, mant_from = (resolve_format(n) for n in EMULATED_FROM["tf32"])
    caption = next(c.value for c in at.caption if "no storage dtype" in c.value)
    assert f"{tf32.exponent_bits} exponent bits" in caption and exp_from.name in caption
    assert f"{tf32.mantissa_bits} mantissa bits" in caption and mant_from.name in caption
    assert (tf32.exponent_bits, tf32.mantissa_bits) == (exp_from.exponent_bits, mant_from.mantissa_bits)
    # same exponent bits, yet not the same range: both ends are quoted, measured from the specs
    assert tf32.max != exp_from.max and tf32.smallest_subnormal != exp_from.smallest_subnormal
    assert "its range) are" not in caption
    for x in (tf32.max, exp_from.max, tf32.smallest_subnormal, exp_from.smallest_subnormal):
        assert f"{x:.6g}" in caption


@pytest.mark.parametrize("value", ["500", "inf"])
def test_e4m3_shows_torch_s_saturation_where_it_differs_from_the_exact_rounding(value):
    """ml_dtypes (and mpviz's exact rounding) make 500 and inf NaN in float8_e4m3fn; torch's cast saturates."""
    torch_value = float(torch.tensor(float(value)).to(torch.float8_e4m3fn).float())
    assert np.isnan(float(np.float32(value).astype(float8_e4m3fn))) and torch_value == 448.0
    at = _open(value=value, fmts="e4m3,fp16")
    assert _stored(at)["float8_e4m3fn"] == "nan"
    line = next(m.value for m in at.markdown if m.value.startswith("= **`nan`**"))
    assert f"**`{torch_value!r}`**" in line
    assert _text(at).count("tensor.to") == 1  # float16: torch and the exact rounding agree, nothing added there


@pytest.mark.parametrize("value", ["-inf", "nan", "-0", "1e-45", "3e38", "fp16:0x7e01"])
def test_special_values_in_every_format(value):
    at = _open(value=value, fmts=",".join(SHORT_NAMES.values()))
    assert not at.warning
    assert len(at.get("button_group")) >= 3 * len(SHORT_NAMES) - 1  # e8m0 has no sign pills


@pytest.mark.parametrize(
    "params",
    [
        {"fmts": "fp64", "v": "inf", "zoom": "1"},  # overflowed computing the window (OverflowError)
        {"fmts": "fp64", "v": "1e308", "zoom": "6"},
        {"fmts": "fp64,e8m0", "value": "-1e308", "zoom": "all"},
    ],
)
def test_windows_at_the_edge_of_float64_draw(params):
    at = _open(**params)
    assert not at.warning and len(at.get("plotly_chart")) == 3


def test_bad_url_parameters_warn_and_fall_back():
    at = _open(value="abc", fmts="fp16,fp12", round="sideways", zoom="99", tensor="nope")
    warnings = " ".join(w.value for w in at.warning)
    for needle in ("abc", "fmts=fp16,fp12", "round=sideways", "zoom=99", "nope"):
        assert needle in warnings, (needle, warnings)
    assert "use a decimal" in warnings  # why, in the page's words
    s = at.session_state
    assert (s["round"], s["zoom"], s["tensor"], s["fmts"]) == (
        "nearest",
        0,
        "scores",
        ["fp32", "fp16", "bf16", "e4m3"],
    )
    assert _stored(at)["float16"] == "0.0999755859375"  # the default value was used


@pytest.mark.parametrize(
    "value",
    [
        "x` **Your session expired.** [Sign in](https://evil.example/login) `",
        "<img src=x onerror=alert(1)>",
        "fp16:0x1ffffffff ![p](https://evil.example/p.png)",
        "0x1ffffffff",
    ],
)
def test_hostile_value_text_is_echoed_inert(value):
    at = _open(value=value, tensor=value)
    assert len(at.warning) == 2  # the value and the tensor, each once
    for w in at.warning:
        assert not unsafe_markup(w.value), w.value
        assert "evil.example" not in w.value or "`" in w.value  # only ever inside a code span


def test_old_link_keys_open_the_same_view_and_the_url_is_rewritten():
    at = _open(v="0.5", fmts="fp16,bf16", lm="probs")
    s = at.session_state
    assert (s["value"], s["fmts"], s["tensor"]) == ("0.5", ["fp16", "bf16"], "probs")
    assert _query(at) == {"value": "0.5", "fmts": "fp16,bf16", "tensor": "probs"}


def test_url_round_trip_reopens_the_same_view():
    at = _open()
    at.text_input(key="value").set_value("65520").run()
    at.multiselect(key="fmts").set_value(["fp16", "e4m3"]).run()
    at.segmented_control(key="round").set_value("zero").run()
    at.select_slider(key="zoom").set_value(2).run()
    at.selectbox(key="tensor").set_value("probs").run()
    assert not failures(at) and not at.warning
    assert "**saturated at the range's end**" in _text(at)  # 65520 toward zero in float16 → 65504
    query = _query(at)
    assert query == {"value": "65520", "fmts": "fp16,e4m3", "round": "zero", "zoom": "2", "tensor": "probs"}
    again = _open(**query)
    for key in ("value", "fmts", "round", "zoom", "tensor"):
        assert again.session_state[key] == at.session_state[key], key
    assert _stored(again) == _stored(at)


def test_bad_text_typed_in_warns_and_good_text_clears_it():
    at = _open()
    at.text_input(key="value").set_value("1.2.3").run()
    assert not failures(at)
    assert any("1.2.3" in w.value for w in at.warning)
    at.text_input(key="value").set_value("2").run()
    assert not at.warning and _stored(at)["float16"] == "2.0"
