"""Attention, step by step: every op of a real forward and backward under autocast, with dtypes, casts and values."""

import streamlit as st

from mpviz.attention import compare_ops
from mpviz.stats import RANGE_FORMATS, FormatRange
from view import results, text
from view.figures import attention as attention_fig
from view.page import dtype_badge, page_header, show_warnings, warn
from view.run_config import run_config
from view.url import UrlParam, parse_choice, seed_from_url, write_url

TEXT = text.section("attention")

PAGE_PARAMS = [
    UrlParam("view", "story", parse_choice(tuple(TEXT["views"]))),
    UrlParam("phase", "all", parse_choice(tuple(TEXT["phases"]))),
    UrlParam("step", 0, int),
    UrlParam("head", 0, int),
    UrlParam("em", 0, int),
    UrlParam("er", 0, int),
    UrlParam("ec", 0, int),
]

page_header(TEXT)
rc = run_config()
result = results.attention_trace(rc)
if result is None:
    st.stop()
t = result.trace
seed_from_url(PAGE_PARAMS)
s = st.session_state
goto = s.pop("_goto", None)  # a heatmap cell was clicked: show that element of probs in the picker
if goto is not None:
    s.phase = "all" if s.phase == "backward" else s.phase
    s.em, s.er, s.ec = goto

# ── which steps: story (landmarks) or every op, optionally one phase ─────────────────────────────────────────
c1, c2 = st.columns([2, 2])
c1.segmented_control(TEXT["view"], list(TEXT["views"]), key="view", format_func=TEXT["views"].get, required=True)
c2.segmented_control(TEXT["phase"], list(TEXT["phases"]), key="phase", format_func=TEXT["phases"].get, required=True)
events = t.story() if s.view == "story" else t.events
if s.phase != "all":
    events = [e for e in events if e.phase == s.phase]
if not events:
    events = t.events
n_steps = len(events)
if goto is not None:
    s._op = t.landmarks["probs"]
    s.step = next(i for i, e in enumerate(events) if e.index == s._op)
if s.get("_list") not in (None, (s.view, s.phase)) and "_op" in s:  # list changed: stay on the same op
    s.step = next((i for i, e in enumerate(events) if e.index >= s._op), n_steps - 1)
s._list = (s.view, s.phase)
if not 0 <= s.step < n_steps:
    warn(TEXT["bad_step"].format(step=s.step, n=n_steps))
    s.step = 0
show_warnings()

n_casts = sum(e.autocast_cast for e in t.events)
n_fwd = sum(e.phase == "forward" for e in t.events)
st.caption(
    TEXT["summary"].format(
        n=len(t.events),
        f=n_fwd,
        b=len(t.events) - n_fwd,
        c=n_casts,
        device=result.device,
        dtype=result.autocast_dtype or "off",
    )
)


# ── drama: where inf/nan is first created ───────────────────────────────────────────────────────────────────
def _jump_to(index: int) -> None:
    s.view, s.phase = "full", "all"
    s.step = s._op = index  # _op: the list-change logic below keeps this op


bad = t.first_nonfinite()
other = results.counterpart_trace(rc)  # the same run under the other device's autocast policy
if bad is not None:
    o = next(o for o in bad.outputs if o.stats is not None and o.stats.nonfinite)
    what = ", ".join(
        f"{n} {k}" for k, n in (("nan", o.stats.nan), ("+inf", o.stats.posinf), ("-inf", o.stats.neginf)) if n
    )
    message = TEXT["nonfinite"].format(
        index=bad.index, op=bad.op, module=bad.module or TEXT["model"], phase=bad.phase, what=what
    )
    if other is not None:
        other_bad = other.trace.first_nonfinite()
        device = TEXT["device_names"][other.device]
        message += " " + (
            TEXT["other_finite"].format(device=device)
            if other_bad is None
            else TEXT["other_nonfinite"].format(device=device, index=other_bad.index, op=other_bad.op)
        )
    st.error(message, icon="🔥")
    st.button(TEXT["jump"].format(index=bad.index), on_click=_jump_to, args=(bad.index,))


