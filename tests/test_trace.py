"""The tracer and the attention run: real dtypes, exact autocast casts, module paths, landmarks, concurrency."""

import contextlib
import math
import subprocess
import sys
import threading

import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

import mpviz
from mpviz import AttentionConfig, ConfigError, trace, trace_attention
from mpviz.attention import BACKWARD_LANDMARKS, FORWARD_LANDMARKS
from mpviz.emulation import cuda_policy_on_cpu
from mpviz.model import LIMITS, clamp, parse_autocast_dtype, validate
from mpviz.stats import FormatRange, tensor_stats
from mpviz.trace import TraceError


@pytest.fixture(scope="module")
def bf16():
    return trace_attention(AttentionConfig(), "cpu", "bf16")


def _floating_outputs(tr):
    return [o for e in tr.trace.events for o in e.outputs if o.stats is not None]


def test_bf16_q_projection_runs_in_bf16_and_its_input_cast_is_autocasts(bf16):
    q = bf16.trace.landmark_event("q")
    assert q.op == "aten.addmm.default" and q.module == "attn.q_proj"
    assert q.outputs[0].dtype == "bfloat16"
    casts = [e for e in bf16.trace.events if e.module == "attn.q_proj" and e.phase == "forward" and e.autocast_cast]
    # linear's three fp32 arguments (input, weight, bias) are each cast down by autocast, for aten.linear
    assert len(casts) == 3
    assert all(c.op == "aten._to_copy.default" and c.outputs[0].dtype == "bfloat16" for c in casts)
    assert {c.autocast_op for c in casts} == {"aten.linear.default"}


