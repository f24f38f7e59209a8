"""Probing autocast's policy: the category of every op at a device's Autocast dispatch key, found by calling it.

Each op is called on fake tensors of that device (FakeTensorMode: no memory, no GPU needed, so CUDA's policy is
readable on a CPU-only build) with autocast switched on through the low-level setters, while a `DispatchLog`
watches what autocast does to the arguments before the op computes:

    all inputs float32 → one is cast down to the low dtype             lower_precision_fp
    all inputs low     → one is cast up to float32                     fp32
    all inputs low     → no cast, float32 passed on as a dtype         fp32_set_opt_dtype (the op has `dtype`)
                                                                       fp32_append_dtype (an overload has)
    one input low, the others float32 → the low one is cast up         promote
    the call fails with "unsafe to autocast"                           banned

An op whose arguments must fit together (an RNN's weight count and shapes) is called with a hand-built example
(`EXAMPLE_CALLS`) instead of arguments derived from its schema alone, and says so in `notes`. An op no rule
fits stays `unclassified`, with a reason code in `notes`: never a guessed category.

`probe_policy(device)` probes every op of one device in this process; `python -m mpviz.policy_probe <device>` is
the child process `mpviz.policy.device_policy` starts, printing that policy as JSON.
"""

from __future__ import annotations

import json
import logging
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass

import torch

# Private torch modules, pinned with torch==2.13.0 (a move fails these imports): fake tensors call CUDA's kernels
# without a GPU, and pytree flattens an op's nested outputs to read their dtypes.
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._pytree import tree_flatten

from mpviz.isolation import autocast_shared
from mpviz.policy import (
    _TO_COPY,
    CATEGORIES,
    UNCLASSIFIED,
    DevicePolicy,
    DispatchLog,
    autocast_backends,
    autocast_state,
    policy_ops,
    probeable_devices,
    resolve_op,
)
from mpviz.stats import dtype_name

_BANNED_MARK = "unsafe to autocast"


# torch._C.Argument / OptionalType: an op's schema, read to build example calls; if they change, fewer ops are
# probed and tests/test_policy.py's coverage count fails.
def _example_value(arg: torch._C.Argument, device: str, dtypes: Iterator[torch.dtype]):
    """A value for a required schema argument: small tensors for tensors, harmless constants otherwise."""
    kind = str(arg.type)
    if kind == "List[Optional[Tensor]]":  # index lists (index_put)
        return [torch.zeros(2, dtype=torch.int64, device=device)]
    if isinstance(arg.type, torch._C.OptionalType):
        return None
    if kind == "Tensor":
        return torch.ones(2, 2, dtype=next(dtypes), device=device)
    if kind == "List[Tensor]":
        return [torch.ones(2, 2, dtype=next(dtypes), device=device) for _ in range(2)]
    if kind in ("int", "SymInt"):
        return 0 if "dim" in arg.name else 1
    if kind.startswith(("List[int]", "List[SymInt]")):
        return [1]
    if kind.startswith("List[float]"):
        return [1.0]
    simple = {
        "float": 1.0,
        "bool": False,
        "Scalar": 1,
        "number": 1,
        "str": "fro",
        "ScalarType": torch.float32,
    }
    if kind in simple:
        return simple[kind]
    raise TypeError(f"no example value for {kind} {arg.name}")


# ── ops whose arguments must fit together ───────────────────────────────────────────────────────────────────
def _cudnn_rnn_example(op: torch._ops.OpOverload, device: str, dtypes: Iterator[torch.dtype]) -> tuple[list, dict]:
    """One LSTM layer (cuDNN mode 2) with biases: 4 weights, input size 3, hidden size 4, sequence 2, batch 1.

    The weights come in float16 with their flat buffer: float32 weights would make autocast re-flatten them
    through cuDNN, which needs a GPU. Given float16 weights, its kernel goes straight to casting input, hx, cx.
    """
    seq, batch, size, hidden = 2, 1, 3, 4

    def half(*shape: int) -> torch.Tensor:
        return torch.empty(*shape, dtype=torch.float16, device=device)

    weights = [half(4 * hidden, size), half(4 * hidden, hidden), half(4 * hidden), half(4 * hidden)]
    values = {
        "input": torch.empty(seq, batch, size, dtype=next(dtypes), device=device),  # (T, B, input size)
        "weight": weights,
        "weight_stride0": len(weights),  # tensors per layer and direction: 4 with biases
        "weight_buf": half(sum(w.numel() for w in weights)),
        "hx": torch.empty(1, batch, hidden, dtype=next(dtypes), device=device),  # (layers, B, hidden)
        "cx": torch.empty(1, batch, hidden, dtype=next(dtypes), device=device),
        "mode": 2,
        "hidden_size": hidden,
        "proj_size": 0,
        "num_layers": 1,
        "batch_first": False,
        "dropout": 0.0,
        "train": False,
        "bidirectional": False,
        "batch_sizes": [],
        "dropout_state": None,
    }
    return [values[a.name] for a in op._schema.arguments], {}  # KeyError on a changed schema: call_failed


