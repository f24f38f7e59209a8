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
- Module paths are `named_modules()` names, forward and backward: forward hooks keep a stack of them; for
  backward, each module's forward span of autograd sequence numbers is kept, and the node running an op is
  attributed to the innermost span holding it. A backward op is linked to the forward op whose autograd node
  runs it: the node that op created has the sequence number just below the counter's value when it dispatched.
  No reference to any tensor is kept, so autograd frees and reuses buffers exactly as it does untraced.
- The python dispatcher (which those kernels need) would swap ~40 ops' C++ composite kernels for torch's Python
  decompositions (matmul, dropout, lstm, upsample…); while this thread traces, the C++ kernels run, so the op
  list is what the program runs untraced (tests compare it with a bare dispatch mode).
- Value statistics (`mpviz.stats.StatsBatch`): a small floating output is copied once (to float32; float64
  stays) when it is made and measured with the others in a few vectorized passes at the end, flushed in
  chunks; a large one is measured at once, streamed through one reused buffer. Exact, so order-independent.
- A gradient computed on a thread that does not record (a `backward()` called from another Python thread) is
  noticed by the gradient hooks of the model's parameters and landmarks: `Trace.backward_unrecorded` says so.
  A backward that autograd runs on its own device threads for the tracing thread (CUDA) is recorded.

Contract for concurrency: everything process-global here (the Autocast-key Python kernels) does nothing unless
the *current thread* is tracing; hooks are per model and ignore other threads; the dispatch mode and the python
dispatcher are thread-local. Two threads tracing at once therefore get the same events as two sequential traces.
A CPU trace holds `mpviz.isolation.autocast_shared()` for its whole block, so a CUDA-policy emulation
(`mpviz.emulation.cuda_policy_on_cpu`) on another thread waits for it, and it waits for one in flight.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

# Private torch APIs (pinned with torch==2.13.0). A move fails these imports loudly; a change in behaviour fails
# tests/test_trace.py's oracles. DispatchKey names the Autocast keys whose kernels we wrap to see autocast decide;
# is_fake tells fake CUDA tensors apart; the dispatch mode is the only hook that sees every aten call, and its
# mode-stack helpers let our own bookkeeping run untraced; tree_flatten finds tensors in nested arguments.
from torch._C import DispatchKey
from torch._subclasses.fake_tensor import is_fake
from torch.utils._python_dispatch import (
    TorchDispatchMode,
    _disable_current_modes,
    _get_current_dispatch_mode_stack,
    is_traceable_wrapper_subclass,
)
from torch.utils._pytree import tree_flatten

from mpviz import landmarks
from mpviz.isolation import autocast_shared
from mpviz.kernel_probe import ensure_safe_kernels
from mpviz.policy import resolve_op
from mpviz.stats import StatsBatch, TensorStats, dtype_name, sample_of, sample_values

AUTOCAST_KEYS = {"cpu": DispatchKey.AutocastCPU, "cuda": DispatchKey.AutocastCUDA}
_TO_COPY = torch.ops.aten._to_copy.default  # the op autocast's casts run as; a rename stops casts being found

# Sample caps (elements kept per tensor for heatmaps and the element picker).
LANDMARK_SAMPLE = {"max_side": 128, "max_mats": 16}
OTHER_SAMPLE = {"max_side": 32, "max_mats": 4}


class TraceError(ValueError):
    """A trace that cannot be made as asked. `code` is stable for views to translate:

    "unsupported_device"  `device` is not one whose autocast mpviz watches (field "device"; `choices` lists them)
    "no_values"           statistics were asked of tensors that hold no values: meta or fake tensors (field
                          "model" or "tensor"); trace with keep_stats=False to record dtypes and shapes only
    "too_many_events"     the block ran more ops than `max_events` (field "max_events"): raised from the op past
                          the cap, so the rest of the block never runs
    """

    def __init__(self, code: str, field: str, value: object, reason: str, choices: tuple[str, ...] = ()) -> None:
        self.code, self.field, self.value, self.reason, self.choices = code, field, value, reason, choices
        super().__init__(f"{field}={value!r}: {reason}")


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
    module: str  # named_modules() path ("blocks.0.attn.q_proj"); "" is the traced model itself
    op: str  # "aten.addmm.default"
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]
    autocast_cast: bool  # a cast autocast inserted (forward) or the gradient of one (backward)
    autocast_op: str | None  # the autocast-handled op this cast fed ("aten.linear.default")
    autograd_node: str | None  # backward only: "AddmmBackward0"
    forward_index: int | None  # backward only: the forward event whose gradient this op computes, when known
    landmark: str | None = None
    # Its own arithmetic turned finite values into nan/±inf: an output holds a kind of non-finite value (nan,
    # +inf, -inf) that none of its inputs, tensor or scalar, holds. Filling a mask from a -inf is not creating.
    creates_nonfinite: bool = False
    # Where each tensor input came from, aligned with `inputs`: the index of the event that produced it, the
    # name of the parameter it is, or None (the model's input data, or a tensor made outside the trace).
    sources: tuple[int | str | None, ...] = ()
    is_view: bool = False  # the op's schema says its output aliases an input (view, transpose, _unsafe_view …)
    # Forward only: the autocast-handled op (policy-listed, "aten.matmul.default") this op ran inside, cast or
    # compute; None outside any. A step whose inputs already had the policy's dtype runs its ops here uncast.
    within_autocast_op: str | None = None


