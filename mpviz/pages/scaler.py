"""GradScaler, live: a real torch.amp.GradScaler trains the block, drawn step by step. The view model (its
presentation.view_models module) settles the knobs, trains once for everyone, words and draws; here: the widgets."""

import time
from contextlib import nullcontext
from dataclasses import asdict

import streamlit as st

from mpviz import scaler
from mpviz.app import text
from mpviz.app.page import chart, guarded, page_header, reference, row, show_warnings, warn
from mpviz.app.run_config import run_config
from mpviz.app.serving import run_slots
from mpviz.app.url import any_set, seed_from_url, write_url
from mpviz.presentation.view_models import scaler as lesson
from mpviz.run_watch import Plan, RunWatch

TEXT, rc, s = text.section("scaler"), run_config(), st.session_state
DEFAULTS = scaler.ScalerSettings.defaults(rc.device)  # read from a fresh GradScaler
PARAMS, LIM = lesson.page_params(DEFAULTS), scaler.TRAIN_LIMITS

# ── config: URL → session state → limits → widgets ──────────────────────────────────────────────────────────
page_header(TEXT)
seed_from_url(PARAMS)
for message in (first := lesson.settled(rc, lesson.Knobs.of(s))).warnings:
    warn(message)
s.update(asdict(first.knobs))  # what the engine accepts, shown back (the box's text normalised)
show_warnings()
st.markdown(lesson.defaults_line(DEFAULTS))
if rc.dtype != "fp16":
    st.info(TEXT["not_fp16"].format(dtype=text.section("common")["dtype_labels"][rc.dtype]))
    st.button(TEXT["use_fp16"], on_click=lambda: s.update(dtype="fp16"))
with st.expander(TEXT["knobs"], expanded=True):
    c = row()  # seven knobs, one block
    c.slider(TEXT["steps"], 1, LIM.max_steps, key="train_steps")
    c.number_input(TEXT["lr"], LIM.min_lr, LIM.max_lr, key="lr", step=1e-3, format="%g")
    c.number_input(TEXT["accum"], 1, LIM.max_accum, key="accum")
    c.number_input(TEXT["clip"], 0.0, LIM.max_clip, key="clip_norm", format="%g")
    c.text_input(TEXT["inject"], key="inject_inf", help=TEXT["inject_help"], max_chars=lesson.INJECT_MAX_CHARS)
    c.select_slider(TEXT["mult"], lesson.MULTIPLIERS, key="loss_multiplier", format_func=lesson.multiplier_label)
    c.segmented_control(TEXT["pace"], [*lesson.PACE_RATES], key="pace", format_func=TEXT["paces"].get, required=True)
    if first.beyond:
        st.caption(TEXT["inject_beyond"].format(steps=list(first.beyond), n=s.train_steps, last=s.train_steps - 1))
tuned = any_set(PARAMS, asdict(DEFAULTS))  # a link that sets GradScaler's own knobs shows them
with reference(TEXT["scaler_knobs"], "ref_scaler_knobs", expanded=tuned) as shown:  # drawn once opened
    if shown:
        c = row()
        c.select_slider(TEXT["init_scale"], lesson.init_scales(DEFAULTS), key="init_scale", format_func="{:g}".format)
        c.number_input(TEXT["growth_factor"], 1.0, LIM.max_growth_factor, key="growth_factor", format="%g")
        c.number_input(TEXT["backoff_factor"], 0.0, 1.0, key="backoff_factor", format="%g")
        c.number_input(TEXT["growth_interval"], 1, LIM.max_growth_interval, key="growth_interval")
for message in (settled := lesson.settled(rc, lesson.Knobs.of(s))).warnings:  # refused values: the fixed run runs
    st.warning(message)
cfg = settled.config
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
right.caption(TEXT["zero_caption"].format(dtype=scaler.format_range(cfg.dtype).dtype))


