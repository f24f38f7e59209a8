"""Trace every ATen op of any nn.Module's forward and backward, with dtypes, autocast's casts and value stats.

    with mpviz.trace(model, device="cpu") as t:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(x)
        loss.backward()
    t.events  # [OpEvent, ...] in execution order

How it sees what it sees:
- A TorchDispatchMode sits below autocast and autograd, so it receives every op that really runs, the
  `_to_copy` casts autocast inserted and every backward op.
- Autocast's casts are told apart exactly, not guessed from dtypes: a Python kernel at the Autocast dispatch key
  notes which tensors enter an autocast-handled op; a `_to_copy` of one of them before that op's first compute
  op is autocast's. Given the device's probed policy (op → category), the cast must also go where that
  category sends it (the low dtype, or float32): an op's own first step that upcasts its inputs (SDPA's math
  path) is then not mistaken for autocast's. In backward, the gradient of such a cast is flagged too.
- Module paths: forward hooks keep a module stack; for backward, each module's forward span of autograd
  sequence numbers is kept, and the node running an op is attributed to the innermost span holding it.

Contract for concurrency: everything process-global here (the Autocast-key Python kernels) does nothing unless
the *current thread* is tracing; hooks are per model and the dispatch mode and python dispatcher are
thread-local. Two threads tracing at once therefore get the same events as two sequential traces.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np
import torch
from torch import nn
from torch._C import DispatchKey
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes
from torch.utils._pytree import tree_flatten

from mpviz import landmarks
from mpviz.stats import TensorStats, dtype_name, sample_values, tensor_stats

AUTOCAST_KEYS = {"cpu": DispatchKey.AutocastCPU, "cuda": DispatchKey.AutocastCUDA}
_TO_COPY = torch.ops.aten._to_copy.default

# Sample caps (elements kept per tensor for heatmaps and the element picker).
LANDMARK_SAMPLE = {"max_side": 128, "max_mats": 16}
OTHER_SAMPLE = {"max_side": 32, "max_mats": 4}


@dataclass(frozen=True)
class TensorInfo:
    dtype: str  # torch's name without the prefix: "bfloat16"
    shape: tuple[int, ...]
    stats: TensorStats | None = field(default=None, metadata={"omit_none": True})  # floating outputs only
    sample: np.ndarray | None = field(default=None, repr=False, compare=False, metadata={"omit_none": True})


@dataclass(frozen=True)
class OpEvent:
    index: int
    phase: str  # "forward" | "backward"
    module: str  # dotted path ("attn.q_proj"); "" is the traced model itself
    op: str  # "aten.addmm.default"
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]
    autocast_cast: bool  # a cast autocast inserted (forward) or the gradient of one (backward)
    autocast_op: str | None  # the autocast-handled op this cast fed ("aten.linear.default")
    autograd_node: str | None  # backward only: "AddmmBackward0"
    forward_index: int | None  # backward only: the forward event whose gradient this op computes, when known
    landmark: str | None = None
    creates_nonfinite: bool = False  # output has more nan/inf than its tensor inputs, not via a non-finite scalar
    # Where each tensor input came from, aligned with `inputs`: the index of the event that produced it, the
    # name of the parameter it is, or None (the model's input data, or a tensor made outside the trace).
    sources: tuple[int | str | None, ...] = ()


@dataclass
class Trace:
    """The events of one traced region, filled while it runs. Read it after the `with` block."""

    device: str
    autocast_dtype: str | None = None
    events: list[OpEvent] = field(default_factory=list)
    landmarks: dict[str, int] = field(default_factory=dict)  # name → event index (the event that produced it)

    def landmark_event(self, name: str) -> OpEvent:
        return self.events[self.landmarks[name]]

    def story(self) -> list[OpEvent]:
        """Only the landmark events, in execution order: the ~15-step view above the full ATen list."""
        return sorted((self.events[i] for i in set(self.landmarks.values())), key=lambda e: e.index)

    def first_nonfinite(self) -> OpEvent | None:
        """The first event whose own arithmetic produced nan or inf (masking with -inf does not count)."""
        return next((e for e in self.events if e.creates_nonfinite), None)


def _op_name(func: torch._ops.OpOverload) -> str:
    return f"{func.namespace}.{func._opname}.{func._overloadname}"


class _Frame:
    """One autocast-handled op in progress: which tensors entered it, where autocast's casts go (None: anywhere
    the inputs say, as for promote or without a policy), and whether compute has started."""

    __slots__ = ("arg_ids", "computed", "op", "target")

    def __init__(self, op: str, arg_ids: set[int], target: torch.dtype | None) -> None:
        self.op, self.arg_ids, self.target, self.computed = op, arg_ids, target, False


class _Recorder(TorchDispatchMode):
    """Dispatch mode + landmark sink that appends OpEvents to a Trace. One instance per trace, one thread."""

    def __init__(self, trace: Trace, model: nn.Module, keep_stats: bool, on_landmark=None, policy=None) -> None:
        super().__init__()
        self.trace, self.keep_stats, self.on_landmark = trace, keep_stats, on_landmark
        self.policy: Mapping[str, str] = policy or {}  # "aten::linear" → "lower_precision_fp", ...
        self.frames: list[_Frame] = []  # autocast ops in progress (pushed by the Autocast-key kernels)
        self.module_stack: list[str] = []
        self.spans: list[tuple[int, int, str]] = []  # (first seq nr, end seq nr, module path) per forward call
        self.param_names = {id(p): n for n, p in model.named_parameters()}
        self.param_keys = {_key(p): n for n, p in model.named_parameters()}  # dispatch may see a re-wrapped param
        # storage key (see _key) → (event, output position, weak ref to the storage) of the op that wrote it
        self.produced: dict[tuple, tuple[int, int, weakref.ref]] = {}
        self.writers: dict[int, tuple[int, weakref.ref]] = {}  # storage address → (last event that output it, ref)
        self.fwd_outputs: list[tuple[int, torch.Tensor]] = []  # strong refs until grad_fn seq nrs are read
        self.seq_to_forward: dict[int, int] | None = None
        self.cast_events: set[int] = set()

    # -- dispatch ---------------------------------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self._record(func, args, kwargs, out)
        return out

    def _record(self, func, args, kwargs, out) -> None:
        if func.namespace == "prim":  # fake tensors' device queries: not computation
            return
        node = torch._C._current_autograd_node()
        index = len(self.trace.events)
        flat_in = tree_flatten((args, kwargs))[0]
        tin = [a for a in flat_in if isinstance(a, torch.Tensor)]
        tout = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
        is_cast, cast_for = False, None
        forward_index = module = node_name = None
        if node is None:
            phase, module = "forward", ".".join(p for p in self.module_stack if p)
            frame = self.frames[-1] if self.frames else None
            if frame is not None and not frame.computed:
                if func is _TO_COPY and id(args[0]) in frame.arg_ids:
                    is_cast = frame.target is None or out.dtype == frame.target
                    cast_for = frame.op if is_cast else None
                else:
                    frame.computed = True
            self.fwd_outputs.extend((index, o) for o in tout)
        else:
            phase, node_name = "backward", node.name()
            forward_index = self._forward_index(node)
            module = self._backward_module(node)
            is_cast = func is _TO_COPY and forward_index in self.cast_events
        if is_cast and phase == "forward":
            self.cast_events.add(index)
        sources = tuple(self._source(t) for t in tin)  # before this op's outputs are registered (in-place ops)
        for position, o in enumerate(tout):  # a view/alias never takes a tensor's identity from its producer
            if not (func.is_view and self._producer(_key(o)) is not None):
                storage = o.untyped_storage()
                self.produced[_key(o)] = (index, position, weakref.ref(storage))
                self.writers[storage.data_ptr()] = (index, weakref.ref(storage))
        outputs = tuple(self._info(o) for o in tout)
        creates = False
        if any(o.stats is not None and o.stats.nonfinite for o in outputs):
            # Compare per kind (nan, +inf, -inf): exp(-inf mask) = 0 must not hide exp(big) = +inf.
            bad_in = [_nonfinite_counts(t) for t in tin if t.is_floating_point()]
            bad_out = [(o.stats.nan, o.stats.posinf, o.stats.neginf) for o in outputs if o.stats is not None]
            grew = any(sum(c[k] for c in bad_out) > sum(c[k] for c in bad_in) for k in range(3))
            creates = grew and not any(isinstance(a, float) and not math.isfinite(a) for a in flat_in)
        self.trace.events.append(
            OpEvent(
                index=index,
                phase=phase,
                module=module,
                op=_op_name(func),
                inputs=tuple(TensorInfo(dtype_name(t.dtype), tuple(t.shape)) for t in tin),
                outputs=outputs,
                autocast_cast=is_cast,
                autocast_op=cast_for,
                autograd_node=node_name,
                forward_index=forward_index,
                creates_nonfinite=creates,
                sources=sources,
            )
        )

    def _source(self, t: torch.Tensor) -> int | str | None:
        key = _key(t)
        hit = self._producer(key)
        if hit is not None:
            return hit[0]
        if key in self.param_keys:
            return self.param_keys[key]
        # A view made where the trace cannot see it (autograd reshapes gradients in C++): the storage's writer.
        writer = self.writers.get(t.untyped_storage().data_ptr()) if t.numel() else None
        return writer[0] if writer is not None and writer[1]() is not None else None

    def _producer(self, key: tuple) -> tuple[int, int] | None:
        """(event, output position) that wrote the tensor with this key, while its storage is alive: a freed
        storage's address can be reused by a tensor made outside the trace (autograd's own buffers)."""
        hit = self.produced.get(key)
        if hit is None or hit[2]() is None:
            return None
        return hit[0], hit[1]

    def _info(self, t: torch.Tensor) -> TensorInfo:
        if not (self.keep_stats and t.is_floating_point()):
            return TensorInfo(dtype_name(t.dtype), tuple(t.shape))
        return TensorInfo(dtype_name(t.dtype), tuple(t.shape), tensor_stats(t), sample_values(t, **OTHER_SAMPLE))

    # -- backward attribution ---------------------------------------------------------------------------------
    def _forward_index(self, node) -> int | None:
        if self.seq_to_forward is None:  # first backward op: forward is over, grad_fns are set now
            self.seq_to_forward = {}
            for i, o in self.fwd_outputs:
                if o.grad_fn is not None:
                    self.seq_to_forward.setdefault(o.grad_fn._sequence_nr(), i)
            self.fwd_outputs.clear()
        return self.seq_to_forward.get(node._sequence_nr())

    def _backward_module(self, node) -> str:
        var = getattr(node, "variable", None)  # AccumulateGrad → the parameter it writes
        if var is not None and id(var) in self.param_names:
            return self.param_names[id(var)].rpartition(".")[0]
        seq = node._sequence_nr()
        inside = [(end - start, path) for start, end, path in self.spans if start <= seq < end]
        return min(inside)[1] if inside else ""

    # -- module hooks -----------------------------------------------------------------------------------------
    def enter_module(self, path: str) -> None:
        self.module_stack.append(path.rpartition(".")[2] if path else "")
        self.spans.append((torch._C._autograd._get_sequence_nr(), -1, path))

    def exit_module(self, path: str) -> None:
        self.module_stack.pop()
        for i in range(len(self.spans) - 1, -1, -1):  # close the innermost open span of this module
            start, end, p = self.spans[i]
            if p == path and end == -1:
                self.spans[i] = (start, torch._C._autograd._get_sequence_nr(), p)
                break

    # -- landmarks --------------------------------------------------------------------------------------------
    def on_mark(self, name: str, t: torch.Tensor) -> None:
        with _disable_current_modes():  # our own bookkeeping ops must not show up as events
            self._bind_landmark(name, t)

    def _bind_landmark(self, name: str, t: torch.Tensor) -> None:
        if self.on_landmark is not None:
            self.on_landmark(name, t)
        hit = self._producer(_key(t))
        if hit is None:
            return
        index, position = hit
        self.trace.landmarks[name] = index
        ev = self.trace.events[index]
        if self.keep_stats and ev.outputs[position].stats is not None:  # landmarks keep a larger sample
            outs = list(ev.outputs)
            outs[position] = replace(outs[position], sample=sample_values(t, **LANDMARK_SAMPLE))
            ev = replace(ev, outputs=tuple(outs))
        self.trace.events[index] = replace(ev, landmark=ev.landmark or name)  # one op may yield two landmarks


def _nonfinite_counts(t: torch.Tensor) -> tuple[int, int, int]:
    return int(torch.isnan(t).sum()), int((t == math.inf).sum()), int((t == -math.inf).sum())


def _key(t: torch.Tensor) -> tuple:
    """Identity of a tensor's values that survives autograd re-wrapping the Python object."""
    return (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape), t.stride(), t.dtype, t.device)


