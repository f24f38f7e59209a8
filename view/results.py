"""Engine results, cached process-wide and keyed on small config objects: a class on one link computes once.

Everything here is read-only once cached: pages must not mutate what they get.
"""

from __future__ import annotations

import streamlit as st

import mpviz
from mpviz.formats import encode
from mpviz.model import AttentionConfig, ConfigError
from mpviz.policy import ChildProbeError
from view import text
from view.figures.formats import bit_layout_figure
from view.run_config import RunConfig


@st.cache_resource(max_entries=16, show_spinner=False)
def _trace(cfg_items: tuple, device: str, dtype: str) -> mpviz.AttentionTrace:
    return mpviz.trace_attention(AttentionConfig(**dict(cfg_items)), device=device, dtype=dtype)


def config_key(cfg: AttentionConfig) -> tuple:
    """A small hashable cache key for a config (Streamlit hashes it cheaply, unlike arrays)."""
    return tuple(sorted(cfg.to_dict().items()))


def attention_trace(rc: RunConfig) -> mpviz.AttentionTrace | None:
    """The traced run for `rc` (cached process-wide and treated as read-only), or None after showing the error."""
    words = text.section("common")
    try:
        with st.spinner(words["computing"]):
            return _trace(config_key(rc.config), rc.device, rc.dtype)
    except ConfigError as e:
        st.error(words["config_error"].format(error=e))
        return None
    except ChildProbeError as e:  # the policy probe's child process died: say so instead of a traceback
        st.error(words["probe_error"].format(error=e))
        return None


def counterpart_trace(rc: RunConfig) -> mpviz.AttentionTrace | None:
    """The same config traced under the other device's autocast policy: CUDA's (emulated on CPU) for a CPU run,
    and vice versa; None with autocast off or when that run cannot be made."""
    other = "cpu" if rc.device in ("cuda", "cuda-sim") else "cuda-sim"
    if rc.dtype == "off":
        return None
    try:
        return _trace(config_key(rc.config), other, rc.dtype)
    except (ConfigError, ChildProbeError):
        return None


@st.cache_data(max_entries=256, show_spinner=False)
def bit_layout(value: float, dtype: str, lang: str):
    """Bit boxes of `value` stored as `dtype` (sign / exponent / mantissa coloured), from mpviz.formats."""
    return bit_layout_figure(encode(value, dtype), labels=dict(text.load(lang, "common")["bits"]))
