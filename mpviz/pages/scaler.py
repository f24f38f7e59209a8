"""GradScaler, live: a real torch.amp.GradScaler trains the attention block; the page draws every step."""

import math
import time
from dataclasses import asdict, replace

import pandas as pd
import streamlit as st

from mpviz import scaler
from mpviz.app import text
from mpviz.app.page import chart, guarded, page_header, show_warnings, warn
from mpviz.app.run_config import RunConfig, run_config
from mpviz.app.serving import results, run_slots
from mpviz.app.url import UrlParam, dump_bool, parse_bool, parse_choice, seed_from_url, write_url
from mpviz.model import ConfigError
from mpviz.presentation.figures import scaler as scaler_fig
from mpviz.run_watch import Pacer, Plan, RunWatch

TEXT = text.section("scaler")

DEFAULTS = scaler.ScalerSettings.defaults(run_config().device)  # read from a fresh GradScaler
LIM = scaler.TRAIN_LIMITS
INIT_SCALES = sorted({2.0**k for k in range(0, 33)} | {DEFAULTS.init_scale})
MULTIPLIERS = [2.0**k for k in range(4, -41, -1)]
PACE_RATES = {"fast": None, "25": 25.0, "5": 5.0}  # playback: steps shown per second (None: as they arrive)
REDRAW_SECONDS = 0.2  # charts are redrawn at most this often: each redraw costs the server three figures
INJECT_DEFAULT = "10,30"  # a demo: two steps to watch GradScaler skip
INJECT_MAX_CHARS = 200  # the injection box, also when its text comes from a link
INSPECT_DEFAULT = 10  # open the inspector on the first of them


def parse_steps(raw: str) -> tuple[int, ...]:
    """'10, 30' → (10, 30); '' → (). Raises ValueError on anything else, and on text longer than the box takes."""
    if len(raw) > INJECT_MAX_CHARS:
        raise ValueError(raw)
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
    UrlParam("loss_multiplier", 1.0, parse_member(MULTIPLIERS), repr, aliases=("loss_mult",)),
    UrlParam("pace", "25", parse_choice(tuple(PACE_RATES))),
    UrlParam("inspect", INSPECT_DEFAULT, int),
    UrlParam("recipes", False, parse_bool, dump_bool),
]


def injections() -> tuple[int, ...]:
    """The injection box's steps (all of them, also beyond the run); bad text warns and means none."""
    try:
        return parse_steps(st.session_state.inject_inf)
    except ValueError:
        warn(TEXT["bad_inject"].format(raw=text.echo(st.session_state.inject_inf)))
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
        loss_multiplier=s.loss_multiplier,
        clip=s.clip_norm or None,
        accum=s.accum,
        lr=s.lr,
    )


def field_value(cfg: scaler.TrainConfig, field: str):
    return next(getattr(o, field) for o in (cfg.scaler, cfg, cfg.model) if hasattr(o, field))


def fixed_message(e: ConfigError, cfg: scaler.TrainConfig) -> str:
    used = text.echo(field_value(cfg, e.field))
    reason = text.reason(e)
    return TEXT["fixed"].format(field=e.field, value=text.echo(e.value), reason=reason, limit=e.limit, used=used)


def use_fp16() -> None:
    st.session_state["dtype"] = "fp16"


def percent(x: float) -> str:
    """A share as a percentage with 3 significant digits: lost gradients are often 0.005 %, and 0.00 % would lie."""
    return f"{100 * x:.3g}%"


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
s.loss_multiplier = cfg.loss_multiplier
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
    c1.text_input(TEXT["inject"], key="inject_inf", help=TEXT["inject_help"], max_chars=INJECT_MAX_CHARS)
    if beyond := [k for k in injections() if not 0 <= k < s.train_steps]:
        c1.caption(TEXT["inject_beyond"].format(steps=beyond, n=s.train_steps, last=s.train_steps - 1))
    c2.select_slider(TEXT["mult"], MULTIPLIERS, key="loss_multiplier", format_func=lambda v: f"2^{round(math.log2(v))}")
    c3.segmented_control(TEXT["pace"], list(PACE_RATES), key="pace", format_func=TEXT["paces"].get, required=True)
