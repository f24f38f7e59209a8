"""Wall-clock timing with a spread: medians and interquartile ranges over repeats, interleaved across candidates.

One timer for the whole engine (`python -m mpviz bench`, the speed claim). Each candidate runs once untimed
first (kernel selection, allocator, autocast's first casts). With several candidates, every round runs each
once, in an order rotated from round to round, so a slow spell of the machine (another process, frequency
scaling) lands on all of them instead of on whichever ran during it; paired per-round ratios then cancel most
of that drift. `repeat` is bounded (REPEAT_LIMITS): a timing request can never run unbounded.
"""

from __future__ import annotations

import math
import numbers
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mpviz.model import ConfigError


@dataclass(frozen=True)
class RepeatLimits:
    min_repeat: int = 1
    max_repeat: int = 50


REPEAT_LIMITS = RepeatLimits()


def check_repeat(repeat: object) -> int:
    """`repeat` if it is an int within REPEAT_LIMITS, else ConfigError("repeat", …)."""
    lim = REPEAT_LIMITS
    if not isinstance(repeat, numbers.Integral) or isinstance(repeat, bool):
        raise ConfigError("repeat", repeat, "int", "wrong type")
    if not lim.min_repeat <= repeat <= lim.max_repeat:
        raise ConfigError("repeat", repeat, (lim.min_repeat, lim.max_repeat), "out of range")
    return int(repeat)


@dataclass(frozen=True)
class Spread:
    """Median and quartiles of repeated measurements (times in ms, or ratios)."""

    samples: tuple[float, ...]
    median: float
    q1: float  # 25th percentile
    q3: float  # 75th percentile

    @classmethod
    def of(cls, samples: tuple[float, ...] | list[float]) -> Spread:
        xs = tuple(float(x) for x in samples)
        if not xs:
            raise ConfigError("samples", 0, (1, None), "no measurements")
        if len(xs) == 1:
            return cls(xs, xs[0], xs[0], xs[0])
        q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
        return cls(xs, statistics.median(xs), q1, q3)

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    @property
    def relative_spread(self) -> float:
        """IQR / median: 0.1 means the middle half of the runs lies within ±5 % of the median (inf at 0)."""
        return self.iqr / abs(self.median) if self.median else math.inf


def _timed_ms(fn: Callable[[], object], sync: Callable[[], None] | None) -> float:
    t0 = time.perf_counter()
    fn()
    if sync is not None:
        sync()  # e.g. torch.cuda.synchronize: a GPU kernel is done when it is done, not when it is queued
    return (time.perf_counter() - t0) * 1e3


def time_interleaved(
    candidates: Mapping[str, Callable[[], object]], repeat: int, sync: Callable[[], None] | None = None
) -> dict[str, Spread]:
    """Milliseconds per call of each candidate over `repeat` interleaved rounds, after one warm-up call each."""
    repeat = check_repeat(repeat)
    names = list(candidates)
    for name in names:
        _timed_ms(candidates[name], sync)  # warm-up, not recorded
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeat):
        k = r % len(names)
        for name in names[k:] + names[:k]:  # rotate the order: none always runs first
            times[name].append(_timed_ms(candidates[name], sync))
    return {name: Spread.of(ts) for name, ts in times.items()}


def time_ms(fn: Callable[[], object], repeat: int, sync: Callable[[], None] | None = None) -> Spread:
    """Milliseconds per call of `fn` over `repeat` runs after one warm-up run."""
    return time_interleaved({"fn": fn}, repeat, sync)["fn"]


def median_ms(fn: Callable[[], object], repeat: int, sync: Callable[[], None] | None = None) -> float:
    """The median of `time_ms`."""
    return time_ms(fn, repeat, sync).median


def ratios(numerator: Spread, denominator: Spread) -> Spread:
    """Per-round ratios of two interleaved timings (same round = same conditions), with their spread."""
    return Spread.of([a / b for a, b in zip(numerator.samples, denominator.samples, strict=True)])