# ── the step control ─────────────────────────────────────────────────────────────────────────────────────────
def _move(delta: int) -> None:
    s.step = min(max(s.step + delta, 0), n_steps - 1)


b1, b2, b3 = st.columns([1, 6, 1], vertical_alignment="bottom")
b1.button(TEXT["prev"], on_click=_move, args=(-1,), disabled=s.step == 0, width="stretch")
b3.button(TEXT["next"], on_click=_move, args=(1,), disabled=s.step >= n_steps - 1, width="stretch")
if n_steps > 1:
    b2.slider(TEXT["step"], 0, n_steps - 1, key="step")
ev = events[s.step]
s._op = ev.index
write_url(PAGE_PARAMS)

# ── the current op ───────────────────────────────────────────────────────────────────────────────────────────
st.subheader(TEXT["step_title"].format(index=ev.index, op=ev.op))
line = TEXT["module"].format(module=ev.module or TEXT["model"], phase=ev.phase)
if ev.autograd_node:
    line += TEXT["node"].format(node=ev.autograd_node, fwd=ev.forward_index if ev.forward_index is not None else "?")
names = [n for n, i in t.landmarks.items() if i == ev.index]  # one op can produce two (ln's weight and bias grads)
if names:
    line += " · " + TEXT["landmark"].format(name=", ".join(names))
st.markdown(line)
ins = " ".join(dtype_badge(i.dtype) for i in ev.inputs) or "—"
outs = " ".join(dtype_badge(o.dtype) for o in ev.outputs) or "—"
badge = ""
if ev.autocast_cast:
    text = TEXT["cast_badge"].format(op=ev.autocast_op) if ev.phase == "forward" else TEXT["cast_badge_bwd"]
    badge = f" &nbsp; <span style='background:#ffd43b;border-radius:0.4em;padding:0.05em 0.5em'>⚑ {text}</span>"
st.markdown(f"{TEXT['inputs']}: {ins} &nbsp;→&nbsp; {TEXT['outputs']}: {outs}{badge}", unsafe_allow_html=True)

with st.expander(TEXT["nearby"], expanded=False):
    lo = max(0, s.step - 4)
    cols = TEXT["cols"]
    st.dataframe(
        [
            {
                cols["step"]: ("▶ " if i == s.step else "") + str(i),
                cols["index"]: e.index,
                cols["phase"]: e.phase,
                cols["module"]: e.module or TEXT["model"],
                cols["op"]: e.op,
                cols["dtypes"]: f"{','.join(x.dtype for x in e.inputs)} → {','.join(x.dtype for x in e.outputs)}",
                cols["cast"]: "⚑" if e.autocast_cast else "",
                cols["landmark"]: e.landmark or "",
            }
            for i, e in enumerate(events[lo : s.step + 5], start=lo)
        ],
        hide_index=True,
        width="stretch",
    )

if other is not None:
    pair = compare_ops(result, other).get(ev.index)
    if pair is not None:
        label = TEXT["device_names"]
        text = TEXT["other_device"].format(
            a=label[result.device],
            b=label[other.device],
            da=dtype_badge(pair[0]),
            db=dtype_badge(pair[1]),
        )
        st.container(border=True).markdown(text, unsafe_allow_html=True)
if result.device == "cuda-sim":
    notes = [TEXT["emulated"]]
    if ev.phase == "backward":
        notes.append(TEXT["backward_emulated"])
    if rc.config.attention == "sdpa":
        notes.append(TEXT["sdpa_math_path"])
    st.caption(" ".join(notes))

out = next((o for o in ev.outputs if o.stats is not None), None)
if out is None:
    st.info(TEXT["no_float"])
