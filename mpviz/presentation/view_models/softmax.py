"""The softmax overflow lesson's view model: a row of logits, the formats and the loss in; the comparison's
verdicts, tables, sweep and figures out (mpviz/pages/softmax.py draws them).

A row is a tuple of floats; every result is shared by the class (mpviz.presentation.memo), keyed by the row and the
settings. A row longer than `mpviz.softmax.LIMITS.heavy_len` is computed in the heavy lane.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

from mpviz import softmax as sm
from mpviz import softmax_scale
from mpviz.model import ConfigError
from mpviz.presentation import runs, text
from mpviz.presentation.figures import softmax as softmax_fig
from mpviz.presentation.memo import memoised
from mpviz.presentation.run_config import RunConfig

__all__ = [
    "CLOSE",
    "DEFAULT_FORMATS",
    "DEFAULT_LIST",
    "GENERATOR",
    "MAX_BARS",
    "MAX_ERROR_POINTS",
    "SCALES",
    "SWEEP_POINTS",
    "Logits",
    "Probabilities",
    "ScoreRow",
    "bars_figure",
    "bounded",
    "close_note",
    "close_table",
    "compare",
    "errors_figure",
    "exp_figure",
    "exp_notes",
    "generated",
    "listed",
    "metrics_table",
    "parse_formats",
    "parse_scale",
    "probabilities",
    "quantized_note",
    "quantized_table",
    "scenario",
    "score_row",
    "score_shape",
    "sweep",
    "sweep_figure",
    "sweep_lines",
]

SCALES = tuple(m * 10.0**e for e in range(-2, 3) for m in (1.0, 2.0, 5.0))  # overall-scale slider stops
GENERATOR = sm.LogitGenerator()
CLOSE = sm.scenario("close").values
DEFAULT_LIST = ", ".join(f"{v:g}" for v in CLOSE)
DEFAULT_FORMATS = ("float32", "float16", "bfloat16")
MAX_BARS = 48  # longer rows: the most probable entries only
MAX_ERROR_POINTS = 300  # entries per recipe in the error chart
SWEEP_POINTS = len(softmax_scale.sweep_scales())  # scales the sweep measures each recipe at
METRIC_FIELDS = {  # table column key (locale) → RowMetrics field
    "nan": "nan",
    "inf": "inf",
    "zero": "underflow",
    "sum": "sum_error",
    "abs": "max_abs_error",
    "rel": "max_rel_error",
    "kl": "kl",
    "argmax": "argmax_changed",
    "order": "order_lost",
}


def _words() -> dict:
    return text.section("softmax")


def _fig() -> dict:
    return {**_words()["fig"], "methods": _words()["methods"]}


def _heavy(logits: tuple[float, ...], *_: object) -> bool:
    return sm.LIMITS.is_heavy(len(logits))


# ── link settings ─────────────────────────────────────────────────────────────────────────────────────────────
def bounded(cast: Callable[[str], float], lo: float, hi: float) -> Callable[[str], float]:
    """A link parser: `cast(raw)` when it lies in [lo, hi] (NaN does not), else a ValueError."""

    def parse(raw: str) -> float:
        value = cast(raw)
        if not lo <= value <= hi:
            raise ValueError(raw)
        return value

    return parse


def parse_formats(raw: str) -> list[str]:
    """A link's "float16,bfloat16": each format once, in the order given (a ValueError for none or an unknown)."""
    names = list(dict.fromkeys(n for n in raw.split(",") if n))
    if not names or any(n not in sm.FORMAT_NAMES for n in names):
        raise ValueError(raw)
    return names


def parse_scale(raw: str) -> float:
    """A link's overall scale: one of the slider's stops (a ValueError for any other)."""
    value = float(raw)
    if value not in SCALES:
        raise ValueError(raw)
    return value


# ── where the row comes from ────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class Logits:
    """The row the lesson uses, and, when the visitor's could not be used, what to tell them."""

    values: tuple[float, ...]
    problem: str | None = None


@memoised(words=False)
def scenario(name: str) -> tuple[float, ...]:
    """A preset's row, made once per process: grown until it overflows, a row costs more than the page around it."""
    return tuple(sm.scenario_logits(name))


def listed(raw: str) -> Logits:
    """Typed logits, or the close pair after saying (the input echoed inert) why not."""
    try:
        return Logits(tuple(sm.parse_logits(raw)))
    except ConfigError as e:
        raw, value, used = text.echo(raw), text.echo(e.value), text.echo(DEFAULT_LIST)
        words = dict(raw=raw, field=e.field, value=value, reason=text.reason(e), used=used)
        return Logits(CLOSE, _words()["bad_logits"].format(**words))


