"""CUDA's autocast policy applied to CPU tensors: real values and real autograd, CUDA's casting decisions.

Inside `cuda_policy_on_cpu()`, every op in CUDA's or CPU's autocast policy gets a Python kernel at the
AutocastCPU dispatch key that does what the AutocastCUDA kernel does, using CUDA's *probed* category for the
op (`mpviz.policy.device_policy("cuda")`); ops that only CPU's policy handles pass straight through. So a CPU
run under `torch.autocast("cpu", dtype)` casts exactly where a GPU would, and the tracer sees those casts as
autocast's.

What it cannot be (listed as data below, shown by the app): the real GPU's kernels. Where CUDA fuses a cast
into an op, the CPU needs a separate cast (`OP_DIFFERENCES`); SDPA runs its math path, because a GPU picks
flash/efficient/cudnn by hardware and shape; and the backward is emulated — CUDA's backward cannot be traced
on a CPU build at all. `fake_cuda_forward` runs the forward on fake CUDA tensors under real AutocastCUDA
dispatch: the reference `check_emulation` compares the emulation with.

The kernels are process-wide: the context holds `autocast_exclusive()` for as long as they are registered,
so no concurrent CPU autocast run that holds `autocast_shared()` can be affected: mpviz's own runs and every
`mpviz.trace` on a CPU device do. Plain `torch.autocast("cpu")` code run outside mpviz.trace on another thread
meanwhile is not protected (see `mpviz.isolation`).
"""

from __future__ import annotations

import functools
import json
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch import nn

# Private: the dispatch keys name the AutocastCPU slot we fill with CUDA's policy; a rename fails this import.
from torch._C import DispatchKey, DispatchKeySet

# Private: fake CUDA tensors let CPU run CUDA's kernels' dtype logic; if it moves, the emulation's import fails.
from torch._subclasses.fake_tensor import FakeTensorMode

from mpviz.isolation import autocast_exclusive
from mpviz.model import AttentionConfig, build, parse_autocast_dtype
from mpviz.policy import DevicePolicy, autocast_state, device_policy, policy_ops, resolve_op, run_child
from mpviz.stats import dtype_name
from mpviz.trace import OpEvent, Trace, install_autocast_kernels, trace

_KEY = DispatchKey.AutocastCPU
# Private: the keys below autocast, for redispatching past it; if it changes, tests/test_emulation.py fails.
_BELOW_AUTOCAST = torch._C._dispatch_keyset_full_after(_KEY)
# Overriding AutocastCPU kernels is the point here; torch's one-time warning about it tells nothing new.
warnings.filterwarnings("ignore", message="Warning only once for all operators", category=UserWarning)


# ── what the emulation cannot reproduce, as data ────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class OpDifference:
    """One op (or short run of ops) a fake-CUDA forward runs, and what the emulation runs in its place."""

    code: str  # stable id the view translates: "softmax_half_to_float"
    cuda: tuple[str, ...]  # ATen ops on CUDA: ("aten._softmax.default",)
    emulated: tuple[str, ...]  # ATen ops in the emulation; `align` demands the same dtypes in and out


OP_DIFFERENCES: tuple[OpDifference, ...] = (
    # CUDA's softmax reads fp16 and writes fp32 in one kernel (half_to_float); the CPU kernel casts first.
    OpDifference(
        "softmax_half_to_float",
        ("aten._softmax.default",),
        ("aten._to_copy.default", "aten._softmax.default"),
    ),
    OpDifference(
        "log_softmax_half_to_float",
        ("aten._log_softmax.default",),
        ("aten._to_copy.default", "aten._log_softmax.default"),
    ),
    # A reshape that has to copy: one build reports _unsafe_view where the other reports view.
    OpDifference("view_vs_unsafe_view", ("aten._unsafe_view.default",), ("aten.view.default",)),
    # Autograd keeps tensors for the backward (detach); the fake-CUDA reference has no autograd.
    OpDifference("autograd_detach", (), ("aten.detach.default",)),
)
# Limits that are not a rewrite of ops: codes the view explains next to an emulated trace.
EMULATION_LIMITS = (
    "backward_emulated",  # no CPU build can trace CUDA's backward (fake CUDA has no autograd)
    "sdpa_math_path",  # a GPU picks flash/efficient/cudnn SDPA kernels by hardware and shape; shown: math
)
# SDPA's math path: the kernel the emulation runs for scaled_dot_product_attention, labelled as such.
SDPA_OP = "aten::scaled_dot_product_attention"
SDPA_EMULATED_WITH = torch.ops.aten._scaled_dot_product_attention_math.default


# ── the kernels ─────────────────────────────────────────────────────────────────────────────────────────────
def _eligible(t: object) -> bool:
    """What autocast may cast: a floating CPU tensor that is not float64 (CUDA's rule, with CPU for CUDA)."""
    return isinstance(t, torch.Tensor) and t.device.type == "cpu" and t.is_floating_point() and t.dtype != torch.float64


def _cast(value: object, dtype: torch.dtype) -> object:
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    return value.to(dtype) if _eligible(value) and value.dtype != dtype else value


