"""Autocast policy: which ops autocast casts on CPU and on CUDA, probed live from the installed torch."""

from __future__ import annotations

import pandas as pd
import streamlit as st

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
from view import results, text
from view.figures import policy as policy_fig
from view.page import page_header, show_warnings
from view.run_config import RunConfig, run_config
from view.url import UrlParam, dump_bool, parse_bool, parse_choice, seed_from_url, write_url

TEXT = text.section("policy")

FILTER_CATEGORIES = [*CATEGORIES, UNCLASSIFIED]
INPUT_DEFAULTS = ("float16", "float32", "float32")


def _parse_categories(raw: str) -> list[str]:
    chosen = [c for c in raw.split(",") if c]
    if any(c not in FILTER_CATEGORIES for c in chosen):
        raise ValueError(raw)
    return chosen


PARAMS = [
    UrlParam("left", "cpu", parse_choice(tuple(probeable_devices()))),
    UrlParam("right", "cuda", parse_choice(tuple(probeable_devices()))),
    UrlParam("q", "", str),
    UrlParam("cats", FILTER_CATEGORIES, _parse_categories, ",".join),
    UrlParam("diff", False, parse_bool, dump_bool),
    UrlParam("fn", "softmax", parse_choice(tuple(PROBE_FUNCTIONS))),
    UrlParam("pdt", "float16", parse_choice(("float16", "bfloat16"))),
    *(UrlParam(f"in{i}", d, parse_choice(PROBE_INPUT_DTYPES)) for i, d in enumerate(INPUT_DEFAULTS)),
    UrlParam("check", False, parse_bool, dump_bool),
]


def _label(device: str) -> str:
    return TEXT["device_labels"].get(device, device)


@st.cache_data(max_entries=128, show_spinner=False)
def _probe(function: str, input_dtypes: tuple[str, ...], device: str, autocast_dtype: str):
    return probe_call(function, input_dtypes, device, autocast_dtype)


@st.cache_data(max_entries=16, show_spinner=False)
def _check(cfg_items: tuple, dtype: str, _emulated):
    return check_emulation(_emulated.trace, _emulated.config)


page_header(TEXT)
seed_from_url(PARAMS)
s = st.session_state
show_warnings()

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
st.plotly_chart(policy_fig.policy_counts_figure(counts, shown_cats, low_dtypes, labels=TEXT["figure"]), width="stretch")
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
    col.plotly_chart(policy_fig.call_steps_figure(list(probe.steps)), width="stretch", key=f"steps_{device}")
    if probe.fake:
        col.caption(TEXT["fake"])

# ── the emulation and how it was checked ────────────────────────────────────────────────────────────────────
st.subheader(TEXT["emulation"])
st.markdown(TEXT["emulation_intro"])
st.markdown("\n".join(f"- {TEXT['limits'][code]}" for code in EMULATION_LIMITS))
st.toggle(TEXT["check"], key="check")
if s.check:
    rc = run_config()
    emulated = results.attention_trace(RunConfig(rc.config, "cuda-sim", rc.dtype))
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
write_url(PARAMS)