@memoised
def generated(generator: sm.LogitGenerator) -> Logits:
    """The generator's row, or the large preset after saying why not."""
    try:
        return Logits(tuple(generator.logits()))
    except ConfigError as e:
        words = dict(field=e.field, value=text.echo(e.value), reason=text.reason(e))
        return Logits(scenario("large"), _words()["bad_generator"].format(**words))


@memoised(words=False)
def score_shape(rc: RunConfig) -> tuple[int, int] | None:
    """(heads, rows) of the traced run's scores, None where it has none (fused SDPA never builds them)."""
    try:
        heads, rows, _ = sm.score_sample_shape(runs.attention_trace(rc).trace)
    except ConfigError:
        return None
    return heads, rows


@dataclass(frozen=True)
class ScoreRow:
    values: tuple[float, ...]
    caption: str


@memoised
def score_row(rc: RunConfig, head: int, row: int) -> ScoreRow:
    """Row `row` of head `head` of the traced run's scores (mask applied), with a caption that says so."""
    picked = sm.score_row(runs.attention_trace(rc).trace, head, row)
    masked = sum(v == -math.inf for v in picked.values)
    words = dict(head=picked.head, row=picked.row, dtype=picked.dtype, n=len(picked.values), masked=masked)
    caption = _words()["trace_caption"].format(**words)
    if picked.full_length > len(picked.values):
        caption += _words()["trace_cropped"].format(n=len(picked.values), full=picked.full_length)
    return ScoreRow(tuple(picked.values), caption)


# ── the probabilities ───────────────────────────────────────────────────────────────────────────────────────
@memoised(heavy=_heavy, words=False)
def compare(logits: tuple[float, ...], formats: tuple[str, ...], loss: str) -> sm.Comparison:
    """Naive, max-subtracted and upcast softmax of the row in each format, against float64."""
    return sm.compare(logits, formats, sm.METHODS, loss)


def _names(variants: tuple[sm.VariantResult, ...] | list) -> str:
    """'float16 · naive, bfloat16 · max-subtracted' (or 'none')."""
    return ", ".join(f"{v.format} · {_words()['methods'][v.method]}" for v in variants) or _words()["nobody"]


@dataclass(frozen=True)
class Probabilities:
    """What the comparison found, in words: each format's badges, the verdict under the bars, the captions."""

    badges: tuple[tuple[str, str], ...]  # (format, markdown of each method's badges)
    verdict: str
    bars_cropped: str | None
    errors_caption: str


def _badges(v: sm.VariantResult) -> str:
    words, m = _words(), v.metrics
    marks = [f":red-badge[{words['badge_nan'].format(n=m.nan)}]"] if m.nan else []
    marks += [f":red-badge[{words['badge_inf'].format(n=m.inf)}]"] if m.inf else []
    marks += [f":orange-badge[{words['badge_zero'].format(n=m.underflow)}]"] if m.underflow else []
    marks += [f":violet-badge[{words['badge_argmax']}]"] if m.argmax_changed else []
    marks = marks or [f":green-badge[{words['badge_ok']}]"]
    return f"**{words['methods'][v.method]}** {' '.join(marks)}"


@memoised
def probabilities(logits: tuple[float, ...], formats: tuple[str, ...], loss: str) -> Probabilities:
    """The comparison's findings in words (see Probabilities)."""
    words, comparison = _words(), compare(logits, formats, loss)
    badges = tuple(
        (fmt, " &nbsp;·&nbsp; ".join(_badges(v) for v in comparison.variants if v.format == fmt)) for fmt in formats
    )
    summary = comparison.summary()
    notes = [words["bars_bad"].format(which=_names(summary.broken)) if summary.broken else words["bars_none_bad"]]
    if summary.flushed:
        which = ", ".join(f"{_names([v])} ({v.metrics.underflow})" for v in summary.flushed)
        notes.append(words["bars_zero"].format(which=which))
    if summary.argmax_moved:
        notes.append(words["bars_argmax"].format(which=_names(summary.argmax_moved)))
    notes += [
        words["bars_fixed"].format(fmt=v.format, err=v.metrics.sum_error) for v in summary.rescued_by_max_subtraction
    ]
    cropped = words["bars_cropped"].format(k=MAX_BARS, n=len(logits)) if len(logits) > MAX_BARS else None
    positive = sum(p > 0 for p in comparison.reference)
    errors_cropped = (
        words["errors_cropped"].format(k=MAX_ERROR_POINTS, n=positive) if positive > MAX_ERROR_POINTS else ""
    )
    return Probabilities(badges, " ".join(notes), cropped, words["errors_caption"] + errors_cropped)