# op name → builds (args, kwargs) on fake `device` tensors; floating inputs take their dtypes from the iterator.
EXAMPLE_CALLS: dict[str, Callable[[torch._ops.OpOverload, str, Iterator[torch.dtype]], tuple[list, dict]]] = {
    "aten::_cudnn_rnn": _cudnn_rnn_example,
}


def op_name(op: torch._ops.OpOverload) -> str:
    """ "aten::softmax.int" for torch.ops.aten.softmax.int ("aten::mm" for a default overload)."""
    schema = op._schema
    return schema.name + (f".{schema.overload_name}" if schema.overload_name else "")


def _schema_example(op: torch._ops.OpOverload, device: str, dtypes: Iterator[torch.dtype]) -> tuple[list, dict]:
    args, kwargs = [], {}
    for a in op._schema.arguments:
        if a.has_default_value():
            continue
        value = _example_value(a, device, dtypes)
        if a.kwarg_only:
            kwargs[a.name] = value
        else:
            args.append(value)
    return args, kwargs


def _call(op, device: str, dtypes: Sequence[torch.dtype]) -> tuple[DispatchLog, set[int], object, str | None]:
    """Call `op` on fake `device` tensors (floating tensor i gets dtypes[min(i, -1)]); record its ops."""
    it = iter([*dtypes, *[dtypes[-1]] * 64])
    example = EXAMPLE_CALLS.get(op_name(op), _schema_example)
    rec, ids, out, error = DispatchLog(), set(), None, None
    try:
        with FakeTensorMode():
            args, kwargs = example(op, device, it)
            ids = {id(t) for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)}
            with rec:
                out = op(*args, **kwargs)
    except Exception as e:  # a probe call that fails still shows what autocast did before the failure
        error = f"{type(e).__name__}: {e}"
    return rec, ids, out, error


def _casts(rec: DispatchLog, ids: set[int]) -> set[tuple[torch.dtype, torch.dtype]]:
    """(from, to) of the casts applied to the op's own inputs before its first compute op."""
    casts = set()
    for func, args, _, out in rec.compute_calls():
        if func is not _TO_COPY or id(args[0]) not in ids:
            break
        if isinstance(out, torch.Tensor):
            casts.add((args[0].dtype, out.dtype))
    return casts


_LOW_DTYPES = (torch.float16, torch.bfloat16)


def _cast_down(call: tuple[DispatchLog, set[int], object, str | None]) -> torch.dtype | None:
    """The low-precision dtype a float32 input of the call was cast to, None if none was."""
    return next((to for frm, to in _casts(call[0], call[1]) if frm == torch.float32 and to in _LOW_DTYPES), None)


def _float32_passed_on(rec: DispatchLog) -> int:
    """How many times float32 appears as a non-tensor argument of the first compute op (an explicit dtype)."""
    first = next((c for c in rec.compute_calls() if c[0] is not _TO_COPY), None)
    if first is None:
        return 0
    return sum(1 for v in tree_flatten((first[1], first[2]))[0] if v is torch.float32)


@dataclass(frozen=True)
class Classified:
    """One op's probe result. `notes` holds codes of UNCLASSIFIED_REASONS and PROBE_NOTES."""

    category: str  # one of CATEGORIES or UNCLASSIFIED
    banned_message: str | None = None
    notes: tuple[str, ...] = ()
    error: str | None = None  # first line of the float32 call's error, for an op whose calls all failed
    fixed_cast_dtype: str | None = None  # with the note ignores_autocast_dtype: the dtype it always casts to


