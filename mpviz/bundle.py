"""The lesson bundle: everything the in-browser attention lesson shows, as one bounded, JSON-ready object.

`lesson_bundle(cfg, device, dtype)` traces the block (forward + backward under autocast), compares it with a
float64 run and with the same run under the other device's autocast policy, and returns a `LessonBundle` whose
`.to_json()` is what the browser component receives. The browser steps, picks and zooms from it without asking
the server again, so it holds every event, not a window of them. Size is bounded by sampling: a landmark keeps at
most `LANDMARK_SAMPLE` elements per matrix and matrices per tensor (the heatmap's `probs` every head), any other op
`OTHER_SAMPLE`.

Schema (version `SCHEMA`; every dtype is torch's name without "torch.", every index an event index):

    run        config, device ("cpu" | "cuda" | "cuda-sim"), computed_on, autocast_dtype (null: autocast off),
               torch_version, emulation_limits (codes, cuda-sim only), counterpart_device (null when off)
    counts     events, forward, backward, casts
    formats    dtype → layout and range from mpviz.formats.FormatSpec (bits, bias, max, has_zero, ...) and
               mpviz.stats.FormatRange (overflow_at, underflow_at and whether the tie counts; overflow: what a value
               past max becomes, exactly rounded: "inf" | "nan" | "saturate"; torch_overflow: what torch's cast
               makes of it), for every dtype the trace shows and the range formats
    range_formats  the formats every floating output is measured against (stats.overflow / stats.underflow)
    events     every ATen op in execution order:
                 i, key (stable across devices/dtypes: the landmark name, else "phase|module|op|k"),
                 phase, module, op, in [{dtype, shape}], src (per input: producer event, "param:<name>" or null),
                 out [{dtype, shape, stats?, sample?}], cast (autocast inserted it, or its gradient),
                 cast_for (the autocast op a forward cast fed), node (autograd node), fwd (forward event of a
                 backward op), landmarks [names], creates_nonfinite, other_dtype (first output's dtype under the
                 counterpart device's policy, only where it differs)
               stats  numel min max abs_max mean std nan posinf neginf zero subnormal overflow{fmt: frac}
                      underflow{fmt: frac} log2_hist [[exponent, count]]; non-finite floats as "inf"/"-inf"/"nan"
               sample {shape [m, r, c], of [full shape], values: base64 of little-endian float32, row-major}
    landmarks  name → event index; landmark_outputs: name → which of that event's outputs it is
    story      the landmark steps in execution order: {event, landmarks [names], casts [cast events that fed
               it, back to the previous landmarks], inputs [landmarks it was computed from], notices [facts]}
    graph      nodes [{id (landmark), event, phase, dtype, other_dtype?, shape}], edges [{from, to, casts}]
    errors     landmark → {rel (normwise ‖a−ref‖/‖ref‖, null where the reference counts as zero), abs_rms,
               ref_rms, max_abs, nonfinite (a has inf/nan)}; error_floor: the ratio below which a reference
               counts as zero, relative to the largest reference of its pass
    first_nonfinite  {event, counterpart_event (null: the counterpart stays finite; absent: no counterpart)}

Notices are facts, not sentences: {"kind": ..., values}. The view turns each kind into words through its text
table, so a translation changes templates, never this module. Kinds and their values: see `mpviz.notices`.
"""

from __future__ import annotations

import base64
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from mpviz.attention import AttentionTrace, LandmarkError, compute_device, trace_attention
from mpviz.emulation import EMULATION_LIMITS
from mpviz.formats import FormatSpec, resolve_format
from mpviz.model import AttentionConfig
from mpviz.notices import feeding_casts, step_region, story_notices
from mpviz.serialize import to_jsonable
from mpviz.stats import RANGE_FORMATS, FormatRange, dtype_name
from mpviz.trace import OpEvent, Trace