@dataclass
class Trace:
    """The events of one traced region, complete when its `with` block has ended. Read it after the block."""

    device: str
    autocast_dtype: str | None = None
    events: list[OpEvent] = field(default_factory=list)
    landmarks: dict[str, int] = field(default_factory=dict)  # name → event index (the event that produced it)
    landmark_outputs: dict[str, int] = field(default_factory=dict)  # name → which output of that event it is
    backward_unrecorded: bool = False  # gradients were computed on a thread this trace does not record

    def landmark_event(self, name: str) -> OpEvent:
        return self.events[self.landmarks[name]]

    def landmark_output(self, name: str) -> TensorInfo:
        """The tensor a landmark names: one output of its event (LayerNorm's backward makes two landmarks)."""
        return self.landmark_event(name).outputs[self.landmark_outputs.get(name, 0)]

    def story(self) -> list[OpEvent]:
        """Only the landmark events, in execution order: the ~15-step view above the full ATen list."""
        return sorted((self.events[i] for i in set(self.landmarks.values())), key=lambda e: e.index)

    def first_nonfinite(self) -> OpEvent | None:
        """The first event whose own arithmetic produced nan or inf (masking with -inf does not count)."""
        return next((e for e in self.events if e.creates_nonfinite), None)


# torch._ops.OpOverload is the public type of torch.ops.aten.x.y, from a private module; its `_opname` and
# `_overloadname` are read once per op for its name: a rename fails every trace test at once.
_OP_NAMES: dict[torch._ops.OpOverload, str] = {}


def _op_name(func: torch._ops.OpOverload) -> str:
    name = _OP_NAMES.get(func)
    if name is None:
        name = _OP_NAMES[func] = f"{func.namespace}.{func._opname}.{func._overloadname}"
    return name


def _tensors(values, out: list[torch.Tensor]) -> list[torch.Tensor]:
    """The tensors among `values` (an op's arguments or results: tensors, lists/tuples/dicts of them), in order."""
    for v in values:
        if isinstance(v, torch.Tensor):
            if type(v) is not torch.Tensor and is_traceable_wrapper_subclass(v):
                # A wrapper subclass (torchao's Float8TrainingTensor) has no storage of its own; what it holds
                # is its inner tensors (the fp8 payload, its scale), so those are what an event shows.
                _tensors([getattr(v, name) for name in v.__tensor_flatten__()[0]], out)
                continue
            out.append(v)
        elif isinstance(v, (list, tuple)):
            _tensors(v, out)
        elif isinstance(v, dict):
            _tensors(v.values(), out)
    return out


_DTYPE_NAMES: dict[torch.dtype, str] = {}
_INFOS: dict[tuple[torch.dtype, tuple[int, ...]], TensorInfo] = {}


def _meta(t: torch.Tensor) -> TensorInfo:
    """dtype and shape of `t` as a shared TensorInfo (frozen, so one per (dtype, shape) serves every event)."""
    key = (t.dtype, tuple(t.shape))
    info = _INFOS.get(key)
    if info is None:
        name = _DTYPE_NAMES.get(t.dtype) or _DTYPE_NAMES.setdefault(t.dtype, dtype_name(t.dtype))
        info = _INFOS[key] = TensorInfo(name, key[1])
    return info


