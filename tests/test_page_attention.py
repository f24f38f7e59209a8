"""AppTest of the step-through page: renders for every dtype, steps move, bad URLs warn instead of failing."""

import pytest
from streamlit.testing.v1 import AppTest

PAGE = "pages/attention.py"


def _app(**params) -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=180)
    for k, v in params.items():
        at.query_params[k] = v
    at.switch_page(PAGE)
    return at.run()


def _title(at: AppTest) -> str:
    return at.subheader[0].value


@pytest.mark.parametrize("dtype", ["off", "fp16", "bf16"])
def test_renders_for_every_autocast_dtype(dtype):
    at = _app(dtype=dtype)
    assert not at.exception
    assert at.session_state["dtype"] == dtype
    assert at.get("plotly_chart"), "the page draws its plots"


def test_next_and_previous_change_the_shown_op():
    at = _app()
    first = _title(at)
    at.button[[b.label for b in at.button].index("Next ▶")].click().run()
    assert not at.exception
    assert at.session_state["step"] == 1 and _title(at) != first
    at.slider(key="step").set_value(5).run()
    assert at.session_state["step"] == 5
    at.button[[b.label for b in at.button].index("◀ Previous")].click().run()
    assert at.session_state["step"] == 4


def test_full_op_list_keeps_the_current_op():
    at = _app(step="3")
    story_title = _title(at)
    at.segmented_control(key="view").set_value("full").run()
    assert not at.exception
    assert _title(at) == story_title  # same op, now located in the full list
    assert at.session_state["step"] > 3


def test_garbage_url_parameters_warn_and_fall_back():
    at = _app(dtype="xyz", step="-4", seq="99999", heads="abc", scale="nan")
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "dtype=xyz" in warnings and "seq_len=99999" in warnings and "heads=abc" in warnings
    assert at.session_state["dtype"] == "bf16" and at.session_state["seq"] == 512
    assert at.session_state["step"] == 0


def test_fp16_ceiling_is_explained_not_crashed():
    at = _app(dtype="fp16", seq="512")
    assert not at.exception
    assert at.session_state["seq"] == 256
    assert any("fp16 on CPU" in w.value for w in at.warning)


def test_overflow_is_announced_with_a_jump_button():
    at = _app(dtype="fp16", softmax="naive", scale="10")
    assert not at.exception
    assert any("inf/nan first appears" in e.value for e in at.error)
    jump = next(b for b in at.button if b.label.startswith("Jump to op"))
    jump.click().run()
    assert at.session_state["view"] == "full"
    assert "aten.exp" in _title(at)


def test_sdpa_explains_the_missing_heatmap():
    at = _app(attn="sdpa")
    assert not at.exception
    assert any("SDPA" in i.value for i in at.info)
