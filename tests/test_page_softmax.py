"""AppTest of the softmax page: every preset renders its plots; bad URL or typed input warns, never fails."""

import pytest
from streamlit.testing.v1 import AppTest

from mpviz import softmax as sm
from mpviz.app import text
from tests.apptest import failures, page_app
from tests.hostile import unsafe_markup

PAGE = "mpviz/pages/softmax.py"
CHARTS = 4  # probabilities, their error vs float64, the sweep, exp(x)
REFERENCES = ("ref_metrics", "ref_quant")  # the folded tables: every variant's metrics, 8-bit probabilities


def _app(**params) -> AppTest:
    return page_app(PAGE, opened=REFERENCES, **params).run()


def test_the_reference_tables_are_folded_and_built_only_once_opened():
    at = page_app(PAGE).run()
    assert not failures(at)
    assert len(at.dataframe) == 1  # close logits; the metrics and the 8-bit table wait in closed expanders
    assert {e.label for e in at.expander} >= {text.load("en", "softmax")[k] for k in ("metrics", "quant")}


def _text(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)


def _warnings(at: AppTest) -> str:
    return " ".join(w.value for w in at.warning)


@pytest.mark.parametrize("preset", sm.SCENARIO_NAMES)
def test_every_preset_renders_bars_sweep_and_exp(preset):
    at = _app(preset=preset)
    assert not failures(at), failures(at)
    assert not at.warning
    assert len(at.get("plotly_chart")) == CHARTS
    assert len(at.dataframe) == 3  # every variant, close logits, 8-bit probabilities


def test_large_preset_names_naive_fp16_as_the_one_that_breaks():
    at = _app()  # the default view is the "large logits" preset
    text = _text(at)
    assert "nan/inf from: float16 · naive." in text
    assert "float16: naive fails from scale" in text and "Max-subtracted in float16: finite" in text
    assert "max-subtracted never fails up to scale 1000" in text


def test_trace_preset_takes_a_masked_score_row():
    at = _app(preset="trace", trace_head="1", trace_row="3")
    assert not failures(at)
    assert "Head 1, row 3 of the `scores` tensor (bfloat16)" in _text(at)
    assert "12 masked" in _text(at)  # default seq_len 16, causal: row 3 sees 4 keys


def test_trace_preset_with_sdpa_says_there_is_no_row():
    at = _app(preset="trace", attn="sdpa")
    assert not failures(at)
    assert "fused SDPA" in " ".join(i.value for i in at.info)
    assert len(at.get("plotly_chart")) == CHARTS  # falls back to a preset row


def test_bad_logits_in_the_url_warn_and_fall_back():
    at = _app(logits="abc")
    assert not failures(at)
    assert at.session_state["source"] == "list"
    assert "Logits `abc` are not usable" in _warnings(at) and "not a number" in _warnings(at)
    assert len(at.get("plotly_chart")) == CHARTS


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"source": "bogus"}, "source=bogus"),
        ({"preset": "nope"}, "preset=nope"),
        ({"source": "generator", "gen_length": "999999"}, "gen_length=999999"),
        ({"source": "generator", "gen_scale": "3"}, "gen_scale=3"),
        ({"formats": "float99"}, "formats=float99"),
        ({"metric": "wrong"}, "metric=wrong"),
        ({"pair_a": "nan"}, "pair_a=nan"),
        ({"preset": "trace", "trace_head": "99"}, "trace_head = `99` is outside this trace"),
        ({"source": "list", "logits": "1,2,inf"}, "not a usable logit"),
    ],
)
def test_garbage_url_parameters_warn_instead_of_failing(params, fragment):
    at = _app(**params)
    assert not failures(at), failures(at)
    assert fragment in _warnings(at)
    assert len(at.get("plotly_chart")) == CHARTS


