"""Autocast policy: which ops autocast casts on CPU and on CUDA, probed live from the installed torch."""

from __future__ import annotations

import logging

import pandas as pd
import streamlit as st

from mpviz.app import text
from mpviz.app.glossary import term_help
from mpviz.app.page import chart, expert, guarded, page_header, show_warnings, warn
from mpviz.app.run_config import RunConfig, run_config
from mpviz.app.serving import results
from mpviz.app.url import UrlParam, dump_bool, parse_bool, parse_choice, seed_from_url, write_url
from mpviz.emulation import EMULATION_LIMITS, check_emulation
from mpviz.policy import (
    CATEGORIES,
    PROBE_FUNCTIONS,
    PROBE_INPUT_DTYPES,
    UNCLASSIFIED,
    ChildProbeError,
    DevicePolicy,
    PolicyComparison,
    cache_dir,
    compare_policies,
    device_policy,
    probe_call,
    probeable_devices,
)
from mpviz.presentation.figures import policy as policy_fig

TEXT = text.section("policy")
log = logging.getLogger("mpviz.view")

FILTER_CATEGORIES = [*CATEGORIES, UNCLASSIFIED]
INPUT_DEFAULTS = ("float16", "float32", "float32")
PROBE_DTYPES = ("float16", "bfloat16")
SET_OPT_EXAMPLE = ("softmax", "aten::softmax.int")  # the probe function that shows fp32_set_opt_dtype, and its op


def _parse_categories(raw: str) -> list[str]:
    chosen = [c for c in raw.split(",") if c]
    if any(c not in FILTER_CATEGORIES for c in chosen):
        raise ValueError(raw)
    return chosen


PARAMS = [
    UrlParam("left", "cpu", parse_choice(tuple(probeable_devices()))),
    UrlParam("right", "cuda", parse_choice(tuple(probeable_devices()))),
    UrlParam("search", "", str, aliases=("q",)),
    UrlParam("categories", FILTER_CATEGORIES, _parse_categories, ",".join, aliases=("cats",)),
    UrlParam("differ", False, parse_bool, dump_bool, aliases=("diff",)),
    UrlParam("function", "softmax", parse_choice(tuple(PROBE_FUNCTIONS)), aliases=("fn",)),
    UrlParam("probe_dtype", "float16", parse_choice(PROBE_DTYPES), aliases=("pdt",)),  # the probe's autocast dtype
    *(
        UrlParam(f"input{i}", d, parse_choice(PROBE_INPUT_DTYPES), aliases=(f"in{i}",))
        for i, d in enumerate(INPUT_DEFAULTS)
    ),
    UrlParam("check", False, parse_bool, dump_bool),
]


def _label(device: str) -> str:
    return TEXT["device_labels"].get(device, device)


def _probe(function: str, input_dtypes: tuple[str, ...], device: str, autocast_dtype: str):
    key = ("probe call", function, input_dtypes, device, autocast_dtype)  # shared, not a per-run st.cache_data
    return results.shared(key, lambda: probe_call(function, input_dtypes, device, autocast_dtype))


def _distinct_devices() -> None:
    """Make the two devices different before their widgets exist (one device compared with itself would show
    nothing, and its widgets would collide)."""
    devices = probeable_devices()
    if s.right == s.left:
        other = next(d for d in ("cuda", "cpu", *devices) if d in devices and d != s.left)
        warn(TEXT["same_device"].format(device=text.echo(s.left), used=text.echo(other)))
        s.right = other


def _device_pickers() -> tuple[str, str]:
    devices = probeable_devices()
    c1, c2 = st.columns(2)
    c1.selectbox(TEXT["left"], devices, key="left", format_func=_label)
    c2.selectbox(TEXT["right"], [d for d in devices if d != s.left], key="right", format_func=_label)
    return s.left, s.right


