"""The GradScaler page under Streamlit's AppTest: streaming run, cached redraw, Stop, bad URLs, recipes."""

import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.apptest import failures, page_app

SMALL_RUN = {  # init scale 256: low enough that only injected infs overflow this small model
    "seq": "8",
    "dim": "32",
    "dtype": "fp16",
    "train_steps": "6",
    "inject_inf": "2",
    "init_scale": "256",
    "pace": "fast",
}


def page(**params: str) -> AppTest:
    return page_app("pages/scaler.py", **{**SMALL_RUN, **params})


def charts(at: AppTest) -> list:
    return at.get("plotly_chart")


def test_the_run_streams_then_a_shared_link_redraws_from_the_cache():
    at = page().run()
    assert not failures(at), failures(at)
    _, records = at.session_state["scaler_live"]  # filled step by step while streaming
    assert len(records) == 6
    assert [r.step for r in records if r.skipped] == [2]
    assert len(charts(at)) == 4  # scale, loss, zero fraction, exponent histogram
    assert not at.warning

    again = page(inspect="2").run()  # a second session with the same link: no training, drawn from the cache
    assert not failures(again)
    assert "scaler_live" not in again.session_state
    words = [m.value for m in again.markdown if m.value.startswith("**2:**")]
    assert words and "inf injected" in words[0] and "skipped" in words[0] and "256 → 128" in words[0]


def test_inspector_sentences_follow_the_records():
    at = page(growth_interval="2", init_scale="256").run()
    assert not failures(at)
    at.slider(key="inspect").set_value(1).run()
    line = next(m.value for m in at.markdown if m.value.startswith("**1:**"))
    assert "gradients finite" in line and "parameters updated" in line and "256 → 512" in line
    at.slider(key="inspect").set_value(3).run()
    line = next(m.value for m in at.markdown if m.value.startswith("**3:**"))
    assert "clean steps in a row: 1 of 2" in line


def test_stop_keeps_what_was_measured():
    at = page().run()
    key, records = at.session_state["scaler_live"]
    st.cache_data.clear()  # a stopped run never reaches the cache
    at.session_state["scaler_live"] = (key, records[:3])  # as if Stop (its on_click) fired after step 2
    at.session_state["scaler_stopped"] = key
    at.run()
    assert not failures(at)
    assert any("Stopped after 3 of 6 steps" in i.value for i in at.info)
    assert len(at.session_state["scaler_live"][1]) == 3  # nothing was retrained
    assert len(charts(at)) == 4


def test_run_again_streams_even_when_cached():
    at = page().run()
    at.session_state["scaler_live"] = ("old", [])
    next(b for b in at.button if b.label == "Run again").click().run()
    assert not failures(at)
    assert len(at.session_state["scaler_live"][1]) == 6


def test_bad_url_params_warn_and_run_with_defaults():
    at = page(train_steps="lots", growth_factor="0.5", inject_inf="x,y", loss_mult="3", init_scale="-1").run()
    assert not failures(at), failures(at)
    text = " ".join(w.value for w in at.warning)
    for key in ("train_steps", "growth_factor", "inject_inf", "loss_mult", "init_scale"):
        assert key in text
    assert at.session_state["growth_factor"] == 2.0  # a fresh GradScaler's


def test_bf16_offers_a_switch_to_fp16():
    at = page(dtype="bf16").run()
    assert not failures(at)
    assert at.info
    next(b for b in at.button if b.label == "Switch the sidebar to float16").click().run()
    assert at.session_state["dtype"] == "fp16"


def test_recipes_section_draws_the_comparison():
    at = page(train_steps="4", recipes="1").run()
    assert not failures(at), failures(at)
    assert len(charts(at)) == 5
    table = at.dataframe[0].value
    assert list(table["recipe"]) == [
        "fp32",
        "bf16 autocast, no scaler",
        "fp16 autocast + GradScaler",
        "fp16 autocast, no scaler",
    ]
    assert (table["peak KiB, whole step"] > 0).all()
    assert list(table["skipped steps"]) == ["—"] * 4  # the injected inf of the run above is left out here


def test_injections_beyond_a_short_run_are_kept_in_the_box_but_not_run():
    at = page(inject_inf="2,30").run()
    assert not failures(at) and not at.warning
    assert at.text_input(key="inject_inf").value == "2,30"
    assert any("30" in c.value and "outside this 6-step run" in c.value for c in at.caption)
    _, records = at.session_state["scaler_live"]
    assert [r.step for r in records if r.injected] == [2]
