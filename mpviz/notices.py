"""What to notice at each step of the attention story: facts read from the trace and the probed autocast policies.

A notice is a dict `{"kind": ..., **values}`, never a sentence: the view owns the words (one template per kind and
language). Everything in it is measured, so the notices change when the device or dtype does. Kinds:

    autocast_off            {}: autocast is off; every op ran in the dtype it was given
    cast_for_policy         {op, category, policy, casts: [{event, from, to, input, input_event}]}: autocast cast
                            these inputs because `op` is in `category` of `policy`'s autocast policy ("cpu" |
                            "cuda"); input is the landmark the cast read, "param:<name>", or null (then
                            input_event, if not null, is the op that produced it)
    runs_in_arriving_dtype  {op, dtype, policy, other?: {policy, op, category, dtype}}: no op of this step is in
                            `policy`'s autocast policy, so `op` ran in the dtype that arrived; `other` is what the
                            counterpart device's policy does with the same step, when it lists the step's op
                            differently (both devices' probed policies are compared, not the dtypes)
    dtype_argument          {op, category, policy, compute_op, dtype}: `op` is fp32_set_opt_dtype/fp32_append_dtype
                            here: autocast inserted no cast, it passed `dtype=float32`
    dtype_argument_converted  {op, category, policy, compute_op, dtype, cast_from, cast_to}: the same, and the op
                            converted its input itself (its own `_to_copy`, as CPU softmax does with a dtype): not
                            autocast's cast
    listed_arrived_same     {op, category, policy, compute_op, dtype, other_policy}: `op` is in `category` of both
                            devices' policies, and its inputs arrived in that dtype already: nothing to cast
    listed_arrived_here_only  {op, category, policy, compute_op, dtype, other_policy}: the same, but `other_policy`
                            does not list `op`
    listed_arrived          {op, category, policy, compute_op, dtype, other_policy, other_category}: the same, and
                            `other_policy` lists `op` in another category
    op_converts_inside      {op, from, to, count, compute_op, back_to}: after a listed_arrived* notice, when `op`'s
                            own kernel converted its `from` inputs to `to` (`count` `_to_copy` ops inside it, not
                            autocast's), computed in `to` (its last computing op: `compute_op`) and converted the
                            result back to `back_to` (SDPA's math path does, on the CPU)
    type_promotion          {op, inputs: [dtypes], output}: no cast; ordinary type promotion picked the widest
    grad_follows_forward    {forward, forward_dtype, dtype, casts}: a gradient comes out in the dtype its forward
                            tensor had; casts: the backward ops of autocast's casts it passed through
    param_grad_direct       {param, dtype}: a parameter's gradient comes straight from its op's backward, in its dtype
    param_grad_upcast       {param, event, from, to, node}: a parameter's gradient returns through the backward
                            of autocast's cast, so it arrives in the parameter's own dtype
    nonfinite_created       {event, op, nan, posinf, neginf}: an op in this step turned finite inputs into inf/NaN
    other_device_dtype      {policy, dtype, here}: under the counterpart device's policy this tensor is `dtype`
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from mpviz.landmarks import PARAM_GRAD_PREFIX
from mpviz.policy import device_policy
from mpviz.trace import DTYPE_ARGUMENT_CATEGORIES

if TYPE_CHECKING:
    from mpviz.attention import AttentionTrace
    from mpviz.trace import Trace


def policy_device(device: str) -> str:
    """Whose autocast policy a device runs under: "cuda" for cuda and cuda-sim, else the device itself."""
    return "cuda" if device in ("cuda", "cuda-sim") else device


def policy_op_name(op: str) -> str:
    """A traced op ("aten.linear.default") as the policy names it ("aten::linear"); other overloads keep theirs."""
    ns, _, rest = op.partition(".")
    base, _, overload = rest.partition(".")
    return f"{ns}::{base}" + ("" if overload in ("", "default") else f".{overload}")


def step_region(trace: Trace, index: int) -> tuple[list[int], list[int]]:
    """(events that led to event `index` since the landmarks it was computed from, `index` first; the events of
    those landmarks): a walk back through the inputs' producers that stops at landmark events and stays in the
    pass of `index` (a backward op also reads tensors the forward saved: those are not part of its step)."""
    landmark_events = set(trace.landmarks.values())
    phase = trace.events[index].phase
    seen, order, boundary, queue = {index}, [index], set(), deque([index])
    while queue:
        for s in trace.events[queue.popleft()].sources:
            if not isinstance(s, int) or s in seen or trace.events[s].phase != phase:
                continue
            seen.add(s)
            if s in landmark_events:
                boundary.add(s)
            else:
                order.append(s)
                queue.append(s)
    return order, sorted(boundary)


def feeding_casts(trace: Trace, index: int) -> list[int]:
    """The autocast casts (or their gradients) in the step that produced event `index`, in execution order."""
    return sorted(i for i in step_region(trace, index)[0] if i != index and trace.events[i].autocast_cast)


def moves_data_only(trace: Trace, index: int) -> bool:
    """Whether event `index` only moved values: one floating input, and an output of the same dtype holding the
    same values by every statistic measured (a view, a copy, a reshape). Measured, not looked up by op name."""
    e = trace.events[index]
    floats = [(info, s) for info, s in zip(e.inputs, e.sources, strict=True) if info.dtype.startswith(("float", "bf"))]
    if len(floats) != 1 or len(e.outputs) != 1 or not isinstance(floats[0][1], int):
        return False
    src_event = trace.events[floats[0][1]]
    before = next((o for o in src_event.outputs if o.stats is not None), None)
    after = e.outputs[0]
    return (
        before is not None
        and after.stats is not None
        and before.dtype == after.dtype
        and _same_values(before.stats, after.stats)
    )


def _same_values(a, b) -> bool:
    fields = ("numel", "min", "max", "mean", "nan", "posinf", "neginf", "zero")
    return all(
        getattr(a, f) == getattr(b, f) or (getattr(a, f) != getattr(a, f) and getattr(b, f) != getattr(b, f))
        for f in fields
    )


def compute_event(trace: Trace, index: int) -> int:
    """The op that computed the values of event `index`: `index` itself, or the first op before the views and
    copies that only moved its result (context's reshape → the matmul that made it)."""
    while moves_data_only(trace, index):
        index = next(
            s
            for s, info in zip(trace.events[index].sources, trace.events[index].inputs, strict=True)
            if isinstance(s, int) and info.dtype.startswith(("float", "bf"))
        )
    return index


def _input_name(trace: Trace, source: int | str | None) -> str | None:
    if isinstance(source, str):
        return f"param:{source}"
    if isinstance(source, int):
        names = [n for n, i in trace.landmarks.items() if i == source]
        return names[0] if names else None
    return None


def _cast_groups(result: AttentionTrace, casts: list[int]) -> list[dict]:
    """One cast_for_policy notice per autocast op the step's casts fed, in the order the casts ran."""
    t, policy = result.trace, policy_device(result.device)
    groups: dict[str, dict] = {}
    for i in casts:
        e = t.events[i]
        if e.phase != "forward" or e.autocast_op is None:
            continue
        op = policy_op_name(e.autocast_op)
        g = groups.setdefault(
            op,
            {
                "kind": "cast_for_policy",
                "op": op,
                "category": device_policy(policy).category_of(op),
                "policy": policy,
                "casts": [],
            },
        )
        g["casts"].append(
            {
                "event": i,
                "from": e.inputs[0].dtype,
                "to": e.outputs[0].dtype,
                "input": _input_name(t, e.sources[0] if e.sources else None),
                "input_event": e.sources[0] if e.sources and isinstance(e.sources[0], int) else None,
            }
        )
    return list(groups.values())


def _step_policy_op(trace: Trace, index: int) -> str | None:
    """The policy-listed op ("aten::matmul") the step that produced event `index` ran inside, nearest the
    landmark; None when no op of the step ran inside one."""
    inside = [i for i in step_region(trace, index)[0] if trace.events[i].within_autocast_op]
    return policy_op_name(trace.events[max(inside)].within_autocast_op) if inside else None


def _own_conversions(trace: Trace, index: int, op: str) -> list[int]:
    """The `_to_copy` events that changed a dtype inside the autocast op `op` ("aten::softmax.int") in the step
    that produced event `index`, in execution order: the op's own conversions (autocast's casts run before the op,
    outside it)."""
    found = []
    for i in sorted(step_region(trace, index)[0]):
        e = trace.events[i]
        inside = e.within_autocast_op is not None and policy_op_name(e.within_autocast_op) == op
        if inside and e.op == "aten._to_copy.default" and e.inputs[0].dtype != e.outputs[0].dtype:
            found.append(i)
    return found


def _converts_inside(trace: Trace, index: int, op: str) -> dict | None:
    """The op_converts_inside notice of a listed op whose own kernel converted its inputs up, computed, and
    converted the result back (the last own conversion leaves the dtype the first one started from); else None."""
    own = _own_conversions(trace, index, op)
    if len(own) < 2:
        return None
    first, last = trace.events[own[0]], trace.events[own[-1]]
    start, wide, back = first.inputs[0].dtype, first.outputs[0].dtype, last.outputs[0].dtype
    if last.inputs[0].dtype != wide or back != start:
        return None
    ups = [i for i in own if trace.events[i].inputs[0].dtype == start and trace.events[i].outputs[0].dtype == wide]
    source = next(s for s in last.sources if isinstance(s, int))
    return {
        "kind": "op_converts_inside",
        "op": op,
        "from": start,
        "to": wide,
        "count": len(ups),
        "compute_op": trace.events[compute_event(trace, source)].op,
        "back_to": back,
    }


def _counterpart_policy(counterpart: AttentionTrace | None, name: str, here_policy: str) -> dict | None:
    """What the counterpart policy does at the step that produced landmark `name`, when both probed policies
    disagree about the op it ran inside (same category on both: the difference, if any, is upstream)."""
    if counterpart is None or name not in counterpart.trace.landmarks:
        return None
    index = counterpart.trace.landmarks[name]
    op = _step_policy_op(counterpart.trace, index)
    policy = policy_device(counterpart.device)
    if op is None or device_policy(policy).category_of(op) == device_policy(here_policy).category_of(op):
        return None
    return {
        "policy": policy,
        "op": op,
        "category": device_policy(policy).category_of(op),
        "dtype": counterpart.trace.landmark_output(name).dtype,
    }


def _uncast_step(result: AttentionTrace, index: int, name: str, counterpart: AttentionTrace | None) -> dict:
    """The notice of a forward step autocast cast nothing for, from both devices' probed policies: no listed op
    ran (runs_in_arriving_dtype); a dtype-argument op ran (dtype_argument[_converted]: autocast passed
    `dtype=float32` and cast nothing); a listed op met inputs already in its dtype (listed_arrived[_same|…])."""
    t, policy = result.trace, policy_device(result.device)
    other_policy = "cpu" if policy == "cuda" else "cuda"
    e = t.events[index]
    compute_op, dtype = t.events[compute_event(t, index)].op, e.outputs[0].dtype
    listed = _step_policy_op(t, index)
    if listed is None:
        notice = {"kind": "runs_in_arriving_dtype", "op": compute_op, "dtype": dtype, "policy": policy}
        if (other := _counterpart_policy(counterpart, name, policy)) is not None:
            notice["other"] = other
        return notice
    category = device_policy(policy).category_of(listed)
    other_category = device_policy(other_policy).category_of(listed)
    base = {"op": listed, "category": category, "policy": policy, "compute_op": compute_op, "dtype": dtype}
    if category in DTYPE_ARGUMENT_CATEGORIES:
        own = _own_conversions(t, index, listed)
        if not own:
            return {"kind": "dtype_argument", **base}
        first = t.events[own[0]]
        return {
            "kind": "dtype_argument_converted",
            **base,
            "cast_from": first.inputs[0].dtype,
            "cast_to": first.outputs[0].dtype,
        }
    if other_category == category:
        return {"kind": "listed_arrived_same", **base, "other_policy": other_policy}
    if other_category is None:
        return {"kind": "listed_arrived_here_only", **base, "other_policy": other_policy}
    return {"kind": "listed_arrived", **base, "other_policy": other_policy, "other_category": other_category}


def story_notices(result: AttentionTrace, index: int, counterpart: AttentionTrace | None = None) -> list[dict]:
    """The notices of the story step whose landmark event is `index`, in the order a reader should meet them."""
    t = result.trace
    casts = feeding_casts(t, index)
    e = t.events[index]
    names = [n for n, i in t.landmarks.items() if i == index]
    out: list[dict] = []
    if result.autocast_dtype is None:
        if index == t.story()[0].index:
            out.append({"kind": "autocast_off"})
    elif e.phase == "forward":
        groups = _cast_groups(result, casts)
        out.extend(groups)
        floats = [i.dtype for i in e.inputs if i.dtype.startswith(("float", "bfloat"))]
        if not groups and len(set(floats)) > 1:
            out.append({"kind": "type_promotion", "op": e.op, "inputs": floats, "output": e.outputs[0].dtype})
        elif not groups and e.outputs:
            notice = _uncast_step(result, index, names[0], counterpart)
            out.append(notice)
            if notice["kind"].startswith("listed_arrived") and (inside := _converts_inside(t, index, notice["op"])):
                out.append(inside)
    else:
        for name in names:
            if name.removeprefix(PARAM_GRAD_PREFIX) in t.landmarks:  # an activation's gradient: grad_q ← q
                out.append(
                    {
                        "kind": "grad_follows_forward",
                        "forward": name.removeprefix(PARAM_GRAD_PREFIX),
                        "forward_dtype": t.landmark_output(name.removeprefix(PARAM_GRAD_PREFIX)).dtype,
                        "dtype": t.landmark_output(name).dtype,
                        "casts": ([index] if e.autocast_cast else []) + casts,  # backward of autocast's casts
                    }
                )
            elif not e.autocast_cast:  # a parameter's gradient straight from its op's backward (LayerNorm's)
                out.append(
                    {
                        "kind": "param_grad_direct",
                        "param": name.removeprefix(PARAM_GRAD_PREFIX),
                        "dtype": e.outputs[0].dtype,
                    }
                )
            else:  # a parameter's gradient, back through the backward of autocast's cast
                out.append(
                    {
                        "kind": "param_grad_upcast",
                        "param": name.removeprefix(PARAM_GRAD_PREFIX),
                        "event": index,
                        "from": e.inputs[0].dtype,
                        "to": e.outputs[0].dtype,
                        "node": e.autograd_node,
                    }
                )
    for i in sorted(step_region(t, index)[0]):
        bad = t.events[i]
        if bad.creates_nonfinite:
            o = next(o for o in bad.outputs if o.stats is not None and o.stats.nonfinite)
            out.append(
                {
                    "kind": "nonfinite_created",
                    "event": i,
                    "op": bad.op,
                    "nan": o.stats.nan,
                    "posinf": o.stats.posinf,
                    "neginf": o.stats.neginf,
                }
            )
    if counterpart is not None and names and names[0] in counterpart.trace.landmarks:
        theirs, here = counterpart.trace.landmark_output(names[0]).dtype, t.landmark_output(names[0]).dtype
        if theirs != here:
            out.append(
                {
                    "kind": "other_device_dtype",
                    "policy": policy_device(counterpart.device),
                    "dtype": theirs,
                    "here": here,
                }
            )
    return out
