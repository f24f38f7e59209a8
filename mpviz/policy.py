"""Autocast's op policy, read from the installed torch, for each device it has: what callers use.

An op is "in the policy" of a device when it has a kernel at that device's Autocast dispatch key; its category
(CATEGORIES, or UNCLASSIFIED with a reason) is found by probing, see `mpviz.policy_probe`.

`device_policy(device)` is what callers use: cached in-process and on disk per torch build (a file that fails the
schema check is discarded and re-probed), and probed in a child process so that a C++ abort while probing cannot
take the app down. `compare_policies` puts two devices side by side; `probe_call(...)` runs one everyday function
under autocast on a device and reports every ATen op that ran.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

import torch
import torch.nn.functional as F

# Private torch modules (pinned with torch==2.13.0): a move fails these imports loudly, never a lesson's numbers.
# FakeTensorMode probes CUDA's autocast kernels without a GPU; TorchDispatchMode sees every aten call a probe makes
# (the only hook below autocast); tree_flatten finds the tensors in an op's nested arguments.
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from mpviz.isolation import autocast_shared
from mpviz.stats import dtype_name

CATEGORIES = ("lower_precision_fp", "fp32", "fp32_set_opt_dtype", "fp32_append_dtype", "promote", "banned")
UNCLASSIFIED = "unclassified"  # in the policy, but no probe rule fired: shown as such, never guessed
# Why an op is unclassified (one of these is in its `notes`):
UNCLASSIFIED_REASONS = (
    "unknown_overload",  # the dispatcher names an overload Python cannot resolve
    "call_failed",  # every probe call raised before autocast's casts could be seen (see `probe_errors`)
    "no_rule_fired",  # the calls ran, but no cast and no float32 output matched a rule
)
# Other notes on how an op was probed:
PROBE_NOTES = (
    "example_call",  # called with a hand-built example (EXAMPLE_CALLS), not schema-derived arguments
    "ignores_autocast_dtype",  # lower_precision_fp, but casts to `fixed_cast_dtype[op]` whatever autocast's dtype
)
PROBE_VERSION = 2  # bump when the probe's rules or DevicePolicy's fields change: invalidates the disk cache
_TO_COPY = torch.ops.aten._to_copy.default  # the op autocast's casts run as; a rename stops casts being recognised


# torch._ops.OpOverload: the public type of torch.ops.aten.x.y, from a private module (annotation only).
def resolve_op(name: str) -> torch._ops.OpOverload | None:
    """The overload a policy names: "aten::softmax.int" → torch.ops.aten.softmax.int (None if unknown)."""
    ns, _, rest = name.partition("::")
    base, _, overload = rest.partition(".")
    try:
        return getattr(getattr(getattr(torch.ops, ns), base), overload or "default")
    except (AttributeError, RuntimeError):
        return None


# ── which devices have an autocast policy in this build ─────────────────────────────────────────────────────
@dataclass(frozen=True)
class AutocastBackend:
    device: str  # device type: "cuda"
    dispatch_key: str  # "AutocastCUDA"
    n_ops: int  # ops with a kernel at that key
    probeable: bool  # fake tensors of this device reach the key, so the categories can be probed here


@lru_cache(maxsize=1)
def autocast_backends() -> tuple[AutocastBackend, ...]:
    """Every Autocast dispatch key that has kernels in this build, CPU and CUDA first."""
    keys: set[str] = set()
    # Private dispatcher introspection: the only way to list autocast's keys; if it changes, tests/test_policy.py fails.
    for name in torch._C._dispatch_get_all_op_names():
        keys.update(re.findall(r"^(Autocast\w+):", torch._C._dispatch_dump(name), re.M))
    backends = []
    for key in keys:
        device = key.removeprefix("Autocast").lower()
        backends.append(AutocastBackend(device, key, len(policy_ops(key)), _reaches_key(device, key)))
    order = {"cpu": 0, "cuda": 1}
    return tuple(sorted(backends, key=lambda b: (order.get(b.device, 2), b.device)))


def policy_ops(dispatch_key: str) -> list[str]:
    """Names of the ops with a kernel at `dispatch_key`, sorted."""
    # Private: which ops have a kernel at a key is the policy itself; if it changes, tests/test_policy.py fails.
    names = torch._C._dispatch_get_all_op_names()
    return sorted(n for n in names if torch._C._dispatch_has_kernel_for_dispatch_key(n, dispatch_key))


def _reaches_key(device: str, key: str) -> bool:
    try:
        with FakeTensorMode():
            t = torch.empty(1, device=device)
        # Private: the keys a fake tensor dispatches through; if it changes, no device is probeable (False).
        return key in str(torch._C._dispatch_keys(t)) and torch.get_autocast_dtype(device).is_floating_point
    except Exception:  # any failure means "not probeable here": on a CUDA build a fake "xpu"
        return False  # tensor initialises the real XPU runtime and raises AssertionError (seen on an H200)


def probeable_devices() -> list[str]:
    return [b.device for b in autocast_backends() if b.probeable]


# ── a device's policy ─────────────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class DevicePolicy:
    """Every op autocast handles on one device, by category, as probed from the installed torch."""

    device: str
    torch_version: str  # torch.__version__ of the build it was read from
    autocast_dtype: str  # the low-precision dtype autocast was set to while probing ("float16")
    categories: dict[str, tuple[str, ...]]  # category (CATEGORIES or UNCLASSIFIED) → sorted op names
    banned_messages: dict[str, str]  # banned op → the error text autocast raised for it
    notes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # op → codes (UNCLASSIFIED_REASONS, PROBE_NOTES)
    probe_errors: dict[str, str] = field(default_factory=dict)  # unclassified op → first line of its call's error
    fixed_cast_dtype: dict[str, str] = field(default_factory=dict)  # op noted ignores_autocast_dtype → its dtype

    def category_of(self, op: str) -> str | None:
        """Category of "aten::name[.overload]" on this device, None if autocast does not handle it here."""
        return next((c for c, ops in self.categories.items() if op in ops), None)

    def counts(self) -> dict[str, int]:
        return {c: len(ops) for c, ops in self.categories.items()}

    def ops(self) -> list[str]:
        return sorted(op for ops in self.categories.values() for op in ops)

    def to_dict(self) -> dict:
        return {
            **asdict(self),
            "categories": {c: list(v) for c, v in self.categories.items()},
            "notes": {op: list(v) for op, v in self.notes.items()},
            "probe_version": PROBE_VERSION,
        }

    @classmethod
    def from_dict(cls, d: object) -> DevicePolicy:
        """Inverse of `to_dict`, checked: PolicySchemaError (a ValueError with a `reason` code) when `d` is not a
        policy this build wrote: categories must be a non-empty mapping of known category names to lists of op
        names, at least one op in all; the probe version must be this module's."""
        return cls(**_checked_fields(d))


