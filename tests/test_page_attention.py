"""AppTest of the step-through page: renders for every dtype, steps move, bad URLs warn instead of failing."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import failures, page_app

PAGE = "pages/attention.py"


def _app(**params) -> AppTest:
    return page_app(PAGE, **params).run()


def _title(at: AppTest) -> str:
    return at.subheader[0].value


@pytest.mark.parametrize("dtype", ["off", "fp16", "bf16"])
def test_renders_for_every_autocast_dtype(dtype):
    at = _app(dtype=dtype)
    assert not failures(at)
    assert at.session_state["dtype"] == dtype
    assert at.get("plotly_chart"), "the page draws its plots"


def test_next_and_previous_change_the_shown_op():
    at = _app()
    first = _title(at)
    at.button[[b.label for b in at.button].index("Next ▶")].click().run()
    assert not failures(at)
    assert at.session_state["step"] == 1 and _title(at) != first
    at.slider(key="step").set_value(5).run()
    assert at.session_state["step"] == 5
    at.button[[b.label for b in at.button].index("◀ Previous")].click().run()
    assert at.session_state["step"] == 4


def test_full_op_list_keeps_the_current_op():
    at = _app(step="3")
    story_title = _title(at)
    at.segmented_control(key="view").set_value("full").run()
    assert not failures(at)
    assert _title(at) == story_title  # same op, now located in the full list
    assert at.session_state["step"] > 3


def test_garbage_url_parameters_warn_and_fall_back():
    at = _app(dtype="xyz", step="-4", seq="99999", heads="abc", scale="nan")
    assert not failures(at)
    warnings = " ".join(w.value for w in at.warning)
    assert "dtype=xyz" in warnings and "`seq_len` = `99999`" in warnings and "heads=abc" in warnings
    assert at.session_state["dtype"] == "bf16" and at.session_state["seq"] == 512
    assert at.session_state["step"] == 0


def test_fp16_ceiling_is_explained_not_crashed():
    at = _app(dtype="fp16", seq="512")
    assert not failures(at)
    assert at.session_state["seq"] == 256
    assert any("fp16 on CPU" in w.value for w in at.warning)


def test_overflow_is_announced_with_a_jump_button():
    at = _app(dtype="fp16", softmax="naive", scale="10")
    assert not failures(at)
    assert any("inf/nan first appears" in e.value for e in at.error)
    assert any("CUDA (emulated on CPU)**'s autocast policy it first appears" in e.value for e in at.error)
    jump = next(b for b in at.button if b.label.startswith("Jump to op"))
    jump.click().run()
    assert at.session_state["view"] == "full"
    assert "aten.exp" in _title(at)


def test_sdpa_explains_the_missing_heatmap():
    at = _app(attn="sdpa")
    assert not failures(at)
    assert any("SDPA" in i.value for i in at.info)


def test_cpu_and_cuda_policies_are_compared_where_they_differ():
    at = _app(dtype="bf16", step="6")  # story step 6: probs
    assert "probs" in " ".join(m.value for m in at.markdown)
    line = next(m.value for m in at.markdown if "autocast policy this op" in m.value)
    assert "bfloat16" in line and "float32" in line  # CPU keeps softmax in bf16, CUDA's policy upcasts it


def test_cuda_sim_is_labelled_as_emulated():
    at = _app(device="cuda-sim", dtype="fp16", step="20")  # a backward step
    assert not failures(at)
    captions = " ".join(c.value for c in at.caption)
    assert "computed on CPU" in captions and "backward is emulated" in captions


def test_an_overflow_that_cuda_policy_avoids_is_said_so():
    # scores reach ~18: past fp16's exp limit (~11.09) but not float32's (~88.7), where CUDA's policy runs exp
    at = _app(dtype="fp16", softmax="naive", scale="4")
    assert not failures(at)
    assert any("the same run stays finite" in e.value for e in at.error)


def test_a_failed_policy_probe_is_reported_not_raised(monkeypatch):
    import mpviz.attention
    from mpviz.policy import ChildProbeError

    def probe_dies(device):
        raise ChildProbeError(f"the {device} autocast policy", -6, "Aborted (core dumped)")

    monkeypatch.setattr(mpviz.attention, "_policy_map", probe_dies)
    at = _app()
    assert not failures(at)
    assert any("Probing autocast's policy failed" in e.value for e in at.error)
