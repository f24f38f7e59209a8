"""The lesson bundle of any nn.Module: every ATen op of one forward + backward under autocast, for `mpviz.show`.

`model_bundle(model, inputs, device=, dtype=)` runs `model(*inputs, **kwargs)` under autocast, backward from its loss,
with `mpviz.trace` watching, and returns a `LessonBundle` of the attention lesson's schema (mpviz.bundle), so the
same stepper steps through it. What differs from the attention lesson's bundle:

- Landmarks are the model's own modules: the output of every `named_modules()` module but the root (its path is its
  name, "transformer.h.0.attn") and every parameter's gradient ("grad_<name>", as `mpviz.trace` marks them). The
  story is those steps; the graph has no nodes (the stepper then draws the module tree, modtree.js).
- Errors against float64 come from a deep copy of the model in float64 run on the same inputs (floating inputs
  widened, others as given), without autocast. A model that cannot run in float64 (a kernel without a float64
  version, a dtype fixed inside its code) still gets its bundle: `run.reference_failed` names the exception's type
  and there are no errors.
- Every op keeps the small sample (`mpviz.bundle.OTHER_SAMPLE`, an 8×8 corner) whatever it is, so the bundle grows
  by about one kilobyte per op; `MAX_EVENTS` and `MAX_BYTES` bound it, and a model past either raises
  `ModelBundleError` (the view says which limit, in words) instead of sending the browser a bundle it chokes on.

The loss: `loss(output)` when given; else the output itself when it is a scalar tensor, its `.loss` when that is
one (a Hugging Face model given labels), else the sum of its first floating tensor in float32 (every output element
then gets gradient 1: backward runs through the whole model). The user's model keeps its parameters' `.grad` as
they were, its training mode and the global random state too; it is moved to `device`.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Mapping, Sequence
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
from mpviz.model import parse_autocast_dtype
from mpviz.notices import feeding_casts
from mpviz.serialize import to_jsonable
from mpviz.stats import dtype_name
from mpviz.trace import Trace, trace

MAX_EVENTS = 20_000  # ops of forward + backward: ~20 MB of bundle, about what a browser tab steps through smoothly
MAX_BYTES = 24 * 2**20  # the bundle's JSON; with MAX_EVENTS this is reached only by ops with very many outputs
SEED = 0  # both runs start from the same random state (dropout draws alike where the kernels allow)


class ModelBundleError(ValueError):
    """A model mpviz cannot bundle as asked; `code` is stable for the view to word (locales/*/notebook.toml):

    "too_many_events"  more ops than the cap: `cap`, `size` (ops)
    "too_many_bytes"   a bundle larger than the cap: `cap`, `size` (bytes)
    "no_float_output"  no loss given, and the model's output holds no floating tensor to run backward from
    """

    def __init__(self, code: str, cap: int = 0, size: int = 0) -> None:
        self.code, self.cap, self.size = code, cap, size
        super().__init__(f"{code} (cap {cap}, size {size})")


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
    return t.float().sum()


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


def _run(model, inputs, kwargs, loss_fn, device: str, autocast) -> None:
    """One forward + backward from the same random state, leaving the caller's random state as it was."""
    d = torch.device(device)
    with torch.random.fork_rng(devices=[d.index or 0] if d.type == "cuda" else []):
        torch.manual_seed(SEED)
        with autocast:
            out = model(*_to(inputs, device), **_to(kwargs, device))
        loss_fn(out).backward()


def _reference(model, inputs, kwargs, loss_fn, device: str) -> dict[str, torch.Tensor]:
    """Every landmark of the float64 copy's forward + backward, no autocast (raises whatever the model raises)."""
    ref = copy.deepcopy(model).to(torch.float64)
    sink = landmarks.LandmarkCapture()
    widened = _to(inputs, device, torch.float64), _to(kwargs, device, torch.float64)
    with landmarks.recording(sink, ref), _marking_modules(ref):
        _run(ref, *widened, loss_fn, device, contextlib.nullcontext())
    return sink.tensors


def _reference_errors(kept, model, inputs, kwargs, loss_fn, device) -> tuple[dict[str, LandmarkError], str | None]:
    try:
        ref = _reference(model, inputs, kwargs, loss_fn, device)
    except Exception as exc:  # any model code may fail in float64; the bundle says so and goes on
        return {}, type(exc).__name__
    return {name: landmark_error(t, ref[name]) for name, t in kept.items() if name in ref}, None


def trace_model(
    model: nn.Module,
    inputs: Sequence[Any],
    *,
    device: str = "cpu",
    dtype: str | torch.dtype | None = "bf16",
    kwargs: Mapping[str, Any] | None = None,
    loss: Callable[[Any], torch.Tensor] | None = None,
    reference: bool = True,
) -> tuple[Trace, dict[str, LandmarkError], str | None]:
    """Trace `model`'s forward + backward (see the module docstring): (trace, landmark errors vs float64, the
    reference's exception type name when the float64 copy failed, else None). `reference=False` skips the float64
    copy (it holds a second model and every module's output): no errors then."""
    ac = parse_autocast_dtype(dtype)
    device_type = torch.device(device).type
    model.to(device)
    kwargs = dict(kwargs or {})
    loss_fn = loss or default_loss
    kept = landmarks.LandmarkCapture()
    policy = policy_map(device_type) if ac is not None else None
    autocast = torch.autocast(device_type, dtype=ac) if ac is not None else contextlib.nullcontext()
    grads = {p: p.grad for p in model.parameters()}
    try:
        for p in grads:
            p.grad = None
        with _marking_modules(model), trace(model, device, on_landmark=kept.on_mark, policy=policy) as t:
            _run(model, inputs, kwargs, loss_fn, device, autocast)
    finally:
        for p, g in grads.items():  # the caller's gradients, as they were
            p.grad = g
    t.autocast_dtype = dtype_name(ac) if ac is not None else None
    if not reference:
        return t, {}, None
    errors, failed = _reference_errors(kept.tensors, model, inputs, kwargs, loss_fn, device)
    return t, errors, failed


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
) -> LessonBundle:
    """The bundle of `model(*inputs, **kwargs)` (see the module docstring; `reference` as in `trace_model`);
    `ModelBundleError` past either cap."""
    t, reference_error, failed = trace_model(
        model, inputs, device=device, dtype=dtype, kwargs=kwargs, loss=loss, reference=reference
    )
    if len(t.events) > max_events:
        raise ModelBundleError("too_many_events", max_events, len(t.events))
    names = names_by_event(t)
    events = [
        event_json(e, k, names.get(e.index, []), None, OTHER_SAMPLE)
        for e, k in zip(t.events, event_keys(t), strict=True)
    ]
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
    bundle = LessonBundle(to_jsonable(data))
    size = len(bundle.to_json().encode())
    if size > max_bytes:
        raise ModelBundleError("too_many_bytes", max_bytes, size)
    return bundle
