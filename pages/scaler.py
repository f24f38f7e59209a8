"""GradScaler, live: a real torch.amp.GradScaler trains the attention block; the page draws every step."""

import math
import time
from dataclasses import asdict, replace

import pandas as pd
import streamlit as st

from mpviz import scaler
from mpviz.model import ConfigError
from view import text
from view.figures import scaler as scaler_fig
from view.page import page_header, show_warnings, warn
from view.run_config import RunConfig, run_config
from view.url import UrlParam, dump_bool, parse_bool, parse_choice, seed_from_url, write_url

TEXT = text.section("scaler")

DEFAULTS = scaler.ScalerSettings.defaults(run_config().device)  # read from a fresh GradScaler
LIM = scaler.TRAIN_LIMITS
INIT_SCALES = sorted({2.0**k for k in range(0, 33)} | {DEFAULTS.init_scale})
MULTIPLIERS = [2.0**k for k in range(4, -41, -1)]
PACE_SECONDS = {"fast": 0.0, "25": 1 / 25, "5": 1 / 5}
REDRAW_SECONDS = 0.2  # at "fast" pace, redraw at most this often
INJECT_DEFAULT = "10,30"  # a demo: two steps to watch GradScaler skip
INSPECT_DEFAULT = 10  # open the inspector on the first of them


def parse_steps(raw: str) -> tuple[int, ...]:
    """'10, 30' → (10, 30); '' → (). Raises ValueError on anything else."""
    return tuple(sorted({int(part) for part in raw.split(",") if part.strip()}))


def parse_member(options: list[float]):
    def parse(raw: str) -> float:
        if float(raw) not in options:
            raise ValueError(raw)
        return float(raw)

    return parse


PAGE_PARAMS = [  # floats are written with repr: a link must rerun exactly the same config
    UrlParam("train_steps", scaler.TrainConfig.steps, int),
    UrlParam("lr", scaler.TrainConfig.lr, float, repr),
    UrlParam("accum", scaler.TrainConfig.accum, int),
    UrlParam("clip_norm", 0.0, float, repr),
    UrlParam("init_scale", DEFAULTS.init_scale, parse_member(INIT_SCALES), repr),
    UrlParam("growth_factor", DEFAULTS.growth_factor, float, repr),
    UrlParam("backoff_factor", DEFAULTS.backoff_factor, float, repr),
    UrlParam("growth_interval", DEFAULTS.growth_interval, int),
    UrlParam("inject_inf", INJECT_DEFAULT, lambda raw: ",".join(map(str, parse_steps(raw)))),
    UrlParam("loss_mult", 1.0, parse_member(MULTIPLIERS), repr),
    UrlParam("pace", "25", parse_choice(tuple(PACE_SECONDS))),
    UrlParam("inspect", INSPECT_DEFAULT, int),
    UrlParam("recipes", False, parse_bool, dump_bool),
]


@st.cache_data(max_entries=32, show_spinner=False)
def finished(key: str, _result=None):
    """Memo of finished runs keyed on a config's repr: call with `_result` to store it, without to look it up.

    A missing key raises KeyError, and exceptions are never cached — so a look-up never stores anything.
    """
    if _result is None:
        raise KeyError(key)
    return _result


def lookup(key: str):
    try:
        return finished(key)
    except KeyError:
        return None


def injections() -> tuple[int, ...]:
    """The injection box's steps (all of them, also beyond the run); bad text warns and means none."""
    try:
        return parse_steps(st.session_state.inject_inf)
    except ValueError:
        warn(TEXT["bad_inject"].format(raw=st.session_state.inject_inf[:40]))
        return ()