def _scalar_kinds(v: object) -> set[str]:
    if isinstance(v, complex):
        return _scalar_kinds(v.real) | _scalar_kinds(v.imag)
    if not isinstance(v, float) or math.isfinite(v):
        return set()
    return {"nan"} if math.isnan(v) else {"posinf" if v > 0 else "neginf"}


def _tensor_kinds(t: torch.Tensor) -> set[str]:
    if not t.is_floating_point() or t.is_meta or is_fake(t):
        return set()
    return {
        k for k, bad in (("nan", torch.isnan(t)), ("posinf", t == math.inf), ("neginf", t == -math.inf)) if bad.any()
    }


def _autocast_eligible(before: torch.dtype, after: torch.dtype) -> bool:
    return before.is_floating_point and before != torch.float64 and after.is_floating_point and after != before


class _Frame:
    """One autocast-handled op in progress: which tensors entered it, where autocast's casts go (None: anywhere
    the inputs say, as for promote or without a policy), whether autocast casts at all for it, and whether
    compute has started."""

    __slots__ = ("arg_ids", "casts", "computed", "op", "target")

    def __init__(self, op: str, arg_ids: set[int], target: torch.dtype | None, casts: bool = True) -> None:
        self.op, self.arg_ids, self.target, self.casts, self.computed = op, arg_ids, target, casts, False


class _Out:
    """One output of an event while the trace runs: dtype/shape, the ticket of its statistics, its sample."""

    __slots__ = ("info", "sample", "ticket")

    def __init__(self, info: TensorInfo, ticket: int | None = None, sample: np.ndarray | None = None) -> None:
        self.info, self.ticket, self.sample = info, ticket, sample