def _policy(device: str) -> DevicePolicy | None:
    """The device's policy, or None after saying (without the child's output, which is for the server log) why not."""
    try:
        key = ("device policy", device, str(cache_dir()))  # the probe's cache folder is part of what it read
        with results.spinner(key, TEXT["reading"].format(device=_label(device))):
            return results.shared(key, lambda: device_policy(device))
    except ChildProbeError as e:
        log.error("autocast policy probe for %s failed: %s", device, e)
        st.error(TEXT["probe_failed"].format(device=_label(device), code=e.returncode))
        return None


def _compared(left: DevicePolicy, right: DevicePolicy) -> PolicyComparison:
    """The two policies side by side, once per process for the pair (both the counts and the table read it)."""
    return results.shared(("policy comparison", left.device, right.device), lambda: compare_policies(left, right))


def _counts(left: DevicePolicy, right: DevicePolicy) -> None:
    cmp = _compared(left, right)
    st.subheader(TEXT["counts"], help=term_help(*CATEGORIES, UNCLASSIFIED))
    m1, m2, m3, m4 = st.columns(4)
    in_policy = term_help("autocast", "aten_op")
    m1.metric(TEXT["totals"].format(device=_label(left.device)), len(left.ops()), help=in_policy)
    m2.metric(TEXT["totals"].format(device=_label(right.device)), len(right.ops()), help=in_policy)
    m3.metric(TEXT["union_metric"], len(cmp.rows))
    m4.metric(TEXT["differ_metric"], cmp.differ)
    st.caption(
        TEXT["differ_explained"].format(
            n=cmp.differ,
            union=len(cmp.rows),
            left=_label(left.device),
            right=_label(right.device),
            only_left=cmp.only[0],
            only_right=cmp.only[1],
            both_differ=cmp.both_differ,
            both_same=cmp.both_same,
        )
    )
    shown = [c for c in FILTER_CATEGORIES if any(c in p.categories for p in (left, right))]
    counts = {_label(p.device): p.counts() for p in (left, right)}
    low_dtypes = {_label(p.device): p.autocast_dtype for p in (left, right)}
    figure = results.shared_figure(
        ("policy counts", left.device, right.device),
        lambda: policy_fig.policy_counts_figure(counts, {c: c for c in shown}, low_dtypes, labels=TEXT["figure"]),
    )
    chart(figure)
    st.caption(TEXT["counts_caption"])
    with st.expander(TEXT["help_title"]):
        st.markdown("\n".join(f"- `{c}`: {TEXT['category_help'][c]}" for c in shown))
        _set_opt_dtype_measured(left, right)


def _set_opt_dtype_measured(*policies: DevicePolicy) -> None:
    """What fp32_set_opt_dtype means in ops: softmax under each autocast dtype, on each device that lists it there."""
    function, op = SET_OPT_EXAMPLE
    lines = []
    for p in policies:
        if p.category_of(op) != "fp32_set_opt_dtype":
            continue
        for dtype in PROBE_DTYPES:
            probe = _probe(function, (dtype,), p.device, dtype)
            casts = probe.casts_before_compute
            if len(casts) == len(probe.steps):  # the call failed before computing: nothing to say
                continue
            kernel = probe.steps[len(casts)]
            words = {"device": _label(p.device), "dtype": dtype, "op": kernel.op, "output": ", ".join(kernel.outputs)}
            if casts:
                cast = casts[0]
                words |= {"cast": cast.op, "frm": ", ".join(cast.inputs), "to": ", ".join(cast.outputs)}
                lines.append(TEXT["set_opt_cast_first"].format(**words, input=", ".join(kernel.inputs)))
            else:
                lines.append(TEXT["set_opt_no_cast"].format(**words, input=", ".join(kernel.inputs)))
    if lines:
        st.markdown(TEXT["set_opt_measured"].format(op=op) + "\n" + "\n".join(f"- {line}" for line in lines))