# ---- the Autocast-key kernels: process-wide, but inert unless this thread is tracing --------------------------
_local = threading.local()
_installed: set[tuple[str, DispatchKey]] = set()
_install_lock = threading.Lock()


def _resolve(name: str) -> torch._ops.OpOverload | None:
    ns, _, rest = name.partition("::")
    base, _, overload = rest.partition(".")
    try:
        return getattr(getattr(getattr(torch.ops, ns), base), overload or "default")
    except AttributeError:
        return None


def _autocast_kernel(op: torch._ops.OpOverload, key: DispatchKey, device_type: str):
    name, policy_name = _op_name(op), op.name()

    def kernel(*args, **kwargs):
        rec: _Recorder | None = getattr(_local, "recorder", None)
        if rec is None:
            return op._op_dk(key, *args, **kwargs)
        ids = {id(a) for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)}
        category = rec.policy.get(policy_name)
        target = (
            torch.get_autocast_dtype(device_type)
            if category == "lower_precision_fp"
            else torch.float32
            if category is not None and category.startswith("fp32")
            else None
        )
        rec.frames.append(_Frame(name, ids, target))
        try:
            return op._op_dk(key, *args, **kwargs)
        finally:
            rec.frames.pop()

    return kernel


def install_autocast_kernels(device_type: str) -> int:
    """Wrap every op that has a kernel at this device's Autocast key (idempotent). Returns how many are wrapped.

    `trace()` scans once per device type (~35 ms); whoever registers Autocast kernels later (the CUDA-policy
    emulation) calls this again so the new ops are wrapped too.
    """
    key = AUTOCAST_KEYS[device_type]
    with _install_lock:
        for name in torch._C._dispatch_get_all_op_names():
            if (name, key) in _installed or not torch._C._dispatch_has_kernel_for_dispatch_key(name, key.name):
                continue
            op = _resolve(name)
            if op is not None and key not in op.py_kernels:
                op.py_impl(key)(_autocast_kernel(op, key, device_type))
            _installed.add((name, key))
        return sum(1 for _, k in _installed if k == key)


