"""Autocast policy probing: matches the installed torch's own header, classifies everything, caches safely."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mpviz import policy as pol
from mpviz import policy_probe as probe
from mpviz.__main__ import main

HEADER = Path(os.path.dirname(torch.__file__)) / "include" / "ATen" / "autocast_mode.h"
HEADER_LISTS = {
    "LOWER_PRECISION_FP": "lower_precision_fp",
    "FP32": "fp32",
    "FP32_SET_OPT_DTYPE": "fp32_set_opt_dtype",
    "PROMOTE": "promote",
}


def header_policy() -> dict[str, str]:
    """op name → category, from the AT_FORALL_* macro lists of the installed autocast_mode.h."""
    text = HEADER.read_text()
    found: dict[str, str] = {}
    for m in re.finditer(r"#define AT_FORALL_(\w+)\(_\)((?:[^\n]*\\\n)*[^\n]*)", text):
        name, body = m.group(1), m.group(2).replace("\\\n", " ")
        if name in HEADER_LISTS:
            for e in re.finditer(r"_\((\w+)(?:,\s*(\w+))?\)", body):
                op = f"aten::{e.group(1)}" + (f".{e.group(2)}" if e.group(2) else "")
                found[op] = HEADER_LISTS[name]
        elif name == "DIFFERENT_REDISPATCH_SIGNATURE":  # _(ADD_NS(norm), "norm.Scalar", sig, sig, policy)
            for entry in body.split("_(ADD_NS(")[1:]:
                op = re.search(r'"([\w.]+)"', entry).group(1)
                found[f"aten::{op}"] = re.findall(r"(\w+)\s*\)\s*$", entry.strip())[0]
    return found


@pytest.fixture(scope="module")
def cuda() -> pol.DevicePolicy:
    return probe.probe_policy("cuda")


@pytest.fixture(scope="module")
def cpu() -> pol.DevicePolicy:
    return probe.probe_policy("cpu")


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MPVIZ_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_header_is_parsed_into_every_category():
    header = header_policy()
    counts = {c: sum(v == c for v in header.values()) for c in set(header.values())}
    assert set(counts) == {"lower_precision_fp", "fp32", "fp32_set_opt_dtype", "fp32_append_dtype", "promote"}
    assert all(n >= 2 for n in counts.values()), counts
    assert header["aten::softmax.int"] == "fp32_set_opt_dtype"
    assert header["aten::norm.Scalar"] == "fp32_append_dtype"


def test_probed_cuda_policy_matches_the_installed_header(cuda):
    """Every op the header lists is in CUDA's probed policy, same category; extras come from the .cpp."""
    header = header_policy()
    wrong = {op: (cat, cuda.category_of(op)) for op, cat in header.items() if cuda.category_of(op) != cat}
    assert wrong == {}
    extra = set(cuda.ops()) - set(header)
    assert len(extra) <= 10, extra  # registered in autocast_mode.cpp only (banned ops, cudnn convolutions)
    assert "aten::binary_cross_entropy" in cuda.categories["banned"]
    assert "unsafe to autocast" in cuda.banned_messages["aten::binary_cross_entropy"]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_every_op_at_the_autocast_key_gets_exactly_one_category(device, cpu, cuda):
    p = {"cpu": cpu, "cuda": cuda}[device]
    key = next(b.dispatch_key for b in pol.autocast_backends() if b.device == device)
    assert sorted(p.ops()) == pol.policy_ops(key)
    assert len(p.ops()) == len(set(p.ops())) == sum(p.counts().values())
    assert pol.UNCLASSIFIED not in p.categories
    assert p.torch_version == torch.__version__
    assert {code for codes in p.notes.values() for code in codes} <= set(pol.PROBE_NOTES)
    assert set(p.fixed_cast_dtype) == {op for op, codes in p.notes.items() if "ignores_autocast_dtype" in codes}


