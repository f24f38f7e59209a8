"""CUDA's policy emulated on CPU: fake-CUDA dtypes, real values, isolated from concurrent plain CPU runs."""

from __future__ import annotations

import json
import re
import threading

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from mpviz import emulation as emu
from mpviz.__main__ import main
from mpviz.attention import available_devices, trace_attention
from mpviz.bundle import build_bundle
from mpviz.isolation import autocast_shared
from mpviz.model import LIMITS, AttentionConfig, ConfigError
from mpviz.policy import PROBE_FUNCTIONS, PROBE_INPUT_DTYPES, probe_call
from mpviz.serialize import dumps

SMALL = AttentionConfig(seq_len=8, d_model=16, n_heads=2, vocab=8)


def _steps(t) -> list[tuple]:
    return [(e.phase, e.op, [i.dtype for i in e.inputs], [o.dtype for o in e.outputs]) for e in t.events]


@pytest.mark.parametrize(("attention", "dtype"), [("manual", "fp16"), ("manual", "bf16"), ("sdpa", "fp16")])
def test_emulated_forward_has_fake_cuda_dtypes_at_every_landmark(attention, dtype):
    cfg = SMALL.replace(attention=attention)
    emulated = trace_attention(cfg, "cuda-sim", dtype)
    check = emu.check_emulation(emulated.trace, cfg)
    assert check.mismatch is None, check.mismatch
    assert check.landmarks and all(c == e for c, e in check.landmarks.values()), check.landmarks
    assert check.ok
    expected = {"x", "x_norm", "q", "k", "v", "context", "out", "logits", "loss"}
    assert expected <= set(check.landmarks)
    if (attention, dtype) == ("manual", "fp16"):  # CUDA's one-kernel fp16 → fp32 softmax
        assert check.differences.get("softmax_half_to_float") == 1
    assert set(check.differences) <= {d.code for d in emu.OP_DIFFERENCES}


def test_cuda_sim_shows_cudas_dtype_flow_with_real_values():
    cpu, sim = trace_attention(SMALL, "cpu", "fp16"), trace_attention(SMALL, "cuda-sim", "fp16")
    assert sim.device == sim.trace.device == "cuda-sim"
    probs = sim.trace.landmark_event("probs").outputs[0]
    assert probs.dtype == "float32" and probs.stats is not None and probs.stats.max > 0  # real numbers
    assert cpu.trace.landmark_event("probs").outputs[0].dtype == "float16"
    assert sim.reference_error["probs"].max_abs < 1e-2  # real values, compared with float64
    # The cross-entropy surprise: CUDA's log_softmax stays fp16, autocast casts its output up for nll_loss.
    loss_ops = [e for e in sim.trace.events if e.module == "loss" and e.phase == "forward"]
    i = next(i for i, e in enumerate(loss_ops) if e.op == "aten._log_softmax.default")
    assert loss_ops[i].outputs[0].dtype == "float16"
    cast = next(e for e in loss_ops[i + 1 :] if e.op == "aten._to_copy.default")
    assert cast.autocast_cast and cast.outputs[0].dtype == "float32"
    assert any(e.phase == "backward" for e in sim.trace.events)  # the emulated backward ran


def test_the_bundle_names_what_differs_between_the_devices():
    cpu, sim = trace_attention(SMALL, "cpu", "bf16"), trace_attention(SMALL, "cuda-sim", "bf16")
    b = build_bundle(cpu, sim).data
    nodes = {n["id"]: n for n in b["graph"]["nodes"]}
    assert (nodes["probs"]["dtype"], nodes["probs"]["other_dtype"]) == ("bfloat16", "float32")
    assert "other_dtype" not in nodes["x_norm"]
    assert not any("other_dtype" in n for n in build_bundle(cpu, cpu).data["graph"]["nodes"])
    by_op = {(e["module"], e["op"]): (e["out"][0]["dtype"], e.get("other_dtype")) for e in b["events"]}
    assert by_op[("loss", "aten._log_softmax.default")] == ("float32", "bfloat16")
    assert by_op[("attn", "aten._softmax.default")] == ("bfloat16", "float32")


def test_sdpa_under_cuda_sim_runs_the_math_path():
    sim = trace_attention(SMALL.replace(attention="sdpa"), "cuda-sim", "bf16")
    ops = {e.op for e in sim.trace.events}
    assert "aten._safe_softmax.default" in ops
    assert not any("flash_attention" in op for op in ops)
    assert "sdpa_math_path" in emu.EMULATION_LIMITS


def test_cuda_sim_is_always_offered_and_keeps_cpus_fp16_limits():
    assert "cuda-sim" in available_devices()
    with pytest.raises(ConfigError):
        trace_attention(SMALL.replace(seq_len=LIMITS.fp16_cpu_max_seq_len + 1), "cuda-sim", "fp16")