SCHEMA = 1
LANDMARK_SAMPLE = {"max_side": 32, "max_mats": 4}  # per landmark: ≤ 4 matrices (heads) of ≤ 32×32 (the bundle budget)
HEATMAP_SAMPLE = {"max_side": 64, "max_mats": 16}  # probs, which the lesson draws per head: every head (≤ 16)
HEATMAP_LANDMARK = "probs"
OTHER_SAMPLE = {"max_side": 8, "max_mats": 1}  # any other op: its first 8×8 corner, for the element picker
MAX_BUNDLE_BYTES = 2 * 2**20  # the JSON of the largest allowed config stays under this (tests/test_bundle.py)
DEFAULT_BUNDLE_BYTES = 300_000  # ... and the default lesson's, which every student of a class downloads first
ERROR_FLOOR = 1e-9  # a reference whose RMS is below this share of its pass's largest counts as zero


@dataclass(frozen=True)
class LessonBundle:
    """The JSON-ready lesson for one (config, device, autocast dtype). Read-only; share it between sessions."""

    data: dict[str, Any]

    def to_json(self) -> str:
        return json.dumps(self.data, allow_nan=False, separators=(",", ":"))


def event_keys(trace: Trace) -> list[str]:
    """A name for each event that survives a change of device or dtype: its landmark, else its position among the
    ops of the same phase, module and op name (casts one device needs and another does not shift nothing else)."""
    seen: dict[tuple[str, str, str], int] = {}
    keys = []
    for e in trace.events:
        base = (e.phase, e.module, e.op)
        seen[base] = seen.get(base, 0) + 1
        keys.append(e.landmark if e.landmark else "|".join((*base, str(seen[base]))))
    return keys


def _sample(values: np.ndarray | None, full_shape: tuple[int, ...], caps: dict[str, int]) -> dict | None:
    if values is None:
        return None
    side, mats = caps["max_side"], caps["max_mats"]
    crop = np.ascontiguousarray(values[:mats, :side, :side], dtype="<f4")
    return {
        "shape": list(crop.shape),
        "of": list(full_shape),
        "values": base64.b64encode(crop.tobytes()).decode("ascii"),
    }


def _number(x: float) -> float | str:
    """A float as strict JSON holds it (serialize.to_jsonable's words for nan and ±inf), without its generic walk:
    a model's bundle has thousands of outputs."""
    x = float(x)
    return x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))


def _output(info, caps) -> dict:
    out: dict[str, Any] = {"dtype": info.dtype, "shape": list(info.shape)}
    if info.stats is not None:
        s = info.stats
        out["stats"] = {
            "numel": int(s.numel),
            "min": _number(s.min),
            "max": _number(s.max),
            "abs_max": _number(s.abs_max),
            "mean": _number(s.mean),
            "std": _number(s.std),
            "nan": int(s.nan),
            "posinf": int(s.posinf),
            "neginf": int(s.neginf),
            "zero": int(s.zero),
            "subnormal": int(s.subnormal),
            "overflow": {k: _number(v) for k, v in s.overflow_frac.items()},
            "underflow": {k: _number(v) for k, v in s.underflow_frac.items()},
            "log2_hist": [[int(e), int(c)] for e, c in s.log2_hist],
        }
    sample = _sample(info.sample, info.shape, caps)
    if sample is not None:
        out["sample"] = sample
    return out


def _source(s: int | str | None) -> int | str | None:
    return f"param:{s}" if isinstance(s, str) else s


def event_json(e: OpEvent, key: str, names: list[str], other_dtype: str | None, caps: dict | None = None) -> dict:
    """One event as the bundle holds it (the schema above); `caps` overrides the sample caps its landmarks pick."""
    if caps is None:
        caps = HEATMAP_SAMPLE if HEATMAP_LANDMARK in names else LANDMARK_SAMPLE if names else OTHER_SAMPLE
    d: dict[str, Any] = {
        "i": e.index,
        "key": key,
        "phase": e.phase,
        "module": e.module,
        "op": e.op,
        "in": [{"dtype": t.dtype, "shape": list(t.shape)} for t in e.inputs],
        "src": [_source(s) for s in e.sources],
        "out": [_output(o, caps) for o in e.outputs],
        "cast": e.autocast_cast,
        "cast_for": e.autocast_op,
        "node": e.autograd_node,
        "fwd": e.forward_index,
        "landmarks": names,
        "creates_nonfinite": e.creates_nonfinite,
    }
    if other_dtype is not None:
        d["other_dtype"] = other_dtype
    return d