def config_from_state(rc: RunConfig) -> scaler.TrainConfig:
    """The run the knobs describe; injection steps outside the run are left out (the box keeps them)."""
    s = st.session_state
    inject = tuple(k for k in injections() if 0 <= k < s.train_steps)
    return scaler.TrainConfig(
        model=rc.config,
        device=rc.device,
        dtype=rc.dtype,
        scaler=scaler.ScalerSettings(s.init_scale, s.growth_factor, s.backoff_factor, s.growth_interval),
        steps=s.train_steps,
        inject_inf=inject,
        loss_multiplier=s.loss_mult,
        clip=s.clip_norm or None,
        accum=s.accum,
        lr=s.lr,
    )


def field_value(cfg: scaler.TrainConfig, field: str):
    return next(getattr(o, field) for o in (cfg.scaler, cfg, cfg.model) if hasattr(o, field))


def fixed_message(e: ConfigError, cfg: scaler.TrainConfig) -> str:
    used = field_value(cfg, e.field)
    return TEXT["fixed"].format(field=e.field, value=e.value, reason=e.reason, limit=e.limit, used=used)


def stop_run(key: str) -> None:
    st.session_state["scaler_stopped"] = key


def request_run() -> None:  # a callback, not the button's return value: it survives an app-level st.rerun()
    st.session_state["scaler_run_again"] = True


def use_fp16() -> None:
    st.session_state["dtype"] = "fp16"


# ── config: URL → session state → limits → widgets ──────────────────────────────────────────────────────────
page_header(TEXT)
rc = run_config()
seed_from_url(PAGE_PARAMS)
s = st.session_state
s.inject_inf = ",".join(map(str, injections()))  # normalise the box's text (bad text warns, becomes empty)
cfg, fixed = scaler.clamp_train(config_from_state(rc))
for e in fixed:
    warn(fixed_message(e, cfg))
s.train_steps, s.lr, s.accum, s.clip_norm = cfg.steps, cfg.lr, cfg.accum, cfg.clip or 0.0
s.init_scale, s.growth_factor = cfg.scaler.init_scale, cfg.scaler.growth_factor
s.backoff_factor, s.growth_interval = cfg.scaler.backoff_factor, cfg.scaler.growth_interval
show_warnings()

st.markdown(TEXT["defaults"].format(**asdict(DEFAULTS)))
if rc.dtype != "fp16":
    st.info(TEXT["not_fp16"].format(dtype=text.section("common")["dtype_labels"][rc.dtype]))
    st.button(TEXT["use_fp16"], on_click=use_fp16)
with st.expander(TEXT["knobs"], expanded=True):
    c1, c2, c3, c4 = st.columns(4)
    c1.slider(TEXT["steps"], 1, LIM.max_steps, key="train_steps")
    c2.number_input(TEXT["lr"], LIM.min_lr, LIM.max_lr, key="lr", step=1e-3, format="%g")
    c3.number_input(TEXT["accum"], 1, LIM.max_accum, key="accum")
    c4.number_input(TEXT["clip"], 0.0, LIM.max_clip, key="clip_norm", format="%g")
    c1, c2, c3 = st.columns([1, 2, 1])
    c1.text_input(TEXT["inject"], key="inject_inf", help=TEXT["inject_help"])
    if beyond := [k for k in injections() if not 0 <= k < s.train_steps]:
        c1.caption(TEXT["inject_beyond"].format(steps=beyond, n=s.train_steps, last=s.train_steps - 1))
    c2.select_slider(TEXT["mult"], MULTIPLIERS, key="loss_mult", format_func=lambda v: f"2^{round(math.log2(v))}")
    c3.segmented_control(TEXT["pace"], list(PACE_SECONDS), key="pace", format_func=TEXT["paces"].get, required=True)
with st.expander(TEXT["scaler_knobs"], expanded=True):
    c1, c2, c3, c4 = st.columns(4)
    c1.select_slider(TEXT["init_scale"], INIT_SCALES, key="init_scale", format_func=lambda v: f"{v:g}")
    c2.number_input(TEXT["growth_factor"], 1.0, LIM.max_growth_factor, key="growth_factor", format="%g")
    c3.number_input(TEXT["backoff_factor"], 0.0, 1.0, key="backoff_factor", format="%g")
    c4.number_input(TEXT["growth_interval"], 1, LIM.max_growth_interval, key="growth_interval")
