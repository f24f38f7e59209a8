"""The GradScaler lesson's view model: the knobs → the training run, its words and its figures, without widgets.

`Knobs` are the page's settings as the URL and the widgets hold them; `settled` turns them into the run the engine
accepts (mpviz.scaler.clamp_train) and says what it changed. The run and the recipe comparison are computed once
per process for everyone (`run`, `recipes`: mpviz.presentation.memo, heavy), and so are a finished run's figures; a
viewer who watches a run train sees each step as it arrives (`reporting`). Nothing here draws: mpviz/pages/scaler.py
does.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field, replace

import pandas as pd
import plotly.graph_objects as go

from mpviz import scaler
from mpviz.model import ConfigError
from mpviz.presentation import text
from mpviz.presentation.figures import scaler as scaler_fig
from mpviz.presentation.memo import memoised
from mpviz.presentation.run_config import RunConfig
from mpviz.presentation.url_params import UrlParam, dump_bool, parse_bool, parse_choice
from mpviz.run_watch import Pacer

__all__ = [
    "INJECT_MAX_CHARS",
    "INSPECT_DEFAULT",
    "MULTIPLIERS",
    "PACE_RATES",
    "REDRAW_SECONDS",
    "Knobs",
    "Playback",
    "Settled",
    "defaults_line",
    "histogram",
    "histogram_caption",
    "init_scales",
    "injections",
    "inspected",
    "multiplier_label",
    "page_params",
    "parse_steps",
    "percent",
    "recipe_progress",
    "recipe_table",
    "recipes",
    "recipes_caption",
    "recipes_figure",
    "reporting",
    "run",
    "scale_caption",
    "settled",
    "step_figures",
    "step_metrics",
    "step_sentence",
]

LIM = scaler.TRAIN_LIMITS
MULTIPLIERS = [2.0**k for k in range(4, -41, -1)]
PACE_RATES = {"fast": None, "25": 25.0, "5": 5.0}  # playback: steps shown per second (None: as they arrive)
REDRAW_SECONDS = 0.2  # charts are redrawn at most this often while a run is shown: each redraw builds three figures
INJECT_DEFAULT = "10,30"  # a demo: two steps to watch GradScaler skip
INJECT_MAX_CHARS = 200  # the injection box, also when its text comes from a link
INSPECT_DEFAULT = 10  # open the inspector on the first of them


def init_scales(defaults: scaler.ScalerSettings) -> list[float]:
    """The initial scales on offer: powers of two up to 2^32, and a fresh GradScaler's own."""
    return sorted({2.0**k for k in range(0, 33)} | {defaults.init_scale})


def parse_steps(raw: str) -> tuple[int, ...]:
    """'10, 30' → (10, 30); '' → (). Raises ValueError on anything else, and on text longer than the box takes."""
    if len(raw) > INJECT_MAX_CHARS:
        raise ValueError(raw)
    return tuple(sorted({int(part) for part in raw.split(",") if part.strip()}))


def _member(options: list[float]) -> Callable[[str], float]:
    def parse(raw: str) -> float:
        if float(raw) not in options:
            raise ValueError(raw)
        return float(raw)

    return parse


def page_params(defaults: scaler.ScalerSettings) -> list[UrlParam]:
    """The page's state in the URL; floats are written with repr: a link must rerun exactly the same config."""
    return [
        UrlParam("train_steps", scaler.TrainConfig.steps, int),
        UrlParam("lr", scaler.TrainConfig.lr, float, repr),
        UrlParam("accum", scaler.TrainConfig.accum, int),
        UrlParam("clip_norm", 0.0, float, repr),
        UrlParam("init_scale", defaults.init_scale, _member(init_scales(defaults)), repr),
        UrlParam("growth_factor", defaults.growth_factor, float, repr),
        UrlParam("backoff_factor", defaults.backoff_factor, float, repr),
        UrlParam("growth_interval", defaults.growth_interval, int),
        UrlParam("inject_inf", INJECT_DEFAULT, lambda raw: ",".join(map(str, parse_steps(raw)))),
        UrlParam("loss_multiplier", 1.0, _member(MULTIPLIERS), repr, aliases=("loss_mult",)),
        UrlParam("pace", "25", parse_choice(tuple(PACE_RATES))),
        UrlParam("inspect", INSPECT_DEFAULT, int),
        UrlParam("recipes", False, parse_bool, dump_bool),
    ]