class _Recorder(TorchDispatchMode):
    """Dispatch mode + landmark sink that records the ops of one trace, on one thread."""

    def __init__(
        self,
        trace: Trace,
        model: nn.Module,
        keep_stats: bool,
        on_landmark=None,
        policy=None,
        sample_above: int | None = None,
        max_events: int | None = None,
        on_event: Callable[[int, str], None] | None = None,
        sample_caps: tuple[Mapping[str, int], Mapping[str, int]] = (OTHER_SAMPLE, LANDMARK_SAMPLE),
    ) -> None:
        super().__init__()
        self.trace, self.on_landmark = trace, on_landmark
        self.max_events, self.on_event = max_events, on_event
        self.other_caps, self.landmark_caps = sample_caps
        self.policy: Mapping[str, str] = policy or {}  # "aten::linear" → "lower_precision_fp", ...
        self.thread = threading.get_ident()
        self.frames: list[_Frame] = []  # autocast ops in progress (pushed by the Autocast-key kernels)
        self.module_stack: list[str] = []  # named_modules() paths of the modules whose forward is running
        self.spans: list[tuple[int, int, str]] = []  # (first seq nr, end seq nr, module path) per forward call
        self.param_names = {id(p): n for n, p in model.named_parameters()}
        self.param_keys = {_key(p): n for n, p in model.named_parameters()}  # dispatch may see a re-wrapped param
        # storage key (see _key) → (event, output position, weak ref to the storage) of the op that wrote it
        self.produced: dict[tuple, tuple[int, int, weakref.ref]] = {}
        self.writers: dict[int, tuple[int, weakref.ref]] = {}  # storage address → (last event that output it, ref)
        # Private (here and below): autograd's node counter, the only link from a backward node to its forward op;
        # if it changes, backward events lose their forward op and module (tests/test_trace.py fails).
        self.first_seq = torch._C._autograd._get_sequence_nr()  # autograd nodes made before the trace: not ours
        self.seq_to_forward: dict[int, int] = {}  # autograd node sequence nr → the forward event that made it
        self.backward_modules: dict[int, str] = {}
        self.cast_events: set[int] = set()
        self.records: list[tuple] = []  # per event: OpEvent's fields, outputs as _Out, until finish()
        self.landmark_of: dict[int, str] = {}
        self.batch = StatsBatch(sample_above=sample_above) if keep_stats else None
        self.recent: dict[tuple[int, int], np.ndarray] = {}  # (event, output) → its copy, while the batch holds it
        self.flushes = 0
        self.backward_unrecorded = False

    # -- dispatch ---------------------------------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func.namespace != "prim":  # fake tensors' device queries: not computation
            grad = torch.is_grad_enabled()
            torch._C._set_grad_enabled(False)  # bookkeeping makes no autograd nodes (they would take seq nrs)
            try:
                with torch._C._DisablePythonDispatcher():  # nor pays the python dispatcher's toll per op
                    self._record(func, args, kwargs, out)
                    count = len(self.records)
                    if self.max_events is not None and count > self.max_events:  # stop now, not at the end
                        raise TraceError("too_many_events", "max_events", self.max_events, "more ops than the cap")
                    if self.on_event is not None:
                        self.on_event(count, self.records[-1][1])
            finally:
                torch._C._set_grad_enabled(grad)
        return out

    def _record(self, func, args, kwargs, out) -> None:
        # Private: the backward node running this op, to map backward ops to forward ones; if it changes, backward
        # events lose their forward op (tests/test_trace.py's backward tests fail).
        node = torch._C._current_autograd_node()
        index = len(self.records)
        tin = _tensors(kwargs.values(), _tensors(args, []))
        tout = _tensors((out,), [])
        is_cast, cast_for = False, None
        forward_index = node_name = None
        if node is None:
            phase = "forward"
            module = self.module_stack[-1] if self.module_stack else ""
            frame = self.frames[-1] if self.frames else None
            if frame is not None and not frame.computed:
                if func is _TO_COPY and id(args[0]) in frame.arg_ids:
                    # Autocast casts floating tensors other than float64, to another floating dtype (the one the
                    # op's category asks for, when the policy is known); a bool mask made float is the op's own.
                    is_cast = (
                        frame.casts
                        and _autocast_eligible(args[0].dtype, out.dtype)
                        and out.dtype == (frame.target or out.dtype)
                    )
                    cast_for = frame.op if is_cast else None
                else:
                    frame.computed = True
            if is_cast:
                self.cast_events.add(index)
            # The autograd node this op made (if any) was numbered just before it got here.
            seq = torch._C._autograd._get_sequence_nr() - 1
            if seq >= self.first_seq:
                self.seq_to_forward.setdefault(seq, index)
        else:
            phase, node_name = "backward", node.name()
            seq = node._sequence_nr()
            forward_index = self.seq_to_forward.get(seq)
            module = self._backward_module(node, seq)
            is_cast = func is _TO_COPY and forward_index in self.cast_events
        sources = tuple(self._source(t) for t in tin)  # before this op's outputs are registered (in-place ops)
        for position, o in enumerate(tout):  # a view/alias never takes a tensor's identity from its producer
            key = _key(o)
            if not (func.is_view and self._producer(key) is not None):
                storage = weakref.ref(o.untyped_storage())
                self.produced[key] = (index, position, storage)
                self.writers[key[0]] = (index, storage)
        outputs, bad = self._outputs(index, tout)
        creates = False
        if bad and not func._opname.startswith(("empty", "new_empty")):  # those allocate: no values made yet
            held = set().union(*(_tensor_kinds(t) for t in tin))
            held |= set().union(*(_scalar_kinds(a) for a in tree_flatten((args, kwargs))[0]))
            creates = bool(bad - held)
        meta = tuple(_meta(t) for t in tin)
        record = (index, phase, module, _op_name(func), meta, outputs, is_cast, cast_for, node_name, forward_index)
        within = self.frames[0].op if self.frames and node is None else None  # the outermost: the one autocast saw
        self.records.append((*record, creates, sources, func.is_view, within))

    def _outputs(self, index: int, tout: list[torch.Tensor]) -> tuple[list[_Out], frozenset[str]]:
        """Each output's record, copying floating ones for statistics; and the non-finite kinds they hold."""
        outputs, bad = [], frozenset()
        for position, o in enumerate(tout):
            info = _meta(o)
            if self.batch is None or not o.is_floating_point() or o.layout != torch.strided:
                outputs.append(_Out(info))
                continue
            if o.is_meta or (type(o) is not torch.Tensor and is_fake(o)):
                raise TraceError("no_values", "tensor", str(o.device), "meta and fake tensors hold no values")
            added = self.batch.add(o)
            if self.batch.flushes != self.flushes:  # measured and dropped: older copies are gone from the batch
                self.recent.clear()
                self.flushes = self.batch.flushes
            bad |= added.nonfinite
            if added.values is None:  # a large tensor, measured at once without a copy
                outputs.append(_Out(info, added.ticket, sample_values(o, **self.other_caps)))
                continue
            self.recent[(index, position)] = added.values
            outputs.append(_Out(info, added.ticket, sample_of(added.values, info.shape, **self.other_caps)))
        return outputs, bad

    def _source(self, t: torch.Tensor) -> int | str | None:
        key = _key(t)
        hit = self._producer(key)
        if hit is not None:
            return hit[0]
        if key in self.param_keys:
            return self.param_keys[key]
        # A view made where the trace cannot see it (autograd reshapes gradients in C++): the storage's writer.
        writer = self.writers.get(_storage_id(t.untyped_storage())) if t.numel() else None
        return writer[0] if writer is not None and writer[1]() is not None else None

    def _producer(self, key: tuple) -> tuple[int, int] | None:
        """(event, output position) that wrote the tensor with this key, while its storage is alive: a freed
        storage's address can be reused by a tensor made outside the trace (autograd's own buffers)."""
        hit = self.produced.get(key)
        if hit is None or hit[2]() is None:
            return None
        return hit[0], hit[1]

    # -- backward attribution ---------------------------------------------------------------------------------
    def _backward_module(self, node, seq: int) -> str:
        if node.name() == "torch::autograd::AccumulateGrad":  # → the parameter it writes
            var = node.variable
            return self.param_names[id(var)].rpartition(".")[0] if id(var) in self.param_names else ""
        module = self.backward_modules.get(seq)
        if module is None:
            inside = [(end - start, path) for start, end, path in self.spans if start <= seq < end]
            module = self.backward_modules[seq] = min(inside)[1] if inside else ""
        return module

    # -- module hooks -----------------------------------------------------------------------------------------
    def enter_module(self, path: str) -> None:
        if threading.get_ident() != self.thread:  # the same model running on another thread: not this trace's
            return
        self.module_stack.append(path)
        self.spans.append((torch._C._autograd._get_sequence_nr(), -1, path))

    def exit_module(self, path: str) -> None:
        if threading.get_ident() != self.thread or not self.module_stack:
            return
        self.module_stack.pop()
        for i in range(len(self.spans) - 1, -1, -1):  # close the innermost open span of this module
            start, end, p = self.spans[i]
            if p == path and end == -1:
                self.spans[i] = (start, torch._C._autograd._get_sequence_nr(), p)
                break

    # -- landmarks --------------------------------------------------------------------------------------------
    def on_mark(self, name: str, t: torch.Tensor) -> None:
        elsewhere = threading.get_ident() != self.thread
        if elsewhere and self not in _get_current_dispatch_mode_stack():  # a gradient hook on a thread not recording
            self.backward_unrecorded = True
            return
        with _disable_current_modes(), torch._C._DisablePythonDispatcher():  # our bookkeeping is no event
            self._bind_landmark(name, t)

    def _bind_landmark(self, name: str, t: torch.Tensor) -> None:
        if self.on_landmark is not None:
            self.on_landmark(name, t)
        hit = self._producer(_key(t))
        if hit is None:
            return
        index, position = hit
        self.trace.landmarks[name] = index
        self.trace.landmark_outputs[name] = position
        self.landmark_of.setdefault(index, name)  # one op may yield two landmarks: the first names the event
        out = self.records[index][5][position]
        if out.ticket is not None:  # landmarks keep a larger sample, of the values the event made when possible
            values = self.recent.get((index, position))
            out.sample = (
                sample_of(values, out.info.shape, **self.landmark_caps)
                if values is not None
                else sample_values(t, **self.landmark_caps)
            )

    def finish(self) -> None:
        """Measure what is pending and write the events into the trace."""
        self.recent.clear()
        events = []
        for r in self.records:
            outputs = tuple(
                o.info
                if o.ticket is None
                else TensorInfo(o.info.dtype, o.info.shape, self.batch.result(o.ticket), o.sample)
                for o in r[5]
            )
            events.append(OpEvent(*r[:5], outputs, *r[6:10], self.landmark_of.get(r[0]), *r[10:]))
        self.trace.events = events
        self.trace.backward_unrecorded = self.backward_unrecorded
        self.records.clear()