@contextmanager
def trace(
    model: nn.Module,
    device: str = "cpu",
    keep_stats: bool = True,
    on_landmark: Callable[[str, torch.Tensor], None] | None = None,
    policy: Mapping[str, str] | None = None,
) -> Iterator[Trace]:
    """Record every ATen op that runs inside the block (forward and backward) as `OpEvent`s of a `Trace`.

    `device` picks the Autocast key watched for casts ("cpu" or "cuda"). Autocast itself is the caller's
    business: wrap the forward in `torch.autocast` inside this block. `keep_stats=False` records dtypes only.
    `on_landmark(name, tensor)` also receives every landmark the model marks (e.g. to keep its values).
    `policy` maps dispatcher op names ("aten::linear") to autocast categories (see mpviz.policy); with it, a
    cast only counts as autocast's if it goes where the op's category sends it.
    """
    device_type = torch.device(device).type
    if not any(k == AUTOCAST_KEYS[device_type] for _, k in _installed):  # first trace on this device type
        install_autocast_kernels(device_type)
    result = Trace(device=device)
    rec = _Recorder(result, model, keep_stats, on_landmark, policy)
    handles = []
    for path, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(lambda m, a, p=path: rec.enter_module(p)))
        handles.append(module.register_forward_hook(lambda m, a, o, p=path: rec.exit_module(p)))
    if getattr(_local, "recorder", None) is not None:
        raise RuntimeError("mpviz.trace cannot be nested in one thread")
    _local.recorder = rec
    try:
        with torch._dispatch.python.enable_python_dispatcher(), landmarks.recording(rec, model), rec:
            yield result
    finally:
        _local.recorder = None
        for h in handles:
            h.remove()
        rec.fwd_outputs.clear()
        rec.produced.clear()
        rec.writers.clear()