@dataclass(frozen=True)
class Knobs:
    """The run's settings as the page holds them (session state keys = field names); `inject_inf` as typed."""

    train_steps: int
    lr: float
    accum: int
    clip_norm: float
    init_scale: float
    growth_factor: float
    backoff_factor: float
    growth_interval: int
    inject_inf: str
    loss_multiplier: float

    @classmethod
    def of(cls, state: Mapping) -> Knobs:
        return cls(**{name: state[name] for name in cls.__dataclass_fields__})


def injections(raw: str) -> tuple[tuple[int, ...], str | None]:
    """The injection box's steps (all of them, also beyond the run), and a warning when its text is bad (then
    none are used)."""
    try:
        return parse_steps(raw), None
    except ValueError:
        return (), text.section("scaler")["bad_inject"].format(raw=text.echo(raw))


@dataclass(frozen=True)
class Settled:
    """The run the knobs describe, as the engine accepts it; `knobs` the values to show back (the box's text
    normalised); `warnings` what was wrong and what is used instead; `beyond` injected steps outside the run."""

    config: scaler.TrainConfig
    knobs: Knobs
    warnings: tuple[str, ...]
    beyond: tuple[int, ...]


def _fixed_message(e: ConfigError, cfg: scaler.TrainConfig) -> str:
    used = next(getattr(o, e.field) for o in (cfg.scaler, cfg, cfg.model) if hasattr(o, e.field))
    return text.section("scaler")["fixed"].format(
        field=e.field, value=text.echo(e.value), reason=text.reason(e), limit=e.limit, used=text.echo(used)
    )


def settled(rc: RunConfig, knobs: Knobs) -> Settled:
    """`knobs` for `rc`'s model, device and dtype, clamped to the engine's limits; injections outside the run are
    left out of it (the box keeps them)."""
    steps, bad = injections(knobs.inject_inf)
    cfg, fixed = scaler.clamp_train(
        scaler.TrainConfig(
            model=rc.config,
            device=rc.device,
            dtype=rc.dtype,
            scaler=scaler.ScalerSettings(
                knobs.init_scale, knobs.growth_factor, knobs.backoff_factor, knobs.growth_interval
            ),
            steps=knobs.train_steps,
            inject_inf=tuple(k for k in steps if 0 <= k < knobs.train_steps),
            loss_multiplier=knobs.loss_multiplier,
            clip=knobs.clip_norm or None,
            accum=knobs.accum,
            lr=knobs.lr,
        )
    )
    shown = Knobs(
        cfg.steps,
        cfg.lr,
        cfg.accum,
        cfg.clip or 0.0,
        cfg.scaler.init_scale,
        cfg.scaler.growth_factor,
        cfg.scaler.backoff_factor,
        cfg.scaler.growth_interval,
        ",".join(map(str, steps)),
        cfg.loss_multiplier,
    )
    warnings = ((bad,) if bad else ()) + tuple(_fixed_message(e, cfg) for e in fixed)
    return Settled(cfg, shown, warnings, tuple(k for k in steps if not 0 <= k < cfg.steps))


def defaults_line(defaults: scaler.ScalerSettings) -> str:
    return text.section("scaler")["defaults"].format(**asdict(defaults))


def percent(x: float) -> str:
    """A share as a percentage with 3 significant digits: lost gradients are often 0.005 %, and 0.00 % would lie."""
    return f"{100 * x:.3g}%"


# ── the run: shared, with each step reported to the viewer who trains it ─────────────────────────────────────
@dataclass(frozen=True)
class _Listener:
    on_step: Callable[[list], None] | None = None
    on_recipe: Callable[[int, str], None] | None = None


_QUIET = _Listener()
_listener: ContextVar[_Listener | None] = ContextVar("scaler_listener", default=None)


@contextmanager
def reporting(
    on_step: Callable[[list], None] | None = None, on_recipe: Callable[[int, str], None] | None = None
) -> Iterator[None]:
    """While this block runs, a run this session trains calls `on_step(records so far)` after each step, and a
    recipe comparison `on_recipe(i, name)` as each recipe starts. A session that reads a shared result hears
    nothing (the computation runs in the thread of the session that started it)."""
    token = _listener.set(_Listener(on_step, on_recipe))
    try:
        yield
    finally:
        _listener.reset(token)