with st.expander(TEXT["scaler_knobs"], expanded=True):
    c1, c2, c3, c4 = st.columns(4)
    c1.select_slider(TEXT["init_scale"], INIT_SCALES, key="init_scale", format_func=lambda v: f"{v:g}")
    c2.number_input(TEXT["growth_factor"], 1.0, LIM.max_growth_factor, key="growth_factor", format="%g")
    c3.number_input(TEXT["backoff_factor"], 0.0, 1.0, key="backoff_factor", format="%g")
    c4.number_input(TEXT["growth_interval"], 1, LIM.max_growth_interval, key="growth_interval")
cfg, fixed = scaler.clamp_train(config_from_state(rc))
for e in fixed:  # widget values the engine refuses (e.g. a growth factor of 1): say so, run the fixed config
    st.warning(fixed_message(e, cfg))
fmt = scaler.format_range(cfg.dtype)
watch: RunWatch = s.setdefault("scaler_watch", RunWatch())  # this viewer's run: see mpviz.run_watch

# ── the run: shown at once when computed before, else step by step as it trains (Stop keeps what was shown) ──
st.button(TEXT["run"], type="primary", on_click=watch.request_replay, help=TEXT["run_help"])
status = st.empty()
st.subheader(TEXT["scale_title"])
scale_slot, scale_caption = st.empty(), st.empty()
left, right = st.columns(2)
left.markdown(f"**{TEXT['loss_title']}**")
right.markdown(f"**{TEXT['zero_title']}**")
loss_slot, zero_slot = left.empty(), right.empty()
right.caption(TEXT["zero_caption"].format(dtype=fmt.dtype))


def draw(records: list) -> None:
    """(Re)draw the three per-step charts; x axes span the whole run, so a run being shown fills them in."""
    n, labels, total = len(records), TEXT["labels"], cfg.steps
    scale_fig = scaler_fig.scale_trace_figure(records, labels=labels, total_steps=total)
    chart(scale_fig, where=scale_slot, key=f"scale_{n}")
    loss_fig = scaler_fig.training_loss_figure(records, labels=labels, total_steps=total)
    chart(loss_fig, where=loss_slot, key=f"loss_{n}")
    zero_fig = scaler_fig.zero_fraction_figure(records, labels=labels, dtype=fmt.dtype, total_steps=total)
    chart(zero_fig, where=zero_slot, key=f"zero_{n}")
    changes = [r.scale_change for r in records]
    skipped = sum(r.skipped for r in records)
    grow, backoff = changes.count("grow"), changes.count("backoff")
    scale_caption.caption(TEXT["scale_caption"].format(skipped=skipped, grow=grow, backoff=backoff))


def show_run(plan: Plan) -> scaler.ScalerRun:
    """Show the run of `cfg` from step 0: as it trains (at most at the playback pace), or from the shared result.

    Training holds a slot of the admission gate; the pace never does: steps that trained faster than the pace
    are played out after the slot is given back. Every step shown touches the page, so a viewer who leaves
    stops the training at the next step (Streamlit raises its stop there) and frees the slot.
    """
    watch.begin(cfg)
    stop_col, bar_col = status.container().columns([1, 6])
    stop_col.button(TEXT["stop"], on_click=watch.stop)
    bar = bar_col.progress(0.0)
    pacer, arrived, drawn_at = Pacer(PACE_RATES[s.pace]), [], [-math.inf]

    def catch_up(available) -> None:
        for r in available[len(watch.steps) : pacer.visible(len(available))]:
            watch.show(r)
        done = len(watch.steps)
        bar.progress(done / cfg.steps, text=TEXT["progress"].format(done=done, total=cfg.steps))
        if done and (done == cfg.steps or time.monotonic() - drawn_at[0] >= REDRAW_SECONDS):
            draw(watch.steps)
            drawn_at[0] = time.monotonic()

    def train() -> scaler.ScalerRun:
        for record in scaler.train(cfg):
            arrived.append(record)
            catch_up(arrived)
        return scaler.collect(cfg, tuple(arrived))

    pacer.start()
    with st.spinner(TEXT["training"]):
        run = results.shared(("scaler-run", cfg), train, heavy=True)
    if plan is Plan.SHOW and not arrived:  # computed before (or by another viewer meanwhile): all at once
        pacer = Pacer(None)
    with run_slots.stepped_aside():  # a paced replay: other sessions' runs go on between its steps
        while len(watch.steps) < len(run.steps):
            time.sleep(pacer.wait(len(watch.steps)))
            catch_up(run.steps)
    watch.finish()
    status.empty()
    return run