else:
    st_ = out.stats
    values = {"min": st_.min, "max": st_.max, "abs_max": st_.abs_max, "mean": st_.mean, "std": st_.std}
    counts = {"nan": st_.nan, "inf": st_.posinf + st_.neginf, "zero": st_.zero, "subnormal": st_.subnormal}
    for col, (key, v) in zip(st.columns(len(values)), values.items(), strict=True):
        col.metric(TEXT["stats"][key], f"{v:.4g}")
    for col, (key, v) in zip(st.columns(len(values)), counts.items(), strict=False):
        col.metric(TEXT["stats"][key], f"{v:,}")
    fmt_rows = {
        TEXT["overflow"]: {k: f"{v:.2%}" for k, v in st_.overflow_frac.items()},
        TEXT["underflow"]: {k: f"{v:.2%}" for k, v in st_.underflow_frac.items()},
    }
    st.markdown(f"**{TEXT['fmt_table']}**")
    st.dataframe(fmt_rows, width="stretch")
    if ev.landmark in result.reference_error:
        err = result.reference_error[ev.landmark]
        st.markdown(TEXT["ref_err"].format(abs=err.max_abs, rel=err.rel))

# ── pictures ─────────────────────────────────────────────────────────────────────────────────────────────────
landmark_dtypes = {name: t.events[i].outputs[0].dtype for name, i in t.landmarks.items() if t.events[i].outputs}
left, right = st.columns(2)
left.plotly_chart(
    attention_fig.dataflow_figure(landmark_dtypes, current=ev.landmark, title=TEXT["dataflow"]), width="stretch"
)
if out is not None and out.stats.log2_hist:
    ranges = [FormatRange.of(d) for d in RANGE_FORMATS[:2]]
    right.plotly_chart(attention_fig.exponent_histogram_figure(out.stats.log2_hist, out.dtype, ranges), width="stretch")
    right.caption(TEXT["hist"])

left, right = st.columns(2)
if "probs" in t.landmarks:
    probs = t.landmark_event("probs").outputs[0].sample  # (heads, rows, cols), bounded
    heads = probs.shape[0]
    if not 0 <= s.head < heads:
        s.head = 0
    left.number_input(TEXT["heat_head"], 0, heads - 1, key="head")
    sel = left.plotly_chart(
        attention_fig.heatmap_figure(
            probs[s.head],
            title=TEXT["heatmap"].format(head=s.head),
            selected=(s.er, s.ec) if ev.landmark == "probs" and s.em == s.head else None,
        ),
        width="stretch",
        on_select="rerun",
        selection_mode="points",
        key="heat_sel",
    )
    points = (sel or {}).get("selection", {}).get("points", [])
    if points:  # a point of the invisible scatter: x is the key column, y the query row
        pick = (s.head, int(points[0]["y"]), int(points[0]["x"]))
        if s.get("_clicked") != pick:  # a new click (the selection persists across reruns)
            s._clicked = s._goto = pick
            st.rerun()  # the step slider already exists in this run: move it at the top of the next
else:
    left.info(TEXT["no_probs"])
right.plotly_chart(
    attention_fig.reference_error_figure(result.reference_error, current=ev.landmark, title=TEXT["errors"]),
    width="stretch",
)

# ── one element's bits ───────────────────────────────────────────────────────────────────────────────────────
if out is not None and out.sample is not None:
    st.subheader(TEXT["picker"])
    m, r, c = out.sample.shape
    s.em, s.er, s.ec = min(max(s.em, 0), m - 1), min(max(s.er, 0), r - 1), min(max(s.ec, 0), c - 1)
    p1, p2, p3 = st.columns(3)
    p1.number_input(TEXT["picker_mat"], 0, m - 1, key="em")
    p2.number_input(TEXT["picker_row"], 0, r - 1, key="er")
    p3.number_input(TEXT["picker_col"], 0, c - 1, key="ec")
    value = float(out.sample[s.em, s.er, s.ec])
    st.markdown(TEXT["picker_value"].format(m=s.em, r=s.er, c=s.ec, value=value, dtype=out.dtype))
    st.plotly_chart(results.bit_layout(value, out.dtype, text.language()), width="stretch")
    st.caption(TEXT["picker_sampled"].format(m=m, r=r, c=c))
