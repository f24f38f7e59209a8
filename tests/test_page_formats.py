"""The "Number formats" page in AppTest: renders, flips bits, reads bad URLs and bad text calmly.

The bits are one in-browser component (mpviz/app/bit_flipper.py): its data is read from the element AppTest
records, and a flip is sent as the browser sends it (the component's trigger, in the rerun's widget states)."""

import json

import numpy as np
import pytest
import torch
from ml_dtypes import float8_e4m3fn
from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.testing.v1 import AppTest

from mpviz.app import text
from mpviz.formats import EMULATED_FROM, SHORT_NAMES, resolve_format
from tests.apptest import failures, page_app
from tests.hostile import unsafe_markup

PAGE = "mpviz/pages/formats.py"


REFERENCES = ("ref_stochastic", "ref_libraries", "ref_finfo", "ref_finfo_all", "ref_properties")


def _open(**params: str) -> AppTest:
    at = page_app(PAGE, opened=REFERENCES, **params).run()
    assert not failures(at), failures(at)
    return at


def _flipper(at: AppTest):
    (element,) = [e for e in at.get("bidi_component") if "bit_flipper" in e.proto.component_name]
    return element.proto


def _formats(at: AppTest) -> dict[str, dict]:
    """The flipper's data: short name → that format's badge, fields, line."""
    return {f["short"]: f for f in json.loads(_flipper(at).json)["formats"]}


def _ones(at: AppTest, short: str, field: str) -> list[int]:
    """The positions of `short`'s `field` that hold a 1, most significant first."""
    (bits,) = [f["bits"] for f in _formats(at)[short]["fields"] if f["field"] == field]
    return [p for p, bit in bits if bit]


def _flip(at: AppTest, short: str, position: int) -> None:
    """Click one bit, as the browser reports it: the component's "flip" trigger, then the rerun."""
    _send(at, {"short": short, "position": position})


def _send(at: AppTest, flip: object) -> None:
    states = WidgetStates()
    states.widgets.extend(at._tree.get_widget_states().widgets)
    trigger = states.widgets.add()
    trigger.id = _make_trigger_id(_flipper(at).id, "events")
    trigger.json_trigger_value = json.dumps([{"event": "flip", "value": flip}])
    at._run(states)


def _text(at: AppTest) -> str:
    """The page's markdown and the lines under the bits."""
    return "\n".join([m.value for m in at.markdown] + [f["line"] for f in _formats(at).values()])


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
    assert _ones(at, "fp16", "mantissa") == [9, 6, 5, 2, 1]  # 0.1 in float16 = 0x2e66
    assert list(_formats(at)) == ["fp32", "fp16", "bf16", "e4m3"]
    assert not [b for b in at.get("button_group") if (b.key or "").startswith("bits")]  # no pills: one component
    assert "0.0999755859375" in _text(at)
    assert len(at.dataframe) >= 7


def test_the_reference_tables_are_folded_and_built_only_once_opened():
    at = page_app(PAGE).run()
    assert not failures(at)
    assert len(at.dataframe) == 2  # the summary and the traced tensor's census; the reference tables wait folded
    words = text.load("en", "formats")
    assert {e.label for e in at.expander} >= {
        words[k] for k in ("stochastic_table", "libraries", "finfo", "properties")
    }


def test_clicking_a_bit_flips_it_and_every_format_follows():
    at = _open()
    _flip(at, "fp16", 0)
    assert not failures(at)
    assert at.text_input(key="value").value == "fp16:0x2e67"
    assert _ones(at, "fp16", "mantissa") == [9, 6, 5, 2, 1, 0]
    assert _stored(at)["float16"] == _stored(at)["float32"] == "0.10003662109375"  # fp32 holds it exactly
    _flip(at, "bf16", 15)  # flip bf16's sign: every format goes negative
    assert at.text_input(key="value").value.startswith("bf16:0xbd")
    assert _stored(at)["bfloat16"] == "-0.10009765625"
    assert all(v.startswith("-") for v in _stored(at).values())


def test_bit_pattern_input_belongs_to_the_first_format():
    at = _open(value="0x3c00", fmts="fp16,bf16,e5m2")
    assert not at.warning
    assert _stored(at) == {"float16": "1.0", "bfloat16": "1.0", "float8_e5m2": "1.0"}  # each format, by name
    assert _ones(at, "bf16", "exponent") == [13, 12, 11, 10, 9, 8, 7]


def test_the_emulated_layout_is_read_from_its_spec():
    at = _open(fmts="tf32,fp16")
    tf32 = resolve_format("tf32")
    exp_from, mant_from = (resolve_format(n) for n in EMULATED_FROM["tf32"])
    caption = _formats(at)["tf32"]["emulated"]
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
    line = _formats(at)["e4m3"]["line"]
    assert line.startswith("= **`nan`**")
    assert f"**`{torch_value!r}`**" in line
    assert _text(at).count("tensor.to") == 1  # float16: torch and the exact rounding agree, nothing added there


@pytest.mark.parametrize("value", ["-inf", "nan", "-0", "1e-45", "3e38", "fp16:0x7e01"])
def test_special_values_in_every_format(value):
    at = _open(value=value, fmts=",".join(SHORT_NAMES.values()))
    assert not at.warning
    shown = _formats(at)
    assert list(shown) == list(SHORT_NAMES.values())
    assert all(len(f["fields"]) == 3 for name, f in shown.items() if name != "e8m0")  # e8m0 has no sign bit


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


@pytest.mark.parametrize(
    "flip",
    [
        {"short": "fp8", "position": 0},  # no such format shown
        {"short": "fp16", "position": 16},  # no such bit
        {"short": "fp16", "position": "3"},
        {"short": "fp16", "position": True},
        "fp16:0",
    ],
)
def test_a_forged_or_stale_flip_changes_nothing(flip):
    at = _open()
    _send(at, flip)
    assert not failures(at) and not at.warning
    assert at.text_input(key="value").value == "0.1" and _ones(at, "fp16", "mantissa") == [9, 6, 5, 2, 1]