records: tuple = ()
with guarded("scaler run"):
    plan = watch.plan(cfg)
    if plan is Plan.SHOW_STOPPED:
        records = tuple(watch.steps)
        status.info(TEXT["stopped"].format(done=len(records), total=cfg.steps))
        draw(list(records))
    else:
        records = show_run(plan).steps

# ── one step, in words and in exponents ─────────────────────────────────────────────────────────────────────
if records:
    with guarded("step inspector"):
        st.subheader(TEXT["inspect_title"])
        last = len(records) - 1
        if not 0 <= s.inspect <= last:
            used = min(max(s.inspect, 0), last)
            if s.inspect != INSPECT_DEFAULT:  # the default step may simply lie beyond a short run
                st.warning(TEXT["bad_inspect"].format(step=text.echo(s.inspect), n=last, used=used))
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
        cols[2].metric(m["zero"], percent(r.zero_grad_fraction))
        cols[3].metric(m["zero_unscaled"], percent(r.zero_grad_fraction_unscaled))
        cols[4].metric(m["ms"], f"{r.step_ms:.2f}")
        st.markdown(f"**{TEXT['hist_title'].format(step=s.inspect)}**")
        chart(scaler_fig.scaled_gradient_histogram_figure(r, fmt, labels=TEXT["labels"]))
        st.caption(
            TEXT["hist_caption"].format(
                dtype=fmt.dtype, underflow=fmt.underflow_at, normal=fmt.smallest_normal, overflow=fmt.overflow_at
            )
        )

# ── the four recipes ────────────────────────────────────────────────────────────────────────────────────────
with guarded("recipes"):
    st.header(TEXT["recipes_title"])
    st.markdown(TEXT["recipes_intro"])
    st.toggle(TEXT["recipes_toggle"], key="recipes")
    if s.recipes:
        recipes_cfg = replace(cfg, inject_inf=())
        names, c, none = TEXT["recipe_names"], TEXT["cols"], TEXT["cols"]["none"]
        bar = st.empty()

        def on_start(i: int, name: str) -> None:
            n = len(scaler.RECIPES)
            bar.progress(i / n, text=TEXT["recipes_running"].format(name=names[name], i=i + 1, n=n))

        with st.spinner(TEXT["recipes_training"]):
            compared = results.shared(
                ("scaler-recipes", recipes_cfg), lambda: scaler.compare_recipes(recipes_cfg, on_start), heavy=True
            )
        bar.empty()
        figure = scaler_fig.recipes_loss_figure(compared, labels={**TEXT["labels"], **names})
        chart(figure)
        steps_or_none = lambda steps: ", ".join(map(str, steps)) or none  # noqa: E731
        rows = {  # one row per measure, one column per recipe: four columns fit any screen
            c["final"]: [f"{r.final_loss:.4g}" for r in compared],
            c["lost"]: [percent(r.mean_zero_grad_fraction) for r in compared],
            c["skipped"]: [steps_or_none(r.skipped_steps) for r in compared],
            c["nonfinite"]: [steps_or_none(r.nonfinite_steps) for r in compared],
            c["diverged"]: [none if r.diverged_at is None else str(r.diverged_at) for r in compared],
            c["ms"]: [f"{r.ms_per_step:.3g}" for r in compared],
            c["bwd_mem"]: [f"{r.memory.backward_peak_bytes / 1024:.1f}" for r in compared],
            c["mem"]: [f"{r.memory.peak_bytes / 1024:.1f}" for r in compared],
        }
        table = pd.DataFrame.from_dict(rows, orient="index", columns=[names[r.recipe] for r in compared])
        st.table(table.rename_axis(c["measure"]))
        how = TEXT["memory_how"]["cuda" if cfg.device == "cuda" else "other"]
        device = text.section("common")["device_labels"].get(cfg.device, cfg.device)
        st.caption(TEXT["recipes_caption"].format(device=device, memory_how=how))
write_url(PAGE_PARAMS)
