"""Number formats: one value in every selected format, bit by bit, with rounding bins, ranges and tensors.

Widgets and drawing only: what is shown comes from the view model mpviz.presentation.view_models.formats.
"""

import streamlit as st

from mpviz import formats
from mpviz.app import text
from mpviz.app.bit_flipper import bit_flipper
from mpviz.app.glossary import term_help
from mpviz.app.page import chart, expert, guarded, page_header, reference, row, show_warnings, warn
from mpviz.app.run_config import run_config
from mpviz.app.serving import results
from mpviz.app.url import UrlParam, parse_choice, seed_from_url, write_url
from mpviz.presentation.view_models import formats as vm

TEXT = text.section("formats")
PAGE_PARAMS = [
    UrlParam("value", vm.DEFAULT_VALUE, str, aliases=("v",)),
    UrlParam("fmts", list(vm.DEFAULT_FORMATS), vm.parse_formats, ",".join),  # not "formats": the softmax page's key
    UrlParam("round", "nearest", parse_choice(formats.ROUNDINGS)),
    UrlParam("zoom", 0, vm.parse_zoom),
    UrlParam("tensor", vm.DEFAULT_TENSOR, str, aliases=("lm",)),  # a landmark of the attention trace
]


def _table(rows: object) -> None:
    st.dataframe(rows, hide_index=True, width="stretch")


page_header(TEXT)
rc = run_config()
seed_from_url(PAGE_PARAMS)
s = st.session_state

# ── controls: the value, the rounding, the formats ──────────────────────────────────────────────────────────
c = row()
c.text_input(TEXT["value"], key="value", help=TEXT["value_help"], width=360)
c.segmented_control(
    TEXT["rounding"], formats.ROUNDINGS, key="round", format_func=TEXT["roundings"].get, required=True, wrap=True
)
st.multiselect(TEXT["formats"], vm.ALL_SHORT, key="fmts")
if not s.fmts:
    warn(TEXT["no_formats"].format(used=", ".join(vm.DEFAULT_FORMATS)))
selected = tuple(s.fmts) or vm.DEFAULT_FORMATS
value = vm.read_value(s.value, selected, s.round)
if value.problem:
    warn(value.problem)
write_url(PAGE_PARAMS)
show_warnings()

# ── the bits of every selected format ───────────────────────────────────────────────────────────────────────
with guarded("bits"):  # one component: a flip reruns the page, the keyboard stays on the flipped bit
    bit_flipper(vm.bits(value.text, selected, s.round), TEXT["bit_aria"], value_key="value")

with guarded("summary"), expert(TEXT["summary"], help=term_help("ulp", "subnormal", "saturation")):  # wide
    _table(vm.summary_table(value.text, selected, s.round))

# ── number line ─────────────────────────────────────────────────────────────────────────────────────────────
with guarded("number line"):
    st.subheader(TEXT["number_line"], help=term_help("ulp", "binade"))
    st.caption(TEXT["number_line_caption"])
    zoom_label = lambda z: TEXT["zoom_labels"].get(str(z)) or TEXT["zoom_step"].format(factor=formats.ZOOM_STEP**z)  # noqa: E731
    st.select_slider(TEXT["zoom"], vm.ZOOMS, key="zoom", format_func=zoom_label)
    chart(vm.number_line_figure(value.text, selected, s.zoom))

# ── from the trace: a real tensor (its extremes also go on the range chart) ─────────────────────────────────
markers = [vm.value_marker(value.text)]
with guarded("trace"):
    st.subheader(TEXT["trace"], help=term_help("landmark", "autocast"))
    if results.attention_trace(rc) is not None:
        names = vm.landmarks(rc)
        if s.tensor not in names:
            used = vm.DEFAULT_TENSOR if vm.DEFAULT_TENSOR in names else names[0]
            st.warning(TEXT["bad_landmark"].format(raw=text.echo(s.tensor), used=text.echo(used)), icon="⚠️")
            s.tensor = used
        st.selectbox(TEXT["landmark"], names, key="tensor")
        write_url(PAGE_PARAMS)
        tensor = vm.tensor_view(rc, s.tensor)
        st.caption(tensor.caption)
        if tensor.histogram:
            st.caption(TEXT["hist_caption"].format(name=tensor.name))
            chart(vm.exponent_figure(rc, tensor.name))
            markers += tensor.markers
        else:
            st.info(TEXT["no_trace_values"])
        _table(vm.census_table(rc, tensor.name))

with guarded("ranges"):
    st.subheader(TEXT["range"], help=term_help("binade", "subnormal", "saturation"))
    st.caption(TEXT["range_caption"])
    chart(vm.range_figure(selected, tuple(markers)))

# ── stochastic rounding ─────────────────────────────────────────────────────────────────────────────────────
with guarded("stochastic rounding"):
    st.subheader(TEXT["stochastic"])
    st.markdown(TEXT["stochastic_intro"].format(draws=vm.DRAWS))
    with reference(TEXT["stochastic_table"], "ref_stochastic") as shown:  # eight wide columns
        if shown:
            _table(vm.stochastic_table(value.text, selected))

# ── reference: the libraries, finfo and every format's properties (built only once opened) ─────────────────
with guarded("libraries"), reference(TEXT["libraries"], "ref_libraries") as shown:
    if shown:
        st.markdown(f"**{TEXT['your_value']}**")
        _table(vm.library_table(value.text, selected))
        st.markdown(f"**{TEXT['probes']}**")
        _table(vm.probe_table(selected))
with guarded("finfo"):
    with reference(TEXT["finfo"], "ref_finfo") as shown:
        if shown:
            _table(vm.finfo_table(True))
    with reference(TEXT["finfo_all"], "ref_finfo_all") as shown:
        if shown:
            _table(vm.finfo_table(False))
with guarded("properties"), reference(TEXT["properties"], "ref_properties") as shown:
    if shown:
        _table(vm.properties_table())
