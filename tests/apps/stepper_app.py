"""A minimal app that mounts the stepper on a real lesson bundle, for tests/test_stepper.py (the real page is
pages/attention.py). The sidebar's device and dtype live in the URL, as the app's sidebar keeps them."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `streamlit run` puts only this folder on the path

import streamlit as st

from mpviz.bundle import lesson_bundle
from mpviz.model import AttentionConfig
from view.stepper import mount_stepper

st.set_page_config(page_title="stepper test app", layout="wide")
CONFIGS = {  # the default run, fused attention (no probs), and fp16 overflow (a naive softmax of scaled inputs)
    "default": AttentionConfig(),
    "sdpa": AttentionConfig(attention="sdpa"),
    "naive": AttentionConfig(softmax="naive", input_scale=4.0),
}


@st.cache_resource(max_entries=8)
def bundle_bytes(config: str, device: str, dtype: str) -> bytes:
    return lesson_bundle(CONFIGS[config], device, None if dtype == "off" else dtype).to_json().encode()


with st.sidebar:
    device = st.segmented_control("device", ["cpu", "cuda-sim"], default="cpu", key="device", bind="query-params")
    dtype = st.segmented_control("dtype", ["bf16", "fp16", "off"], default="bf16", key="dtype", bind="query-params")
    config = st.segmented_control("config", list(CONFIGS), default="default", key="config", bind="query-params")
# Like the app's sidebar, write a parameter from Python too: Streamlit then sends the browser a whole new query
# string after each config change, which must not drop the stepper's own parameters.
st.query_params["run"] = f"{device}-{dtype}"
st.title("Attention, step by step")
mount_stepper(bundle_bytes(config or "default", device or "cpu", dtype or "bf16"), key="stepper")
