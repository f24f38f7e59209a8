"""Autocast policy: which ops autocast casts on CPU and on CUDA, probed live from the installed torch.

Widgets and drawing only: what is shown comes from the view model mpviz.presentation.view_models.policy.
"""

import logging

import streamlit as st

from mpviz.app import text
from mpviz.app.glossary import term_help
from mpviz.app.page import chart, expert, guarded, page_header, reference, row, show_warnings, warn
from mpviz.app.run_config import RunConfig, run_config
from mpviz.app.serving import results
from mpviz.app.url import UrlParam, any_set, dump_bool, parse_bool, parse_choice, seed_from_url, write_url
from mpviz.emulation import EMULATION_LIMITS
from mpviz.policy import CATEGORIES, PROBE_FUNCTIONS, PROBE_INPUT_DTYPES, UNCLASSIFIED, ChildProbeError
from mpviz.policy import probeable_devices as devices
from mpviz.presentation.view_models import policy as vm

TEXT = text.section("policy")
log = logging.getLogger("mpviz.view")
PARAMS = [
    UrlParam("left", "cpu", parse_choice(tuple(devices()))),
    UrlParam("right", "cuda", parse_choice(tuple(devices()))),
    UrlParam("search", "", str, aliases=("q",)),
    UrlParam("categories", list(vm.FILTER_CATEGORIES), vm.parse_categories, ",".join, aliases=("cats",)),
    UrlParam("differ", False, parse_bool, dump_bool, aliases=("diff",)),
    UrlParam("function", "softmax", parse_choice(tuple(PROBE_FUNCTIONS)), aliases=("fn",)),
    UrlParam("probe_dtype", "float16", parse_choice(vm.PROBE_DTYPES), aliases=("pdt",)),  # the probe's autocast dtype
    *(
        UrlParam(f"input{i}", d, parse_choice(PROBE_INPUT_DTYPES), aliases=(f"in{i}",))
        for i, d in enumerate(vm.INPUT_DEFAULTS)
    ),
    UrlParam("check", False, parse_bool, dump_bool),
]

page_header(TEXT)
seed_from_url(PARAMS)
s = st.session_state
if (other := vm.distinct_right(s.left, s.right)) is not None:  # before the widgets: one device can't face itself
    warn(TEXT["same_device"].format(device=text.echo(s.left), used=text.echo(other)))
    s.right = other
show_warnings()
c = row()
c.selectbox(TEXT["left"], devices(), key="left", format_func=vm.label, width=360)
c.selectbox(TEXT["right"], [d for d in devices() if d != s.left], key="right", format_func=vm.label, width=360)
left, right, read = s.left, s.right, True
for device in (left, right):
    try:  # the child's own output is for the server log, not the page
        results.computed(TEXT["reading"].format(device=vm.label(device)), vm.policy, device, vm.probe_cache())
    except ChildProbeError as e:
        log.error("autocast policy probe for %s failed: %s", device, e)
        st.error(TEXT["probe_failed"].format(device=vm.label(device), code=e.returncode))
        read = False

