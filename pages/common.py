"""View-layer pieces every page shares: URL state, the sidebar run config, cached engine calls, dtype badges.

Not a page itself (app.py lists pages explicitly). No torch logic: everything numeric comes from mpviz.
User-facing text lives in TEXT below (pages keep their own TEXT), ready for a translated copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

import mpviz
from mpviz import figures
from mpviz.figures import dtype_color
from mpviz.formats import encode
from mpviz.model import ATTENTION_KINDS, LIMITS, SOFTMAX_KINDS, AttentionConfig, ConfigError, clamp
from mpviz.policy import ChildProbeError

TEXT = {
    "sidebar_title": "Run config",
    "device": "Device",
    "dtype": "Autocast dtype",
    "seq": "Sequence length T",
    "dim": "Model width d",
    "heads": "Heads H",
    "attention": "Attention",
    "softmax": "Softmax (manual path)",
    "scale": "Input scale",
    "causal": "Causal mask",
    "seed": "Seed",
    "share": "Link to this view",
    "share_help": "Copy this link: it reopens this page with the same settings and step.",
    "bad_param": "URL parameter `{key}={raw}` is not valid; using `{used}` instead.",
    "fixed": "`{field}={value}` is outside the limits ({reason}, limit {limit}); using `{used}` instead.",
    "config_error": "This configuration cannot run: {error}",
    "probe_error": "Probing autocast's policy failed, so this run cannot be traced: {error}",
    "computing": "Running forward and backward under autocast and tracing every op…",
    "device_labels": {
        "cpu": "CPU",
        "cuda": "CUDA (this machine's GPU)",
        "cuda-sim": "CUDA policy, computed on CPU",
    },
    "dtype_labels": {"off": "off (float32)", "fp16": "float16", "bf16": "bfloat16"},
}

DTYPE_CHOICES = ("off", "fp16", "bf16")


# ── URL state ────────────────────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class UrlParam:
    """One piece of view state that lives in `?key=...`: its default and how to read it from a string."""

    key: str
    default: Any
    parse: Callable[[str], Any]
    dump: Callable[[Any], str] = str


def parse_bool(raw: str) -> bool:
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(raw)


def parse_choice(choices: tuple[str, ...]) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw not in choices:
            raise ValueError(raw)
        return raw

    return parse


def seed_from_url(params: list[UrlParam]) -> None:
    """On a session's first run, put each param's URL value (or its default, with a warning) into session state."""
    for p in params:
        if p.key in st.session_state:
            continue
        raw = st.query_params.get(p.key)
        if raw is None:
            st.session_state[p.key] = p.default
            continue
        try:
            st.session_state[p.key] = p.parse(raw)
        except (ValueError, TypeError):
            st.session_state[p.key] = p.default
            warn(TEXT["bad_param"].format(key=p.key, raw=raw[:40], used=p.dump(p.default)))


def write_url(params: list[UrlParam]) -> None:
    """Mirror the current values into the URL; defaults are left out so links stay short."""
    for p in params:
        value = st.session_state.get(p.key, p.default)
        if value == p.default:
            if p.key in st.query_params:
                del st.query_params[p.key]
        elif st.query_params.get(p.key) != p.dump(value):
            st.query_params[p.key] = p.dump(value)


def warn(message: str) -> None:
    """Queue a warning for this run (shown at the top of the page by `show_warnings`)."""
    st.session_state.setdefault("_warnings", []).append(message)


def show_warnings() -> None:
    for message in st.session_state.pop("_warnings", []):
        st.warning(message, icon="⚠️")


def leave_legacy_pages_mode() -> None:
    """Make app.py's st.navigation the entry point, even on a fresh process's very first run.

    Seeing a pages/ folder, Streamlit runs a fresh process's first script run in its legacy multipage mode: it
    lists the folder's files and may execute a page file directly, skipping app.py. Switch that mode off and
    rerun. Called from app.py and from `page_header()` (which every page calls first), never at import time: a rerun
    raised during an import would break that import for concurrent sessions.
    """
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


# ── the shared run config (sidebar, owned by app.py) ─────────────────────────────────────────────────────────
@dataclass(frozen=True)
class RunConfig:
    config: AttentionConfig
    device: str
    dtype: str  # "off" | "fp16" | "bf16"


def devices() -> list[str]:
    return mpviz.available_devices()


SIDEBAR_PARAMS = [
    UrlParam("device", "cpu", str),  # checked against devices() below: availability is per machine
    UrlParam("dtype", "bf16", parse_choice(DTYPE_CHOICES)),
    UrlParam("seq", AttentionConfig.seq_len, int),
    UrlParam("dim", AttentionConfig.d_model, int),
    UrlParam("heads", AttentionConfig.n_heads, int),
    UrlParam("attn", AttentionConfig.attention, parse_choice(ATTENTION_KINDS)),
    UrlParam("softmax", AttentionConfig.softmax, parse_choice(SOFTMAX_KINDS)),
    UrlParam("scale", AttentionConfig.input_scale, float, lambda v: f"{v:g}"),
    UrlParam("causal", AttentionConfig.causal, parse_bool, lambda v: "1" if v else "0"),
    UrlParam("seed", AttentionConfig.seed, int),
]
_FIELD_KEYS = {
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


def sidebar_config() -> RunConfig:
    """Render the shared sidebar and return the (limit-checked) config every page runs on."""
    seed_from_url(SIDEBAR_PARAMS)
    s = st.session_state
    if s.device not in devices():
        warn(TEXT["bad_param"].format(key="device", raw=s.device, used="cpu"))
        s.device = "cpu"
    # Fix out-of-limit values before the widgets exist, so the widgets show what will really run.
    cfg, fixed = clamp(_config_from_state(), s.device, mpviz.parse_autocast_dtype(s.dtype))
    for e in fixed:
        used = getattr(cfg, e.field)
        warn(TEXT["fixed"].format(field=e.field, value=e.value, reason=e.reason, limit=e.limit, used=used))
    for field, key in _FIELD_KEYS.items():
        s[key] = getattr(cfg, field)

    sb = st.sidebar
    sb.header(TEXT["sidebar_title"])
    sb.selectbox(TEXT["device"], devices(), key="device", format_func=lambda d: TEXT["device_labels"].get(d, d))
    sb.segmented_control(TEXT["dtype"], DTYPE_CHOICES, key="dtype", format_func=TEXT["dtype_labels"].get, required=True)
    sb.number_input(TEXT["seq"], 1, LIMITS.max_seq_len, key="seq")
    c1, c2 = sb.columns(2)
    c1.number_input(TEXT["dim"], 1, LIMITS.max_d_model, key="dim")
    c2.number_input(TEXT["heads"], 1, LIMITS.max_heads, key="heads")
    sb.segmented_control(TEXT["attention"], ATTENTION_KINDS, key="attn", required=True)
    sb.segmented_control(TEXT["softmax"], SOFTMAX_KINDS, key="softmax", required=True, disabled=s.attn != "manual")
    sb.number_input(TEXT["scale"], 1e-3, LIMITS.max_input_scale, key="scale", format="%g")
    sb.toggle(TEXT["causal"], key="causal")
    sb.number_input(TEXT["seed"], 0, 2**31 - 1, key="seed")
    write_url(SIDEBAR_PARAMS)
    return RunConfig(cfg, s.device, s.dtype)  # the widgets hold exactly cfg's values (set above)


def page_header(title: str, intro: str) -> None:
    """Every page starts here: legacy-mode guard, title, one paragraph of introduction."""
    leave_legacy_pages_mode()
    st.title(title)
    st.markdown(intro)


def run_config() -> RunConfig:
    """The config app.py's sidebar produced for this run (rendered here if a page runs on its own)."""
    if "_run_config" not in st.session_state:
        st.session_state["_run_config"] = sidebar_config()
    return st.session_state["_run_config"]