def _table(left: DevicePolicy, right: DevicePolicy) -> None:
    rows = _compared(left, right).rows
    f1, f2, f3 = st.columns([2, 3, 1], vertical_alignment="bottom")
    f1.text_input(TEXT["search"], key="search")
    f2.multiselect(TEXT["filter"], FILTER_CATEGORIES, key="categories", help=term_help(*CATEGORIES, UNCLASSIFIED))
    f3.toggle(TEXT["only_diff"], key="differ")
    # read once: a session-state read costs more than the test itself, and this runs for every row
    needle, wanted, only_differing = s.search.strip().lower(), set(s.categories), s.differ
    kept = [
        r
        for r in rows
        if needle in r.op.lower() and any(c in wanted for c in r.categories) and (r.differs or not only_differing)
    ]

    def table() -> pd.DataFrame:
        return pd.DataFrame(
            {
                TEXT["cols"]["op"]: [r.op for r in kept],
                _label(left.device): [r.categories[0] or TEXT["not_in_policy"] for r in kept],
                _label(right.device): [r.categories[1] or TEXT["not_in_policy"] for r in kept],
                TEXT["cols"]["differs"]: [r.differs for r in kept],
            }
        )

    # An Arrow table made once per view (the "differs" column ticked, no row colours): a pandas Styler cost 24 ms
    # of the one GIL per session for a few hundred rows, what thirty followers of a page change queue for.
    key = ("policy table", left.device, right.device, needle, tuple(sorted(wanted)), only_differing)
    st.dataframe(results.shared_table(key, table), hide_index=True, width="stretch", height=420)
    words = {"n": len(kept), "total": len(rows), "d": sum(r.differs for r in kept)}
    words |= {"left": _label(left.device), "right": _label(right.device)}
    st.caption(TEXT["shown"].format(**words) + " " + TEXT["not_in_policy_note"])


def _how_probed(left: DevicePolicy, right: DevicePolicy) -> None:
    """The probe's own notes: ops called with a hand-built example, casts that ignore autocast's dtype, and ops
    left unclassified (with the reason and the first line of the error)."""
    notes, reasons, cols = TEXT["probe_notes"], TEXT["unclassified_reasons"], TEXT["how_cols"]

    def rows() -> list[dict]:
        return [
            {
                cols["device"]: _label(p.device),
                cols["op"]: op,
                cols["category"]: p.category_of(op),
                cols["how"]: "; ".join(
                    notes[c].format(dtype=p.fixed_cast_dtype.get(op, "?")) if c in notes else reasons.get(c, c)
                    for c in codes
                ),
                cols["error"]: p.probe_errors.get(op, ""),
            }
            for p in (left, right)
            for op, codes in sorted(p.notes.items())
        ]

    if left.notes or right.notes:  # a table made once per pair of devices (results.shared_table)
        st.markdown(TEXT["how_probed_intro"])
        st.dataframe(
            results.shared_table(("how probed", left.device, right.device), rows), hide_index=True, width="stretch"
        )
    else:
        st.markdown(TEXT["how_probed_none"].format(left=_label(left.device), right=_label(right.device)))