@memoised(heavy=True, words=False)
def run(cfg: scaler.TrainConfig) -> scaler.ScalerRun:
    """A real GradScaler training `cfg`, every step recorded; once per process (heavy lane)."""
    arrived: list = []
    on_step = (_listener.get() or _QUIET).on_step
    for record in scaler.train(cfg):
        arrived.append(record)
        if on_step is not None:
            on_step(arrived)
    return scaler.collect(cfg, tuple(arrived))


@memoised(heavy=True, words=False)
def recipes(cfg: scaler.TrainConfig) -> tuple:
    """The four recipes (fp32, bf16, fp16 + GradScaler, fp16) trained on `cfg` without its injected infs."""
    return scaler.compare_recipes(replace(cfg, inject_inf=()), (_listener.get() or _QUIET).on_recipe)


@dataclass
class Playback:
    """Which of a run's steps a viewer sees now, and when the charts are redrawn: steps no faster than the pace
    (PACE_RATES; the rate limits what is shown, never what is computed), charts at most every REDRAW_SECONDS
    (each redraw builds three figures) and at the last step."""

    total: int
    pace: str
    pacer: Pacer = field(init=False)
    drawn_at: float = -math.inf

    def __post_init__(self) -> None:
        self.pacer = Pacer(PACE_RATES[self.pace])

    def at_once(self) -> None:
        """Show every step that is there now (a shared run nobody watched train)."""
        self.pacer = Pacer(None)

    def due(self, available: Sequence, shown: int) -> Sequence:
        """The steps of `available` to show now, after the `shown` on screen."""
        return available[shown : self.pacer.visible(len(available))]

    def redraw(self, shown: int) -> bool:
        """Whether to redraw the charts now that `shown` steps are on screen (and note that they were)."""
        if shown and (shown == self.total or time.monotonic() - self.drawn_at >= REDRAW_SECONDS):
            self.drawn_at = time.monotonic()
            return True
        return False

    def progress(self, shown: int) -> tuple[float, str]:
        """The progress bar's share and words."""
        words = text.section("scaler")["progress"]
        return shown / self.total, words.format(done=shown, total=self.total)


# ── figures: a finished run's are shared; a run being shown is drawn as it goes ──────────────────────────────
def _figures(cfg: scaler.TrainConfig, records: list, which: str) -> go.Figure:
    labels, total = text.section("scaler")["labels"], cfg.steps
    if which == "scale":
        return scaler_fig.scale_trace_figure(records, labels=labels, total_steps=total)
    if which == "loss":
        return scaler_fig.training_loss_figure(records, labels=labels, total_steps=total)
    dtype = scaler.format_range(cfg.dtype).dtype
    return scaler_fig.zero_fraction_figure(records, labels=labels, dtype=dtype, total_steps=total)


@memoised(returns="figure")
def _finished_figure(cfg: scaler.TrainConfig, which: str) -> go.Figure:
    return _figures(cfg, list(run(cfg).steps), which)


def step_figures(cfg: scaler.TrainConfig, records: list) -> tuple[go.Figure, go.Figure, go.Figure]:
    """Scale, loss and lost-to-zero charts of `records` (x axes span the whole run, so a run being shown fills
    them in); a finished, shared run's are built once for everyone."""
    names = ("scale", "loss", "zero")
    if len(records) == cfg.steps and run.cached(cfg):
        return tuple(_finished_figure(cfg, which) for which in names)
    return tuple(_figures(cfg, records, which) for which in names)


def scale_caption(records: list) -> str:
    changes = [r.scale_change for r in records]
    skipped = sum(r.skipped for r in records)
    words = text.section("scaler")
    return words["scale_caption"].format(skipped=skipped, grow=changes.count("grow"), backoff=changes.count("backoff"))


# ── one step ─────────────────────────────────────────────────────────────────────────────────────────────────
def inspected(wanted: int, shown: int) -> tuple[int, str | None]:
    """The step the inspector opens among `shown` steps, and a warning if `wanted` lies outside them (none for the
    default step, which may simply lie beyond a short run)."""
    last = shown - 1
    if 0 <= wanted <= last:
        return wanted, None
    used = min(max(wanted, 0), last)
    if wanted == INSPECT_DEFAULT:
        return used, None
    return used, text.section("scaler")["bad_inspect"].format(step=text.echo(wanted), n=last, used=used)