cfg, fixed = scaler.clamp_train(config_from_state(rc))
for e in fixed:  # widget values the engine refuses (e.g. a growth factor of 1): say so, run the fixed config
    st.warning(fixed_message(e, cfg))
key, fmt = repr(cfg), scaler.format_range(cfg.dtype)

# ── the run: cached → draw at once; otherwise stream it live (Stop keeps what was measured) ─────────────────
st.button(TEXT["run"], type="primary", on_click=request_run)
run_again = s.pop("scaler_run_again", False)
status = st.empty()
st.subheader(TEXT["scale_title"])
scale_slot, scale_caption = st.empty(), st.empty()
left, right = st.columns(2)
left.markdown(f"**{TEXT['loss_title']}**")
right.markdown(f"**{TEXT['zero_title']}**")
loss_slot, zero_slot = left.empty(), right.empty()
right.caption(TEXT["zero_caption"].format(dtype=fmt.dtype))


def draw(records: list) -> None:
    """(Re)draw the three per-step charts; x axes span the whole run, so a streaming run fills them in."""
    n, labels, total = len(records), TEXT["labels"], cfg.steps
    scale_fig = scaler_fig.scale_trace_figure(records, labels=labels, total_steps=total)
    scale_slot.plotly_chart(scale_fig, key=f"scale_{n}", width="stretch")
    loss_fig = scaler_fig.training_loss_figure(records, labels=labels, total_steps=total)
    loss_slot.plotly_chart(loss_fig, key=f"loss_{n}", width="stretch")
    zero_fig = scaler_fig.zero_fraction_figure(records, labels=labels, dtype=fmt.dtype, total_steps=total)
    zero_slot.plotly_chart(zero_fig, key=f"zero_{n}", width="stretch")
    changes = [r.scale_change for r in records]
    skipped = sum(r.skipped for r in records)
    grow, backoff = changes.count("grow"), changes.count("backoff")
    scale_caption.caption(TEXT["scale_caption"].format(skipped=skipped, grow=grow, backoff=backoff))


def stream() -> scaler.ScalerRun:
    """Train step by step, redrawing as records arrive; store the finished run for all with this config."""
    s.pop("scaler_stopped", None)
    records: list = []
    s.scaler_live = (key, records)  # what a Stop click leaves behind
    stop_col, bar_col = status.container().columns([1, 6])
    stop_col.button(TEXT["stop"], on_click=stop_run, args=(key,))
    bar, pause, drawn_at = bar_col.progress(0.0), PACE_SECONDS[s.pace], 0.0
    for record in scaler.train(cfg):
        records.append(record)
        bar.progress(len(records) / cfg.steps, text=TEXT["progress"].format(done=len(records), total=cfg.steps))
        if pause or time.monotonic() - drawn_at > REDRAW_SECONDS or len(records) == cfg.steps:
            draw(records)
            drawn_at = time.monotonic()
        time.sleep(pause)
    status.empty()
    return finished(key, scaler.collect(cfg, tuple(records)))


result = None if run_again else lookup(key)
if result is not None:
    draw(list(result.steps))
elif not run_again and s.get("scaler_stopped") == key and s.get("scaler_live", (None,))[0] == key:
    result = scaler.collect(cfg, tuple(s.scaler_live[1]))
    status.info(TEXT["stopped"].format(done=len(result.steps), total=cfg.steps))
    draw(list(result.steps))
else:
    result = stream()