def names_by_event(trace: Trace) -> dict[int, list[str]]:
    """event index → the landmarks it produced (one op may produce two)."""
    out: dict[int, list[str]] = {}
    for name, i in trace.landmarks.items():
        out.setdefault(i, []).append(name)
    return out


def _matched_dtypes(trace: Trace, other: Trace | None) -> dict[int, str]:
    """event index → the counterpart's first-output dtype, where an event with the same key has another one."""
    if other is None:
        return {}
    theirs = dict(zip(event_keys(other), other.events, strict=True))
    out = {}
    for key, e in zip(event_keys(trace), trace.events, strict=True):
        o = theirs.get(key)
        if o is not None and e.outputs and o.outputs and o.outputs[0].dtype != e.outputs[0].dtype:
            out[e.index] = o.outputs[0].dtype
    return out


def landmark_errors(t: Trace, reference_error: dict[str, LandmarkError]) -> tuple[dict[str, dict], float]:
    """Normwise error of each landmark against float64, with references near zero marked (rel = None)."""
    largest = {"forward": 0.0, "backward": 0.0}
    for name, err in reference_error.items():
        phase = t.landmark_event(name).phase if name in t.landmarks else "forward"
        if math.isfinite(err.ref_rms):
            largest[phase] = max(largest[phase], err.ref_rms)
    out = {}
    for name, err in reference_error.items():
        phase = t.landmark_event(name).phase if name in t.landmarks else "forward"
        zero_ref = err.ref_rms <= ERROR_FLOOR * largest[phase]
        out[name] = to_jsonable(
            {
                "rel": None if zero_ref else err.rel,
                "abs_rms": err.abs_rms,
                "ref_rms": err.ref_rms,
                "max_abs": err.max_abs,
                "nonfinite": err.nonfinite,
            }
        )
    return out, ERROR_FLOOR


def _format(spec: FormatSpec) -> dict:
    """Layout and range of one format: FormatSpec's fields, with where overflow and flush-to-zero start and what
    overflow becomes (exactly rounded, and in torch's cast) from mpviz.stats.FormatRange, their one source."""
    r = FormatRange.of(spec.name)
    return to_jsonable(
        {
            "name": spec.name,
            "short": spec.short,
            "bits": spec.bits,
            "sign_bits": spec.sign_bits,
            "exponent_bits": spec.exponent_bits,
            "mantissa_bits": spec.mantissa_bits,
            "bias": spec.bias,
            "max": spec.max,
            "smallest_normal": spec.smallest_normal,
            "smallest_subnormal": spec.smallest_subnormal,
            "eps": spec.eps,
            "has_inf": spec.has_inf,
            "has_nan": spec.has_nan,
            "has_zero": spec.has_zero,
            "has_negative_zero": spec.has_negative_zero,
            "has_subnormals": spec.has_subnormals,
            "special_codes": spec.special_codes,
            "overflow_at": r.overflow_at,
            "overflow_inclusive": r.overflow_inclusive,
            "underflow_at": r.underflow_at,
            "underflow_inclusive": r.underflow_inclusive,
            "overflow": r.overflow_to,
            "torch_overflow": r.torch_overflow_to,
        }
    )


def trace_formats(t: Trace) -> dict[str, dict]:
    """dtype → layout and range (`_format`) of every floating dtype the trace shows and of the range formats."""
    dtypes = {o.dtype for e in t.events for o in (*e.inputs, *e.outputs)} | {dtype_name(d) for d in RANGE_FORMATS}
    formats = {}
    for name in sorted(dtypes):
        try:
            formats[name] = _format(resolve_format(name))
        except ValueError:  # not a floating format (bool, int64)
            continue
    return formats


def emulation_limits(result: AttentionTrace) -> list[str]:
    """The limits of the CUDA emulation that apply to this run (codes from mpviz.emulation.EMULATION_LIMITS)."""
    if result.device != "cuda-sim":
        return []
    return [code for code in EMULATION_LIMITS if code != "sdpa_math_path" or result.config.attention == "sdpa"]


def counterpart_device(device: str) -> str:
    """The device whose autocast policy a run is compared with: CUDA's (emulated on CPU) for CPU, else CPU's."""
    return "cpu" if device in ("cuda", "cuda-sim") else "cuda-sim"


