"""GradScaler, live: a real torch.amp.GradScaler trains the attention block; the page draws every step."""

import math
import time
from dataclasses import asdict, replace

import pandas as pd
import streamlit as st

from mpviz import figures, scaler
from mpviz.model import ConfigError
from pages import common

TEXT = {
    "title": "GradScaler, live",
    "intro": (
        "`GradScaler` is the half of mixed precision nobody sees. Here a real `torch.amp.GradScaler` "
        "trains the attention block (from the sidebar) on a tiny task — copy a token sequence — under "
        "autocast, step by step. Every number below is read from the scaler, the optimizer and the gradients "
        "as they happen."
    ),
    "defaults": (
        "A fresh `torch.amp.GradScaler` on this device reports: initial scale **{init_scale:g}**, growth "
        "**×{growth_factor:g}**, backoff **×{backoff_factor:g}**, growth interval **{growth_interval}** "
        "clean steps. Those are the knobs' defaults."
    ),
    "not_fp16": (
        "The sidebar's autocast dtype is **{dtype}**. GradScaler exists for float16, whose range is narrow; "
        "the run below uses {dtype} anyway — compare."
    ),
    "use_fp16": "Switch the sidebar to float16",
    "knobs": "Training",
    "scaler_knobs": "GradScaler",
    "steps": "Optimizer steps",
    "lr": "Learning rate (Adam)",
    "accum": "Gradient accumulation (micro-batches per step)",
    "clip": "Clip gradient norm at (0 = off; unscale_ runs first)",
    "init_scale": "Initial scale",
    "growth_factor": "Growth factor",
    "backoff_factor": "Backoff factor",
    "growth_interval": "Growth interval (clean steps)",
    "inject": "Inject an inf into one gradient at steps",
    "inject_help": "Comma-separated step numbers, e.g. 10,30",
    "mult": "Loss multiplier (< 1 pushes gradients toward underflow)",
    "pace": "Playback",
    "paces": {"fast": "max", "25": "25/s", "5": "5/s"},
    "run": "Run again",
    "stop": "Stop",
    "progress": "Step {done} of {total}",
    "stopped": "Stopped after {done} of {total} steps. Showing what was measured so far; press **Run again** "
    "for the whole run.",
    "bad_inject": "`{raw}` is not a list of step numbers; injecting nothing instead.",
    "inject_beyond": "Injection step(s) {steps} lie outside this {n}-step run (steps 0 … {last}).",
    "fixed": "`{field}={value}` cannot run ({reason}, limit {limit}); using `{used}` instead.",
    "scale_title": "The scale, step by step",
    "scale_caption": (
        "GradScaler multiplies the loss by the scale before backward. `unscale_` divides the gradients by "
        "it and checks them: if any is inf/NaN, `step()` skips the optimizer and `update()` multiplies the "
        "scale by the backoff factor; after growth-interval clean steps in a row it multiplies by the growth "
        "factor. Measured here: {skipped} skipped step(s), {grow} growth(s), {backoff} backoff(s)."
    ),
    "loss_title": "Loss",
    "zero_title": "Gradient elements lost to zero",
    "zero_caption": (
        "Of the gradient elements that are non-zero in a float32 backward of the same step, the share that "
        "came out exactly zero from the {dtype} backward — with the step's scale, and without scaling."
    ),
    "labels": {
        "step": "optimizer step",
        "scale": "loss scale (log₂ axis)",
        "scale_line": "scale used",
        "skipped": "step skipped",
        "injected": "inf injected",
        "grow": "growth",
        "backoff": "backoff",
        "loss": "loss (log axis)",
        "loss_line": "loss",
        "zero": "gradient elements lost to zero",
        "with_scaling": "with scaling",
        "without_scaling": "without scaling",
        "exponent": "binary exponent ⌊log₂|g|⌋",
        "count": "gradient elements",
        "before": "gradients (unscaled)",
        "after": "× scale {scale:g}",
        "underflow": "→ 0 in {dtype}",
        "subnormal": "subnormal in {dtype}",
        "overflow": "→ inf in {dtype}",
    },
    "inspect_title": "Step inspector",
    "inspect": "Step",
    "bad_inspect": "Step {step} does not exist in this run (0 … {n}); showing step {used}.",
    "t_injected": "inf injected into one gradient",
    "t_found": "unscale_ found inf/NaN",
    "t_clean": "gradients finite",
    "t_skipped": "optimizer step skipped (parameters bit-for-bit unchanged)",
    "t_updated": "parameters updated",
    "t_grow": "scale {before:g} → {after:g} ({interval} clean steps in a row: growth ×{factor:g})",
    "t_backoff": "scale {before:g} → {after:g} (backoff ×{factor:g})",
    "t_hold": "scale stays {before:g} (clean steps in a row: {tracker} of {interval})",
    "mismatch": "GradScaler's verdict (found inf: {found}) and the parameters (skipped: {skipped}) disagree.",
    "metrics": {
        "loss": "loss",
        "norm": "gradient norm (unscaled)",
        "zero": "lost to zero, scaled",
        "zero_unscaled": "lost to zero, unscaled",
        "ms": "step time (ms)",
    },
    "hist_title": "Why scaling rescues small gradients (step {step})",
    "hist_caption": (
        "Bars: this step's float32 reference gradients by binary exponent, as they are and multiplied by the "
        "scale. Read from `torch.finfo({dtype})`: below {underflow:.3g} a value rounds to 0, below "
        "{normal:.3g} it is subnormal (fewer bits), from {overflow:.6g} on it becomes inf."
    ),
    "recipes_title": "Four training recipes, same seed, same data",
    "recipes_intro": (
        "fp32; bf16 autocast without a scaler; fp16 autocast with GradScaler; fp16 autocast without a "
        "scaler. All use the knobs above except the injected infs (steps, learning rate, loss multiplier, "
        "clipping, accumulation, the GradScaler settings) and the sidebar's model and device. Lower the loss "
        "multiplier (try 2^-16) to see what fp16 without a scaler loses."
    ),
    "recipes_toggle": "Run the four recipes",
    "recipes_running": "Training recipe {name} ({i} of {n})…",
    "recipe_names": {
        "fp32": "fp32",
        "bf16": "bf16 autocast, no scaler",
        "fp16+scaler": "fp16 autocast + GradScaler",
        "fp16": "fp16 autocast, no scaler",
    },
    "cols": {
        "recipe": "recipe",
        "final": "final loss",
        "skipped": "skipped steps",
        "lost": "gradient elements lost to zero (mean)",
        "nonfinite": "steps with inf/NaN gradients",
        "diverged": "parameters inf/NaN from step",
        "ms": "ms / step (median)",
        "bwd_mem": "peak KiB, forward+backward",
        "mem": "peak KiB, whole step",
    },
    "recipes_caption": (
        "Time: median wall time of a step's forward, backward and update (references excluded) on {device}. "
        "Memory: {memory_how}, measured on the second step (the first also creates Adam's state)."
    ),
    "memory_how": {
        "cuda": "the CUDA caching allocator's peak above what the step started with",
        "other": "peak bytes of tensor storage the step's ops allocated, tracked op by op",
    },
}