class PolicySchemaError(ValueError):
    """A policy's JSON (a cache file, a child's answer) that is not what `DevicePolicy.to_dict` writes.

    `reason` is a code ("not_a_mapping", "missing_field", "wrong_type", "no_categories", "unknown_category",
    "no_ops", "probe_version") for logs and views; `str()` adds the detail.
    """

    def __init__(self, reason: str, detail: str) -> None:
        self.reason, self.detail = reason, detail
        super().__init__(f"{reason}: {detail}")


def _str_map(d: dict, name: str, values: type | tuple[type, ...]) -> dict:
    value = d.get(name, {})
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise PolicySchemaError("wrong_type", f"{name} must be a mapping")
    if not all(isinstance(v, values) for v in value.values()):
        raise PolicySchemaError("wrong_type", f"{name} has a value of the wrong type")
    return value


def _str_list(value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PolicySchemaError("wrong_type", f"{what} must be a list of strings")
    return tuple(value)


def _checked_fields(d: object) -> dict:
    if not isinstance(d, dict):
        raise PolicySchemaError("not_a_mapping", type(d).__name__)
    for name in ("device", "torch_version", "autocast_dtype", "categories"):
        if name not in d:
            raise PolicySchemaError("missing_field", name)
    for name in ("device", "torch_version", "autocast_dtype"):
        if not isinstance(d[name], str):
            raise PolicySchemaError("wrong_type", f"{name} must be a string")
    if d.get("probe_version") != PROBE_VERSION:
        raise PolicySchemaError("probe_version", f"{d.get('probe_version')!r}, expected {PROBE_VERSION}")
    cats = d["categories"]
    if not isinstance(cats, dict) or not cats:
        raise PolicySchemaError("no_categories", "categories must be a non-empty mapping")
    unknown = sorted(set(cats) - {*CATEGORIES, UNCLASSIFIED}, key=str)
    if unknown:
        raise PolicySchemaError("unknown_category", ", ".join(map(str, unknown))[:200])
    categories = {c: _str_list(ops, f"categories[{c!r}]") for c, ops in cats.items()}
    if not any(categories.values()):
        raise PolicySchemaError("no_ops", "every category is empty")
    notes = _str_map(d, "notes", list)
    return {
        "device": d["device"],
        "torch_version": d["torch_version"],
        "autocast_dtype": d["autocast_dtype"],
        "categories": categories,
        "banned_messages": _str_map(d, "banned_messages", str),
        "notes": {op: _str_list(v, f"notes[{op!r}]") for op, v in notes.items()},
        "probe_errors": _str_map(d, "probe_errors", str),
        "fixed_cast_dtype": _str_map(d, "fixed_cast_dtype", str),
    }


class DispatchLog(TorchDispatchMode):
    """Every op that reaches the Python dispatch key, as [op, args, kwargs, output]; kept even if the op fails."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        entry = [func, args, kwargs, None]
        self.calls.append(entry)
        entry[3] = func(*args, **kwargs)
        return entry[3]

    def compute_calls(self) -> list[list]:
        """Without the prim::device queries fake tensors answer through the dispatcher."""
        return [c for c in self.calls if c[0].namespace != "prim"]


@contextmanager
def autocast_state(device: str, dtype: torch.dtype | None) -> Iterator[None]:
    """Autocast on `device` (dtype) or off (None) in this thread, via the low-level setters.

    `torch.autocast("cuda")` switches itself off where no GPU is present; the setters do not, and reach the
    AutocastCUDA kernels of fake CUDA tensors. The weight cache is off: probes must see every cast.
    """
    prev = (
        torch.is_autocast_enabled(device),
        torch.get_autocast_dtype(device),
        torch.is_autocast_cache_enabled(),
    )
    torch.set_autocast_enabled(device, dtype is not None)
    if dtype is not None:
        torch.set_autocast_dtype(device, dtype)
    torch.set_autocast_cache_enabled(False)
    try:
        yield
    finally:
        torch.set_autocast_enabled(device, prev[0])
        torch.set_autocast_dtype(device, prev[1])
        torch.set_autocast_cache_enabled(prev[2])


# ── cached access (in-process, on disk, probed in a child process) ──────────────────────────────────────────
class ChildProbeError(RuntimeError):
    """A child process that probes torch died or printed no JSON (e.g. a C++ abort)."""

    def __init__(self, what: str, returncode: int, stderr_tail: str) -> None:
        self.what, self.returncode, self.stderr_tail = what, returncode, stderr_tail
        super().__init__(f"probing {what} failed (exit {returncode}): {stderr_tail}")


def run_child(module: str, *args: str, timeout: float = 300) -> object:
    """`python -m <module> <args>` in a child process (mpviz importable there); its stdout parsed as JSON.

    For probes that could abort the process (fake CUDA tensors on a CPU build): the child dies, not the app.
    Raises ChildProbeError when the child fails or prints no JSON.
    """
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    try:
        proc = subprocess.run(
            [sys.executable, "-m", module, *args], capture_output=True, text=True, env=env, timeout=timeout
        )
    except subprocess.TimeoutExpired as e:
        raise ChildProbeError(f"{module} {' '.join(args)}", -1, f"no answer within {timeout:g} s") from e
    if proc.returncode == 0:
        try:
            return json.loads(proc.stdout)
        except ValueError:
            pass
    raise ChildProbeError(f"{module} {' '.join(args)}", proc.returncode, proc.stderr.strip()[-400:])


def cache_dir() -> Path:
    """$MPVIZ_CACHE_DIR, else $XDG_CACHE_HOME/mpviz, else ~/.cache/mpviz."""
    if os.environ.get("MPVIZ_CACHE_DIR"):
        return Path(os.environ["MPVIZ_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mpviz"


def torch_build() -> str:
    """The installed torch's version and commit, safe in a file name: what a probe's disk cache is keyed on."""
    return re.sub(r"[^\w.+-]", "_", f"{torch.__version__}-{(torch.version.git_version or '')[:12]}")


def _cache_file(device: str) -> Path:
    return cache_dir() / f"autocast-policy-{device}-{torch_build()}-v{PROBE_VERSION}.json"


_lock = threading.Lock()


def device_policy(device: str) -> DevicePolicy:
    """The autocast policy of `device` for the installed torch: from memory, the disk cache, or a child probe.

    Raises ValueError for a device without a probeable policy, ChildProbeError if the child probe dies.
    """
    if device not in probeable_devices():
        raise ValueError(f"no probeable autocast policy for device {device!r} (choices: {probeable_devices()})")
    with _lock:  # one probe at a time: two sessions asking at once must not start two children
        return _device_policy(device, str(cache_dir()))


_log = logging.getLogger(__name__)


def read_cached_policy(path: Path, device: str) -> DevicePolicy | None:
    """The policy stored at `path` if it passes the schema check and was probed from this torch for `device`.

    A file that is missing says nothing; one that exists but fails (truncated JSON, `"categories": []` or `{}`,
    an unknown category, another torch version or device) is logged as a warning and treated as missing, so the
    caller probes again and overwrites it: a damaged cache must never stand in for a measurement.
    """
    try:
        text = path.read_text()
    except OSError:
        return None
    try:
        policy = DevicePolicy.from_dict(json.loads(text))
        if policy.torch_version != torch.__version__:
            raise PolicySchemaError("torch_version", f"{policy.torch_version}, running {torch.__version__}")
        if policy.device != device:
            raise PolicySchemaError("device", f"{policy.device}, expected {device}")
    except ValueError as e:  # json.JSONDecodeError and PolicySchemaError are ValueErrors
        reason = e.reason if isinstance(e, PolicySchemaError) else "not_json"
        _log.warning("discarding autocast policy cache %s (%s: %s); probing again", path, reason, str(e)[:200])
        return None
    return policy


@lru_cache(maxsize=16)
def _device_policy(device: str, _cache_dir: str) -> DevicePolicy:  # the dir is in the key: tests switch it
    path = _cache_file(device)
    cached = read_cached_policy(path, device)
    if cached is not None:
        return cached
    policy = _probe_in_child(device)
    try:  # write atomically; an unwritable cache only costs a re-probe in the next process
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(policy.to_dict()))
        os.replace(tmp, path)
    except OSError:
        pass
    return policy


def _probe_in_child(device: str) -> DevicePolicy:
    try:
        return DevicePolicy.from_dict(run_child("mpviz.policy_probe", device))
    except PolicySchemaError as e:
        raise ChildProbeError(f"the {device} autocast policy", 0, f"unexpected JSON: {e}") from e


# ── side by side ────────────────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class PolicyRow:
    op: str  # "aten::softmax.int"
    categories: tuple[str | None, ...]  # one per compared device; None = autocast leaves the op alone there
    differs: bool  # the devices do not agree


def policy_table(policies: Sequence[DevicePolicy]) -> list[PolicyRow]:
    """One row per op handled on any of the devices, sorted by name."""
    ops = sorted({op for p in policies for op in p.ops()})
    rows = []
    for op in ops:
        cats = tuple(p.category_of(op) for p in policies)
        rows.append(PolicyRow(op, cats, len(set(cats)) > 1))
    return rows


@dataclass(frozen=True)
class PolicyComparison:
    """Two devices' policies op by op. `rows` covers the union of both policies, so an op can differ in two ways:
    only one device's autocast handles it (`only`), or both do, in different categories (`both_differ`)."""

    devices: tuple[str, str]
    rows: tuple[PolicyRow, ...]  # one per op in either policy, sorted by name
    only: tuple[int, int]  # ops in the first device's policy only, in the second's only
    both_differ: int  # ops in both policies, in different categories
    both_same: int  # ops in both policies, in the same category

    @property
    def differ(self) -> int:
        """Rows marked `differs`: sum(only) + both_differ."""
        return sum(self.only) + self.both_differ


def compare_policies(first: DevicePolicy, second: DevicePolicy) -> PolicyComparison:
    """`first` and `second` side by side; ValueError for one device compared with itself (nothing can differ)."""
    if first.device == second.device:
        raise ValueError(f"compare two different devices, not {first.device!r} with itself")
    rows = policy_table([first, second])
    only = (
        sum(a is not None and b is None for a, b in (r.categories for r in rows)),
        sum(a is None and b is not None for a, b in (r.categories for r in rows)),
    )
    both = [r for r in rows if None not in r.categories]
    n_differ = sum(r.differs for r in both)
    return PolicyComparison((first.device, second.device), tuple(rows), only, n_differ, len(both) - n_differ)


# ── probe one everyday function on each device ──────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class ProbeFunction:
    """A function a reader can probe: its floating inputs (shape each) and how to call it on them."""

    name: str  # "softmax"
    inputs: tuple[tuple[str, tuple[int, ...]], ...]  # (input name, shape) for each floating input
    call: Callable[..., torch.Tensor]  # call(*floating inputs, *int64 inputs) → result
    int_inputs: tuple[tuple[int, ...], ...] = ()  # shapes of int64 inputs (class targets), filled with 0


PROBE_FUNCTIONS: dict[str, ProbeFunction] = {
    f.name: f
    for f in (
        ProbeFunction("matmul", (("a", (4, 8)), ("b", (8, 4))), torch.matmul),
        ProbeFunction("linear", (("x", (4, 8)), ("weight", (6, 8)), ("bias", (6,))), F.linear),
        ProbeFunction("softmax", (("x", (4, 8)),), lambda x: torch.softmax(x, dim=-1)),
        ProbeFunction("log_softmax", (("x", (4, 8)),), lambda x: torch.log_softmax(x, dim=-1)),
        ProbeFunction(
            "layer_norm",
            (("x", (4, 8)), ("weight", (8,)), ("bias", (8,))),
            lambda x, w, b: F.layer_norm(x, (8,), w, b),
        ),
        ProbeFunction("exp", (("x", (4, 8)),), torch.exp),
        ProbeFunction("log", (("x", (4, 8)),), torch.log),
        ProbeFunction("sum", (("x", (4, 8)),), torch.sum),
        ProbeFunction("cross_entropy", (("logits", (4, 8)),), F.cross_entropy, int_inputs=((4,),)),
        ProbeFunction("mse_loss", (("input", (4, 8)), ("target", (4, 8))), F.mse_loss),
        ProbeFunction("cat", (("a", (4, 8)), ("b", (4, 8))), lambda a, b: torch.cat([a, b])),
        ProbeFunction("add", (("a", (4, 8)), ("b", (4, 8))), torch.add),
        ProbeFunction("mul", (("a", (4, 8)), ("b", (4, 8))), torch.mul),
        ProbeFunction("gelu", (("x", (4, 8)),), F.gelu),
        ProbeFunction("relu", (("x", (4, 8)),), F.relu),
        ProbeFunction("addcmul", (("x", (4, 8)), ("a", (4, 8)), ("b", (4, 8))), torch.addcmul),
        ProbeFunction(
            "scaled_dot_product_attention",
            (("q", (2, 4, 8)), ("k", (2, 4, 8)), ("v", (2, 4, 8))),
            F.scaled_dot_product_attention,
        ),
    )
}
PROBE_INPUT_DTYPES = ("float32", "float16", "bfloat16", "float64")


@dataclass(frozen=True)
class CallStep:
    op: str  # "aten._to_copy.default"
    inputs: tuple[str, ...]  # dtypes of the tensor arguments
    outputs: tuple[str, ...]
    is_cast: bool  # a dtype conversion (`_to_copy`) — under autocast usually autocast's own


@dataclass(frozen=True)
class CallProbe:
    device: str
    function: str
    input_dtypes: tuple[str, ...]
    autocast_dtype: str
    output_dtype: str | None  # under autocast; None when the call failed
    output_dtype_without_autocast: str | None
    steps: tuple[CallStep, ...]  # every ATen op that ran under autocast, in order
    fake: bool  # run on fake tensors (CUDA on a machine without one) rather than real ones
    error: str | None = None

    @property
    def casts_before_compute(self) -> tuple[CallStep, ...]:
        """The casts that ran before the first op that computes: autocast's, or the op converting its input."""
        first = next((i for i, s in enumerate(self.steps) if not s.is_cast), len(self.steps))
        return self.steps[:first]


def probe_call(function: str, input_dtypes: Sequence[str], device: str, autocast_dtype: str) -> CallProbe:
    """Run PROBE_FUNCTIONS[function] on `device`, inputs of `input_dtypes`, under autocast(`autocast_dtype`).

    CPU runs on real tensors (holding `autocast_shared()`); other devices on fake tensors with that device's
    real Autocast kernels. Raises ValueError for an unknown function, dtype or device; a call that torch
    rejects is reported in `error`, not raised.
    """
    if function not in PROBE_FUNCTIONS:
        raise ValueError(f"unknown function {function!r} (choices: {sorted(PROBE_FUNCTIONS)})")
    spec = PROBE_FUNCTIONS[function]
    if len(input_dtypes) != len(spec.inputs) or any(d not in PROBE_INPUT_DTYPES for d in input_dtypes):
        raise ValueError(f"{function} takes {len(spec.inputs)} input dtypes from {PROBE_INPUT_DTYPES}")
    if device not in probeable_devices():
        raise ValueError(f"cannot probe device {device!r} (choices: {probeable_devices()})")
    low = getattr(torch, autocast_dtype, None)
    if autocast_dtype not in ("float16", "bfloat16") or low is None:
        raise ValueError(f"autocast dtype must be float16 or bfloat16, not {autocast_dtype!r}")
    fake = device != "cpu"
    dtypes = [getattr(torch, d) for d in input_dtypes]
    with autocast_shared() if device == "cpu" else nullcontext():
        rec, out, error = _run_function(spec, dtypes, device, low, fake)
        _, plain_out, _ = _run_function(spec, dtypes, device, None, fake)
    steps = []
    for func, args, kwargs, result in rec.compute_calls():
        ins = tuple(dtype_name(t.dtype) for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor))
        outs = tuple(dtype_name(t.dtype) for t in tree_flatten(result)[0] if isinstance(t, torch.Tensor))
        steps.append(CallStep(str(func), ins, outs, func is _TO_COPY))
    return CallProbe(
        device,
        function,
        tuple(input_dtypes),
        autocast_dtype,
        dtype_name(out.dtype) if isinstance(out, torch.Tensor) else None,
        dtype_name(plain_out.dtype) if isinstance(plain_out, torch.Tensor) else None,
        tuple(steps),
        fake,
        error,
    )


def _run_function(spec: ProbeFunction, dtypes, device, low, fake) -> tuple[DispatchLog, object, str | None]:
    rec, out, error = DispatchLog(), None, None
    try:
        with FakeTensorMode() if fake else nullcontext(), autocast_state(device, low):
            g = torch.Generator().manual_seed(0)
            inputs = [
                torch.randn(shape, generator=g).abs().add(0.5).to(device=device, dtype=dtype)
                if not fake
                else torch.empty(shape, device=device, dtype=dtype)
                for (_, shape), dtype in zip(spec.inputs, dtypes, strict=True)
            ]
            inputs += [torch.zeros(shape, dtype=torch.int64, device=device) for shape in spec.int_inputs]
            with rec:
                out = spec.call(*inputs)
    except Exception as e:  # torch refusing a dtype mix is a result to show, not a crash
        error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return rec, out, error