def test_user_casts_are_not_flagged_as_autocasts():
    class UserCast(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return self.lin(x.to(torch.bfloat16).float()).sum()

    model = UserCast()
    with trace(model) as t:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(torch.randn(2, 4))
        loss.backward()
    copies = [e for e in t.events if e.op == "aten._to_copy.default" and e.phase == "forward"]
    user = [e for e in copies if e.module == ""]
    assert len(user) == 2 and not any(e.autocast_cast for e in user)  # x.to(bf16), .float(): the user's
    assert any(e.autocast_cast for e in copies if e.module == "lin")


def test_fp32_parameters_get_float32_gradients_through_the_cast_backward(bf16):
    for name, _ in mpviz.build(AttentionConfig())[0].named_parameters():
        ev = bf16.trace.landmark_event("grad_" + name)
        assert ev.phase == "backward"
        assert ev.outputs[0].dtype == "float32", name
    w = bf16.trace.landmark_event("grad_attn.q_proj.weight")
    assert w.autograd_node == "ToCopyBackward0" and w.autocast_cast  # the gradient of autocast's weight cast


def test_backward_events_carry_module_paths(bf16):
    bwd = [e for e in bf16.trace.events if e.phase == "backward"]
    assert bwd and all(e.autograd_node for e in bwd)
    modules = {e.module for e in bwd}
    assert {
        "attn.q_proj",
        "attn.k_proj",
        "attn.v_proj",
        "attn.out_proj",
        "head",
        "ln",
        "attn",
        "loss",
    } <= modules
    mm = [e for e in bwd if e.module == "attn.k_proj" and e.op == "aten.mm.default"]
    assert mm and all(e.autograd_node == "AddmmBackward0" for e in mm)
    assert bf16.trace.events[mm[0].forward_index].landmark == "k"  # linked to the forward op it differentiates


def test_autocast_off_keeps_every_floating_output_float32():
    r = trace_attention(AttentionConfig(), "cpu", "off")
    assert r.autocast_dtype is None
    assert {o.dtype for o in _floating_outputs(r)} == {"float32"}
    assert not any(e.autocast_cast for e in r.trace.events)


def test_cpu_autocast_leaves_softmax_in_bf16_but_upcasts_the_loss(bf16):
    assert bf16.trace.landmark_event("scores").outputs[0].dtype == "bfloat16"
    assert bf16.trace.landmark_event("probs").outputs[0].dtype == "bfloat16"
    loss_casts = [e for e in bf16.trace.events if e.autocast_op == "aten.cross_entropy_loss.default"]
    assert loss_casts and loss_casts[0].outputs[0].dtype == "float32"
    assert bf16.trace.landmark_event("loss").outputs[0].dtype == "float32"


def test_every_landmark_of_the_story_is_found(bf16):
    names = set(bf16.trace.landmarks)
    assert set(FORWARD_LANDMARKS) <= names and set(BACKWARD_LANDMARKS) <= names
    story = bf16.trace.story()
    assert 15 <= len(story) <= 40
    assert [e.index for e in story] == sorted(e.index for e in story)


def test_sdpa_has_no_scores_or_probs_to_mark():
    r = trace_attention(AttentionConfig(attention="sdpa"), "cpu", "bf16")
    assert "scores" not in r.trace.landmarks and "probs" not in r.trace.landmarks
    assert any("scaled_dot_product" in e.op or "softmax" in e.op for e in r.trace.events)


def test_large_input_scale_with_naive_softmax_overflows_where_the_trace_says():
    r = trace_attention(AttentionConfig(input_scale=10, softmax="naive"), "cpu", "fp16")
    first = r.trace.first_nonfinite()
    assert first is not None and first.op == "aten.exp.default" and first.phase == "forward"
    out = first.outputs[0].stats
    assert out.posinf > 0
    earlier = r.trace.events[: first.index]
    assert not any(e.creates_nonfinite for e in earlier)
    # the -inf of the causal mask came in as a scalar argument: not counted as created
    masked = r.trace.landmark_event("scores")
    assert masked.outputs[0].stats.neginf > 0 and not masked.creates_nonfinite


def test_stable_softmax_stays_finite_at_the_same_scale():
    r = trace_attention(AttentionConfig(input_scale=10, softmax="torch"), "cpu", "fp16")
    assert r.trace.first_nonfinite() is None


def test_reference_error_is_zero_without_autocast_and_positive_with_it(bf16):
    off = trace_attention(AttentionConfig(), "cpu", "off")
    assert off.reference_error["probs"].rel < 1e-5
    assert bf16.reference_error["probs"].rel > 1e-4  # bf16 keeps 8 significant bits
    assert bf16.reference_error["x"].max_abs == 0.0  # x is fp32 in both runs, exact


def test_stats_measure_ranges_from_finfo():
    fp16 = FormatRange.of(torch.float16)
    assert fp16.max == torch.finfo(torch.float16).max
    # Checked on float32 inputs: torch casts float64 → float16 via float32, which rounds twice.
    over = torch.tensor(fp16.overflow_at, dtype=torch.float32)
    under = torch.tensor(fp16.underflow_at, dtype=torch.float32)
    assert over.half().isinf() and not torch.nextafter(over, torch.tensor(0.0)).half().isinf()
    assert under.half() == 0 and torch.nextafter(under, torch.tensor(1.0)).half() > 0
    s = tensor_stats(torch.tensor([0.0, 1e-30, 1.0, 70000.0, float("inf"), float("nan")]))
    assert (s.nan, s.posinf, s.zero) == (1, 1, 1)
    assert s.overflow_frac["float16"] == pytest.approx(1 / 6)  # 70000 (inf already is inf)
    assert s.underflow_frac["float16"] == pytest.approx(1 / 6)  # 1e-30
    assert s.underflow_frac["bfloat16"] == 0.0
    assert dict(s.log2_hist)[0] == 1  # 1.0 is 2^0


def test_limits_are_enforced_in_the_engine():
    with pytest.raises(ConfigError) as e:
        validate(AttentionConfig(seq_len=LIMITS.max_seq_len + 1))
    assert e.value.field == "seq_len"
    with pytest.raises(ConfigError):
        validate(AttentionConfig(d_model=64, n_heads=5))
    with pytest.raises(ConfigError):
        trace_attention(AttentionConfig(seq_len=LIMITS.fp16_cpu_max_seq_len + 1), "cpu", "fp16")
    with pytest.raises(ConfigError):
        trace_attention(AttentionConfig(), "cpu", "xyz")
    fixed, errors = clamp(AttentionConfig(seq_len=99999, n_heads=5), "cpu", torch.float16)
    assert fixed.seq_len == LIMITS.fp16_cpu_max_seq_len and fixed.n_heads == 4 and len(errors) == 3


def _signature(r):
    return [
        (e.op, e.module, e.phase, e.autocast_cast, e.landmark, tuple((o.dtype, o.stats) for o in e.outputs))
        for e in r.trace.events
    ]


def test_two_threads_tracing_at_once_match_sequential_runs():
    jobs = [(AttentionConfig(seed=1), "bf16"), (AttentionConfig(seed=2, causal=False, n_heads=2), "fp16")]
    sequential = [_signature(trace_attention(c, "cpu", d)) for c, d in jobs]
    results: list = [None, None]
    barrier = threading.Barrier(2)

    def work(i):
        barrier.wait()
        results[i] = _signature(trace_attention(jobs[i][0], "cpu", jobs[i][1]))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert results == sequential
    # and a plain untraced autocast run in this thread is unaffected by the kernels the tracer installed
    model, x, _ = mpviz.build(AttentionConfig())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert model.head(x).dtype == torch.bfloat16


# ── the op list is the program's own ────────────────────────────────────────────────────────────────────────
class _OpNames(TorchDispatchMode):
    """The bare minimum: names of the ops that run, no references kept, no python dispatcher."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(f"{func.namespace}.{func._opname}.{func._overloadname}")
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize(
    ("cfg", "device", "dtype"),
    [
        (AttentionConfig(), "cpu", "bf16"),
        (AttentionConfig(attention="sdpa"), "cpu", "fp16"),
        (AttentionConfig(), "cuda-sim", "bf16"),
    ],
)
def test_tracing_with_statistics_runs_exactly_the_ops_the_program_runs(cfg, device, dtype):
    """No bookkeeping op leaks into the trace, and holding no tensor keeps autograd's choices (buffer reuse,
    in-place accumulation) what they are untraced."""
    traced = trace_attention(cfg, device, dtype)
    model, x, targets = mpviz.build(cfg)
    bare = _OpNames()
    emulation = cuda_policy_on_cpu() if device == "cuda-sim" else contextlib.nullcontext()
    with emulation, bare:
        with torch.autocast("cpu", dtype=parse_autocast_dtype(dtype)):
            loss = model(x, targets)
        loss.backward()
    assert [e.op for e in traced.trace.events] == bare.ops


# ── creating inf/nan is arithmetic, not masking ─────────────────────────────────────────────────────────────
@pytest.mark.parametrize("dtype", ["off", "bf16", "fp16"])
def test_sdpa_causal_mask_is_not_counted_as_creating_infinities(dtype):
    r = trace_attention(AttentionConfig(attention="sdpa", causal=True), "cpu", dtype)
    assert r.trace.first_nonfinite() is None
    if dtype == "off":  # the math path does fill its mask from a -inf: it is there, just not created
        assert any(o.stats.neginf for e in r.trace.events for o in e.outputs if o.stats is not None)


def test_fp16_naive_softmax_first_creates_infinity_at_the_exp():
    r = trace_attention(AttentionConfig(softmax="naive", input_scale=4), "cpu", "fp16")
    first = r.trace.first_nonfinite()
    assert first is not None and first.op == "aten.exp.default" and first.outputs[0].stats.posinf > 0


# ── module paths, nesting, odd tensors, devices ─────────────────────────────────────────────────────────────
class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.lin(x))


class _Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([_Block(), _Block()])
        self.heads = nn.ModuleDict({"out": nn.Linear(4, 2)})

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.heads["out"](x).sum()


def test_module_paths_are_named_modules_names_forward_and_backward():
    model = _Nested()
    with trace(model) as t:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(torch.randn(3, 4))
        loss.backward()
    names = {n for n, _ in model.named_modules()}
    for phase in ("forward", "backward"):
        modules = {e.module for e in t.events if e.phase == phase}
        assert modules <= names, modules - names
        assert {"blocks.0.lin", "blocks.1.lin", "heads.out"} <= modules, (phase, modules)
    relu = [e for e in t.events if e.op == "aten.relu.default"]
    assert [e.module for e in relu] == ["blocks.0", "blocks.1"]


def test_a_nested_trace_raises_and_leaves_no_hooks():
    model = _Nested()
    with trace(model), pytest.raises(RuntimeError, match="nested"), trace(model):
        pass
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())


def test_zero_size_tensors_are_traced_with_empty_statistics():
    model = nn.Linear(4, 3)
    with trace(model) as t:
        y = model(torch.randn(0, 4, requires_grad=True))
        y.sum().backward()
    out = next(e for e in t.events if e.op == "aten.addmm.default").outputs[0]
    assert out.shape == (0, 3) and out.stats.numel == 0 and math.isnan(out.stats.mean)
    assert out.sample is not None and out.sample.size == 0


def test_the_op_past_max_events_stops_the_block_and_each_op_is_reported():
    model = nn.Sequential(*(nn.Linear(3, 3) for _ in range(50)))
    seen = []
    with pytest.raises(TraceError) as e, trace(model, max_events=20, on_event=lambda n, p: seen.append((n, p))) as t:
        model(torch.randn(2, 3)).sum().backward()
    assert e.value.code == "too_many_events" and e.value.field == "max_events"
    assert len(t.events) == 21 and seen == [(n, "forward") for n in range(1, 21)]  # the 21st raised, unreported
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())
    with trace(model, on_event=lambda n, p: seen.append((n, p))) as t:  # nothing of the stopped trace is left
        model(torch.randn(2, 3)).sum().backward()
    phases = [p for _, p in seen[20:]]
    assert len(phases) == len(t.events) and phases == sorted(phases, key=["forward", "backward"].index)


@pytest.mark.parametrize("device", ["meta", "mps", "gpu0", "xla"])
def test_unsupported_devices_raise_a_trace_error_with_a_code(device):
    with pytest.raises(TraceError) as e, trace(nn.Linear(2, 2), device=device):
        pass
    assert e.value.code == "unsupported_device" and e.value.field == "device" and "cpu" in e.value.choices


def test_a_meta_model_needs_keep_stats_off():
    model = nn.Linear(4, 4, device="meta")
    with pytest.raises(TraceError) as e, trace(model):
        pass
    assert e.value.code == "no_values" and e.value.field == "model"
    x = torch.empty(2, 4, device="meta")
    with trace(model, keep_stats=False) as t:
        model(x)
    assert [e.op for e in t.events] == ["aten.t.default", "aten.addmm.default"]
    with pytest.raises(TraceError) as e, trace(nn.Linear(4, 4)):  # values asked of a meta tensor mid-trace
        torch.empty(3, device="meta") * 2
    assert e.value.code == "no_values" and e.value.field == "tensor"


# ── concurrency: first use, the emulation, backward elsewhere ───────────────────────────────────────────────
_FIRST_USE_RACE = """
import importlib, threading, time, torch
from torch import nn
tracer = importlib.import_module("mpviz.trace")
real, names = torch._C._dispatch_has_kernel_for_dispatch_key, torch._C._dispatch_get_all_op_names
def slow(name, key):  # another thread's first scan, slowed down so the trace starts in the middle of it
    time.sleep(0.0002)
    return real(name, key)