def classify(op: torch._ops.OpOverload, device: str, low: torch.dtype) -> Classified:
    """Category of one op in `device`'s policy, by the rules in the module doc."""
    f32 = torch.float32
    how = ("example_call",) if op_name(op) in EXAMPLE_CALLS else ()
    with autocast_state(device, low):
        hi = _call(op, device, [f32])
        lo = _call(op, device, [low])
        mixed = _call(op, device, [low, f32])
    for _, _, _, error in (hi, lo):
        if error and _BANNED_MARK in error:
            return Classified("banned", error.removeprefix("RuntimeError: "), how)
    if (down := _cast_down(hi)) is not None:
        other = torch.bfloat16 if low == torch.float16 else torch.float16
        with autocast_state(device, other):  # does the cast follow autocast's dtype? (cuDNN RNNs: always fp16)
            down_other = _cast_down(_call(op, device, [f32]))
        fixed = down if down != low else (down_other if down_other not in (None, other) else None)
        if fixed is None:
            return Classified("lower_precision_fp", notes=how)
        return Classified(
            "lower_precision_fp", notes=(*how, "ignores_autocast_dtype"), fixed_cast_dtype=dtype_name(fixed)
        )
    if (low, f32) in _casts(lo[0], lo[1]):
        return Classified("fp32", notes=how)
    with autocast_state(device, None):
        plain = _call(op, device, [f32])
    first_out = next((c[3] for c in lo[0].compute_calls() if c[0] is not _TO_COPY), None)
    outs_f32 = any(t.dtype == f32 for t in tree_flatten(first_out)[0] if isinstance(t, torch.Tensor))
    if outs_f32 or _float32_passed_on(lo[0]) or _float32_passed_on(hi[0]) > _float32_passed_on(plain[0]):
        has_dtype = any(a.name == "dtype" for a in op._schema.arguments)
        return Classified("fp32_set_opt_dtype" if has_dtype else "fp32_append_dtype", notes=how)
    if (low, f32) in _casts(mixed[0], mixed[1]):
        return Classified("promote", notes=how)
    if all(call[3] is not None for call in (hi, lo, mixed)):
        return Classified(UNCLASSIFIED, notes=(*how, "call_failed"), error=hi[3].splitlines()[0][:300])
    return Classified(UNCLASSIFIED, notes=(*how, "no_rule_fired"))


def probe_policy(device: str) -> DevicePolicy:
    """Probe every op of `device`'s autocast policy in this process (about a second per device).

    Uses fake tensors only; the CPU probe holds `autocast_shared()` so that a concurrent CUDA-policy
    emulation cannot leak into it. While it runs, the fake-tensor logger and the warning filters (both
    process-wide) are quietened: it is meant for the child process `device_policy` starts.
    """
    backend = next((b for b in autocast_backends() if b.device == device), None)
    if backend is None or not backend.probeable:
        raise ValueError(f"no probeable autocast policy for device {device!r} (choices: {probeable_devices()})")
    low = torch.get_autocast_dtype(device)
    found: dict[str, list[str]] = {c: [] for c in (*CATEGORIES, UNCLASSIFIED)}
    banned: dict[str, str] = {}
    notes: dict[str, tuple[str, ...]] = {}
    errors: dict[str, str] = {}
    fixed: dict[str, str] = {}
    logger = logging.getLogger("torch._subclasses.fake_tensor")  # it logs every failed meta call at ERROR
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        with autocast_shared() if device == "cpu" else nullcontext(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecation warnings of the probed ops themselves
            for name in policy_ops(backend.dispatch_key):
                op = resolve_op(name)
                c = (
                    classify(op, device, low)
                    if op is not None
                    else Classified(UNCLASSIFIED, notes=("unknown_overload",))
                )
                found[c.category].append(name)
                for value, into in ((c.banned_message, banned), (c.notes, notes), (c.error, errors)):
                    if value:
                        into[name] = value
                if c.fixed_cast_dtype:
                    fixed[name] = c.fixed_cast_dtype
    finally:
        logger.setLevel(level)
    cats = {c: tuple(ops) for c, ops in found.items() if ops or c in CATEGORIES}
    return DevicePolicy(device, torch.__version__, dtype_name(low), cats, banned, notes, errors, fixed)


if __name__ == "__main__":  # the child process of `mpviz.policy.device_policy`: one device's policy as JSON
    print(json.dumps(probe_policy(sys.argv[1]).to_dict()))
