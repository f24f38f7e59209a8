"""Below 16 bits: the attention block's projection GEMMs under an fp8 / MXFP8 / NVFP4 recipe (mpviz.fp8), every
quantised tensor measured, and one input element made an outlier to show what sharing a scale costs."""

import streamlit as st

from mpviz.app import text
from mpviz.app.page import chart, expert, guarded, page_header, row, show_warnings
from mpviz.app.serving import results
from mpviz.app.stepper import mount_stepper
from mpviz.app.url import UrlParam, parse_choice, seed_from_url, write_url
from mpviz.attention import available_devices
from mpviz.fp8.recipes import RECIPES
from mpviz.presentation.view_models import fp8 as vm

TEXT = text.section("fp8")


def _outlier(raw: str) -> float:
    value = float(raw)
    if value not in vm.OUTLIERS:
        raise ValueError(raw)
    return value


PARAMS = [
    UrlParam("recipe", vm.RECIPE_NAMES[0], parse_choice(vm.RECIPE_NAMES)),
    UrlParam("outlier", vm.OUTLIERS[0], _outlier, lambda v: f"{v:.0f}"),
]

page_header(TEXT)
seed_from_url(PARAMS)
show_warnings()
s = st.session_state
c = row()
c.segmented_control(TEXT["recipe"], vm.RECIPE_NAMES, key="recipe", format_func=TEXT["recipes"].get, required=True)
c.select_slider(TEXT["outlier"], vm.OUTLIERS, key="outlier", format_func=lambda v: f"× {v:g}", width=360)
write_url(PARAMS)
recipe = RECIPES[s.recipe]
st.markdown(TEXT["recipe_about"][recipe.name])
st.caption(TEXT["source"].format(source=recipe.source))

run = None
with guarded("fp8 run"):
    run = results.computed(TEXT["spinner"], vm.run, s.recipe, s.outlier)

if run is not None:
    x = run.tensors[0]
    with guarded("fp8 outlier"):
        st.subheader(TEXT["outlier_heading"])
        words = dict(k=f"{s.outlier:g}", fmt=x.format, amax=x.amax, underflow=vm.share(x.underflow))
        st.markdown(TEXT["outlier_summary"].format(overflow=vm.share(x.overflow), **words))
        chart(vm.outlier_figure(s.recipe, s.outlier))
        st.caption(TEXT["outlier_caption"][recipe.name])

    with guarded("fp8 tensors"):
        st.subheader(TEXT["tensors_heading"])
        chart(vm.shares_figure(s.recipe, s.outlier))
        st.caption(TEXT["tensors_caption"])
        with expert(TEXT["table_heading"], heading="bold"):
            st.dataframe(vm.tensor_rows(s.recipe, s.outlier), hide_index=True)
            st.caption(TEXT["scale_note"])

    with guarded("fp8 gemms"):
        st.subheader(TEXT["gemms_heading"])
        if recipe.scaled_mm:
            inputs = ", ".join(f"`{i.dtype}` {list(i.shape)}" for i in run.gemm_inputs)
            st.markdown(TEXT["real_op"].format(op=run.gemms[0].op, inputs=inputs))
        else:
            st.info(TEXT["emulated"].format(op=run.gemms[0].op), icon="🧮")
        st.dataframe(vm.gemm_rows(s.recipe, s.outlier), hide_index=True)

    with guarded("fp8 stepper"):  # on request: the bundle is a second traced run, and a large payload
        if st.toggle(TEXT["stepper_toggle"], key="fp8_stepper"):
            bundle = results.computed(TEXT["spinner"], vm.stepper_bundle, s.recipe, s.outlier)
            st.caption(TEXT["stepper_caption"])
            mount_stepper(bundle, key="fp8_stepper_view", locale=text.language())

    st.caption(TEXT["timing"].format(events=run.events, trace=run.trace_seconds, analysis=run.analysis_seconds))
    if run.cuda_refused is not None:
        st.caption(TEXT["cuda_refused"].format(message=text.echo(run.cuda_refused)))
    elif run.cuda_max_abs_difference is not None:
        st.caption(TEXT["cuda_difference"].format(difference=run.cuda_max_abs_difference))
    elif "cuda" not in available_devices():
        st.caption(TEXT["cuda_none"])
    else:
        st.caption(TEXT["cuda_emulated"])