def _tensors(values) -> Iterator[torch.Tensor]:
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from (t for t in v if isinstance(t, torch.Tensor))
        elif isinstance(v, torch.Tensor):
            yield v


def _prioritize(current: torch.dtype, t: torch.Tensor, low: torch.dtype) -> torch.dtype:
    """One step of autocast's promote rule: float32 wins, the low dtype alone stays, float64 is ignored,
    and any other mix of floating dtypes (fp16 with bf16) is an error, as in the C++ kernel."""
    if not _eligible(t):
        return current
    if torch.float32 in (current, t.dtype):
        return torch.float32
    if current == t.dtype == low:
        return low
    raise RuntimeError(f"Unexpected floating ScalarType in autocast's promote: {t.dtype} with {current}")


# torch._ops.OpOverload (private module, public type of torch.ops.aten.x.y) and its `_schema`: the argument list is
# how fp32_append_dtype's overload is found; if it changes, emulated fp32_append_dtype ops raise LookupError.
def _with_dtype_overload(op: torch._ops.OpOverload) -> torch._ops.OpOverload:
    """The overload fp32_append_dtype redispatches to: same arguments plus a trailing `dtype`."""
    names = [a.name for a in op._schema.arguments] + ["dtype"]
    for overload in op.overloadpacket.overloads():
        candidate = getattr(op.overloadpacket, overload)
        if [a.name for a in candidate._schema.arguments] == names:
            return candidate
    raise LookupError(f"no overload of {op} takes an extra dtype")


def _kernel(op: torch._ops.OpOverload, name: str, category: str | None, policy: DevicePolicy):
    """An AutocastCPU kernel doing what AutocastCUDA does for `op` (category None: pass through untouched)."""
    if category is None:
        return lambda keyset, *args, **kwargs: op.redispatch(keyset & _BELOW_AUTOCAST, *args, **kwargs)
    target = _with_dtype_overload(op) if category == "fp32_append_dtype" else op
    if name == SDPA_OP:
        target = SDPA_EMULATED_WITH
    dtype_index = next((i for i, a in enumerate(op._schema.arguments) if a.name == "dtype"), None)

    def kernel(keyset, *args, **kwargs):
        if category == "banned":
            raise RuntimeError(policy.banned_messages.get(name, f"{name} is banned under CUDA autocast"))
        # Private: what torch's own autocast kernels do to not re-enter themselves; if gone, this kernel recurses.
        with torch._C._ExcludeDispatchKeyGuard(DispatchKeySet(_KEY)):
            low = torch.get_autocast_dtype("cpu")
            first_eligible = bool(args) and _eligible(args[0])
            if category in ("lower_precision_fp", "fp32", "promote"):
                to = torch.float32 if category == "fp32" else low
                if category == "promote":
                    for t in _tensors([*args, *kwargs.values()]):
                        to = _prioritize(to, t, low)
                args, kwargs = _cast(args, to), {k: _cast(v, to) for k, v in kwargs.items()}
            elif category == "fp32_set_opt_dtype" and first_eligible:
                if dtype_index is not None and dtype_index < len(args):
                    args = (*args[:dtype_index], args[dtype_index] or torch.float32, *args[dtype_index + 1 :])
                elif kwargs.get("dtype") is None:
                    kwargs = {**kwargs, "dtype": torch.float32}
            elif category == "fp32_append_dtype":
                kwargs = {**kwargs, "dtype": torch.float32 if first_eligible else args[0].dtype}
            out = target(*args, **kwargs)
        return out[0] if target is SDPA_EMULATED_WITH else out

    return kernel


@functools.cache
def _cpu_policy_ops() -> tuple[str, ...]:
    """The ops with a C++ AutocastCPU kernel (fixed for the process; read before any of ours is registered)."""
    return tuple(policy_ops(_KEY.name))


@contextmanager
def cuda_policy_on_cpu(policy: DevicePolicy | None = None) -> Iterator[DevicePolicy]:
    """While inside, CPU autocast applies CUDA's casting decisions (`policy`; default: CUDA's probed one).

    Holds `autocast_exclusive()` from before the kernels are registered until after they are removed, so
    plain CPU autocast runs of other threads wait rather than see them. Yields the policy being applied.
    """
    policy = policy or device_policy("cuda")
    with autocast_exclusive():
        categories = {op: cat for cat, ops in policy.categories.items() for op in ops}
        lib = torch.library.Library("aten", "IMPL")
        try:
            names = sorted(set(categories) | set(_cpu_policy_ops()))
            for name in names:
                op = resolve_op(name)
                if op is not None:
                    kernel = _kernel(op, name, categories.get(name), policy)
                    lib.impl(name, kernel, _KEY.name, with_keyset=True)
            # The tracer wraps the newly covered ops too (exp, softmax…), so it flags their casts.
            install_autocast_kernels("cpu", names)
            yield policy
        finally:
            lib._destroy()