def step_sentence(r: scaler.StepRecord, step: int, cfg: scaler.TrainConfig) -> str:
    """What happened at one step, in words: injected, inf found, skipped, and what update() did to the scale."""
    words = text.section("scaler")
    parts = [words["t_injected"]] if r.injected else []
    parts.append(words["t_found"] if r.found_inf else words["t_clean"])
    parts.append(words["t_skipped"] if r.skipped else words["t_updated"])
    parts.append(
        words[f"t_{r.scale_change}"].format(
            before=r.scale_before,
            after=r.scale_after,
            factor=r.scale_after / r.scale_before,
            tracker=r.growth_tracker,
            interval=cfg.scaler.growth_interval,
        )
    )
    return f"**{step}:** " + " → ".join(parts)


def step_metrics(r: scaler.StepRecord) -> str:
    """One step's loss, gradient norm, shares lost to zero and time, in one markdown line that wraps: one element
    (where five metrics in five columns were eleven), and no wider than a phone's screen (a table would scroll)."""
    m = text.section("scaler")["metrics"]
    cells = {
        m["loss"]: f"{r.loss:.4g}",
        m["norm"]: f"{r.grad_norm:.4g}",
        m["zero"]: percent(r.zero_grad_fraction),
        m["zero_unscaled"]: percent(r.zero_grad_fraction_unscaled),
        m["ms"]: f"{r.step_ms:.2f}",
    }
    return " · ".join(f"{name} **{value}**" for name, value in cells.items())


@memoised(returns="figure")
def _shared_histogram(cfg: scaler.TrainConfig, step: int) -> go.Figure:
    return _histogram(cfg, run(cfg).steps[step])


def _histogram(cfg: scaler.TrainConfig, record: scaler.StepRecord) -> go.Figure:
    labels = text.section("scaler")["labels"]
    return scaler_fig.scaled_gradient_histogram_figure(record, scaler.format_range(cfg.dtype), labels=labels)


def histogram(cfg: scaler.TrainConfig, record: scaler.StepRecord) -> go.Figure:
    """The exponents of one step's gradients, unscaled and scaled, against the dtype's zones; built once for
    everyone when the step is the shared run's (a run being watched or stopped draws its own)."""
    if run.cached(cfg) and run(cfg).steps[record.step] is record:
        return _shared_histogram(cfg, record.step)
    return _histogram(cfg, record)


def histogram_caption(cfg: scaler.TrainConfig) -> str:
    fmt = scaler.format_range(cfg.dtype)
    return text.section("scaler")["hist_caption"].format(
        dtype=fmt.dtype, underflow=fmt.underflow_at, normal=fmt.smallest_normal, overflow=fmt.overflow_at
    )


# ── the four recipes ─────────────────────────────────────────────────────────────────────────────────────────
@memoised(returns="figure")
def recipes_figure(cfg: scaler.TrainConfig) -> go.Figure:
    words = text.section("scaler")
    return scaler_fig.recipes_loss_figure(recipes(cfg), labels={**words["labels"], **words["recipe_names"]})


@memoised
def recipe_table(cfg: scaler.TrainConfig) -> pd.DataFrame:
    """One row per measure, one column per recipe: four columns fit any screen."""
    words = text.section("scaler")
    names, c, none = words["recipe_names"], words["cols"], words["cols"]["none"]
    compared = recipes(cfg)

    def steps_or_none(steps: tuple[int, ...]) -> str:
        return ", ".join(map(str, steps)) or none

    rows = {
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
    return table.rename_axis(c["measure"])


def recipe_progress(i: int, name: str) -> tuple[float, str]:
    """The progress bar's share and words as the `i`-th recipe, `name`, starts training."""
    words, n = text.section("scaler"), len(scaler.RECIPES)
    return i / n, words["recipes_running"].format(name=words["recipe_names"][name], i=i + 1, n=n)


def recipes_caption(cfg: scaler.TrainConfig) -> str:
    words = text.section("scaler")
    how = words["memory_how"]["cuda" if cfg.device == "cuda" else "other"]
    device = text.section("common")["device_labels"].get(cfg.device, cfg.device)
    return words["recipes_caption"].format(device=device, memory_how=how)


def multiplier_label(v: float) -> str:
    return f"2^{round(math.log2(v))}"
