"""The fp8 lesson under Streamlit's AppTest: the recipe and outlier in the URL, the real fp8 op named for the
recipes whose GEMMs are one, the emulation labelled for the others, and the stepper on request."""

import json

import pytest

from mpviz.app import text
from tests.apptest import failures, page_app

pytestmark = pytest.mark.shared_results
WORDS = text.load("en", "fp8")


def _said(at) -> str:
    return " ".join(m.value for m in (*at.markdown, *at.caption, *at.info))


def test_tensorwise_with_an_outlier_names_the_fp8_op_and_what_was_flushed():
    at = page_app("mpviz/pages/fp8.py", recipe="tensorwise", outlier="1000000").run()
    assert not failures(at), failures(at)
    said = _said(at)
    assert "`aten._scaled_mm.default`" in said and "`float8_e4m3fn` [32, 64]" in said
    assert WORDS["outlier_caption"]["tensorwise"] in said
    assert WORDS["outlier_heading"] in [h.value for h in at.subheader]
    assert at.query_params["outlier"] == "1000000"


def test_block_scaled_recipe_is_labelled_an_emulation_and_the_stepper_shows_its_ops():
    at = page_app("mpviz/pages/fp8.py", recipe="mxfp8").run()
    assert not failures(at), failures(at)
    assert any("emulation" in i.value for i in at.info)
    at.toggle(key="fp8_stepper").set_value(True).run()
    assert not failures(at), failures(at)
    (mount,) = at.get("bidi_component")
    ops = {e["op"] for e in json.loads(mount.proto.bytes)["bundle"]["events"]}
    assert "aten.mm.default" in ops and "aten._to_copy.default" in ops


def test_bad_recipe_and_outlier_in_the_link_fall_back_with_a_warning():
    at = page_app("mpviz/pages/fp8.py", recipe="fp4", outlier="3").run()
    assert not failures(at), failures(at)
    assert len(at.warning) == 2 and at.session_state["recipe"] == "tensorwise" and at.session_state["outlier"] == 1.0
