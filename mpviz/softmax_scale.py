"""Softmax as the logits grow: every recipe's error as one row is scaled from gentle to extreme, and exp(x)
itself in each format, with the points where each format's exp overflows or flushes to zero.

    row ─ rescaled so its largest |logit| runs over `scales` ─ every format × recipe ─ error vs float64
    x grid over every format's exp range ─ torch.exp in each arithmetic dtype

Everything is measured from torch (recipes and metrics from `mpviz.softmax`, thresholds from
`mpviz.float_edges`); the summaries say, per format, where the naive recipe first fails and what the
max-subtracted one does over the same range.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import torch

from mpviz.float_edges import ExpThresholds, exp_thresholds
from mpviz.model import ConfigError
from mpviz.softmax import (
    FORMAT_NAMES,
    LIMITS,
    METHODS,
    check_logits,
    parse_format,
    recipe_probs,
    reference_probs,
    round_to,
    row_metrics,
)
from mpviz.stats import dtype_name


# ── sweep: the same row scaled from gentle to extreme ───────────────────────────────────────────────────────
@dataclass(frozen=True)
class SweepCurve:
    format: str
    method: str
    compute_dtype: str  # where the arithmetic ran
    max_abs_error: tuple[float, ...]  # per scale; nan where the output had nan/inf
    max_rel_error: tuple[float, ...]
    kl: tuple[float, ...]
    nonfinite: tuple[bool, ...]  # output had nan/inf
    underflow: tuple[int, ...]  # probabilities flushed to 0 (ref > 0)
    first_nonfinite: float | None  # smallest scale with nan/inf output
    first_underflow: float | None  # smallest scale with a probability flushed to 0


@dataclass(frozen=True)
class Sweep:
    """The row rescaled so its largest |logit| runs over `scales`, every format × method at every scale."""

    logits: tuple[float, ...]  # the row as given
    scales: tuple[float, ...]  # (S,) largest |logit| after rescaling, log-spaced
    curves: tuple[SweepCurve, ...]
    overflow_scale: dict[str, float | None]  # arithmetic dtype → scale where max(logit) reaches exp overflow
    thresholds: tuple[ExpThresholds, ...]

    def curve(self, fmt: str, method: str) -> SweepCurve | None:
        return next((c for c in self.curves if c.format == fmt and c.method == method), None)

    def naive_vs_stable(self) -> tuple[NaiveVsStable, ...]:
        """Per format swept with both recipes: where naive first fails, and max-subtracted over the same range."""
        out = []
        for fmt in dict.fromkeys(c.format for c in self.curves):
            naive, stable = self.curve(fmt, "naive"), self.curve(fmt, "stable")
            if naive is None or stable is None:
                continue
            out.append(
                NaiveVsStable(
                    format=fmt,
                    naive_first_nonfinite=naive.first_nonfinite,
                    exp_overflow_scale=self.overflow_scale.get(naive.compute_dtype),
                    stable_first_nonfinite=stable.first_nonfinite,
                    stable_first_underflow=stable.first_underflow,
                )
            )
        return tuple(out)


@dataclass(frozen=True)
class NaiveVsStable:
    """One format over a sweep. Scales are the row's largest |logit|; None: not within the swept range."""

    format: str
    naive_first_nonfinite: float | None  # smallest scale where the naive recipe gave nan/inf
    exp_overflow_scale: float | None  # scale where the row's largest logit reaches the dtype's exp overflow
    stable_first_nonfinite: float | None  # the same for max-subtracted (exp of ≤ 0 cannot overflow)
    stable_first_underflow: float | None  # smallest scale where max-subtracted flushed a probability to 0


def sweep_scales(lo: float = 0.1, hi: float = 1000.0, points_per_decade: int = 20) -> tuple[float, ...]:
    """Log-spaced scales from lo to hi (both included). Raises ConfigError for an empty or too-fine grid."""
    if not (0 < lo < hi and math.isfinite(hi)):
        raise ConfigError("scales", (lo, hi), "0 < lo < hi", "empty range")
    if not 1 <= points_per_decade <= LIMITS.max_points_per_decade:
        limit = (1, LIMITS.max_points_per_decade)
        raise ConfigError("points_per_decade", points_per_decade, limit, "out of range")
    n = max(2, round(math.log10(hi / lo) * points_per_decade) + 1)
    return tuple(torch.logspace(math.log10(lo), math.log10(hi), n, dtype=torch.float64).tolist())