# ── the reference: a forward on fake CUDA tensors under the real AutocastCUDA kernels ───────────────────────
def fake_cuda_forward(cfg: AttentionConfig, dtype: torch.dtype | None) -> Trace:
    """Forward of the attention block on fake CUDA tensors under CUDA autocast(`dtype`), traced (dtypes only).

    No values (fake tensors have none) and no backward: a fake CUDA tensor that requires grad aborts the
    process on a CPU build, so parameters are plain tensors here. Run it in a child process where an abort
    must not hurt (as `check_emulation` does).
    """
    model, x, targets = build(cfg)
    with FakeTensorMode():
        for module in model.modules():
            for pname, p in list(module._parameters.items()):
                module._parameters[pname] = nn.Parameter(torch.empty(p.shape, device="cuda"), requires_grad=False)
        x_cuda = torch.empty(x.shape, device="cuda")
        targets_cuda = torch.zeros(targets.shape, dtype=torch.int64, device="cuda")
        with autocast_state("cuda", dtype), trace(model, device="cuda", keep_stats=False) as t:
            model(x_cuda, targets_cuda)
    t.autocast_dtype = dtype_name(dtype) if dtype is not None else None
    return t


# ── checking the emulation against the reference ────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class Step:
    """One forward op, reduced to what the check compares."""

    op: str  # "aten.addmm.default"
    inputs: tuple[str, ...]  # tensor input dtypes
    outputs: tuple[str, ...]
    landmark: str | None = None

    @classmethod
    def of(cls, e: OpEvent) -> Step:
        return cls(e.op, tuple(i.dtype for i in e.inputs), tuple(o.dtype for o in e.outputs), e.landmark)


@dataclass(frozen=True)
class EmulationCheck:
    """A cuda-sim forward next to a fake-CUDA forward of the same config: landmarks and ops, aligned."""

    autocast_dtype: str
    landmarks: dict[str, tuple[str, str]]  # forward landmark → (dtype on fake CUDA, dtype emulated)
    differences: dict[str, int]  # OpDifference code → how many times the alignment needed it
    mismatch: tuple[Step | None, Step | None] | None  # first pair of ops no rule explains; None: all aligned

    @property
    def ok(self) -> bool:
        return self.mismatch is None and all(c == e for c, e in self.landmarks.values())


def forward_steps(t: Trace) -> list[Step]:
    """The forward ops up to the loss, without fake tensors' prim::device queries."""
    end = t.landmarks.get("loss", len(t.events) - 1)
    return [Step.of(e) for e in t.events[: end + 1] if e.phase == "forward" and not e.op.startswith("prim.")]


def align(cuda: Sequence[Step], emulated: Sequence[Step]) -> tuple[dict[str, int], tuple | None]:
    """Walk both op lists together; equal ops match, OP_DIFFERENCES explain the rest.

    Returns (difference code → count, first unexplained (cuda step, emulated step) or None).
    A difference applies only where the dtypes entering and leaving it agree on both sides.
    """
    used: dict[str, int] = {}
    i = j = 0
    while i < len(cuda) or j < len(emulated):
        c = cuda[i] if i < len(cuda) else None
        e = emulated[j] if j < len(emulated) else None
        if c is not None and e is not None and (c.op, c.inputs, c.outputs) == (e.op, e.inputs, e.outputs):
            i, j = i + 1, j + 1
            continue
        for d in OP_DIFFERENCES:
            cs, es = cuda[i : i + len(d.cuda)], emulated[j : j + len(d.emulated)]
            if tuple(s.op for s in cs) != d.cuda or tuple(s.op for s in es) != d.emulated:
                continue
            if cs and (cs[0].inputs != es[0].inputs or cs[-1].outputs != es[-1].outputs):
                continue
            if not cs and any(s.inputs != s.outputs for s in es):  # an insertion must not change a dtype
                continue
            used[d.code] = used.get(d.code, 0) + 1
            i, j = i + len(d.cuda), j + len(d.emulated)
            break
        else:
            return used, (c, e)
    return used, None


def check_emulation(emulated: Trace, cfg: AttentionConfig) -> EmulationCheck:
    """Compare an emulated (cuda-sim) trace of `cfg` with a fake-CUDA forward run in a child process."""
    dtype = emulated.autocast_dtype or "off"
    reference = run_child("mpviz.emulation", json.dumps(cfg.to_dict()), dtype)
    cuda = [Step(r["op"], tuple(r["inputs"]), tuple(r["outputs"]), r["landmark"]) for r in reference["steps"]]
    used, mismatch = align(cuda, forward_steps(emulated))
    landmarks = {
        name: (
            cuda_dtype,
            emulated.landmark_event(name).outputs[0].dtype if name in emulated.landmarks else "—",
        )
        for name, cuda_dtype in reference["landmarks"].items()
    }
    return EmulationCheck(dtype, landmarks, used, mismatch)


if __name__ == "__main__":  # child process of `check_emulation`: the fake-CUDA forward's steps as JSON
    _cfg = AttentionConfig.from_dict(json.loads(sys.argv[1]))
    _trace = fake_cuda_forward(_cfg, parse_autocast_dtype(sys.argv[2]))
    _marks = {name: _trace.landmark_event(name).outputs[0].dtype for name in _trace.landmarks}
    print(json.dumps({"steps": [s.__dict__ for s in forward_steps(_trace)], "landmarks": _marks}))