def test_cudnn_rnn_is_probed_with_arguments_that_fit_together():
    """CUDA builds register aten::_cudnn_rnn at AutocastCUDA; its kernel asserts on a weight count that schema
    defaults cannot give. The hand-built LSTM call reaches its casts; on a CPU build (no such kernel) the same
    call runs through the meta kernel and nothing is cast."""
    op = torch.ops.aten._cudnn_rnn.default
    probed = probe.classify(op, "cuda", torch.float16)
    assert "example_call" in probed.notes and probed.error is None
    if torch._C._dispatch_has_kernel_for_dispatch_key("aten::_cudnn_rnn", "AutocastCUDA"):  # a CUDA build
        assert probed.category == "lower_precision_fp"
        assert "ignores_autocast_dtype" in probed.notes and probed.fixed_cast_dtype == "float16"  # even under bf16
    else:
        assert (probed.category, probed.notes) == (pol.UNCLASSIFIED, ("example_call", "no_rule_fired"))


def test_an_op_no_rule_fits_stays_unclassified_with_a_reason(monkeypatch):
    add = probe.classify(torch.ops.aten.add.Tensor, "cuda", torch.float16)  # not in any policy: type promotion only
    assert (add.category, add.notes) == (pol.UNCLASSIFIED, ("no_rule_fired",))

    def refuse(op, device, dtypes):
        raise RuntimeError("no example fits\nsecond line")

    monkeypatch.setitem(probe.EXAMPLE_CALLS, "aten::mm", refuse)
    mm = probe.classify(torch.ops.aten.mm.default, "cpu", torch.bfloat16)
    assert (mm.category, mm.notes, mm.error) == (
        pol.UNCLASSIFIED,
        ("example_call", "call_failed"),
        "RuntimeError: no example fits",
    )


def test_an_op_name_python_cannot_resolve_is_reported_not_dropped(monkeypatch):
    monkeypatch.setattr(probe, "policy_ops", lambda key: ["aten::mm", "aten::no_such_op_here"])
    p = probe.probe_policy("cpu")
    assert p.categories["lower_precision_fp"] == ("aten::mm",)
    assert p.categories[pol.UNCLASSIFIED] == ("aten::no_such_op_here",)
    assert p.notes == {"aten::no_such_op_here": ("unknown_overload",)}
    assert pol.DevicePolicy.from_dict(json.loads(json.dumps(p.to_dict()))) == p


def test_cpu_and_cuda_differ_where_the_lesson_says(cpu, cuda):
    assert cuda.category_of("aten::softmax.int") == "fp32_set_opt_dtype"
    assert cpu.category_of("aten::softmax.int") is None
    assert cuda.category_of("aten::layer_norm") == "fp32" and cpu.category_of("aten::layer_norm") is None
    for op in ("aten::mm", "aten::bmm", "aten::linear", "aten::matmul", "aten::scaled_dot_product_attention"):
        assert cpu.category_of(op) == cuda.category_of(op) == "lower_precision_fp", op
    rows = {r.op: r for r in pol.policy_table([cpu, cuda])}
    assert rows["aten::softmax.int"].differs and not rows["aten::mm"].differs
    assert rows["aten::cat"].categories == ("promote", None)


def test_a_comparison_counts_the_union_and_says_how_each_op_differs(cpu, cuda):
    cmp = pol.compare_policies(cpu, cuda)
    assert len(cmp.rows) == len(set(cpu.ops()) | set(cuda.ops())) > max(len(cpu.ops()), len(cuda.ops()))
    assert cmp.only == (len(set(cpu.ops()) - set(cuda.ops())), len(set(cuda.ops()) - set(cpu.ops())))
    both = set(cpu.ops()) & set(cuda.ops())
    assert cmp.both_differ + cmp.both_same == len(both)
    assert cmp.both_differ == sum(cpu.category_of(op) != cuda.category_of(op) for op in both) > 0
    assert cmp.differ == sum(r.differs for r in cmp.rows) and cmp.devices == ("cpu", "cuda")
    with pytest.raises(ValueError, match="itself"):
        pol.compare_policies(cpu, cpu)


def test_other_autocast_backends_are_listed_and_probeable_ones_classify():
    backends = {b.device: b for b in pol.autocast_backends()}
    assert {"cpu", "cuda"} <= set(backends) and backends["cuda"].n_ops > 50
    for device in pol.probeable_devices():
        if device not in ("cpu", "cuda"):
            p = probe.probe_policy(device)
            assert sum(p.counts().values()) == backends[device].n_ops