def sweep(
    logits: Iterable[float],
    scales: tuple[float, ...] | None = None,
    formats: tuple[str, ...] = FORMAT_NAMES,
    methods: tuple[str, ...] = METHODS,
) -> Sweep:
    """Rescale the row so its largest |logit| is each of `scales` (default `sweep_scales()`); measure all.

    Forward only. Raises ConfigError for unusable logits (or a row that is all zeros: nothing to scale).
    """
    row = check_logits(logits)
    scales = sweep_scales() if scales is None else tuple(float(s) for s in scales)
    x64 = torch.tensor(row, dtype=torch.float64)  # (n,)
    finite = x64[torch.isfinite(x64)]
    peak = finite.abs().max().item()
    if peak == 0:
        raise ConfigError("logits", 0.0, "a non-zero logit", "nothing to scale")
    if max(scales) * (1.0 + 1e-9) > LIMITS.max_abs_logit or min(scales) <= 0:
        raise ConfigError("scales", (min(scales), max(scales)), LIMITS.max_abs_logit, "out of range")
    unit = x64 / peak  # (n,) largest |logit| = 1
    grid = torch.tensor(scales, dtype=torch.float64)[:, None] * unit[None, :]  # (S, n)
    ref = reference_probs(grid)
    fmts = [parse_format(f) for f in formats]
    curves = []
    for fmt in fmts:
        x = round_to(grid, fmt)
        for method in methods:
            rows = row_metrics(recipe_probs(x, method), ref)
            bad = tuple(r.nan + r.inf > 0 for r in rows)
            under = tuple(r.underflow for r in rows)
            curves.append(
                SweepCurve(
                    format=fmt.name,
                    method=method,
                    compute_dtype=dtype_name(fmt.compute),
                    max_abs_error=tuple(r.max_abs_error for r in rows),
                    max_rel_error=tuple(r.max_rel_error for r in rows),
                    kl=tuple(r.kl for r in rows),
                    nonfinite=bad,
                    underflow=under,
                    first_nonfinite=next((s for s, b in zip(scales, bad, strict=True) if b), None),
                    first_underflow=next((s for s, u in zip(scales, under, strict=True) if u), None),
                )
            )
    top = finite.max().item() / peak  # the largest logit, per unit of scale
    computes = dict.fromkeys(f.compute for f in fmts)  # in format order, no repeats
    thresholds = tuple(exp_thresholds(d) for d in computes)
    return Sweep(
        logits=row,
        scales=scales,
        curves=tuple(curves),
        overflow_scale={t.dtype: (t.overflow_from / top if top > 0 else None) for t in thresholds},
        thresholds=thresholds,
    )


# ── exp(x) in each format ───────────────────────────────────────────────────────────────────────────────────
@dataclass(frozen=True)
class ExpCurve:
    dtype: str
    x: tuple[float, ...]  # the inputs as stored in this dtype
    y: tuple[float, ...]  # torch.exp in this dtype (inf past overflow, 0 past underflow)
    thresholds: ExpThresholds


def exp_curves(
    formats: tuple[str, ...] = ("float32", "float16", "bfloat16"), points: int = 401
) -> tuple[ExpCurve, ...]:
    """exp(x) in float64 and in each format's arithmetic dtype, over a range showing every format's underflow
    and overflow point (from 5 % beyond the lowest underflow to 5 % beyond the highest overflow).

    Returns (float64 curve, *one ExpCurve per format's arithmetic dtype*).
    """
    if not 2 <= points <= LIMITS.max_len:
        raise ConfigError("points", points, (2, LIMITS.max_len), "out of range")
    dtypes = list(dict.fromkeys(parse_format(f).compute for f in formats))
    th = [exp_thresholds(d) for d in dtypes]
    lo = 1.05 * min(t.underflow_from for t in th)
    hi = 1.05 * max(t.overflow_from for t in th)
    grid = torch.linspace(lo, hi, points, dtype=torch.float64)  # (points,)
    xs = tuple(grid.tolist())
    curves = [ExpCurve("float64", xs, tuple(grid.exp().tolist()), exp_thresholds(torch.float64))]
    for d, t in zip(dtypes, th, strict=True):
        x = grid.to(d)
        curves.append(ExpCurve(t.dtype, tuple(x.double().tolist()), tuple(x.exp().double().tolist()), t))
    return tuple(curves)