@memoised(returns="figure")
def bars_figure(logits: tuple[float, ...], formats: tuple[str, ...], loss: str, log: bool) -> go.Figure:
    """Each format's probabilities by method, against float64 (a log axis if `log`)."""
    return softmax_fig.softmax_bars(compare(logits, formats, loss), MAX_BARS, log, labels=_fig())


@memoised(returns="figure")
def errors_figure(logits: tuple[float, ...], formats: tuple[str, ...], loss: str) -> go.Figure:
    """Each probability's relative error against float64."""
    return softmax_fig.softmax_errors(compare(logits, formats, loss), MAX_ERROR_POINTS, labels=_fig())


def _cells(metrics: sm.RowMetrics, names: dict, keys: tuple[str, ...]) -> dict:
    """Table cells {column title: value} of a RowMetrics, for the column keys asked for."""
    return {names[k]: getattr(metrics, METRIC_FIELDS[k]) for k in keys}


@memoised(returns="table")
def metrics_table(logits: tuple[float, ...], formats: tuple[str, ...], loss: str) -> pd.DataFrame:
    """Every variant's measurements: non-finite, flushed, errors, KL, argmax and order, and its gradient's."""
    words = _words()
    cols = words["cols"]
    every = ("nan", "inf", "zero", "sum", "abs", "rel", "kl", "argmax", "order")
    table = pd.DataFrame(
        [
            {
                cols["format"]: v.format,
                cols["method"]: words["methods"][v.method],
                cols["output"]: v.output_dtype,
                **_cells(v.metrics, cols, every),
                cols["grad_rel"]: v.grad.max_rel_error,
                cols["grad_bad"]: v.grad.nan + v.grad.inf,
                cols["grad_zero"]: v.grad.underflow,
            }
            for v in compare(logits, formats, loss).variants
        ]
    )
    for k in ("sum", "abs", "rel", "kl", "grad_rel"):  # as text, so nan and inf read as nan and inf
        table[cols[k]] = table[cols[k]].map(lambda x: f"{x:.2e}")
    return table


# ── the sweep ───────────────────────────────────────────────────────────────────────────────────────────────
@memoised(heavy=_heavy, words=False)
def sweep(logits: tuple[float, ...], formats: tuple[str, ...]) -> softmax_scale.Sweep:
    """The row scaled over softmax_scale.sweep_scales(), every recipe measured at each scale."""
    return softmax_scale.sweep(logits, formats=formats)


@memoised(returns="figure")
def sweep_figure(logits: tuple[float, ...], formats: tuple[str, ...], metric: str) -> go.Figure:
    """`metric` of each recipe against the scale."""
    return softmax_fig.softmax_sweep(sweep(logits, formats), metric, labels=_fig())


@memoised
def sweep_lines(logits: tuple[float, ...], formats: tuple[str, ...]) -> tuple[str, str]:
    """(the sweep's intro, one markdown line per format: where naive and max-subtracted softmax fail)."""
    words, result = _words(), sweep(logits, formats)
    hi = result.scales[-1]

    def when(scale: float | None) -> str:
        return words["sweep_never"].format(hi=hi) if scale is None else words["sweep_at"].format(x=scale)

    lines = []
    for f in result.naive_vs_stable():
        t = f.exp_overflow_scale
        marker = words["sweep_marker"].format(t=t) if t else ""
        line = words["sweep_naive"].format(fmt=f.format, when=when(f.naive_first_nonfinite), marker=marker)
        stable = when(f.stable_first_nonfinite)
        if f.stable_first_underflow is not None:
            line += words["sweep_stable"].format(when=stable, under=f.stable_first_underflow)
        else:
            line += words["sweep_stable_no_zero"].format(when=stable, hi=hi)
        lines.append("- " + words["sweep_line"].format(line=line))
    return words["sweep_intro"].format(lo=result.scales[0], hi=hi), "\n".join(lines)


# ── exp(x) ──────────────────────────────────────────────────────────────────────────────────────────────────
@memoised(words=False)
def _exp_curves(formats: tuple[str, ...]) -> tuple:
    return tuple(softmax_scale.exp_curves(formats))


