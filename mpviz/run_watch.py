"""Watching a training run step by step: which steps a viewer sees, and what Stop and Run again do.

A page that shows a `mpviz.scaler` run as it trains has three sources for what to draw: the finished run of
this config (computed once and shared by everyone who opens the same config), a run this viewer stopped part
way (kept for this viewer only, never shared: it is not the whole run), or the run arriving step by step.
`RunWatch` holds that choice as explicit state, in the spirit of GradScaler's per-optimizer `OptState`, so the
page's control flow is one `plan()` call instead of flags spread over a session; `Pacer` says how many of the
steps that have arrived may be shown yet, so a playback rate never slows the training itself down.

Neither class touches torch or Streamlit: they are plain state, safe to keep in a session and to unit-test.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class WatchState(Enum):
    """Where one viewer's watch of the current config stands."""

    IDLE = "idle"  # nothing seen of this config yet
    WATCHING = "watching"  # steps are being shown (arriving from training, or played back from a finished run)
    STOPPED = "stopped"  # the viewer pressed Stop: `steps` holds what was shown until then
    FINISHED = "finished"  # every step was shown


class Plan(Enum):
    """What the page does on this run of its script (see `RunWatch.plan`)."""

    SHOW = "show"  # the whole run: at once when it is already computed, else step by step as it trains
    REPLAY = "replay"  # from step 0 at the playback pace (Run again), training first if it must
    SHOW_STOPPED = "show_stopped"  # only the steps this viewer saw before Stop


@dataclass
class RunWatch:
    """One viewer's watch of training runs, one config (`key`) at a time.

    Transitions:
      plan(key)   a new key forgets the old run (→ IDLE). Returns REPLAY after `request_replay()`, SHOW_STOPPED
                  while this key is STOPPED, else SHOW.
      begin(key)  → WATCHING with no steps (the page is about to show the run from step 0).
      show(step)  WATCHING: one more step is on screen.
      stop()      WATCHING → STOPPED, keeping the steps shown (a Stop button's callback: it runs before the
                  next script run, after Streamlit interrupted the one that was showing steps).
      finish()    WATCHING → FINISHED.
    A watch interrupted without stop() (another widget changed, the viewer left) stays WATCHING and plans SHOW:
    the run is shown again rather than half-drawn. Nothing here is shared between viewers.
    """

    key: Hashable | None = None
    state: WatchState = WatchState.IDLE
    steps: list[Any] = field(default_factory=list)
    replay_requested: bool = False

    def request_replay(self) -> None:
        """Run again: the next `plan` replays the run from step 0 (a button callback)."""
        self.replay_requested = True

    def plan(self, key: Hashable) -> Plan:
        if key != self.key:
            self.key, self.state, self.steps = key, WatchState.IDLE, []
        if self.replay_requested:
            self.replay_requested = False
            return Plan.REPLAY
        return Plan.SHOW_STOPPED if self.state is WatchState.STOPPED else Plan.SHOW

    def begin(self, key: Hashable) -> None:
        self.key, self.state, self.steps = key, WatchState.WATCHING, []

    def show(self, step: Any) -> None:
        if self.state is not WatchState.WATCHING:
            raise RuntimeError(f"show() while {self.state.value}: call begin() first")
        self.steps.append(step)

    def stop(self) -> None:
        """Keep what was shown and stop there; ignored unless steps are being shown."""
        if self.state is WatchState.WATCHING:
            self.state = WatchState.STOPPED

    def finish(self) -> None:
        if self.state is WatchState.WATCHING:
            self.state = WatchState.FINISHED


@dataclass
class Pacer:
    """How many steps may be on screen: no more than `rate` per second since `start()` (None: as they arrive).

    The rate limits what is shown, never what is computed: a run that trains faster than the rate is shown at
    the rate (the rest is played out after training ends), a slower one as each step arrives.
    """

    rate: float | None  # steps per second; None or inf: no limit
    clock: Callable[[], float] = time.monotonic
    _t0: float = 0.0

    def __post_init__(self) -> None:
        if self.rate is not None and not self.rate > 0:
            raise ValueError(f"rate must be > 0 or None, not {self.rate!r}")

    def start(self) -> None:
        self._t0 = self.clock()

    def visible(self, available: int) -> int:
        """Of `available` steps, how many may be on screen now (the first one at once)."""
        if self.rate is None or math.isinf(self.rate):
            return available
        return min(available, 1 + math.floor((self.clock() - self._t0) * self.rate))

    def wait(self, shown: int) -> float:
        """Seconds until step number `shown` (0-based) may be shown: 0 if it may be shown now."""
        if self.rate is None or math.isinf(self.rate) or shown == 0:
            return 0.0
        return max(0.0, self._t0 + shown / self.rate - self.clock())