def test_typed_logits_update_the_page_and_bad_text_warns():
    at = _app(source="list")
    at.text_input(key="logits").set_value("12, 1, -3").run()
    assert not failures(at) and not at.warning
    assert "nan/inf from: float16 · naive." in _text(at)
    at.text_input(key="logits").set_value("1, 2, x").run()
    assert not failures(at)
    assert "Logits `1, 2, x` are not usable" in _warnings(at)


def test_generator_and_formats_widgets_drive_the_comparison():
    at = _app(source="generator")
    at.number_input(key="gen_length").set_value(32).run()
    at.slider(key="gen_peak").set_value(30.0).run()
    at.segmented_control(key="formats").set_value(["float16", "float8_e4m3fn"]).run()
    assert not failures(at)
    assert "32 logits" in _text(at)
    assert "float32 · naive" not in _text(at) and "float8_e4m3fn" in _text(at)


def test_old_links_with_src_and_gen_n_open_the_same_view():
    at = _app(src="generator", gen_n="32")
    assert not failures(at) and not at.warning
    assert at.session_state["source"] == "generator" and at.session_state["gen_length"] == 32
    assert "32 logits" in _text(at)
    assert at.query_params["source"] == "generator" and at.query_params["gen_length"] == "32"
    assert "src" not in at.query_params and "gen_n" not in at.query_params


def test_close_logits_say_bins_decide_with_a_measured_counterexample():
    at = _app(pair_a="10", pair_b="10.01", formats="float32,float16,bfloat16")
    text = _text(at)
    assert "merge exactly when they fall in the same bin" in text
    assert "stay apart in float32, float16 and merge in bfloat16" in text
    # float16 near 10.01, from sm.gap_counterexamples: a tiny gap across a bin edge, and a full-spacing pair
    assert "10.0117 and 10.0118 (gap 0.0001" in text and "stored as 10.0078125 and 10.015625" in text
    assert "10.01171875 and 10.01953125 (gap 0.0078125, a full spacing) are both stored as 10.015625" in text
    table = at.dataframe[1].value
    assert list(table["bin of a"])[1] == "[9.996093273, 10.00390673]"  # float16's bin of 10, as torch casts


def test_kl_column_never_shows_a_negative_divergence():
    at = _app()
    kl = [float(x) for x in at.dataframe[0].value["KL(ref‖p/Σp)"] if x != "nan"]
    assert kl and min(kl) >= 0.0


def test_markdown_in_typed_logits_is_echoed_inert():
    at = _app(source="list", logits="1, [x](https://evil.example) **boom**")
    assert not failures(at)
    (warning,) = at.warning
    assert "](https://evil.example)" in warning.value and not unsafe_markup(warning.value)


def test_page_specific_hostile_links_duplicate_formats_and_oversized_rows():
    at = _app(formats="float16,float16,bfloat16")
    assert not failures(at) and not at.warning
    assert at.session_state["formats"] == ["float16", "bfloat16"] and at.query_params["formats"] == "float16,bfloat16"
    at = _app(source="list", logits=",".join(["1"] * (sm.LIMITS.max_len + 1)))
    assert not failures(at)
    assert f"`{sm.LIMITS.max_len + 1}`" in _warnings(at) and len(_warnings(at)) < 300
    assert len(at.get("plotly_chart")) == CHARTS  # the fallback row runs


def test_the_link_a_view_writes_reopens_the_same_view():
    changed = {
        "source": "generator",
        "gen_length": "40",
        "gen_peak": "12.5",
        "formats": "float16,float8_e4m3fn",
        "loss": "nll",
        "metric": "kl",
        "bars_log": "0",
        "pair_a": "3.5",
    }
    at = _app(**changed)
    link = {k: at.query_params[k] for k in at.query_params}
    again = page_app(PAGE, opened=REFERENCES, **link).run()  # the folds are the reader's, not the link's
    assert not failures(again) and not again.warning
    for key in ("source", "gen_length", "gen_peak", "formats", "loss", "metric", "bars_log", "pair_a", "pair_b"):
        assert again.session_state[key] == at.session_state[key], key
    assert _text(again) == _text(at)