# ── one step, in words and in exponents ─────────────────────────────────────────────────────────────────────
records = result.steps
if records:
    st.subheader(TEXT["inspect_title"])
    last = len(records) - 1
    if not 0 <= s.inspect <= last:
        used = min(max(s.inspect, 0), last)
        if s.inspect != INSPECT_DEFAULT:  # the default step may simply lie beyond a short run
            st.warning(TEXT["bad_inspect"].format(step=s.inspect, n=last, used=used))
        s.inspect = used
    if last > 0:
        st.slider(TEXT["inspect"], 0, last, key="inspect")
    r = records[s.inspect]
    parts = [TEXT["t_injected"]] if r.injected else []
    parts.append(TEXT["t_found"] if r.found_inf else TEXT["t_clean"])
    parts.append(TEXT["t_skipped"] if r.skipped else TEXT["t_updated"])
    parts.append(
        TEXT[f"t_{r.scale_change}"].format(
            before=r.scale_before,
            after=r.scale_after,
            factor=r.scale_after / r.scale_before,
            tracker=r.growth_tracker,
            interval=cfg.scaler.growth_interval,
        )
    )
    st.markdown(f"**{s.inspect}:** " + " → ".join(parts))
    if r.found_inf != r.skipped:
        st.warning(TEXT["mismatch"].format(found=r.found_inf, skipped=r.skipped))
    m, cols = TEXT["metrics"], st.columns(5)
    cols[0].metric(m["loss"], f"{r.loss:.4g}")
    cols[1].metric(m["norm"], f"{r.grad_norm:.4g}")
    cols[2].metric(m["zero"], f"{r.zero_grad_fraction:.2%}")
    cols[3].metric(m["zero_unscaled"], f"{r.zero_grad_fraction_unscaled:.2%}")
    cols[4].metric(m["ms"], f"{r.step_ms:.2f}")
    st.markdown(f"**{TEXT['hist_title'].format(step=s.inspect)}**")
    st.plotly_chart(scaler_fig.scaled_gradient_histogram_figure(r, fmt, labels=TEXT["labels"]), width="stretch")
    st.caption(
        TEXT["hist_caption"].format(
            dtype=fmt.dtype, underflow=fmt.underflow_at, normal=fmt.smallest_normal, overflow=fmt.overflow_at
        )
    )

# ── the four recipes ────────────────────────────────────────────────────────────────────────────────────────
st.header(TEXT["recipes_title"])
st.markdown(TEXT["recipes_intro"])
st.toggle(TEXT["recipes_toggle"], key="recipes")
write_url(PAGE_PARAMS)
if s.recipes:
    recipes_cfg = replace(cfg, inject_inf=())
    recipes_key = "recipes:" + repr(recipes_cfg)
    results = lookup(recipes_key)
    if results is None:
        bar, done = st.progress(0.0), []
        for i, name in enumerate(scaler.RECIPES):
            text = TEXT["recipes_running"].format(name=TEXT["recipe_names"][name], i=i + 1, n=len(scaler.RECIPES))
            bar.progress(i / len(scaler.RECIPES), text=text)
            done.append(scaler.run_recipe(name, recipes_cfg))
        bar.empty()
        results = finished(recipes_key, tuple(done))
    names, c = TEXT["recipe_names"], TEXT["cols"]
    st.plotly_chart(scaler_fig.recipes_loss_figure(results, labels={**TEXT["labels"], **names}), width="stretch")
    rows = [
        {
            c["recipe"]: names[r.recipe],
            c["final"]: r.final_loss,
            c["lost"]: f"{r.mean_zero_grad_fraction:.2%}",
            c["skipped"]: ", ".join(map(str, r.skipped_steps)) or "—",
            c["nonfinite"]: ", ".join(map(str, r.nonfinite_steps)) or "—",
            c["diverged"]: "—" if r.diverged_at is None else str(r.diverged_at),
            c["ms"]: round(r.ms_per_step, 3),
            c["bwd_mem"]: round(r.memory.backward_peak_bytes / 1024, 1),
            c["mem"]: round(r.memory.peak_bytes / 1024, 1),
        }
        for r in results
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    how = TEXT["memory_how"]["cuda" if cfg.device == "cuda" else "other"]
    st.caption(TEXT["recipes_caption"].format(device=cfg.device, memory_how=how))