def draw(records: tuple | list) -> None:
    """(Re)draw the three per-step charts; x axes span the whole run, so a run being shown fills them in."""
    slots = {"scale": scale_slot, "loss": loss_slot, "zero": zero_slot}
    for (name, slot), figure in zip(slots.items(), lesson.step_figures(cfg, records), strict=True):
        chart(figure, where=slot, key=f"{name}_{len(records)}")
    scale_caption.caption(lesson.scale_caption(records))


def show_run(plan: Plan) -> scaler.ScalerRun:
    """The run of `cfg` from step 0 as it trains, at most at the playback pace (a viewer who leaves stops it)."""
    watch.begin(cfg)
    stop_col, bar_col = status.container().columns([1, 6])
    stop_col.button(TEXT["stop"], on_click=watch.stop)
    bar = bar_col.progress(0.0)
    playback, trained = lesson.Playback(cfg.steps, s.pace), []

    def catch_up(available: list) -> None:
        for r in playback.due(available, len(watch.steps)):
            watch.show(r)
        bar.progress(*playback.progress(len(watch.steps)))
        if playback.redraw(len(watch.steps)):
            draw(watch.steps)

    playback.pacer.start()
    training = nullcontext() if lesson.run.cached(cfg) else st.spinner(TEXT["training"])
    with training, lesson.reporting(on_step=lambda records: (trained.append(1), catch_up(records))):
        run = lesson.run(cfg)
    if plan is Plan.SHOW and not trained:  # computed before (or by another viewer meanwhile): all at once
        playback.at_once()
    with run_slots.stepped_aside():  # a paced replay: other sessions' runs go on between its steps
        while len(watch.steps) < len(run.steps):
            time.sleep(playback.pacer.wait(len(watch.steps)))
            catch_up(list(run.steps))
    watch.finish()
    status.empty()
    return run


records: tuple = ()
with guarded("scaler run"):
    if (plan := watch.plan(cfg)) is Plan.SHOW_STOPPED:  # only what this viewer saw before Stop
        status.info(TEXT["stopped"].format(done=len(watch.steps), total=cfg.steps))
        draw(records := tuple(watch.steps))
    elif plan is Plan.SHOW and lesson.run.cached(cfg):  # computed before (by anyone): at once, no Stop, no bar
        draw(records := lesson.run(cfg).steps)
    else:
        records = show_run(plan).steps

# ── one step, in words and in exponents ─────────────────────────────────────────────────────────────────────
if records:
    with guarded("step inspector"):
        st.subheader(TEXT["inspect_title"])
        s.inspect, problem = lesson.inspected(s.inspect, len(records))
        if problem:
            st.warning(problem)
        if len(records) > 1:
            st.slider(TEXT["inspect"], 0, len(records) - 1, key="inspect")
        r = records[s.inspect]
        if r.found_inf != r.skipped:  # GradScaler skipped a step it found finite, or the reverse: never expected
            st.warning(TEXT["mismatch"].format(found=r.found_inf, skipped=r.skipped))
        hist_title = TEXT["hist_title"].format(step=s.inspect)  # the step's words and its chart's title: one element
        st.markdown(f"{lesson.step_sentence(r, s.inspect, cfg)}\n\n{lesson.step_metrics(r)}\n\n**{hist_title}**")
        chart(lesson.histogram(cfg, r))
        st.caption(lesson.histogram_caption(cfg))

# ── the four recipes ────────────────────────────────────────────────────────────────────────────────────────
with guarded("recipes"):
    st.header(TEXT["recipes_title"])
    st.markdown(TEXT["recipes_intro"])
    st.toggle(TEXT["recipes_toggle"], key="recipes")
    if s.recipes:
        bar = st.empty()
        training = nullcontext() if lesson.recipes.cached(cfg) else st.spinner(TEXT["recipes_training"])
        with training, lesson.reporting(on_recipe=lambda i, name: bar.progress(*lesson.recipe_progress(i, name))):
            lesson.recipes(cfg)
        bar.empty()
        chart(lesson.recipes_figure(cfg))
        st.table(lesson.recipe_table(cfg))
        st.caption(lesson.recipes_caption(cfg))
write_url(PARAMS)
