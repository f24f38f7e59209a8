"""The "Number formats" page in AppTest: renders, flips bits, reads bad URLs and bad text calmly."""

import pytest
from streamlit.testing.v1 import AppTest

from mpviz.formats import SHORT_NAMES
from tests.apptest import failures, page_app

PAGE = "pages/formats.py"


def _open(**params: str) -> AppTest:
    at = page_app(PAGE, **params).run()
    assert not failures(at), failures(at)
    return at


def _pills(at: AppTest, key: str):
    return next(b for b in at.get("button_group") if b.key == key)


def _text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


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
    assert at.text_input(key="v").value == "fp16:0x2e67"
    assert _pills(at, "bits-mantissa-fp16").value == [9, 6, 5, 2, 1, 0]
    assert "0.10003662109375" in _text(at)  # the new float16 value, now also what fp32 stores exactly
    _pills(at, "bits-sign-bf16").set_value([15]).run()  # flip bf16's sign: every format goes negative
    assert at.text_input(key="v").value.startswith("bf16:0xbd")
    assert "-0.10009765625" in _text(at)


def test_bit_pattern_input_belongs_to_the_first_format():
    at = _open(v="0x3c00", fmts="fp16,bf16,e5m2")
    assert not at.warning
    for short in ("fp16", "bf16", "e5m2"):
        assert "= **`1.0`**" in _text(at), short
    assert _pills(at, "bits-exponent-bf16").value == [13, 12, 11, 10, 9, 8, 7]


@pytest.mark.parametrize("value", ["-inf", "nan", "-0", "1e-45", "3e38", "fp16:0x7e01"])
def test_special_values_in_every_format(value):
    at = _open(v=value, fmts=",".join(SHORT_NAMES.values()))
    assert not at.warning
    assert len(at.get("button_group")) >= 3 * len(SHORT_NAMES) - 1  # e8m0 has no sign pills


@pytest.mark.parametrize(
    "params, needle",
    [
        ({"v": "abc"}, "abc"),
        ({"v": "0x1ffffffff"}, "0x1ffffffff"),
        ({"fmts": "fp16,fp12"}, "fmts=fp16,fp12"),
        ({"round": "sideways"}, "round=sideways"),
        ({"zoom": "99"}, "zoom=99"),
        ({"lm": "nope"}, "nope"),
    ],
)
def test_bad_url_parameters_warn_and_fall_back(params, needle):
    at = _open(**params)
    assert any(needle in w.value for w in at.warning), [w.value for w in at.warning]


def test_bad_text_typed_in_warns_and_the_url_follows_good_input():
    at = _open()
    at.text_input(key="v").set_value("1.2.3").run()
    assert not failures(at)
    assert any("1.2.3" in w.value for w in at.warning)
    at.text_input(key="v").set_value("65520").run()
    at.multiselect(key="fmts").set_value(["fp16", "e4m3"]).run()
    at.segmented_control(key="round").set_value("zero").run()
    assert not failures(at) and not at.warning
    assert "**saturated at the range's end**" in _text(at)  # 65520 toward zero in float16 → 65504
    assert at.query_params["v"] == ["65520"] or at.query_params["v"] == "65520"
