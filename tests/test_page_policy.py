"""AppTest of the autocast-policy page: side-by-side table, probe, emulation check; bad URLs only warn."""

from dataclasses import replace

import pytest
from streamlit.testing.v1 import AppTest

import mpviz.policy as pol
from tests.apptest import failures, page_app
from tests.hostile import unsafe_markup

PAGE = "mpviz/pages/policy.py"


@pytest.fixture(scope="module", autouse=True)
def _policy_cache(tmp_path_factory):
    """Probe once into a fresh cache dir for this module (the child-process path, not a stale cache)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("MPVIZ_CACHE_DIR", str(tmp_path_factory.mktemp("policy-cache")))
    yield
    mp.undo()


def _app(**params) -> AppTest:
    at = page_app(PAGE, opened=("ref_probe",), **params).run()  # the probe of one call, opened
    assert not failures(at), failures(at)
    return at


def test_the_probe_of_one_call_is_folded_and_built_once_opened_or_when_a_link_sets_it():
    folded = page_app(PAGE).run()
    assert not failures(folded) and len(folded.get("plotly_chart")) == 1  # the counts; no probe strips yet
    linked = page_app(PAGE, function="log_softmax").run()
    assert not failures(linked) and len(linked.get("plotly_chart")) == 3  # the link's probe, shown


def _table(at: AppTest):
    return at.dataframe[0].value


def _text(at: AppTest) -> str:
    return "\n".join(m.value for m in (*at.markdown, *at.caption))


def test_renders_cpu_next_to_cuda_with_what_differs_counted_honestly():
    at = _app()
    assert at.title[0].value == "Autocast policy" and not at.warning
    table = _table(at)
    assert list(table.columns) == ["op", "CPU", "CUDA", "differs"]
    row = table[table["op"] == "aten::softmax.int"].iloc[0]
    assert row["CUDA"] == "fp32_set_opt_dtype" and row["CPU"] == "—" and row["differs"]
    assert not table[table["op"] == "aten::mm"].iloc[0]["differs"]
    cmp = pol.compare_policies(pol.device_policy("cpu"), pol.device_policy("cuda"))
    metrics = {m.label: int(m.value) for m in at.metric if m.value.isdigit()}
    assert len(table) == len(cmp.rows) and int(table["differs"].sum()) == cmp.differ
    assert metrics == {
        "CPU: ops in autocast's policy": len(pol.device_policy("cpu").ops()),
        "CUDA: ops in autocast's policy": len(pol.device_policy("cuda").ops()),
        "ops in either policy": len(cmp.rows),
        "ops marked “differs”": cmp.differ,
    }
    # the count that exceeds either device's total is explained: it is taken over the union of both policies
    explained = f"{cmp.differ} ops marked “differs” are counted among the {len(cmp.rows)} ops in either policy"
    assert explained in _text(at)
    assert f"{cmp.only[0]} are in CPU's policy only, {cmp.only[1]} in CUDA's only" in _text(at)
    assert len(at.get("plotly_chart")) == 3  # counts + one probe strip per device
    assert any(pol.device_policy("cpu").torch_version in m.value for m in at.markdown)  # the torch read from
    # fp32_set_opt_dtype in ops, measured: fp16 softmax needs no cast on CUDA, bf16 softmax is cast first
    text = _text(at)
    assert "CUDA, autocast float16: no cast — `aten._softmax.default` reads float16 and writes float32" in text
    assert "CUDA, autocast bfloat16: a cast runs first (`aten._to_copy.default` bfloat16 → float32)" in text
    assert "none needed a hand-built example" in text  # this CPU build's policies need no notes


def test_search_category_filter_and_only_differences():
    at = _app(search="softmax", differ="1")
    table = _table(at)
    assert len(table) > 0 and table["op"].str.contains("softmax").all() and table["differs"].all()
    at.multiselect(key="categories").set_value(["promote"]).run()
    assert set(_table(at)["op"]) == set()  # no softmax op is a promote op on either device
    at.text_input(key="search").set_value("").run()
    assert {"aten::cat", "aten::addcmul"} <= set(_table(at)["op"])
    assert not failures(at)


def test_probe_an_op_on_both_devices():
    at = _app(function="layer_norm", input0="float16", input1="float16", input2="float16", probe_dtype="bfloat16")
    outs = {m.label: m.value for m in at.metric if m.label.endswith("output dtype")}
    assert outs == {"CPU: output dtype": "float16", "CUDA: output dtype": "float32"}


def test_old_link_keys_open_the_same_view():
    at = _app(q="softmax", cats="fp32_set_opt_dtype", diff="1", fn="log_softmax", pdt="bfloat16", in0="float32")
    s = at.session_state
    assert (s["search"], s["categories"], s["differ"]) == ("softmax", ["fp32_set_opt_dtype"], True)
    assert (s["function"], s["probe_dtype"], s["input0"]) == ("log_softmax", "bfloat16", "float32")
    query = {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}
    assert query == {
        "search": "softmax",
        "categories": "fp32_set_opt_dtype",
        "differ": "1",
        "function": "log_softmax",
        "probe_dtype": "bfloat16",
        "input0": "float32",
    }
    table = _table(at)
    assert "aten::softmax.int" in set(table["op"]) and table["op"].str.contains("softmax").all()
    assert (table["CUDA"] == "fp32_set_opt_dtype").all() and table["differs"].all()


@pytest.mark.parametrize(
    "params, used",
    [({"right": "cpu"}, ("cpu", "cuda")), ({"left": "mps", "right": "mps"}, ("mps", "cuda"))],
)
def test_one_device_compared_with_itself_warns_and_compares_with_another(params, used):
    at = _app(**params)  # both raised StreamlitDuplicateElementKey 'steps_cpu' / 'steps_mps'
    assert (at.session_state["left"], at.session_state["right"]) == used
    assert len(at.warning) == 1 and "with itself" in at.warning[0].value
    assert len(at.get("plotly_chart")) == 3


def test_choosing_the_other_sides_device_in_a_widget_keeps_them_apart():
    at = _app()
    at.selectbox(key="left").set_value("cuda").run()
    assert not failures(at)
    assert (at.session_state["left"], at.session_state["right"]) == ("cuda", "cpu")
    assert "cuda" not in at.selectbox(key="right").options and "CUDA" not in at.selectbox(key="right").options


def test_notes_fixed_casts_and_unclassified_reasons_are_shown_in_words(monkeypatch):
    real = pol.device_policy

    def with_notes(device):
        p = real(device)
        if device != "cuda":
            return p
        cats = dict(p.categories)
        cats["lower_precision_fp"] = (*cats["lower_precision_fp"], "aten::_cudnn_rnn")
        cats["unclassified"] = ("aten::odd_op",)
        notes = {"aten::_cudnn_rnn": ("example_call", "ignores_autocast_dtype"), "aten::odd_op": ("call_failed",)}
        errors = {"aten::odd_op": "RuntimeError: <b>no</b> [link](https://x.example)"}
        return replace(
            p, categories=cats, notes=notes, fixed_cast_dtype={"aten::_cudnn_rnn": "float16"}, probe_errors=errors
        )

    monkeypatch.setattr(pol, "device_policy", with_notes)
    at = _app()
    how = next(d.value for d in at.dataframe if "how it was probed" in d.value.columns)
    rows = {r["op"]: r for r in how.to_dict("records")}
    assert "called with a hand-built example" in rows["aten::_cudnn_rnn"]["how it was probed"]
    assert (
        "casts its float32 inputs to float16 whatever autocast's dtype is"
        in rows["aten::_cudnn_rnn"]["how it was probed"]
    )
    assert rows["aten::odd_op"]["category"] == "unclassified"
    assert "every probe call failed" in rows["aten::odd_op"]["how it was probed"]
    assert rows["aten::odd_op"]["first line of the error"].startswith("RuntimeError")  # a table cell, not markdown


def test_emulation_check_runs_against_fake_cuda():
    at = _app(check="1", dtype="fp16", seq="8", dim="16", heads="2")
    assert at.success and "forward landmarks" in at.success[0].value
    landmarks = at.dataframe[-1].value
    assert landmarks["same"].all() and "probs" in set(landmarks["landmark"])
    assert any("half_to_float" in m.value for m in at.markdown)


def test_garbage_url_parameters_warn_and_fall_back():
    at = _app(left="tpu", categories="nope", function="frobnicate", input0="int8", differ="maybe")
    warnings = " ".join(w.value for w in at.warning)
    for key in ("left=tpu", "categories=nope", "function=frobnicate", "input0=int8", "differ=maybe"):
        assert key in warnings
    s = at.session_state
    assert (s["left"], s["function"], s["input0"], s["differ"]) == ("cpu", "softmax", "float16", False)


def test_a_failed_probe_says_so_without_the_childs_output(monkeypatch):
    def dies(device):
        raise pol.ChildProbeError("the cuda autocast policy", -6, "Traceback /secret/path.py line 1")

    monkeypatch.setattr(pol, "device_policy", dies)
    at = page_app(PAGE).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "exited with code -6" in errors and "/secret/path" not in errors
    assert not any(unsafe_markup(e.value) for e in at.error)