torch._C._dispatch_has_kernel_for_dispatch_key = slow
torch._C._dispatch_get_all_op_names = lambda: sorted(names(), key=lambda n: n == "aten::linear")  # linear last
scan = threading.Thread(target=tracer.install_autocast_kernels, args=("cpu",))
scan.start()
while not tracer._installed:
    time.sleep(0.001)
model = nn.Linear(4, 4)
with tracer.trace(model) as t:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        model(torch.randn(2, 4))
scan.join()
print(sum(e.autocast_cast for e in t.events))
"""


def test_a_trace_that_starts_during_another_threads_first_scan_sees_every_cast():
    out = subprocess.run([sys.executable, "-c", _FIRST_USE_RACE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "3"  # linear's input, weight and bias


def test_public_trace_never_sees_the_cuda_policy_of_an_emulation_in_flight():
    registered, done = threading.Event(), threading.Event()

    def emulate():
        with cuda_policy_on_cpu():
            registered.set()
            done.wait(0.5)  # long enough for the trace below to run if nothing held it back

    other = threading.Thread(target=emulate)
    other.start()
    registered.wait(10)
    x = torch.randn(4, 4)
    with trace(nn.Identity()) as t, torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.softmax(x.bfloat16(), dim=-1)
    done.set()
    other.join()
    assert y.dtype == torch.bfloat16  # CPU's policy: softmax runs in what arrives (CUDA's would give float32)
    assert not any(e.autocast_cast for e in t.events)


def test_backward_on_another_thread_is_reported_as_unrecorded():
    model = nn.Linear(4, 4)
    with trace(model) as t:
        loss = model(torch.randn(2, 4)).sum()
        worker = threading.Thread(target=loss.backward)
        worker.start()
        worker.join()
    assert t.backward_unrecorded and not any(e.phase == "backward" for e in t.events)
    assert model.weight.grad is not None
    with trace(model) as t:
        model(torch.randn(2, 4)).sum().backward()
    assert not t.backward_unrecorded and any(e.phase == "backward" for e in t.events)


# ── sources: exact and deterministic ────────────────────────────────────────────────────────────────────────
def test_q_reads_x_norm_through_exactly_one_autocast_cast(bf16):
    t = bf16.trace
    x_norm, q = t.landmarks["x_norm"], t.landmark_event("q")
    assert x_norm not in q.sources
    via = [s for s in q.sources if isinstance(s, int) and x_norm in t.events[s].sources]
    assert len(via) == 1
    cast = t.events[via[0]]
    assert cast.autocast_cast and cast.op == "aten._to_copy.default" and cast.sources == (x_norm,)
    assert (cast.inputs[0].dtype, cast.outputs[0].dtype) == ("float32", "bfloat16")
    weight_t = next(t.events[s] for s in q.sources if isinstance(s, int) and t.events[s].op == "aten.t.default")
    assert t.events[weight_t.sources[0]].sources == ("attn.q_proj.weight",)  # the parameter, cast, transposed


def test_sources_are_the_same_run_after_run_and_after_a_cuda_sim_run(bf16):
    first = [e.sources for e in bf16.trace.events]
    trace_attention(AttentionConfig(), "cuda-sim", "bf16")
    again = trace_attention(AttentionConfig(), "cpu", "bf16")
    assert [e.sources for e in again.trace.events] == first
    assert [e.is_view for e in again.trace.events] == [e.is_view for e in bf16.trace.events]
    assert {e.op for e in again.trace.events if e.is_view} >= {"aten.view.default", "aten.transpose.int"}