@pytest.mark.slow  # the one real child probe: an interpreter that imports torch and probes every op
def test_device_policy_probes_in_a_child_then_reads_the_disk_cache(cache, cpu, monkeypatch):
    pol._device_policy.cache_clear()
    assert pol.device_policy("cpu") == cpu
    files = list(cache.glob("autocast-policy-cpu-*.json"))
    assert len(files) == 1 and torch.__version__ in files[0].name

    def no_child(device):
        raise AssertionError("must not probe again")

    monkeypatch.setattr(pol, "_probe_in_child", no_child)
    pol._device_policy.cache_clear()
    assert pol.device_policy("cpu") == cpu  # from disk
    assert pol.device_policy("cpu") is pol.device_policy("cpu")  # then from memory


BROKEN_CACHES = {
    "categories_list": lambda d: {**d, "categories": []},
    "categories_empty": lambda d: {**d, "categories": {}},
    "categories_all_empty": lambda d: {**d, "categories": {c: [] for c in d["categories"]}},
    "unknown_category": lambda d: {**d, "categories": {**d["categories"], "fp8_always": ["aten::mm"]}},
    "ops_not_a_list": lambda d: {**d, "categories": {"fp32": "aten::exp"}},
    "wrong_torch_version": lambda d: {**d, "torch_version": "1.0.0"},
    "wrong_device": lambda d: {**d, "device": "cuda"},
    "old_probe_version": lambda d: {**d, "probe_version": 1},
    "not_a_mapping": lambda d: [d],
    "missing_field": lambda d: {k: v for k, v in d.items() if k != "autocast_dtype"},
}


@pytest.mark.parametrize("damage", [*BROKEN_CACHES, "truncated_json"])
def test_a_cache_file_that_fails_the_schema_is_discarded_logged_and_reprobed(damage, cache, cpu, monkeypatch, caplog):
    path = pol._cache_file("cpu")
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(cpu.to_dict())
    path.write_text(
        text[: len(text) // 2] if damage == "truncated_json" else json.dumps(BROKEN_CACHES[damage](cpu.to_dict()))
    )
    probes = []
    monkeypatch.setattr(pol, "_probe_in_child", lambda device: probes.append(device) or cpu)
    pol._device_policy.cache_clear()
    with caplog.at_level("WARNING", logger="mpviz.policy"):
        assert pol.device_policy("cpu") == cpu
    assert probes == ["cpu"]
    warning = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warning) == 1 and "discarding autocast policy cache" in warning[0].getMessage()
    assert pol.read_cached_policy(path, "cpu") == cpu  # rewritten with the fresh probe
    pol._device_policy.cache_clear()


def test_a_good_cache_file_is_read_without_a_warning(cache, cpu, monkeypatch, caplog):
    path = pol._cache_file("cpu")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(cpu.to_dict()))
    monkeypatch.setattr(pol, "_probe_in_child", lambda device: pytest.fail("must not probe"))
    pol._device_policy.cache_clear()
    with caplog.at_level("WARNING", logger="mpviz.policy"):
        assert pol.device_policy("cpu") == cpu
    assert not caplog.records
    pol._device_policy.cache_clear()


