"""Below 16 bits: the attention block's projection GEMMs under an fp8 / MXFP8 / NVFP4 recipe (mpviz.fp8), every
quantised tensor measured, and one input element made an outlier to show what sharing a scale costs."""

import streamlit as st

from mpviz.app import text
from mpviz.app.page import chart, expert, guarded, page_header, show_warnings
from mpviz.app.serving import results
from mpviz.app.stepper import mount_stepper
from mpviz.app.url import UrlParam, parse_choice, seed_from_url, write_url
from mpviz.attention import available_devices
from mpviz.fp8.block import lesson, stepper_bundle
from mpviz.fp8.recipes import RECIPE_NAMES, RECIPES
from mpviz.presentation.figures import fp8 as fp8_fig

TEXT = text.section("fp8")
OUTLIERS = (1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6)  # the outlier control's stops: K, the factor on x[0, 0]


def _outlier(raw: str) -> float:
    value = float(raw)
    if value not in OUTLIERS:
        raise ValueError(raw)
    return value


PARAMS = [
    UrlParam("recipe", RECIPE_NAMES[0], parse_choice(RECIPE_NAMES)),
    UrlParam("outlier", OUTLIERS[0], _outlier, lambda v: f"{v:.0f}"),
]


def _share(v: float) -> str:
    return f"{v:.2%}"


def _tensor_rows(run) -> list[dict]:
    cols = TEXT["columns"]
    return [
        {
            cols["name"]: t.name,
            cols["format"]: t.format,
            cols["amax"]: t.amax,
            cols["scale"]: t.scale_of_amax,
            cols["scale_bits"]: t.scale_bits if t.scale_format != "float32" else f"fp32 {int(t.scale_bits, 2):08x}",
            cols["underflow"]: _share(t.underflow),
            cols["overflow"]: _share(t.overflow),
            cols["rel_error"]: t.rel_error,
            cols["range"]: f"{t.dynamic_range or 0:.1f} / {t.format_dynamic_range:.1f}",
            cols["block_range"]: "—" if t.max_block_dynamic_range is None else f"{t.max_block_dynamic_range:.1f}",
        }
        for t in run.tensors
    ]


def _gemm_rows(run) -> list[dict]:
    cols = TEXT["columns"]
    return [
        {
            cols["gemm"]: g.name,
            cols["op"]: g.op,
            cols["kind"]: TEXT["emulated_label" if g.emulated else "real_label"],
            cols["operands"]: f"{g.a} · {g.b}",
            cols["rel_error"]: g.rel_error,
        }
        for g in run.gemms
    ]


page_header(TEXT)
seed_from_url(PARAMS)
show_warnings()
s = st.session_state
c1, c2 = st.columns([3, 2])
c1.segmented_control(TEXT["recipe"], RECIPE_NAMES, key="recipe", format_func=TEXT["recipes"].get, required=True)
c2.select_slider(TEXT["outlier"], OUTLIERS, key="outlier", format_func=lambda v: f"× {v:g}")
write_url(PARAMS)
recipe = RECIPES[s.recipe]
st.markdown(TEXT["recipe_about"][recipe.name])
st.caption(TEXT["source"].format(source=recipe.source))

key = ("fp8", s.recipe, s.outlier)
run = None
with guarded("fp8 run"), results.spinner(key, TEXT["spinner"]):
    run = results.isolated(key, lesson, s.recipe, s.outlier)

if run is not None:
    x = run.tensors[0]
    with guarded("fp8 outlier"):
        st.subheader(TEXT["outlier_heading"])
        words = dict(k=f"{s.outlier:g}", fmt=x.format, amax=x.amax, underflow=_share(x.underflow))
        st.markdown(TEXT["outlier_summary"].format(overflow=_share(x.overflow), **words))
        figure = lambda: fp8_fig.outcome_map_figure(run.x_outcomes, labels=TEXT["fig"])  # noqa: E731
        chart(results.shared_figure(("fp8-x", *key), figure))
        st.caption(TEXT["outlier_caption"][recipe.name])

    with guarded("fp8 tensors"):
        st.subheader(TEXT["tensors_heading"])
        figure = lambda: fp8_fig.underflow_figure(run.tensors, labels=TEXT["fig"])  # noqa: E731
        chart(results.shared_figure(("fp8-shares", *key), figure))
        st.caption(TEXT["tensors_caption"])
        with expert(TEXT["table_heading"], heading="bold"):
            st.dataframe(results.shared_table(("fp8-tensors", *key), lambda: _tensor_rows(run)), hide_index=True)
            st.caption(TEXT["scale_note"])

    with guarded("fp8 gemms"):
        st.subheader(TEXT["gemms_heading"])
        if recipe.scaled_mm:
            inputs = ", ".join(f"`{i.dtype}` {list(i.shape)}" for i in run.gemm_inputs)
            st.markdown(TEXT["real_op"].format(op=run.gemms[0].op, inputs=inputs))
        else:
            st.info(TEXT["emulated"].format(op=run.gemms[0].op), icon="🧮")
        st.dataframe(results.shared_table(("fp8-gemms", *key), lambda: _gemm_rows(run)), hide_index=True)

    with guarded("fp8 stepper"):  # on request: the bundle is a second traced run, and a large payload
        if st.toggle(TEXT["stepper_toggle"], key="fp8_stepper"):
            with results.spinner(("fp8-bundle", *key), TEXT["spinner"]):
                bundle = results.isolated(("fp8-bundle", *key), stepper_bundle, s.recipe, s.outlier)
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
