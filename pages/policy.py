"""Autocast policy: which ops autocast casts on CPU and on CUDA, probed live from the installed torch."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from mpviz import figures
from mpviz.emulation import EMULATION_LIMITS, check_emulation
from mpviz.policy import (
    CATEGORIES,
    PROBE_FUNCTIONS,
    PROBE_INPUT_DTYPES,
    UNCLASSIFIED,
    ChildProbeError,
    device_policy,
    policy_table,
    probe_call,
    probeable_devices,
)
from pages import common

TEXT = {
    "title": "Autocast policy",
    "intro": (
        "Autocast does not cast every op: per device it keeps a list of which ops run in low "
        "precision, which are forced to float32 and which follow their widest input. Every list, count "
        "and dtype on this page is read from the installed torch right now, by calling each op on fake "
        "tensors of that device (so CUDA's list is readable without a GPU) and watching what autocast does "
        "to its inputs."
    ),
    "source": "Read from torch **{torch}** · probed with autocast dtype {left}: `{left_dtype}`, {right}: "
    "`{right_dtype}`",
    "left": "Compare",
    "right": "with",
    "device_labels": {"cpu": "CPU", "cuda": "CUDA", "xpu": "XPU", "mps": "MPS (Apple)", "mtia": "MTIA"},
    "probe_failed": "Reading the {device} policy failed: {error}",
    "counts": "How many ops each category holds",
    "category_help": {
        "lower_precision_fp": "float32 inputs were cast down to the autocast dtype",
        "fp32": "fp16/bf16 inputs were cast up to float32",
        "fp32_set_opt_dtype": "no cast, but the op was told to compute and return float32 (`dtype=`)",
        "fp32_append_dtype": "no cast; autocast called the overload that takes a float32 `dtype`",
        "promote": "mixed inputs were cast to the widest of them",
        "banned": "the call raised an error under autocast",
        UNCLASSIFIED: "the probe could not tell",
    },
    "help_title": "What the probe saw for each category",
    "not_in_policy": "—",
    "not_in_policy_note": "— = not in autocast's policy there: the op runs in the dtype that arrives.",
    "totals": "{device}: ops in autocast's policy",
    "differ_metric": "ops whose category differs",
    "table": "Every op, side by side",
    "search": "Search op names",
    "filter": "Categories (on either device)",
    "only_diff": "Only ops that differ",
    "cols": {"op": "op", "differs": "differs"},
    "shown": "{n} of {total} ops shown; {d} of them differ between {left} and {right} (highlighted).",
    "probe": "Probe an op",
    "probe_intro": (
        "Pick a function and the dtypes of its inputs: it runs now under autocast on each device — on real "
        "tensors on CPU, on fake tensors with the device's real autocast kernels elsewhere — and every ATen "
        "op it ran is drawn, coloured by its output dtype (◆ = a cast)."
    ),
    "function": "Function",
    "probe_dtype": "Autocast dtype",
    "input": "`{name}` dtype",
    "out": "{device}: output dtype",
    "without": "without autocast: {dtype}",
    "fake": "fake tensors: dtypes only, no values",
    "call_error": "torch refused this call: {error}",
    "emulation": "CUDA's policy on this CPU (device “cuda-sim”)",
    "emulation_intro": (
        "Choose **CUDA policy, computed on CPU** as the device in the sidebar and the step-through page runs "
        "forward and backward with real values on this CPU while applying the CUDA categories above, so it "
        "shows CUDA's dtype flow. What it cannot reproduce:"
    ),
    "limits": {
        "backward_emulated": "**The backward is emulated.** No CPU build can trace CUDA's real backward; the "
        "gradients you see follow from the emulated forward's dtypes.",
        "sdpa_math_path": "**SDPA shows the math path.** A GPU picks a flash, memory-efficient or cuDNN "
        "kernel by hardware and shape; the dtypes shown are those of the math path.",
    },
    "check": "Check the emulation now against a fake-CUDA forward (sidebar config; runs a child process)",
    "check_running": "Running the sidebar's config on fake CUDA tensors and with the emulation…",
    "check_ok": "Same dtype at all {n} forward landmarks, and the same ops once the known differences below "
    "are accounted for (autocast {dtype}).",
    "check_bad": "The emulation disagrees with the fake-CUDA forward (autocast {dtype}).",
    "mismatch": "First op no known difference explains: fake CUDA `{cuda}`, emulated `{emulated}`.",
    "landmark_cols": {"landmark": "landmark", "cuda": "fake CUDA", "emulated": "cuda-sim", "same": "same"},
    "differences": "Known differences the check used:",
    "difference_texts": {
        "softmax_half_to_float": "CUDA's softmax reads fp16 and writes fp32 in one kernel (`half_to_float`); "
        "the CPU casts first, then runs softmax in fp32 ({n}×).",
        "log_softmax_half_to_float": "CUDA's log_softmax reads fp16 and writes fp32 in one kernel; the CPU "
        "casts first ({n}×).",
        "view_vs_unsafe_view": "`_unsafe_view` on one side, `view` on the other; same dtype ({n}×).",
        "autograd_detach": "`detach` ops autograd records for the backward; the fake-CUDA forward has no "
        "autograd ({n}×).",
    },
    "no_differences": "none",
    "check_failed": "The check could not run: {error}",
}

FILTER_CATEGORIES = [*CATEGORIES, UNCLASSIFIED]
INPUT_DEFAULTS = ("float16", "float32", "float32")


def _parse_categories(raw: str) -> list[str]:
    chosen = [c for c in raw.split(",") if c]
    if any(c not in FILTER_CATEGORIES for c in chosen):
        raise ValueError(raw)
    return chosen


PARAMS = [
    common.UrlParam("left", "cpu", common.parse_choice(tuple(probeable_devices()))),
    common.UrlParam("right", "cuda", common.parse_choice(tuple(probeable_devices()))),
    common.UrlParam("q", "", str),
    common.UrlParam("cats", FILTER_CATEGORIES, _parse_categories, ",".join),
    common.UrlParam("diff", False, common.parse_bool, lambda v: "1" if v else "0"),
    common.UrlParam("fn", "softmax", common.parse_choice(tuple(PROBE_FUNCTIONS))),
    common.UrlParam("pdt", "float16", common.parse_choice(("float16", "bfloat16"))),
    *(common.UrlParam(f"in{i}", d, common.parse_choice(PROBE_INPUT_DTYPES)) for i, d in enumerate(INPUT_DEFAULTS)),
    common.UrlParam("check", False, common.parse_bool, lambda v: "1" if v else "0"),
]


def _label(device: str) -> str:
    return TEXT["device_labels"].get(device, device)


@st.cache_data(max_entries=128, show_spinner=False)
def _probe(function: str, input_dtypes: tuple[str, ...], device: str, autocast_dtype: str):
    return probe_call(function, input_dtypes, device, autocast_dtype)


@st.cache_data(max_entries=16, show_spinner=False)
def _check(cfg_items: tuple, dtype: str, _emulated):
    return check_emulation(_emulated.trace, _emulated.config)


common.page_header(TEXT["title"], TEXT["intro"])
common.seed_from_url(PARAMS)
s = st.session_state
common.show_warnings()

# ── which two devices ───────────────────────────────────────────────────────────────────────────────────────
c1, c2 = st.columns(2)
c1.selectbox(TEXT["left"], probeable_devices(), key="left", format_func=_label)
c2.selectbox(TEXT["right"], probeable_devices(), key="right", format_func=_label)
policies = []
for device in (s.left, s.right):
    try:
        with st.spinner():
            policies.append(device_policy(device))
    except ChildProbeError as e:
        st.error(TEXT["probe_failed"].format(device=_label(device), error=e))
        st.stop()
left, right = policies
st.markdown(
    TEXT["source"].format(
        torch=left.torch_version,
        left=_label(left.device),
        left_dtype=left.autocast_dtype,
        right=_label(right.device),
        right_dtype=right.autocast_dtype,
    )
)

# ── counts per category ─────────────────────────────────────────────────────────────────────────────────────
rows = policy_table(policies)
n_diff = sum(r.differs for r in rows)
st.subheader(TEXT["counts"])
m1, m2, m3 = st.columns(3)
m1.metric(TEXT["totals"].format(device=_label(left.device)), len(left.ops()))
m2.metric(TEXT["totals"].format(device=_label(right.device)), len(right.ops()))
m3.metric(TEXT["differ_metric"], n_diff)
shown_cats = {c: c for c in CATEGORIES if any(c in p.categories for p in policies)}
if any(UNCLASSIFIED in p.categories for p in policies):
    shown_cats[UNCLASSIFIED] = UNCLASSIFIED
counts = {_label(p.device): p.counts() for p in policies}
low_dtypes = {_label(p.device): p.autocast_dtype for p in policies}
st.plotly_chart(figures.policy_counts_figure(counts, shown_cats, low_dtypes), width="stretch")
with st.expander(TEXT["help_title"]):
    st.markdown("\n".join(f"- `{c}`: {TEXT['category_help'][c]}" for c in shown_cats))

# ── the table ───────────────────────────────────────────────────────────────────────────────────────────────
st.subheader(TEXT["table"])
f1, f2, f3 = st.columns([2, 3, 1], vertical_alignment="bottom")
f1.text_input(TEXT["search"], key="q")
f2.multiselect(TEXT["filter"], FILTER_CATEGORIES, key="cats")
f3.toggle(TEXT["only_diff"], key="diff")
needle = s.q.strip().lower()
kept = [
    r for r in rows if needle in r.op.lower() and any(c in s.cats for c in r.categories) and (r.differs or not s.diff)
]
table = pd.DataFrame(
    {
        TEXT["cols"]["op"]: [r.op for r in kept],
        _label(left.device): [r.categories[0] or TEXT["not_in_policy"] for r in kept],
        _label(right.device): [r.categories[1] or TEXT["not_in_policy"] for r in kept],
        TEXT["cols"]["differs"]: [r.differs for r in kept],
    }
)
highlight = "background-color: rgba(213, 94, 0, 0.18)"
styled = table.style.apply(lambda row: [highlight if row.iloc[-1] else ""] * len(row), axis=1)
st.dataframe(styled, hide_index=True, width="stretch", height=420)
st.caption(
    TEXT["shown"].format(
        n=len(kept),
        total=len(rows),
        d=sum(r.differs for r in kept),
        left=_label(left.device),
        right=_label(right.device),
    )
    + " "
    + TEXT["not_in_policy_note"]
)

# ── probe one function on both devices ─────────────────────────────────────────────────────────────────────
st.subheader(TEXT["probe"])
st.markdown(TEXT["probe_intro"])
p1, p2 = st.columns([2, 2])
p1.selectbox(TEXT["function"], list(PROBE_FUNCTIONS), key="fn")
p2.segmented_control(TEXT["probe_dtype"], ["float16", "bfloat16"], key="pdt", required=True)
spec = PROBE_FUNCTIONS[s.fn]
input_cols = st.columns(3)
for i, (name, _) in enumerate(spec.inputs):
    input_cols[i].selectbox(TEXT["input"].format(name=name), PROBE_INPUT_DTYPES, key=f"in{i}")
input_dtypes = tuple(s[f"in{i}"] for i in range(len(spec.inputs)))
for col, device in zip(st.columns(2), (left.device, right.device), strict=True):
    probe = _probe(s.fn, input_dtypes, device, s.pdt)
    col.metric(
        TEXT["out"].format(device=_label(device)),
        probe.output_dtype or "—",
        TEXT["without"].format(dtype=probe.output_dtype_without_autocast or "—"),
        delta_color="off",
        delta_arrow="off",
    )
    if probe.error:
        col.warning(TEXT["call_error"].format(error=probe.error[:300]))
    col.plotly_chart(figures.call_steps_figure(list(probe.steps)), width="stretch", key=f"steps_{device}")
    if probe.fake:
        col.caption(TEXT["fake"])

# ── the emulation and how it was checked ────────────────────────────────────────────────────────────────────
st.subheader(TEXT["emulation"])
st.markdown(TEXT["emulation_intro"])
st.markdown("\n".join(f"- {TEXT['limits'][code]}" for code in EMULATION_LIMITS))
st.toggle(TEXT["check"], key="check")
if s.check:
    rc = common.run_config()
    emulated = common.attention_trace(common.RunConfig(rc.config, "cuda-sim", rc.dtype))
    if emulated is not None:
        try:
            with st.spinner(TEXT["check_running"]):
                check = _check(tuple(sorted(rc.config.to_dict().items())), rc.dtype, emulated)
        except ChildProbeError as e:
            st.error(TEXT["check_failed"].format(error=e))
            check = None
        if check is not None:
            dtype = check.autocast_dtype
            if check.ok:
                st.success(TEXT["check_ok"].format(n=len(check.landmarks), dtype=dtype))
            else:
                st.error(TEXT["check_bad"].format(dtype=dtype))
            if check.mismatch is not None:
                cuda_step, emu_step = check.mismatch
                st.markdown(
                    TEXT["mismatch"].format(
                        cuda=cuda_step.op if cuda_step else "—", emulated=emu_step.op if emu_step else "—"
                    )
                )
            cols = TEXT["landmark_cols"]
            st.dataframe(
                pd.DataFrame(
                    {
                        cols["landmark"]: list(check.landmarks),
                        cols["cuda"]: [c for c, _ in check.landmarks.values()],
                        cols["emulated"]: [e for _, e in check.landmarks.values()],
                        cols["same"]: [c == e for c, e in check.landmarks.values()],
                    }
                ),
                hide_index=True,
                width="stretch",
                height=36 * (len(check.landmarks) + 1) + 4,
            )
            used = [TEXT["difference_texts"][code].format(n=n) for code, n in check.differences.items()]
            st.markdown(TEXT["differences"] + "\n" + ("\n".join(f"- {u}" for u in used) or TEXT["no_differences"]))
common.write_url(PARAMS)