@memoised(returns="figure")
def exp_figure(formats: tuple[str, ...]) -> go.Figure:
    """exp(x) in each format against float64, with each format's ceiling."""
    return softmax_fig.softmax_exp(list(_exp_curves(formats)), labels=_fig())


@memoised
def exp_notes(formats: tuple[str, ...]) -> str:
    """Where exp overflows and underflows in each format, as markdown lines."""
    note = _words()["exp_note"]
    return "\n".join(
        "- "
        + note.format(
            dtype=c.dtype, over=c.thresholds.overflow_from, ln=c.thresholds.log_max, under=c.thresholds.underflow_from
        )
        for c in _exp_curves(formats)[1:]
    )


# ── two close logits ────────────────────────────────────────────────────────────────────────────────────────
@memoised(words=False)
def _close(a: float, b: float, formats: tuple[str, ...]) -> tuple[sm.CloseLogits, ...]:
    return tuple(sm.close_logits(a, b, formats))


def _bin(b: object) -> str:
    return f"[{b.lo:.10g}, {b.hi:.10g}]"


@memoised(returns="table")
def close_table(a: float, b: float, formats: tuple[str, ...]) -> list[dict]:
    """Each format's spacing at the pair, the stored pair and its bins, whether two values remain, their softmax."""
    cc = _words()["close_cols"]
    return [
        {
            cc["format"]: p.format,
            cc["spacing"]: p.spacing,
            cc["a"]: p.stored[0],
            cc["b"]: p.stored[1],
            cc["bin_a"]: _bin(p.bins[0]),
            cc["bin_b"]: _bin(p.bins[1]),
            cc["distinct"]: p.distinct,
            cc["pa"]: p.probs[0],
            cc["pb"]: p.probs[1],
            cc["ra"]: p.reference[0],
            cc["rb"]: p.reference[1],
        }
        for p in _close(a, b, formats)
    ]


@memoised
def close_note(a: float, b: float, formats: tuple[str, ...]) -> str:
    """Which formats keep the pair apart, and a measured counterexample: closeness is not what merges."""
    words, pairs = _words(), _close(a, b, formats)
    note = words["close_note"].format(
        gap=abs(b - a),
        kept=", ".join(p.format for p in pairs if p.distinct) or words["nobody"],
        merged=", ".join(p.format for p in pairs if not p.distinct) or words["nobody"],
    )
    example_format = "float16" if "float16" in formats else next((f for f in formats if f != "float32"), formats[0])
    magnitude = max(abs(a), abs(b))
    if (ex := sm.gap_counterexamples(magnitude, example_format)) is not None:
        note += " " + words["close_example"].format(
            fmt=ex.format,
            x=magnitude,
            ka=ex.kept[0],
            kb=ex.kept[1],
            kgap=ex.kept_gap,
            spacing=ex.spacing,
            ksa=ex.kept_stored[0],
            ksb=ex.kept_stored[1],
            ma=ex.merged[0],
            mb=ex.merged[1],
            mgap=ex.merged_gap,
            ms=ex.merged_stored,
        )
    return note


# ── 8-bit probabilities ─────────────────────────────────────────────────────────────────────────────────────
@memoised
def _quantized(logits: tuple[float, ...], formats: tuple[str, ...], loss: str) -> tuple:
    return tuple(sm.quantize_probs(compare(logits, formats, loss).reference))  # the float64 reference's


@memoised(returns="table")
def quantized_table(logits: tuple[float, ...], formats: tuple[str, ...], loss: str) -> list[dict]:
    """The float64 probabilities stored in 8 bits, linearly and in log2: smallest non-zero, errors, flushed, KL."""
    words = _words()
    qc = words["quant_cols"]
    return [
        {
            qc["scheme"]: words["schemes"][q.scheme],
            qc["smallest"]: q.smallest_nonzero,
            **_cells(q.metrics, qc, ("abs", "rel", "zero", "kl")),
        }
        for q in _quantized(logits, formats, loss)
    ]


def quantized_note(logits: tuple[float, ...], formats: tuple[str, ...], loss: str) -> str:
    """What the two 8-bit schemes cost, measured."""
    linear, log2 = _quantized(logits, formats, loss)
    return _words()["quant_note"].format(
        lin_step=linear.step,
        lin_zero=linear.metrics.underflow,
        log_step=log2.step,
        floor=log2.smallest_nonzero,
        log_zero=log2.metrics.underflow,
        log_abs=log2.metrics.max_abs_error,
        lin_abs=linear.metrics.max_abs_error,
    )
