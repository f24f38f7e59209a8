"""The shared run config in the app: the attention block, device and autocast dtype every lesson that traces runs on
(the value itself, `RunConfig`, is mpviz.presentation.run_config's: view models take it without Streamlit).

app.py renders it in the sidebar once per run (`sidebar_config`), pages read the result (`run_config`). Values
come from the URL on a session's first run and are clamped to mpviz's limits before the widgets exist, so the
widgets always show what really runs, and a warning says what was changed.
"""

from __future__ import annotations

import streamlit as st

import mpviz
from mpviz.app import text
from mpviz.app.glossary import term_help
from mpviz.app.page import reference, warn
from mpviz.app.url import UrlParam, any_set, dump_bool, parse_bool, parse_choice, seed_from_url, write_url
from mpviz.model import ATTENTION_KINDS, LIMITS, SOFTMAX_KINDS, AttentionConfig, clamp
from mpviz.presentation.run_config import DTYPE_CHOICES as DTYPE_CHOICES
from mpviz.presentation.run_config import RunConfig as RunConfig
from mpviz.presentation.run_config import describe as describe

SIDEBAR_PARAMS = [
    UrlParam("device", "cpu", str),  # checked against available_devices() below: availability is per machine
    UrlParam("dtype", "bf16", parse_choice(DTYPE_CHOICES)),
    UrlParam("seq", AttentionConfig.seq_len, int),
    UrlParam("dim", AttentionConfig.d_model, int),
    UrlParam("heads", AttentionConfig.n_heads, int),
    UrlParam("attn", AttentionConfig.attention, parse_choice(ATTENTION_KINDS)),
    UrlParam("softmax", AttentionConfig.softmax, parse_choice(SOFTMAX_KINDS)),
    UrlParam("scale", AttentionConfig.input_scale, float, lambda v: f"{v:g}"),
    UrlParam("causal", AttentionConfig.causal, parse_bool, dump_bool),
    UrlParam("seed", AttentionConfig.seed, int),
]
BLOCK_KEYS = ("seq", "dim", "heads", "attn", "softmax", "scale", "causal", "seed")  # folded in the sidebar
_FIELD_KEYS = {  # AttentionConfig field → its URL/session key
    "seq_len": "seq",
    "d_model": "dim",
    "n_heads": "heads",
    "attention": "attn",
    "softmax": "softmax",
    "input_scale": "scale",
    "seed": "seed",
}


def _config_from_state() -> AttentionConfig:
    s = st.session_state
    return AttentionConfig(
        seq_len=s.seq,
        d_model=s.dim,
        n_heads=s.heads,
        causal=s.causal,
        attention=s.attn,
        softmax=s.softmax,
        input_scale=s.scale,
        seed=s.seed,
    )


def sidebar_config(shown: str = "controls") -> RunConfig:
    """Read the shared run config (URL → session state → limits) and return it, limit-checked.

    `shown` is how the page uses it (mpviz.app.lessons.Lesson.run_config): "controls" renders the sidebar's widgets,
    "summary" one line saying which run the page reads (the widgets live on the pages that change it), "none"
    nothing. The config stays in the URL either way, so moving between lessons keeps the run.
    """
    words = text.section("common")
    seed_from_url(SIDEBAR_PARAMS, kept_apart=True)  # the run every lesson shares outlives any page
    s = st.session_state
    devices = mpviz.available_devices()
    if s.device not in devices:
        warn(words["bad_param"].format(param=text.echo(f"device={s.device}"), used=text.echo("cpu")))
        s.device = "cpu"
    # Fix out-of-limit values before the widgets exist, so the widgets show what will really run.
    cfg, fixed = clamp(_config_from_state(), s.device, mpviz.parse_autocast_dtype(s.dtype))
    for e in fixed:
        used = text.echo(getattr(cfg, e.field))
        reason = text.reason(e)
        warn(words["fixed"].format(field=e.field, value=text.echo(e.value), reason=reason, limit=e.limit, used=used))
    for field, key in _FIELD_KEYS.items():
        s[key] = getattr(cfg, field)
    if shown == "controls":
        _controls(words, devices)
    elif shown == "summary":
        st.sidebar.caption(words["run_summary"].format(run=describe(RunConfig(cfg, s.device, s.dtype), words)))
    write_url(SIDEBAR_PARAMS)
    return RunConfig(cfg, s.device, s.dtype)  # the widgets hold exactly cfg's values (set above)


def _controls(words, devices: list[str]) -> None:
    s = st.session_state
    sb = st.sidebar
    sb.header(words["sidebar_title"])
    sb.selectbox(words["device"], devices, key="device", format_func=lambda d: words["device_labels"].get(d, d))
    sb.segmented_control(
        words["dtype"],
        DTYPE_CHOICES,
        key="dtype",
        format_func=words["dtype_labels"].get,
        required=True,
        help=term_help("autocast"),
    )
    # The block's eight knobs fold away: every run of the page sends what it draws, and most readers change only the
    # dtype. A link that sets one opens them.
    kind, sm = words["attention_labels"].get, words["softmax_labels"].get
    with reference(words["block_fold"], "ref_block", where=sb, expanded=any_set(SIDEBAR_PARAMS, BLOCK_KEYS)) as shown:
        if shown:
            st.number_input(words["seq"], 1, LIMITS.max_seq_len, key="seq")
            c1, c2 = st.columns(2)
            c1.number_input(words["dim"], 1, LIMITS.max_d_model, key="dim")
            c2.number_input(words["heads"], 1, LIMITS.max_heads, key="heads")
            st.segmented_control(words["attention"], ATTENTION_KINDS, key="attn", format_func=kind, required=True)
            off = s.attn != "manual"  # fused attention has no softmax to choose
            st.segmented_control(
                words["softmax"], SOFTMAX_KINDS, key="softmax", format_func=sm, required=True, disabled=off
            )
            st.number_input(words["scale"], 1e-3, LIMITS.max_input_scale, key="scale", format="%g")
            st.toggle(words["causal"], key="causal")
            st.number_input(words["seed"], 0, 2**31 - 1, key="seed")


def run_config() -> RunConfig:
    """The config app.py's sidebar produced for this run (rendered here if a page runs on its own)."""
    if "_run_config" not in st.session_state:
        st.session_state["_run_config"] = sidebar_config()
    return st.session_state["_run_config"]