@settings(max_examples=20, deadline=None)
@given(
    name=st.sampled_from(sorted(PROBE_FUNCTIONS)),
    dtypes=st.lists(st.sampled_from(PROBE_INPUT_DTYPES), min_size=3, max_size=3),
    low=st.sampled_from(["float16", "bfloat16"]),
)
def test_every_probe_function_gets_fake_cudas_output_dtype(name, dtypes, low):
    spec = PROBE_FUNCTIONS[name]
    dtypes = dtypes[: len(spec.inputs)]
    cuda = probe_call(name, dtypes, "cuda", low)
    shapes = [shape for _, shape in spec.inputs]
    inputs = [torch.rand(shape).to(getattr(torch, d)) for shape, d in zip(shapes, dtypes, strict=True)]
    inputs += [torch.zeros(shape, dtype=torch.int64) for shape in spec.int_inputs]
    got, error = None, ""
    with emu.cuda_policy_on_cpu(), torch.autocast("cpu", dtype=getattr(torch, low)):
        try:
            got = str(spec.call(*inputs).dtype).removeprefix("torch.")
        except RuntimeError as e:
            error = str(e)
    if cuda.error or got is not None:
        assert got == cuda.output_dtype, (name, dtypes, low, error)
    else:  # fake tensors skip the kernels' own dtype checks; the real CPU kernel ran them
        assert re.search(r"dtype|scalar type", error, re.I), error


def test_banned_ops_raise_like_cuda_and_kernels_are_gone_afterwards():
    p, t = torch.rand(4), torch.rand(4)
    with emu.cuda_policy_on_cpu(), torch.autocast("cpu", dtype=torch.float16):
        assert torch._C._dispatch_has_kernel_for_dispatch_key("aten::exp", "AutocastCPU")
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(p, t)
    assert not torch._C._dispatch_has_kernel_for_dispatch_key("aten::exp", "AutocastCPU")
    with autocast_shared(), torch.autocast("cpu", dtype=torch.float16):
        assert F.binary_cross_entropy(p, t).dtype == torch.float32  # CPU's own policy allows it
        assert torch.softmax(p.half(), 0).dtype == torch.float16


def test_the_emulation_holds_the_exclusive_lock_while_registered():
    inside, entered = threading.Event(), threading.Event()
    seen_kernel: list[bool] = []

    def plain_run():
        inside.wait()
        with autocast_shared():
            seen_kernel.append(torch._C._dispatch_has_kernel_for_dispatch_key("aten::exp", "AutocastCPU"))
            entered.set()

    reader = threading.Thread(target=plain_run)
    reader.start()
    with emu.cuda_policy_on_cpu():
        inside.set()
        assert not entered.wait(0.3), "a plain CPU run got in while the CUDA kernels were registered"
    assert entered.wait(10)
    reader.join()
    assert seen_kernel == [False]


def test_plain_cpu_traces_are_the_same_before_and_after_an_emulated_one():
    before = dumps(trace_attention(SMALL, "cpu", "bf16").trace)
    trace_attention(SMALL, "cuda-sim", "bf16")
    assert dumps(trace_attention(SMALL, "cpu", "bf16").trace) == before


def test_concurrent_cpu_and_cuda_sim_traces_equal_sequential_ones():
    jobs = [("cpu", "bf16"), ("cuda-sim", "bf16"), ("cpu", "fp16"), ("cuda-sim", "fp16")] * 2
    sequential = {job: trace_attention(SMALL, *job) for job in set(jobs)}
    results: list = [None] * len(jobs)
    start = threading.Barrier(len(jobs))

    def run(i: int) -> None:
        start.wait()
        results[i] = trace_attention(SMALL, *jobs[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for job, got in zip(jobs, results, strict=True):
        want = sequential[job]
        assert _steps(got.trace) == _steps(want.trace), job  # dtype sequence, op by op
        assert dumps(got.trace) == dumps(want.trace), job  # every stat, every cast flag, every landmark
        assert dumps(got.reference_error) == dumps(want.reference_error), job
    assert _steps(sequential[("cpu", "bf16")].trace) != _steps(sequential[("cuda-sim", "bf16")].trace)


def test_cli_trace_on_cuda_sim(capsys):
    args = ["trace", "--device", "cuda-sim", "--dtype", "fp16", "--seq", "8", "--dim", "16", "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["device"] == "cuda-sim" and data["autocast_dtype"] == "float16"
    probs = data["events"][data["landmarks"]["probs"]]
    assert probs["outputs"][0]["dtype"] == "float32"


def test_align_applies_only_listed_differences():
    step = emu.Step
    cuda = [step("aten._softmax.default", ("float16",), ("float32",))]
    emulated = [
        step("aten._to_copy.default", ("float16",), ("float32",)),
        step("aten._softmax.default", ("float32",), ("float32",)),
        step("aten.detach.default", ("float32",), ("float32",)),
    ]
    assert emu.align(cuda, emulated) == ({"softmax_half_to_float": 1, "autograd_detach": 1}, None)
    wrong = [step("aten._softmax.default", ("float16",), ("float16",))]
    _, mismatch = emu.align(cuda, wrong)
    assert mismatch == (cuda[0], wrong[0])