def trace_fields(t: Trace, events: list[dict], story: list[dict]) -> dict:
    """The bundle's fields read off the trace (and its events' and story's JSON), the same for the attention lesson
    and any model's (mpviz.model_bundle), in the schema's order: counts, formats, events, landmarks, story."""
    n_fwd = sum(e.phase == "forward" for e in t.events)
    return {
        "counts": {
            "events": len(t.events),
            "forward": n_fwd,
            "backward": len(t.events) - n_fwd,
            "casts": sum(e.autocast_cast for e in t.events),
        },
        "formats": trace_formats(t),
        "range_formats": [dtype_name(d) for d in RANGE_FORMATS],
        "events": events,
        "landmarks": dict(sorted(t.landmarks.items(), key=lambda kv: kv[1])),
        "landmark_outputs": {name: t.landmark_outputs.get(name, 0) for name in t.landmarks},
        "story": story,
    }


def build_bundle(result: AttentionTrace, counterpart: AttentionTrace | None = None) -> LessonBundle:
    """The bundle of a traced run; `counterpart` is the same config under the other device's policy (or None)."""
    t = result.trace
    keys = event_keys(t)
    names = names_by_event(t)
    other = counterpart.trace if counterpart is not None else None
    other_dtypes = _matched_dtypes(t, other)
    events = [
        event_json(e, k, names.get(e.index, []), other_dtypes.get(e.index)) for e, k in zip(t.events, keys, strict=True)
    ]
    story = []
    for e in t.story():
        inputs = step_region(t, e.index)[1]
        story.append(
            {
                "event": e.index,
                "landmarks": names[e.index],
                "casts": feeding_casts(t, e.index),
                "inputs": [n for i in inputs for n in names[i]],
                "notices": story_notices(result, e.index, counterpart),
            }
        )
    nodes, edges = [], []
    for step in story:
        e = t.events[step["event"]]
        for name in step["landmarks"]:
            out = t.landmark_output(name)
            node = {"id": name, "event": e.index, "phase": e.phase, "dtype": out.dtype, "shape": list(out.shape)}
            theirs = other.landmark_output(name).dtype if other is not None and name in other.landmarks else None
            if theirs is not None and theirs != out.dtype:
                node["other_dtype"] = theirs
            nodes.append(node)
            for src in step["inputs"]:
                edges.append({"from": src, "to": name, "casts": step["casts"]})
    errors, floor = landmark_errors(t, result.reference_error)
    bad = t.first_nonfinite()
    first_nonfinite = None
    if bad is not None:
        first_nonfinite = {"event": bad.index}
        if other is not None:
            theirs = other.first_nonfinite()
            first_nonfinite["counterpart_event"] = theirs.index if theirs is not None else None
    data = {
        "schema": SCHEMA,
        "run": {
            "config": result.config.to_dict(),
            "device": result.device,
            "computed_on": compute_device(result.device),
            "autocast_dtype": result.autocast_dtype,
            "torch_version": torch.__version__,
            "emulation_limits": emulation_limits(result),
            "counterpart_device": counterpart.device if counterpart is not None else None,
        },
        **trace_fields(t, events, story),
        "graph": {"nodes": nodes, "edges": edges},
        "errors": errors,
        "error_floor": floor,
        "first_nonfinite": first_nonfinite,
    }
    return LessonBundle(to_jsonable(data))


def lesson_bundle(cfg: AttentionConfig, device: str = "cpu", dtype: str | None = "bf16") -> LessonBundle:
    """Trace `cfg` on `device` under autocast(`dtype`) and under the counterpart device's policy; bundle both.

    With autocast off there is no policy to compare, so no counterpart is traced.
    """
    result = trace_attention(cfg, device, dtype)
    counterpart = None
    if result.autocast_dtype is not None:
        counterpart = trace_attention(cfg, counterpart_device(device), dtype)
    return build_bundle(result, counterpart)


def lesson_json(cfg: AttentionConfig, device: str = "cpu", dtype: str | None = "bf16") -> bytes:
    """`lesson_bundle(...)` as the JSON bytes the stepper is handed: what a worker process sends back (small)."""
    return lesson_bundle(cfg, device, dtype).to_json().encode()