def _storage_id(storage: torch.UntypedStorage) -> int:
    """Where a storage's memory is; for one without memory (meta and fake tensors, all at address 0), itself."""
    return id(storage) if storage.device.type == "meta" else storage.data_ptr()


def _key(t: torch.Tensor) -> tuple:
    """Identity of a tensor's values that survives autograd re-wrapping the Python object."""
    return (_storage_id(t.untyped_storage()), t.storage_offset(), tuple(t.shape), t.stride(), t.dtype, t.device)


# ---- the Autocast-key kernels: process-wide, but inert unless this thread is tracing --------------------------
_local = threading.local()
DTYPE_ARGUMENT_CATEGORIES = ("fp32_set_opt_dtype", "fp32_append_dtype")  # autocast passes a dtype, casts nothing
_installed: set[tuple[str, DispatchKey]] = set()
_ready: set[str] = set()  # device types whose full scan has completed
_composites_kept = False
_install_lock = threading.Lock()


def _autocast_kernel(op: torch._ops.OpOverload, key: DispatchKey, device_type: str):
    name, policy_name = _op_name(op), op.name()

    def kernel(*args, **kwargs):
        rec: _Recorder | None = getattr(_local, "recorder", None)
        if rec is None:
            return op._op_dk(key, *args, **kwargs)
        ids = {id(a) for a in _tensors(kwargs.values(), _tensors(args, []))}
        category = rec.policy.get(policy_name)
        target = (
            torch.get_autocast_dtype(device_type)
            if category == "lower_precision_fp"
            else torch.float32
            if category is not None and category.startswith("fp32")
            else None
        )
        # fp32_set_opt_dtype / fp32_append_dtype: autocast only passes `dtype=float32` (autocast_mode.h); a cast
        # the op then makes of its input (CPU softmax's `input.to(dtype)`) is the op's own, not autocast's.
        casts = category not in DTYPE_ARGUMENT_CATEGORIES
        rec.frames.append(_Frame(name, ids, target, casts))
        try:
            return op._op_dk(key, *args, **kwargs)
        finally:
            rec.frames.pop()

    return kernel