if read:
    a = vm.policy(left, vm.probe_cache())
    b = vm.policy(right, vm.probe_cache())
    words = dict(left=vm.label(left), left_dtype=a.autocast_dtype, right=vm.label(right), right_dtype=b.autocast_dtype)
    st.markdown(TEXT["source"].format(torch=a.torch_version, **words))
    with guarded("counts"):
        counts = vm.counts(left, right)
        st.subheader(TEXT["counts"], help=term_help(*CATEGORIES, UNCLASSIFIED))
        in_policy = term_help("autocast", "aten_op")
        c = row()
        for i, (title, n) in enumerate(counts.metrics):
            c.metric(title, n, help=in_policy if i < 2 else None)
        st.caption(counts.caption)
        chart(vm.counts_figure(left, right))
        st.caption(TEXT["counts_caption"])
        with st.expander(TEXT["help_title"]):
            st.markdown("\n".join(f"- `{c}`: {TEXT['category_help'][c]}" for c in counts.categories))
            if (measured := vm.set_opt_measured(left, right)) is not None:
                st.markdown(measured)
    with guarded("table"), expert(TEXT["table"]):  # long op tables: folded away in presenter mode
        c = row()
        c.text_input(TEXT["search"], key="search", width=280)
        c.multiselect(
            TEXT["filter"], vm.FILTER_CATEGORIES, key="categories", help=term_help(*CATEGORIES, UNCLASSIFIED), width=480
        )
        c.toggle(TEXT["only_diff"], key="differ")
        shown = (left, right, s.search, tuple(sorted(s.categories)), s.differ)
        st.dataframe(vm.op_table(*shown), hide_index=True, width="stretch", height=420)
        st.caption(vm.op_caption(*shown))
    with guarded("how probed"), expert(TEXT["how_probed"]):
        if (how := vm.how_probed_table(left, right)).num_rows:
            st.markdown(TEXT["how_probed_intro"])
            st.dataframe(how, hide_index=True, width="stretch")
        else:
            st.markdown(TEXT["how_probed_none"].format(left=vm.label(left), right=vm.label(right)))
    probe_keys = ("function", "probe_dtype", *(f"input{i}" for i in range(len(vm.INPUT_DEFAULTS))))
    tuned = any_set(PARAMS, probe_keys)  # a link that sets them shows them
    with guarded("probe"), reference(TEXT["probe"], "ref_probe", expanded=tuned) as shown:  # built once opened
        if shown:
            st.markdown(TEXT["probe_intro"])
            c = row()
            c.selectbox(TEXT["function"], list(PROBE_FUNCTIONS), key="function", width=360)
            c.segmented_control(
                TEXT["probe_dtype"], vm.PROBE_DTYPES, key="probe_dtype", required=True, help=term_help("autocast")
            )
            inputs = PROBE_FUNCTIONS[s.function].inputs
            c = row()
            for i, (name, _) in enumerate(inputs):
                c.selectbox(TEXT["input"].format(name=name), PROBE_INPUT_DTYPES, key=f"input{i}", width=240)
            call = (s.function, tuple(s[f"input{i}"] for i in range(len(inputs))))
            for col, side, device in zip(st.columns(2), ("left", "right"), (left, right), strict=True):
                probe = vm.probe(*call, device, s.probe_dtype)
                col.metric(
                    TEXT["out"].format(device=vm.label(device)),
                    probe.output_dtype or "—",
                    TEXT["without"].format(dtype=probe.output_dtype_without_autocast or "—"),
                    delta_color="off",
                    delta_arrow="off",
                )
                if probe.error:  # torch's own words, shown as code: they are not markdown
                    col.warning(TEXT["call_error"])
                    col.code(probe.error[:300], language=None, wrap_lines=True)
                chart(vm.steps_figure(*call, device, s.probe_dtype), where=col, key=f"steps_{side}")
                if probe.fake:
                    col.caption(TEXT["fake"])

with guarded("emulation"):
    st.subheader(TEXT["emulation"])
    st.markdown(TEXT["emulation_intro"])
    st.markdown("\n".join(f"- {TEXT['limits'][code]}" for code in EMULATION_LIMITS))
    st.toggle(TEXT["check"], key="check")
    rc = run_config()
    if s.check and results.attention_trace(RunConfig(rc.config, "cuda-sim", rc.dtype)) is not None:
        try:
            check = results.computed(TEXT["check_running"], vm.emulation_check, rc.config, rc.dtype)
        except ChildProbeError as e:
            log.error("emulation check failed: %s", e)
            st.error(TEXT["check_failed"].format(code=e.returncode))
        else:
            if check.ok:
                st.success(TEXT["check_ok"].format(n=len(check.landmarks), dtype=check.autocast_dtype))
            else:
                st.error(TEXT["check_bad"].format(dtype=check.autocast_dtype))
            if check.mismatch is not None:
                cuda_step, emu_step = check.mismatch
                ops = {"cuda": cuda_step.op if cuda_step else "—", "emulated": emu_step.op if emu_step else "—"}
                st.markdown(TEXT["mismatch"].format(**ops))
            height = 36 * (len(check.landmarks) + 1) + 4
            st.dataframe(vm.emulation_table(rc.config, rc.dtype), hide_index=True, width="stretch", height=height)
            used = [TEXT["difference_texts"][code].format(n=n) for code, n in check.differences.items()]
            st.markdown(TEXT["differences"] + "\n" + ("\n".join(f"- {u}" for u in used) or TEXT["no_differences"]))
write_url(PARAMS)
