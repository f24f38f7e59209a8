"""The engine runs the lessons share: the attention block's trace, a claim's check. Memoised without words (one run
for every language) and marked for a worker process (`worker=True`): the app's host runs them in its worker pool, a
heavy trace in the heavy lane, so a native crash costs only the request that hit it; without a host they run here.

A page that shows a trace's errors (mpviz.app.serving.results.attention_trace) and a view model that reads the trace
(`attention_trace`) get the same result under the same key: the run is made once.
"""

from __future__ import annotations

import mpviz
from mpviz import claims
from mpviz.bundle import lesson_json
from mpviz.model import is_heavy, parse_autocast_dtype
from mpviz.presentation.memo import memoised
from mpviz.presentation.run_config import RunConfig

__all__ = ["attention_lesson", "attention_trace", "claim_check", "fast_claim_checks", "heavy_trace", "one_claim_check"]


def heavy_trace(rc: RunConfig) -> bool:
    """Whether tracing `rc` waits for the heavy lane (mpviz.model.is_heavy)."""
    return is_heavy(rc.config, rc.device, parse_autocast_dtype(rc.dtype))


@memoised(words=False, worker=True, heavy=heavy_trace)
def attention_trace(rc: RunConfig) -> mpviz.AttentionTrace:
    """The attention block of `rc` traced forward and backward on its device under its autocast dtype. Raises
    what the run raises (mpviz.model.ConfigError; in the app, a worker's crash or time-out)."""
    return mpviz.trace_attention(rc.config, rc.device, rc.dtype)


@memoised(words=False, worker=True, heavy=heavy_trace)
def attention_lesson(rc: RunConfig) -> bytes:
    """The attention lesson's bundle for `rc` as JSON bytes (mpviz.bundle.lesson_json): what the stepper draws."""
    return lesson_json(rc.config, rc.device, rc.dtype)


def claim_check(claim_id: int) -> claims.Checked:
    """Claim `claim_id` checked against a live measurement; one result for both languages (its words are looked up
    when a card is built). The fast claims are checked together (`fast_claim_checks`); a slow one (training, timing)
    on its own, through the heavy lane, as is a fast one whose check raised (so that the error reaches its card)."""
    fast = tuple(c.id for c in claims.CLAIMS if not c.on_demand)
    if claim_id in fast and (found := fast_claim_checks(fast)[fast.index(claim_id)]) is not None:
        return found
    return one_claim_check(claim_id)


@memoised(words=False, worker=True)
def fast_claim_checks(claim_ids: tuple[int, ...]) -> tuple[claims.Checked | None, ...]:
    """The claims `claim_ids` checked in one call, in order; None for a check that raised. One hand-off to a worker
    instead of one per claim: the 51 fast checks take 1.4 s, but 51 calls took a first visitor 12-15 s (the worker
    retires every 25 calls, and each replacement imports torch again)."""
    found: list[claims.Checked | None] = []
    for claim_id in claim_ids:
        try:
            found.append(claims.claim(claim_id).check())
        except Exception:  # its own call raises it again, where the page shows it
            found.append(None)
    return tuple(found)


@memoised(words=False, worker=True, heavy=lambda claim_id: claims.claim(claim_id).on_demand)
def one_claim_check(claim_id: int) -> claims.Checked:
    """Claim `claim_id` checked on its own (see `claim_check`)."""
    return claims.claim(claim_id).check()