_COMPOSITE = DispatchKey.CompositeImplicitAutograd


def _cpp_composite(op: torch._ops.OpOverload, python_kernel: Callable):
    """A Python decomposition torch registered for `op` (matmul, dropout, lstm …), except while this thread
    traces: then the C++ composite kernel, so the trace shows the ops the program runs without the tracer."""

    def kernel(*args, **kwargs):
        if getattr(_local, "recorder", None) is None:
            return python_kernel(*args, **kwargs)
        # Private: call one dispatch key's kernel directly; if it changes, traces show torch's Python decompositions.
        return op._op_dk(_COMPOSITE, *args, **kwargs)

    kernel.python_kernel = python_kernel
    return kernel


def _keep_cpp_composites() -> None:
    """The python dispatcher (which the Autocast-key kernels need) prefers torch's Python decompositions to the
    C++ composite kernels of ~40 ops: `matmul` would end in `view` instead of `_unsafe_view`, `dropout` in eval
    mode would add a `clone`. Route those ops to C++ while tracing (scans the overloads materialized so far)."""
    # Private: torch keeps its Python decompositions in py_kernels; if that moves, matmul traces end in `view` again.
    for packet in list(vars(torch.ops.aten).values()):
        if not isinstance(packet, torch._ops.OpOverloadPacket):
            continue
        for op in list(vars(packet).values()):
            if not isinstance(op, torch._ops.OpOverload) or not op.py_kernels:
                continue
            if not torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), _COMPOSITE.name):
                continue
            for key in (_COMPOSITE, DispatchKey.Autograd):
                python_kernel = op.py_kernels.get(key)
                if python_kernel is not None and not hasattr(python_kernel, "python_kernel"):
                    op.py_kernels[key] = _cpp_composite(op, python_kernel)
                    op._dispatch_cache.clear()  # private: else the old kernel stays cached and our swap is unseen


def _install(device_type: str, names: Iterable[str] | None = None) -> int:
    global _composites_kept
    key = AUTOCAST_KEYS[device_type]
    if not _composites_kept:  # once per process
        _keep_cpp_composites()
        _composites_kept = True
    # Private dispatcher introspection: which ops have an Autocast kernel to wrap; if it changes, nothing is wrapped
    # and traces show no autocast decisions (tests/test_trace.py fails).
    for name in torch._C._dispatch_get_all_op_names() if names is None else names:
        if (name, key) in _installed or not torch._C._dispatch_has_kernel_for_dispatch_key(name, key.name):
            continue
        op = resolve_op(name)
        if op is not None and key not in op.py_kernels:
            op.py_impl(key)(_autocast_kernel(op, key, device_type))
        _installed.add((name, key))
    if names is None:
        _ready.add(device_type)
    return sum(1 for _, k in _installed if k == key)