def test_a_child_that_aborts_raises_instead_of_killing_us(tmp_path, monkeypatch):
    (tmp_path / "mpviz_abort_probe.py").write_text("import os\nos.abort()\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    with pytest.raises(pol.ChildProbeError) as e:
        pol.run_child("mpviz_abort_probe")
    assert e.value.returncode != 0


def test_unknown_devices_are_refused():
    with pytest.raises(ValueError, match="tpu"):
        pol.device_policy("tpu")
    with pytest.raises(ValueError):
        probe.probe_policy("maia")  # has an autocast key, but fake tensors never reach it


@pytest.fixture
def probed_here(cache, cpu, cuda, monkeypatch) -> Iterator[None]:
    """An empty policy cache whose probes run in this process (the module's probes): the CLI reads the policy that
    `device_policy` returns, which a child computes with the same `probe_policy` (the child test above checks it)."""
    monkeypatch.setattr(pol, "_probe_in_child", {"cpu": cpu, "cuda": cuda}.__getitem__)
    pol._device_policy.cache_clear()
    yield
    pol._device_policy.cache_clear()


def test_cli_policy_json_on_a_cpu_only_machine(probed_here, capsys):
    assert main(["policy", "--device", "cuda", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["device"] == "cuda" and data["torch"] == torch.__version__
    assert "aten::mm" in data["categories"]["lower_precision_fp"]
    assert "aten::softmax.int" in data["categories"]["fp32_set_opt_dtype"]
    assert {"notes", "probe_errors", "fixed_cast_dtype"} <= set(data)


def test_cli_policy_table_and_bad_device(probed_here, capsys):
    assert main(["policy", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "aten::cat" in out and "promote" in out and torch.__version__ in out
    assert main(["policy", "--device", "tpu"]) == 2
    assert "tpu" in capsys.readouterr().err


# ── probing one function ────────────────────────────────────────────────────────────────────────────────────
def test_softmax_in_fp16_comes_out_fp32_on_cuda_only():
    cuda = pol.probe_call("softmax", ["float16"], "cuda", "float16")
    cpu = pol.probe_call("softmax", ["float16"], "cpu", "float16")
    assert cuda.fake and not cpu.fake
    assert (cuda.output_dtype, cpu.output_dtype) == ("float32", "float16")
    assert cuda.output_dtype_without_autocast == "float16"


def test_cross_entropy_surprise_on_cuda():
    """CUDA runs log_softmax in fp16 and casts only for nll_loss; CPU casts the logits first."""
    cuda = pol.probe_call("cross_entropy", ["float16"], "cuda", "float16")
    ops = [(s.op, s.inputs, s.outputs) for s in cuda.steps]
    i = next(i for i, o in enumerate(ops) if o[0] == "aten._log_softmax.default")
    assert ops[i][2] == ("float16",)
    assert ops[i + 1][0] == "aten._to_copy.default" and ops[i + 1][2] == ("float32",)
    cpu = pol.probe_call("cross_entropy", ["float16"], "cpu", "float16")
    assert cpu.steps[0].is_cast and cpu.steps[0].outputs == ("float32",)


def test_set_opt_dtype_softmax_needs_a_cast_under_bf16_only():
    """fp32_set_opt_dtype: autocast casts nothing; CUDA's softmax reads fp16 in its kernel, but bf16 is cast first."""
    fp16 = pol.probe_call("softmax", ["float16"], "cuda", "float16")
    bf16 = pol.probe_call("softmax", ["bfloat16"], "cuda", "bfloat16")
    assert fp16.casts_before_compute == ()
    assert [(s.op, s.inputs, s.outputs) for s in bf16.casts_before_compute] == [
        ("aten._to_copy.default", ("bfloat16",), ("float32",))
    ]
    assert fp16.steps[0].op == bf16.steps[1].op == "aten._softmax.default"
    assert fp16.output_dtype == bf16.output_dtype == "float32"


def test_matmul_inputs_are_cast_down_on_both_devices():
    for device in ("cpu", "cuda"):
        p = pol.probe_call("matmul", ["float32", "float32"], device, "bfloat16")
        assert p.output_dtype == "bfloat16" and sum(s.is_cast for s in p.steps) == 2


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(sorted(pol.PROBE_FUNCTIONS)),
    dtypes=st.lists(st.sampled_from(pol.PROBE_INPUT_DTYPES), min_size=3, max_size=3),
    low=st.sampled_from(["float16", "bfloat16"]),
    device=st.sampled_from(["cpu", "cuda"]),
)
def test_probe_call_reports_rather_than_raises(name, dtypes, low, device):
    n = len(pol.PROBE_FUNCTIONS[name].inputs)
    p = pol.probe_call(name, dtypes[:n], device, low)
    assert (p.output_dtype is None) == (p.error is not None)
    assert all(s.op.startswith("aten.") for s in p.steps)
    assert all(s.is_cast == (s.op == "aten._to_copy.default") for s in p.steps)


def test_probe_call_refuses_bad_requests():
    with pytest.raises(ValueError):
        pol.probe_call("nope", ["float32"], "cpu", "float16")
    with pytest.raises(ValueError):
        pol.probe_call("softmax", ["float32", "float32"], "cpu", "float16")
    with pytest.raises(ValueError):
        pol.probe_call("softmax", ["int8"], "cpu", "float16")
    with pytest.raises(ValueError):
        pol.probe_call("softmax", ["float32"], "cpu", "float32")
