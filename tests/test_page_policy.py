"""AppTest of the autocast-policy page: side-by-side table, probe, emulation check; bad URLs only warn."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import failures, page_app

PAGE = "pages/policy.py"


@pytest.fixture(scope="module", autouse=True)
def _policy_cache(tmp_path_factory):
    """Probe once into a fresh cache dir for this module (the child-process path, not a stale cache)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("MPVIZ_CACHE_DIR", str(tmp_path_factory.mktemp("policy-cache")))
    yield
    mp.undo()


def _app(**params) -> AppTest:
    return page_app(PAGE, **params).run()


def _table(at: AppTest):
    return at.dataframe[0].value


def test_renders_cpu_next_to_cuda_with_differences_highlighted():
    at = _app()
    assert not failures(at), failures(at)
    assert at.title[0].value == "Autocast policy"
    table = _table(at)
    assert list(table.columns) == ["op", "CPU", "CUDA", "differs"]
    row = table[table["op"] == "aten::softmax.int"].iloc[0]
    assert row["CUDA"] == "fp32_set_opt_dtype" and row["CPU"] == "—" and row["differs"]
    assert not table[table["op"] == "aten::mm"].iloc[0]["differs"]
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["ops whose category differs"]) == int(table["differs"].sum()) > 0
    assert int(metrics["CPU: ops in autocast's policy"]) > 50
    assert int(metrics["CUDA: ops in autocast's policy"]) > 50
    assert len(at.get("plotly_chart")) == 3  # counts + one probe strip per device
    assert any("2." in m.value and "torch" in m.value for m in at.markdown)  # the torch version read from


def test_search_category_filter_and_only_differences():
    at = _app(q="softmax", diff="1")
    table = _table(at)
    assert len(table) > 0 and table["op"].str.contains("softmax").all() and table["differs"].all()
    at.multiselect(key="cats").set_value(["promote"]).run()
    table = _table(at)
    assert set(table["op"]) == set()  # no softmax op is a promote op on either device
    at.text_input(key="q").set_value("").run()
    table = _table(at)
    assert "aten::cat" in set(table["op"]) and "aten::addcmul" in set(table["op"])
    assert not failures(at)


def test_probe_an_op_on_both_devices():
    at = _app(fn="layer_norm", in0="float16", in1="float16", in2="float16", pdt="bfloat16")
    assert not failures(at)
    outs = {m.label: m.value for m in at.metric if m.label.endswith("output dtype")}
    assert outs == {"CPU: output dtype": "float16", "CUDA: output dtype": "float32"}


def test_emulation_check_runs_against_fake_cuda():
    at = _app(check="1", dtype="fp16", seq="8", dim="16", heads="2")
    assert not failures(at), failures(at)
    assert at.success and "forward landmarks" in at.success[0].value
    landmarks = at.dataframe[1].value
    assert landmarks["same"].all() and "probs" in set(landmarks["landmark"])
    assert any("half_to_float" in m.value for m in at.markdown)


def test_garbage_url_parameters_warn_and_fall_back():
    at = _app(left="tpu", cats="nope", fn="frobnicate", in0="int8", diff="maybe")
    assert not failures(at)
    warnings = " ".join(w.value for w in at.warning)
    for key in ("left=tpu", "cats=nope", "fn=frobnicate", "in0=int8", "diff=maybe"):
        assert key in warnings
    s = at.session_state
    assert (s["left"], s["fn"], s["in0"], s["diff"]) == ("cpu", "softmax", "float16", False)