DEFAULTS = scaler.ScalerSettings.defaults(common.run_config().device)  # read from a fresh GradScaler
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
    common.UrlParam("train_steps", scaler.TrainConfig.steps, int),
    common.UrlParam("lr", scaler.TrainConfig.lr, float, repr),
    common.UrlParam("accum", scaler.TrainConfig.accum, int),
    common.UrlParam("clip_norm", 0.0, float, repr),
    common.UrlParam("init_scale", DEFAULTS.init_scale, parse_member(INIT_SCALES), repr),
    common.UrlParam("growth_factor", DEFAULTS.growth_factor, float, repr),
    common.UrlParam("backoff_factor", DEFAULTS.backoff_factor, float, repr),
    common.UrlParam("growth_interval", DEFAULTS.growth_interval, int),
    common.UrlParam("inject_inf", INJECT_DEFAULT, lambda raw: ",".join(map(str, parse_steps(raw)))),
    common.UrlParam("loss_mult", 1.0, parse_member(MULTIPLIERS), repr),
    common.UrlParam("pace", "25", common.parse_choice(tuple(PACE_SECONDS))),
    common.UrlParam("inspect", INSPECT_DEFAULT, int),
    common.UrlParam("recipes", False, common.parse_bool, lambda v: "1" if v else "0"),
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
        common.warn(TEXT["bad_inject"].format(raw=st.session_state.inject_inf[:40]))
        return ()


def config_from_state(rc: common.RunConfig) -> scaler.TrainConfig:
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
common.page_header(TEXT["title"], TEXT["intro"])
rc = common.run_config()
common.seed_from_url(PAGE_PARAMS)
s = st.session_state
s.inject_inf = ",".join(map(str, injections()))  # normalise the box's text (bad text warns, becomes empty)
cfg, fixed = scaler.clamp_train(config_from_state(rc))
for e in fixed:
    common.warn(fixed_message(e, cfg))
s.train_steps, s.lr, s.accum, s.clip_norm = cfg.steps, cfg.lr, cfg.accum, cfg.clip or 0.0
s.init_scale, s.growth_factor = cfg.scaler.init_scale, cfg.scaler.growth_factor
s.backoff_factor, s.growth_interval = cfg.scaler.backoff_factor, cfg.scaler.growth_interval
common.show_warnings()

st.markdown(TEXT["defaults"].format(**asdict(DEFAULTS)))
if rc.dtype != "fp16":
    st.info(TEXT["not_fp16"].format(dtype=common.TEXT["dtype_labels"][rc.dtype]))
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
    scale_fig = figures.scale_trace_figure(records, labels, total_steps=total)
    scale_slot.plotly_chart(scale_fig, key=f"scale_{n}", width="stretch")
    loss_fig = figures.training_loss_figure(records, labels, total_steps=total)
    loss_slot.plotly_chart(loss_fig, key=f"loss_{n}", width="stretch")
    zero_fig = figures.zero_fraction_figure(records, labels, dtype=fmt.dtype, total_steps=total)
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
    st.plotly_chart(figures.scaled_gradient_histogram_figure(r, fmt, TEXT["labels"]), width="stretch")
    st.caption(
        TEXT["hist_caption"].format(
            dtype=fmt.dtype, underflow=fmt.underflow_at, normal=fmt.smallest_normal, overflow=fmt.overflow_at
        )
    )

# ── the four recipes ────────────────────────────────────────────────────────────────────────────────────────
st.header(TEXT["recipes_title"])
st.markdown(TEXT["recipes_intro"])
st.toggle(TEXT["recipes_toggle"], key="recipes")
common.write_url(PAGE_PARAMS)
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
    st.plotly_chart(figures.recipes_loss_figure(results, {**TEXT["labels"], **names}), width="stretch")
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
