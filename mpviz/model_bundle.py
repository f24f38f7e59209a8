"""The lesson bundle of any nn.Module: every ATen op of one forward + backward under autocast, for `mpviz.show`.

`model_bundle(model, inputs, device=, dtype=)` runs `model(*inputs, **kwargs)` under autocast, backward from its loss,
with `mpviz.trace` watching, and returns a `LessonBundle` of the attention lesson's schema (mpviz.bundle), so the
same stepper steps through it. What differs from the attention lesson's bundle:

- Landmarks are the model's own modules: the output of every `named_modules()` module but the root (its path is its
  name, "transformer.h.0.attn") and every parameter's gradient ("grad_<name>", as `mpviz.trace` marks them). The
  story is those steps; the graph has no nodes (the stepper then draws the module tree, modtree.js).
- Errors against float64 come from the same model run again with float64 copies of its parameters and floating
  buffers (`torch.func.functional_call`: no deep copy of the module) on the same inputs (floating inputs widened,
  others as given), without autocast. Each landmark's error is computed as soon as the float64 run reaches it, and
  both tensors are dropped then: of the autocast run only the landmarks are kept (module outputs cloned, parameter
  gradients as autograd left them), and no float64 gradient outlives its comparison. A model that cannot run in
  float64 (a kernel without a float64 version, a dtype fixed inside its code) still gets its bundle:
  `run.reference_failed` names the exception's type and there are no errors.
- Outputs of more than `SAMPLE_ABOVE` (8,192) elements get sampled statistics (`mpviz.stats`: exact min/max,
  non-finite and overflow counts, the rest from an even sample; `stats.sampled` in the bundle says how many).
- Every op keeps the small sample (`mpviz.bundle.OTHER_SAMPLE`, an 8×8 corner) whatever it is, so the bundle grows
  by about one kilobyte per op; `MAX_EVENTS` and `MAX_BYTES` bound it, and a model past either raises
  `ModelBundleError` (the view says which limit, in words) instead of sending the browser a bundle it chokes on:
  the op past `MAX_EVENTS` stops the trace at once (and a model with many parameter tensors whose step, counted
  first untraced by `mpviz.op_count`, runs past it is refused before any tracing), and a bundle past
  `MAX_BYTES` is refused before the float64 run. Bad requests raise `ModelBundleError` too, before any work
  where they can be seen (see its codes).
- `model_stream` is the notebook widget's way past those caps: the same bundle, but past either cap it is streamed
  (mpviz.event_chunks): the events' JSON kept in chunks, the browser sent a head of thin events and the first
  chunk. Its own ceilings are absolute (`MAX_STREAM_EVENTS` ops, `MAX_STREAM_BYTES` of events in the kernel, a
  head within `MAX_BYTES`): past them it raises "too_large_to_stream". The lesson file and the app need the whole
  bundle at once, so they keep to the caps (`model_bundle`).
- `progress(Progress)` is told the phase, the ops so far and an estimate of the time left, a few times a second;
  what it raises (KeyboardInterrupt) ends the trace with the guarantees below kept.

The loss: `loss(output)` when given; else the output itself when it is a scalar tensor, its `.loss` when that is
one (a Hugging Face model given labels), else the sum of its first floating tensor in float32 (float64 for the
reference; every output element then gets gradient 1: backward runs through the whole model). The user's model
keeps its parameters' `.grad` as they were, its training mode and the global random state too, also when the trace
raises or is interrupted; it is moved to `device`.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from mpviz import landmarks
from mpviz.attention import LandmarkError, landmark_error, policy_map
from mpviz.bundle import (
    OTHER_SAMPLE,
    SCHEMA,
    LessonBundle,
    event_json,
    event_keys,
    landmark_errors,
    names_by_event,
    trace_fields,
)
from mpviz.event_chunks import MAX_STREAM_BYTES, MAX_STREAM_EVENTS, EventChunks, chunk_events, thin_event
from mpviz.model import parse_autocast_dtype
from mpviz.notices import feeding_casts
from mpviz.op_count import ops_past_cap
from mpviz.serialize import to_jsonable
from mpviz.stats import SAMPLE_SIZE, dtype_name
from mpviz.trace import Trace, TraceError, trace

MAX_EVENTS = 20_000  # ops of forward + backward: ~20 MB of bundle, about what a browser tab steps through smoothly
MAX_BYTES = 24 * 2**20  # the bundle's JSON; with MAX_EVENTS this is reached only by ops with very many outputs
SEED = 0  # both runs start from the same random state (dropout draws alike where the kernels allow)
# Outputs larger than this get sampled statistics (mpviz.stats.SAMPLE_SIZE elements, the most a sample reads): one
# torch pass each on the op's device for the exact figures, and a fixed cost for the sample's, whatever the size.
# A GPT-2-small step's 64 × 768 activations then cost ~0.2 ms each instead of ~2 ms read exactly in numpy.
SAMPLE_ABOVE = SAMPLE_SIZE
PARAM_GRAD = landmarks.PARAM_GRAD_PREFIX  # a parameter's gradient landmark is "grad_<name>"
DEVICES = ("cpu", "cuda")  # the device types mpviz.trace watches autocast on
REPORT_EVERY = 0.25  # seconds between progress reports
# Rough shares of the time the phases after the forward take, relative to the traced forward, for "time left":
# the traced backward runs about twice its forward's ops; the float64 run is untraced (no statistics).
BACKWARD_SHARE, REFERENCE_SHARE = 2.0, 1.0


class ModelBundleError(ValueError):
    """A model mpviz cannot bundle as asked; `code` is stable for the view to word (mpviz/locales/*/notebook.toml):

    "too_many_events"        more ops than the cap: `cap`, `size` (the ops traced when it stopped: cap + 1)
    "too_many_bytes"         a bundle larger than the cap: `cap`, `size` (bytes)
    "too_large_to_stream"    past even what streaming holds (model_stream): `detail` is "events" (`cap`, `size` as
                             too_many_events), "bytes" (the events' JSON in the kernel) or "head" (the thin events
                             the browser gets first), `cap` and `size` in bytes for those two
    "no_float_output"        no loss given, and the model's output holds no floating tensor to run backward from
    "bad_loss"               the loss is not a one-element floating tensor: `detail` says what it was
    "nothing_requires_grad"  the loss needs no gradient: no parameter (and no input) requires grad
    "unsupported_device"     a device mpviz does not trace on: `detail` is it
    "no_cuda"                device "cuda" asked where torch sees no CUDA device
    "meta_model"             the model's parameters or buffers are on the meta device: no values to run
    """

    def __init__(self, code: str, cap: int = 0, size: int = 0, detail: str = "") -> None:
        self.code, self.cap, self.size, self.detail = code, cap, size, detail
        super().__init__(f"{code} (cap {cap}, size {size}{', ' + detail if detail else ''})")


@dataclass(frozen=True)
class Progress:
    """Where a long trace is, for a progress display."""

    phase: str  # "forward" | "backward" (traced), "reference" (the float64 run), "bundle" (building the JSON)
    ops: int  # ops traced so far
    elapsed: float  # seconds since the trace began
    left: float | None  # estimated seconds left; None while the forward runs (nothing to estimate from yet)


class _Reporter:
    """Turns the trace's per-op calls into a few `Progress` reports a second, with the time left estimated from
    how long the traced forward took (see BACKWARD_SHARE, REFERENCE_SHARE)."""

    def __init__(self, progress: Callable[[Progress], None] | None, reference: bool) -> None:
        self.progress, self.reference = progress, reference
        self.start = time.monotonic()
        self.last = -math.inf  # the first op is reported at once
        self.forward_s: float | None = None
        self.phase, self.ops = "forward", 0

    def _left(self, now: float) -> float | None:
        if self.forward_s is None:
            return None
        total = self.forward_s * (1 + BACKWARD_SHARE + (REFERENCE_SHARE if self.reference else 0.0))
        return max(total - (now - self.start), 0.0)

    def on_event(self, ops: int, phase: str) -> None:
        now = time.monotonic()
        if phase == "backward" and self.forward_s is None:
            self.forward_s = now - self.start
        self.ops = ops
        if phase != self.phase or now - self.last >= REPORT_EVERY:
            self.report(phase, now)

    def report(self, phase: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self.phase, self.last = phase, now
        if self.progress is not None:
            self.progress(Progress(phase, self.ops, now - self.start, self._left(now)))


def first_tensor(out: Any, floating: bool = False) -> torch.Tensor | None:
    """The first tensor (with `floating`, the first floating one) in a module's output: itself, or the first in a
    tuple / list / dict / ModelOutput, depth first."""
    if isinstance(out, torch.Tensor):
        return out if out.is_floating_point() or not floating else None
    values = out.values() if isinstance(out, Mapping) else out if isinstance(out, (list, tuple)) else ()
    for v in values:
        found = first_tensor(v, floating)
        if found is not None:
            return found
    return None


def default_loss(out: Any) -> torch.Tensor:
    """The scalar backward starts from when the caller gives no loss (see the module docstring)."""
    if isinstance(out, torch.Tensor) and out.numel() == 1:
        return out.reshape(())
    loss = getattr(out, "loss", None)
    if isinstance(loss, torch.Tensor) and loss.numel() == 1:
        return loss.reshape(())
    t = first_tensor(out, floating=True)
    if t is None:
        raise ModelBundleError("no_float_output")
    return t.to(torch.promote_types(t.dtype, torch.float32)).sum()  # float64 stays: the reference's sum


def _checked_loss(loss: Any) -> torch.Tensor:
    """`loss` if backward can start from it, else the ModelBundleError that says why not."""
    if not isinstance(loss, torch.Tensor):
        raise ModelBundleError("bad_loss", detail=type(loss).__name__)
    if loss.numel() != 1 or not loss.is_floating_point():
        raise ModelBundleError("bad_loss", detail=f"Tensor(shape={list(loss.shape)}, dtype={dtype_name(loss.dtype)})")
    if not loss.requires_grad:
        raise ModelBundleError("nothing_requires_grad")
    return loss if loss.dim() == 0 else loss.reshape(())  # a reshape would be one more op in the trace


def _check_request(model: nn.Module, device: str) -> None:
    """The requests that would fail inside torch with its own words, refused first in ours."""
    try:
        device_type = torch.device(device).type
    except (RuntimeError, TypeError, ValueError):
        device_type = None
    if device_type not in DEVICES:
        raise ModelBundleError("unsupported_device", detail=str(device))
    if device_type == "cuda" and not torch.cuda.is_available():
        raise ModelBundleError("no_cuda", detail=str(device))
    if any(t.is_meta for t in (*model.parameters(), *model.buffers())):
        raise ModelBundleError("meta_model")


@contextlib.contextmanager
def _marking_modules(model: nn.Module):
    """Mark each module's output (every module but the root) as a landmark named by its path. A module that hands
    back one of its own inputs unchanged (Dropout in eval mode, Identity) made nothing: that tensor keeps the name
    of the op or module that made it, never the name of the module it passed through next."""

    def hook(path: str):
        def mark(module: nn.Module, args: Any, kwargs: Mapping[str, Any], out: Any) -> None:
            t = first_tensor(out, floating=True)
            if t is not None and not any(t is a for a in (*args, *kwargs.values())):
                landmarks.mark(t, path)

        return mark

    handles = [m.register_forward_hook(hook(path), with_kwargs=True) for path, m in model.named_modules() if path]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def _to(value: Any, device: str, dtype: torch.dtype | None = None) -> Any:
    """`value` with its tensors moved to `device` (floating ones also to `dtype`), nested containers kept."""
    if isinstance(value, torch.Tensor):
        return value.to(device, dtype) if dtype is not None and value.is_floating_point() else value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, device, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _to(v, device, dtype) for k, v in value.items()}
    return value


def _run(forward: Callable[..., Any], inputs, kwargs, loss_fn, device: str, autocast) -> None:
    """One forward + backward from the same random state, leaving the caller's random state as it was."""
    d = torch.device(device)
    with torch.random.fork_rng(devices=[d.index or 0] if d.type == "cuda" else []):
        torch.manual_seed(SEED)
        with autocast:
            out = forward(*_to(inputs, device), **_to(kwargs, device))
        loss = _checked_loss(loss_fn(out))
        del out  # what backward does not need is freed as it goes
        loss.backward()


class _Kept:
    """The autocast run's landmarks, for the float64 comparison: module outputs cloned when marked (the last mark
    of a name wins), parameter gradients (names in `grads`) taken after backward instead, since autograd would
    otherwise copy each one to keep ours apart. `marks` counts the marks of each name."""

    def __init__(self, grads: set[str]) -> None:
        self.grads = grads
        self.tensors: dict[str, torch.Tensor] = {}
        self.marks: dict[str, int] = {}

    def on_mark(self, name: str, t: torch.Tensor) -> None:
        self.marks[name] = self.marks.get(name, 0) + 1
        if name not in self.grads:
            self.tensors[name] = t.detach().clone()


class _Comparer:
    """The float64 run's landmarks, each compared with the kept one when the float64 run reaches the same mark
    (the last of its name), then both dropped."""

    def __init__(self, kept: _Kept) -> None:
        self.kept, self.seen = kept, {}
        self.errors: dict[str, LandmarkError] = {}

    def on_mark(self, name: str, t: torch.Tensor) -> None:
        self.seen[name] = self.seen.get(name, 0) + 1
        if self.seen[name] == self.kept.marks.get(name) and name in self.kept.tensors:
            self.errors[name] = landmark_error(self.kept.tensors.pop(name), t.detach())


def _reference_errors(model, inputs, kwargs, loss_fn, device, kept: _Kept) -> tuple[dict[str, LandmarkError], str]:
    """Every kept landmark's error against the model run in float64 (see the module docstring); and the float64
    run's exception type name when it failed (then no errors), else ""."""
    comparer = _Comparer(kept)
    wide: dict[str, torch.Tensor] = {}
    handles = []

    def compare_grad(name: str):
        def hook(w: torch.Tensor) -> None:  # after the gradient is accumulated: compare, then let it go
            comparer.on_mark(name, w.grad)
            w.grad = None

        return hook

    try:
        for name, p in model.named_parameters():  # tied parameters once, as their first name
            wide[name] = p.detach().to(torch.float64).requires_grad_(p.requires_grad)
            if p.requires_grad:
                handles.append(wide[name].register_post_accumulate_grad_hook(compare_grad(PARAM_GRAD + name)))
        for name, b in model.named_buffers():
            wide[name] = b.detach().to(torch.float64, copy=True) if b.is_floating_point() else b

        def forward(*args, **kw):
            return torch.func.functional_call(model, wide, args, kw, tie_weights=True, strict=False)

        widened = _to(inputs, device, torch.float64), _to(kwargs, device, torch.float64)
        with landmarks.recording(comparer), _marking_modules(model):
            _run(forward, *widened, loss_fn, device, contextlib.nullcontext())
    except Exception as exc:  # any model code may fail in float64; the bundle says so and goes on
        return {}, type(exc).__name__
    finally:
        for h in handles:
            h.remove()
        kept.tensors.clear()
    return comparer.errors, ""


def _traced(model, inputs, kwargs, loss_fn, device, dtype, reporter: _Reporter, max_events, kept: _Kept | None):
    """The autocast run, traced; `kept` (when given) receives its landmarks. The caller's gradients are put back
    whatever happens (the trace's own `finally` removes its hooks and kernels' state)."""
    ac = parse_autocast_dtype(dtype)
    device_type = torch.device(device).type
    policy = policy_map(device_type) if ac is not None else None
    autocast = torch.autocast(device_type, dtype=ac) if ac is not None else contextlib.nullcontext()
    params = dict(model.named_parameters())
    grads = {p: p.grad for p in params.values()}
    on_landmark = kept.on_mark if kept is not None else None
    region = trace(
        model,
        device,
        on_landmark=on_landmark,
        policy=policy,
        sample_above=SAMPLE_ABOVE,
        max_events=max_events,
        on_event=reporter.on_event,
        sample_caps=(OTHER_SAMPLE, OTHER_SAMPLE),  # the bundle keeps an 8×8 corner of every output, landmarks too
    )
    try:
        for p in grads:
            p.grad = None
        with _marking_modules(model), region as t:
            _run(model, inputs, kwargs, loss_fn, device, autocast)
        if kept is not None:  # the gradients autograd left: kept without a copy
            kept.tensors.update({PARAM_GRAD + n: p.grad for n, p in params.items() if p.grad is not None})
    except TraceError as err:
        if err.code == "too_many_events":
            raise ModelBundleError("too_many_events", max_events, max_events + 1) from None
        raise
    finally:
        for p, g in grads.items():  # the caller's gradients, as they were
            p.grad = g
    t.autocast_dtype = dtype_name(ac) if ac is not None else None
    return t


def trace_model(
    model: nn.Module,
    inputs: Sequence[Any],
    *,
    device: str = "cpu",
    dtype: str | torch.dtype | None = "bf16",
    kwargs: Mapping[str, Any] | None = None,
    loss: Callable[[Any], torch.Tensor] | None = None,
    reference: bool = True,
    max_events: int | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> tuple[Trace, dict[str, LandmarkError], str | None]:
    """Trace `model`'s forward + backward (see the module docstring): (trace, landmark errors vs float64, the
    reference's exception type name when the float64 run failed, else None). `reference=False` skips the float64
    run (and keeps no landmark for it): no errors then."""
    t, run_reference = _trace_only(_Run(model, inputs, device, dtype, kwargs, loss, reference, progress), max_events)
    errors, failed = run_reference()
    return t, errors, failed


@dataclass(frozen=True)
class _Run:
    """What trace_model, model_bundle and model_stream are asked to run, as their keywords say (caps apart)."""

    model: nn.Module
    inputs: Sequence[Any]
    device: str
    dtype: str | torch.dtype | None
    kwargs: Mapping[str, Any] | None
    loss: Callable[[Any], torch.Tensor] | None
    reference: bool
    progress: Callable[[Progress], None] | None


def _trace_only(run: _Run, max_events: int | None):
    """The traced run, and a function that runs the float64 comparison for it: (errors, failed type name or None)."""
    model, inputs, device, dtype, reference = run.model, run.inputs, run.device, run.dtype, run.reference
    _check_request(model, device)
    model.to(device)
    kwargs = dict(run.kwargs or {})
    loss_fn = run.loss or default_loss
    if max_events is not None:  # far past the cap: refused in a fraction of a second, before any tracing
        ac = parse_autocast_dtype(dtype)
        autocast = torch.autocast(torch.device(device).type, dtype=ac) if ac is not None else None
        counted = ops_past_cap(model, _to(inputs, device), _to(kwargs, device), loss_fn, max_events, autocast)
        if counted is not None:
            raise ModelBundleError("too_many_events", max_events, counted)
    reporter = _Reporter(run.progress, reference)
    kept = _Kept({PARAM_GRAD + n for n, _ in model.named_parameters()}) if reference else None
    t = _traced(model, inputs, kwargs, loss_fn, device, dtype, reporter, max_events, kept)

    def run_reference() -> tuple[dict[str, LandmarkError], str | None]:
        if kept is None:
            return {}, None
        reporter.report("reference")
        errors, failed = _reference_errors(model, inputs, kwargs, loss_fn, device, kept)
        reporter.report("bundle")
        return errors, failed or None

    return t, run_reference


def _event_json(e, key: str, names: list[str]) -> dict:
    """`mpviz.bundle.event_json` with the 8×8 corner, and `stats.sampled` on outputs whose statistics were sampled."""
    d = event_json(e, key, names, None, OTHER_SAMPLE)
    for info, out in zip(e.outputs, d["out"], strict=True):
        if info.stats is not None and info.stats.sampled:
            out["stats"]["sampled"] = info.stats.sampled
    return d


def _input_info(values: Sequence[Any]) -> list[dict]:
    """dtype and shape of each input (its first tensor, for a nested one), for the run's description."""
    tensors = [t for t in map(first_tensor, values) if t is not None]
    return [{"dtype": dtype_name(t.dtype), "shape": list(t.shape)} for t in tensors]


def model_bundle(
    model: nn.Module,
    inputs: Sequence[Any],
    *,
    device: str = "cpu",
    dtype: str | torch.dtype | None = "bf16",
    kwargs: Mapping[str, Any] | None = None,
    loss: Callable[[Any], torch.Tensor] | None = None,
    reference: bool = True,
    max_events: int = MAX_EVENTS,
    max_bytes: int = MAX_BYTES,
    progress: Callable[[Progress], None] | None = None,
) -> LessonBundle:
    """The bundle of `model(*inputs, **kwargs)` (see the module docstring; `reference` as in `trace_model`);
    `ModelBundleError` past either cap or for a request it cannot trace."""
    run = _Run(model, inputs, device, dtype, kwargs, loss, reference, progress)
    bundle, chunks = _bundle(run, max_events, max_bytes, stream=False)
    assert chunks is None  # past a cap, _bundle raised
    return bundle


def model_stream(
    model: nn.Module,
    inputs: Sequence[Any],
    *,
    device: str = "cpu",
    dtype: str | torch.dtype | None = "bf16",
    kwargs: Mapping[str, Any] | None = None,
    loss: Callable[[Any], torch.Tensor] | None = None,
    reference: bool = True,
    max_events: int = MAX_EVENTS,
    max_bytes: int = MAX_BYTES,
    progress: Callable[[Progress], None] | None = None,
) -> tuple[LessonBundle, EventChunks | None]:
    """As `model_bundle`, but past `max_events` or `max_bytes` streamed rather than refused: (the whole bundle, None)
    within the caps, else (its head, every event in chunks) (see the module docstring and mpviz.event_chunks).
    `ModelBundleError("too_large_to_stream")` past the absolute ceilings."""
    return _bundle(
        _Run(model, inputs, device, dtype, kwargs, loss, reference, progress), max_events, max_bytes, stream=True
    )


def _too_large_to_stream(what: str, cap: int, size: int) -> ModelBundleError:
    return ModelBundleError("too_large_to_stream", cap, size, what)


def _bundle(run: _Run, max_events: int, max_bytes: int, *, stream: bool):
    """model_bundle's and model_stream's work: (bundle or head, chunks when streamed else None)."""
    model, inputs, device, kwargs = run.model, run.inputs, run.device, run.kwargs
    trace_cap = max(max_events, MAX_STREAM_EVENTS) if stream else max_events
    try:
        t, run_reference = _trace_only(run, trace_cap)
    except ModelBundleError as err:
        if stream and err.code == "too_many_events":
            raise _too_large_to_stream("events", err.cap, err.size) from None
        raise
    names = names_by_event(t)
    events = [_event_json(e, k, names.get(e.index, [])) for e, k in zip(t.events, event_keys(t), strict=True)]
    # Each event is JSON-ready already (event_json): serialised once here, never walked again. ensure_ascii: one
    # character is one byte.
    encoded = [json.dumps(e, separators=(",", ":"), allow_nan=False).encode() for e in events]
    event_bytes = sum(map(len, encoded)) + len(events) - 1
    streamed = len(events) > max_events or event_bytes > max_bytes
    if streamed and not stream:  # the events alone are past the cap: refused before the float64 run
        if len(events) > max_events:
            raise ModelBundleError("too_many_events", max_events, len(events))
        raise ModelBundleError("too_many_bytes", max_bytes, event_bytes)
    if streamed and event_bytes > MAX_STREAM_BYTES:
        raise _too_large_to_stream("bytes", MAX_STREAM_BYTES, event_bytes)
    reference_error, failed = run_reference()
    story = [
        {"event": e.index, "landmarks": names[e.index], "casts": feeding_casts(t, e.index), "inputs": [], "notices": []}
        for e in t.story()
    ]
    errors, floor = landmark_errors(t, reference_error)
    bad = t.first_nonfinite()
    run = {
        "config": {
            "model": type(model).__name__,
            "parameters": sum(p.numel() for p in model.parameters()),
            "inputs": _input_info(list(inputs)) + _input_info(list((kwargs or {}).values())),
        },
        "device": torch.device(device).type,
        "computed_on": torch.device(device).type,
        "autocast_dtype": t.autocast_dtype,
        "torch_version": torch.__version__,
        "emulation_limits": [],
        "counterpart_device": None,
    }
    if failed is not None:
        run["reference_failed"] = failed
    data = {
        "schema": SCHEMA,
        "run": run,
        **trace_fields(t, events, story),
        "graph": {"nodes": [], "edges": []},
        "errors": errors,
        "error_floor": floor,
        "first_nonfinite": {"event": bad.index} if bad is not None else None,
    }
    data = to_jsonable(data | {"events": []})  # all but the events, which are JSON-ready
    rest = len(json.dumps(data, separators=(",", ":"), allow_nan=False))
    if not streamed and rest + max(event_bytes, 0) > max_bytes:  # the events fit, the story and errors do not
        if not stream:
            raise ModelBundleError("too_many_bytes", max_bytes, rest + event_bytes)
        streamed = True
    chunks = None
    if streamed:
        if event_bytes > MAX_STREAM_BYTES:
            raise _too_large_to_stream("bytes", MAX_STREAM_BYTES, event_bytes)
        chunks = chunk_events(encoded)
        whole = {*range(min(chunks.size, len(events)))} | ({bad.index} if bad is not None else set())
        events = [e if e["i"] in whole else thin_event(e) for e in events]  # the first chunk, the red banner's op
        size = rest + sum(len(json.dumps(e, separators=(",", ":"), allow_nan=False)) + 1 for e in events)
        if size > max(max_bytes, MAX_BYTES):
            raise _too_large_to_stream("head", max(max_bytes, MAX_BYTES), size)
    data["events"] = events
    return LessonBundle(data), chunks
