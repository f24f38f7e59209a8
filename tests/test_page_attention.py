"""AppTest of the attention lesson page: it hands the stepper one bundle per run config, and bad URLs warn.

What the browser does with the bundle is tested in tests/test_stepper.py; the bundle itself in tests/test_bundle.py.
"""

import json

from streamlit.testing.v1 import AppTest

from mpviz.app import text
from mpviz.bundle import lesson_bundle
from mpviz.model import AttentionConfig
from tests.apptest import failures, page_app
from tests.hostile import unsafe_markup

PAGE = "mpviz/pages/attention.py"


def _app(**params) -> AppTest:
    return page_app(PAGE, **params).run()


def _bundle(at: AppTest) -> dict:
    (mount,) = at.get("bidi_component")
    return json.loads(mount.proto.bytes)["bundle"]


def test_the_page_mounts_the_lesson_bundle_of_the_sidebar_run_and_no_server_side_controls():
    at = _app(dtype="fp16", device="cuda-sim", seq="8", dim="16", heads="2")
    assert not failures(at)
    got = _bundle(at)
    want = lesson_bundle(AttentionConfig(seq_len=8, d_model=16, n_heads=2), "cuda-sim", "fp16").data
    assert got == want
    assert not at.get("plotly_chart") and not at.button and not at.slider  # stepping lives in the browser
    sidebar_code = [c.value for c in at.sidebar.code]
    assert sidebar_code == []  # the component's "Copy link" is this page's link (it holds the step)


def test_garbage_url_parameters_warn_and_fall_back():
    at = _app(dtype="xyz", seq="99999", heads="abc", scale="nan", device="x` [a](https://evil.example) `")
    assert not failures(at)
    warnings = " ".join(w.value for w in at.warning)
    assert "dtype=xyz" in warnings and "`seq_len` = `99999`" in warnings and "heads=abc" in warnings
    assert all(not unsafe_markup(w.value) for w in at.warning)  # echoed as inert code, never a link
    assert at.session_state["dtype"] == "bf16" and at.session_state["seq"] == 512
    assert at.session_state["device"] == "cpu"


def test_fp16_ceiling_is_explained_not_crashed():
    at = _app(dtype="fp16", seq="512")
    assert not failures(at)
    assert at.session_state["seq"] == 256
    assert any("fp16 on CPU" in w.value for w in at.warning)


def test_a_failed_policy_probe_is_reported_not_raised(monkeypatch):
    import mpviz.attention
    from mpviz.policy import ChildProbeError

    def probe_dies(device):
        raise ChildProbeError(f"the {device} autocast policy", -6, "Aborted (core dumped)")

    monkeypatch.setattr(mpviz.attention, "policy_map", probe_dies)
    at = _app()
    assert not failures(at)
    words = text.load("en", "common")["probe_error"].split("{")[0]
    assert any(words in e.value for e in at.error)