def _probe_section(left: DevicePolicy, right: DevicePolicy) -> None:
    st.subheader(TEXT["probe"])
    st.markdown(TEXT["probe_intro"])
    p1, p2 = st.columns([2, 2])
    p1.selectbox(TEXT["function"], list(PROBE_FUNCTIONS), key="function")
    p2.segmented_control(
        TEXT["probe_dtype"], PROBE_DTYPES, key="probe_dtype", required=True, help=term_help("autocast")
    )
    spec = PROBE_FUNCTIONS[s.function]
    input_cols = st.columns(3)
    for i, (name, _) in enumerate(spec.inputs):
        input_cols[i].selectbox(TEXT["input"].format(name=name), PROBE_INPUT_DTYPES, key=f"input{i}")
    input_dtypes = tuple(s[f"input{i}"] for i in range(len(spec.inputs)))
    for col, side, device in zip(st.columns(2), ("left", "right"), (left.device, right.device), strict=True):
        probe = _probe(s.function, input_dtypes, device, s.probe_dtype)
        col.metric(
            TEXT["out"].format(device=_label(device)),
            probe.output_dtype or "—",
            TEXT["without"].format(dtype=probe.output_dtype_without_autocast or "—"),
            delta_color="off",
            delta_arrow="off",
        )
        if probe.error:  # torch's own words, shown as code: they are not markdown
            col.warning(TEXT["call_error"])
            col.code(probe.error[:300], language=None, wrap_lines=True)
        steps = ("policy steps", s.function, input_dtypes, device, s.probe_dtype)
        figure = results.shared_figure(steps, lambda probe=probe: policy_fig.call_steps_figure(list(probe.steps)))
        chart(figure, where=col, key=f"steps_{side}")
        if probe.fake:
            col.caption(TEXT["fake"])


def _emulation() -> None:
    st.subheader(TEXT["emulation"])
    st.markdown(TEXT["emulation_intro"])
    st.markdown("\n".join(f"- {TEXT['limits'][code]}" for code in EMULATION_LIMITS))
    st.toggle(TEXT["check"], key="check")
    if not s.check:
        return
    rc = run_config()
    emulated = results.attention_trace(RunConfig(rc.config, "cuda-sim", rc.dtype))
    if emulated is None:
        return
    key = ("emulation_check", results.config_key(rc.config), rc.dtype)
    try:
        with st.spinner(TEXT["check_running"]):  # a child process per config: heavy, so admitted
            check = results.shared(key, lambda: check_emulation(emulated.trace, emulated.config), heavy=True)
    except ChildProbeError as e:
        log.error("emulation check failed: %s", e)
        st.error(TEXT["check_failed"].format(code=e.returncode))
        return
    if check.ok:
        st.success(TEXT["check_ok"].format(n=len(check.landmarks), dtype=check.autocast_dtype))
    else:
        st.error(TEXT["check_bad"].format(dtype=check.autocast_dtype))
    if check.mismatch is not None:
        cuda_step, emu_step = check.mismatch
        ops = {"cuda": cuda_step.op if cuda_step else "—", "emulated": emu_step.op if emu_step else "—"}
        st.markdown(TEXT["mismatch"].format(**ops))
    cols = TEXT["landmark_cols"]

    def landmarks() -> pd.DataFrame:
        return pd.DataFrame(
            {
                cols["landmark"]: list(check.landmarks),
                cols["cuda"]: [c for c, _ in check.landmarks.values()],
                cols["emulated"]: [e for _, e in check.landmarks.values()],
                cols["same"]: [c == e for c, e in check.landmarks.values()],
            }
        )

    st.dataframe(
        results.shared_table(("emulation landmarks", *key), landmarks),
        hide_index=True,
        width="stretch",
        height=36 * (len(check.landmarks) + 1) + 4,
    )
    used = [TEXT["difference_texts"][code].format(n=n) for code, n in check.differences.items()]
    st.markdown(TEXT["differences"] + "\n" + ("\n".join(f"- {u}" for u in used) or TEXT["no_differences"]))


page_header(TEXT)
seed_from_url(PARAMS)
s = st.session_state
_distinct_devices()
show_warnings()
left_device, right_device = _device_pickers()
policies = [_policy(d) for d in (left_device, right_device)]
if None not in policies:
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
    with guarded("counts"):
        _counts(left, right)
    for name, title, section in (("table", "table", _table), ("how probed", "how_probed", _how_probed)):
        with guarded(name), expert(TEXT[title]):  # long op tables: folded away in presenter mode
            section(left, right)
    with guarded("probe"):
        _probe_section(left, right)
with guarded("emulation"):
    _emulation()
write_url(PARAMS)