# ── cached engine calls (shared by all sessions: a class on one link computes once) ──────────────────────────
@st.cache_resource(max_entries=16, show_spinner=False)
def _trace(cfg_items: tuple, device: str, dtype: str) -> mpviz.AttentionTrace:
    return mpviz.trace_attention(AttentionConfig(**dict(cfg_items)), device=device, dtype=dtype)


def _key(cfg: AttentionConfig) -> tuple:
    """A small hashable cache key for a config (Streamlit hashes it cheaply, unlike arrays)."""
    return tuple(sorted(cfg.to_dict().items()))


def attention_trace(rc: RunConfig) -> mpviz.AttentionTrace | None:
    """The traced run for `rc` (cached process-wide and treated as read-only), or None after showing the error."""
    try:
        with st.spinner(TEXT["computing"]):
            return _trace(_key(rc.config), rc.device, rc.dtype)
    except ConfigError as e:
        st.error(TEXT["config_error"].format(error=e))
        return None
    except ChildProbeError as e:  # the policy probe's child process died: say so instead of a traceback
        st.error(TEXT["probe_error"].format(error=e))
        return None


def counterpart_trace(rc: RunConfig) -> mpviz.AttentionTrace | None:
    """The same config traced under the other policy: CUDA's (emulated on CPU) for a CPU run, and vice versa."""
    other = "cpu" if rc.device in ("cuda", "cuda-sim") else "cuda-sim"
    if rc.dtype == "off":
        return None
    try:
        return _trace(_key(rc.config), other, rc.dtype)
    except (ConfigError, ChildProbeError):
        return None


# ── small drawing helpers ────────────────────────────────────────────────────────────────────────────────────
def dtype_badge(dtype: str | None) -> str:
    """Inline HTML: the dtype's name on its fixed colour (same colours as every plot)."""
    name = dtype or "—"
    return (
        f"<span style='background:{dtype_color(dtype)};color:white;border-radius:0.4em;"
        f"padding:0.05em 0.45em;font-family:monospace;font-size:0.95em'>{name}</span>"
    )


@st.cache_data(max_entries=256, show_spinner=False)
def bit_layout(value: float, dtype: str):
    """Bit boxes of `value` stored as `dtype` (sign / exponent / mantissa coloured), from mpviz.formats."""
    return figures.bit_layout_figure(encode(value, dtype))


def share_link(url_path: str) -> None:
    """The link that reopens this exact view: this page plus every piece of state in the URL."""
    base = urlsplit(st.context.url or "http://localhost:8501")
    query = urlencode(st.query_params.to_dict())
    link = f"{base.scheme}://{base.netloc}/{url_path}" + (f"?{query}" if query else "")
    st.sidebar.caption(TEXT["share"])
    st.sidebar.code(link, language=None, wrap_lines=True)
    st.sidebar.caption(TEXT["share_help"])