def install_autocast_kernels(device_type: str, names: Iterable[str] | None = None) -> int:
    """Wrap every op that has a kernel at this device's Autocast key (idempotent). Returns how many are wrapped.

    `trace()` scans every op once per device type (~35 ms); whoever registers Autocast kernels later (the
    CUDA-policy emulation) calls this again, with the `names` it registered, so those ops are wrapped too.
    """
    with _install_lock:
        return _install(device_type, names)


def _ensure_autocast_kernels(device_type: str) -> None:
    """The first scan of a device type, exactly once: a trace starting while another thread scans waits for it
    (seeing half a scan would leave some autocast ops unwatched and their casts unflagged)."""
    if device_type not in _ready:
        with _install_lock:
            if device_type not in _ready:
                _install(device_type)


def _device_type(device: str | torch.device) -> str:
    try:
        device_type = torch.device(device).type
    except (RuntimeError, TypeError, ValueError):
        device_type = None
    if device_type not in AUTOCAST_KEYS:
        choices = tuple(AUTOCAST_KEYS)
        raise TraceError("unsupported_device", "device", str(device), "mpviz traces CPU or CUDA autocast", choices)
    return device_type


@contextmanager
def trace(
    model: nn.Module,
    device: str | torch.device = "cpu",
    keep_stats: bool = True,
    on_landmark: Callable[[str, torch.Tensor], None] | None = None,
    policy: Mapping[str, str] | None = None,
    sample_above: int | None = None,
    max_events: int | None = None,
    on_event: Callable[[int, str], None] | None = None,
    sample_caps: tuple[Mapping[str, int], Mapping[str, int]] = (OTHER_SAMPLE, LANDMARK_SAMPLE),
) -> Iterator[Trace]:
    """Record every ATen op that runs inside the block (forward and backward) as `OpEvent`s of a `Trace`.

    `device` picks the Autocast key watched for casts ("cpu" or "cuda"; else `TraceError`). Autocast itself is
    the caller's business: wrap the forward in `torch.autocast` inside this block. `keep_stats=False` records
    dtypes and shapes only (what meta and fake tensors allow; with stats they raise `TraceError`).
    `on_landmark(name, tensor)` also receives every landmark the model marks (e.g. to keep its values).
    `policy` maps dispatcher op names ("aten::linear") to autocast categories (see mpviz.policy); with it, a
    cast only counts as autocast's if it goes where the op's category sends it.
    `sample_above`: outputs of more elements get sampled statistics (`mpviz.stats.StatsBatch`; None: all exact).
    `max_events`: the op past it raises `TraceError("too_many_events")` at once. `on_event(ops so far, phase)` is
    called after each op is recorded (for progress; what it raises, e.g. KeyboardInterrupt, ends the block).
    `sample_caps`: how much of each output (other ops', landmarks') is kept as its sample; a caller that shows
    less keeps less (mpviz.model_bundle: an 8×8 corner, where a landmark's default is 16 × 128 × 128 values).
    The events are in the trace once the block has ended (also when it raised).
    """
    device_type = _device_type(device)
    ensure_safe_kernels()  # before this process's first oneDNN kernel: the model's ops may be its first
    if getattr(_local, "recorder", None) is not None:
        raise RuntimeError("mpviz.trace cannot be nested in one thread")
    if keep_stats and any(t.is_meta or is_fake(t) for t in (*model.parameters(), *model.buffers())):
        raise TraceError("no_values", "model", "meta", "the model's tensors hold no values to measure")
    _ensure_autocast_kernels(device_type)
    result = Trace(device=str(device))
    # CPU autocast must not meet the CUDA-policy emulation's kernels: hold the shared side for the whole block.
    with autocast_shared() if device_type == "cpu" else nullcontext():
        rec = _Recorder(result, model, keep_stats, on_landmark, policy, sample_above, max_events, on_event, sample_caps)
        handles = []
        for path, module in model.named_modules():
            handles.append(module.register_forward_pre_hook(lambda m, a, p=path: rec.enter_module(p)))
            handles.append(module.register_forward_hook(lambda m, a, o, p=path: rec.exit_module(p), always_call=True))
        _local.recorder = rec
        try:
            # Private: the python dispatcher is what runs our Autocast-key kernels; without it autocast is invisible.
            with torch._dispatch.python.enable_python_dispatcher(), landmarks.recording(rec, model), rec:
                yield result
        finally:
            _local.recorder = None
            for h in handles:
                h.remove()
            rec.produced.clear()
            rec.writers.clear()
            rec.finish()
