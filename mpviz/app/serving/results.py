"""Engine results for the pages: computed once per process for everyone, bounded in bytes, admitted when heavy.

The lesson computations (traces, lesson bundles, claim measurements: mpviz.presentation.runs) run in worker processes
(`isolated`, and every `memoised(worker=True)` view-model function through this module's host; see
mpviz.app.serving.workers): a native crash, an OOM kill or a run past the time limit there costs only the request that
hit it, which gets a message and a retry button (`mpviz.app.page.worker_crash`); results are still cached here, in the
server.

A class on one link shares every result: `mpviz.app.serving.admission.default_cache()` is a byte-bounded, single-flight
memo keyed on small config objects. Two lanes: a heavy computation (see `mpviz.model.is_heavy`) first waits for a slot
of `default_gate()` (one place per client: `mpviz.app.client.client_id`), a light one computed in a worker for a slot of
`light_gate()`, whose worker no heavy run ever holds; the page says the visitor's place in the queue meanwhile, and
a visitor who leaves gives the place back (the next queue update raises Streamlit's stop in the waiting script).
Results are shared: never mutate them.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import TypeVar

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pyarrow as pa
import streamlit as st

import mpviz
from mpviz.app import text
from mpviz.app.client import client_id
from mpviz.app.page import log, worker_crash
from mpviz.app.run_config import RunConfig
from mpviz.app.serving import run_slots
from mpviz.app.serving.admission import AdmissionGate, default_cache, default_gate, light_gate
from mpviz.app.serving.workers import WorkerCrashed, default_pool, run_isolated
from mpviz.formats import encode
from mpviz.kernel_probe import ensure_safe_kernels
from mpviz.model import ConfigError
from mpviz.policy import ChildProbeError
from mpviz.presentation import memo, runs
from mpviz.presentation.figures.formats import bit_layout_figure
from mpviz.presentation.figures.shared import SharedFigure

T = TypeVar("T")
ensure_safe_kernels()  # before the workers start: they inherit its cap, if this machine needs one
default_pool()  # start the workers with the server's first page run: they import torch while it renders


def _through(gate: AdmissionGate, queued: str, fn: Callable[[], T], client: str | None = None) -> T:
    """`fn()` once `gate` has a slot for it, saying meanwhile, in the words `queued` (with `{position}`), the
    visitor's place in the queue, or that this browser's own other heavy run goes first."""
    slot = st.empty()

    def on_wait(position: int) -> None:  # every tick: a session that has gone raises Streamlit's stop here
        slot.info(queued.format(position=position), icon="⏳")

    def on_held() -> None:
        slot.info(text.section("queue")["own"], icon="⏳")

    with gate.admit(on_wait=on_wait, client=client, on_held=on_held):
        slot.empty()
        return fn()


def admitted(fn: Callable[[], T], heavy: bool = True) -> T:
    """Run `fn` now, or, if `heavy`, once the heavy lane has a slot (one place per client), showing the visitor's
    place meanwhile."""
    if not heavy:
        return fn()
    return _through(default_gate(), text.section("common")["queued"], fn, client=client_id())


def computed(words: str, fn: Callable[..., T], /, *args: object, **kwargs: object) -> T:
    """`fn(*args, **kwargs)`, a `mpviz.presentation.memo.memoised` view-model function, under st.spinner(words) unless
    its result is already shared (a spinner costs every session of a class a timer thread and a message, for
    nothing)."""
    with nullcontext() if fn.cached(*args, **kwargs) else st.spinner(words):
        return fn(*args, **kwargs)


def _memo(key: tuple, compute: Callable[[], T], **options: object) -> T:
    """`default_cache().get_or_compute(key, compute, **options)`; a page run that will compute or wait for it gives
    its run slot back meanwhile (mpviz.app.serving.run_slots), so that no wait holds up the class, and no computation
    waits for a slot held by a run that waits for it."""
    cache = default_cache()
    with nullcontext() if key in cache else run_slots.stepped_aside():
        return cache.get_or_compute(key, compute, **options)


def _shared(key: tuple, compute: Callable[[], T]) -> T:
    """`compute()` once per process for `key` (see `shared`), saying so to a session that waits for another's."""
    slot = None

    def on_wait() -> None:
        nonlocal slot
        if slot is None:
            slot = st.empty()
        slot.caption(text.section("common")["waiting_shared"])

    try:
        return _memo(key, compute, on_wait=on_wait)
    finally:
        if slot is not None:
            slot.empty()


def shared(key: tuple, fn: Callable[[], T], heavy: bool = False) -> T:
    """`fn()` computed once per process for `key` (single-flight, byte-bounded), admitted first when heavy.

    While another session computes the same key, this one says so and waits; if it leaves meanwhile, the next
    tick's update raises Streamlit's stop here and the wait ends (the computation goes on for the others).
    """
    return _shared(key, lambda: admitted(fn, heavy))


def shared_figure(key: tuple, build: Callable[[], go.Figure]) -> go.Figure:
    """`build()`'s figure, built once per process for `key` and this session's language (its labels' words).

    `key` holds every small input the figure is drawn from (the page's settings, a config key), so a class
    that opens the same view builds it once: building a plotly figure costs tens of ms of the one GIL per figure,
    which thirty followers of a presenter's page change would otherwise queue for. Shared: never mutate it.
    """
    key = ("figure", text.language(), *key)
    figure = lambda: SharedFigure(build())  # noqa: E731
    return _memo(key, figure, size_of=lambda fig: len(pio.to_json(fig, validate=False)))


def _arrow(rows: list[dict] | pd.DataFrame) -> pa.Table:
    frame = pd.DataFrame(rows)
    try:
        return pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # a column of mixed types: shown as its text, as Streamlit would
        mixed = frame.select_dtypes("object").columns
        return pa.Table.from_pandas(frame.astype(dict.fromkeys(mixed, str)), preserve_index=False)


def shared_table(key: tuple, rows: Callable[[], list[dict] | pd.DataFrame]) -> pa.Table:
    """`rows()` (dicts, one per row, or a DataFrame) as an Arrow table, made once per process for `key` and this
    session's language.

    st.dataframe turns a list of dicts into a pandas DataFrame and then into Arrow on every call: on the formats
    page those conversions cost more than the rest of the page, once per session, and thirty followers of a
    presenter's page change queue for them on the one GIL. An Arrow table st.dataframe only serialises. `key` holds
    every small input the rows are made from. Shared: never mutate it.
    """
    key = ("table", text.language(), *key)
    return _memo(key, lambda: _arrow(rows()), size_of=lambda table: table.nbytes)


class _SessionResults:
    """mpviz.presentation.memo's host in the app: the session's language, and the process-wide store above (a class
    on one link shares every memoised view model's result)."""

    def language(self) -> str:
        return text.language()

    def share(self, returns: memo.Returns, key: tuple, compute: Callable[[], T], heavy: bool, worker: bool) -> T:
        if worker:  # an engine run (mpviz.presentation.runs): in the worker pool, its lane by `heavy`
            return isolated(key, compute, heavy=heavy)
        if returns == "figure":
            return shared_figure(key, compute)
        if returns == "table":
            return shared_table(key, compute)
        return shared(key, compute, heavy=heavy)

    def holds(self, returns: memo.Returns, key: tuple) -> bool:
        return (key if returns == "value" else (returns, text.language(), *key)) in default_cache()


memo.use(_SessionResults())


def isolated(key: tuple, fn: Callable[..., T], *args: object, heavy: bool = False) -> T:
    """`fn(*args)` computed in a worker process, once per process for `key` (as `shared`): a heavy run in the heavy
    lane (its gate and its workers), any other in the light lane (a gate and a worker of its own).

    `fn` is a module-level engine function; it and `args` must pickle. Raises mpviz.app.serving.workers.WorkerCrashed
    (and WorkerTimeout) when the worker dies or runs past the limit: nothing is cached then, so a retry computes again.
    """
    if heavy:
        return shared(key, lambda: run_isolated(fn, *args, heavy=True), heavy=True)
    # the light lane: its own worker and its own queue, so it never waits behind a heavy run
    return _shared(key, lambda: _through(light_gate(), text.section("queue")["light"], lambda: run_isolated(fn, *args)))


def _shown_errors(cached: bool, run: Callable[[], T], where: str) -> T | None:
    """`run()` (which computes or, when `cached`, takes a shared result), or None after telling the visitor why
    this configuration cannot run."""
    words = text.section("common")
    try:
        with nullcontext() if cached else st.spinner(words["computing"]):
            return run()
    except ConfigError as e:
        st.error(words["config_error"].format(error=e))
    except ChildProbeError as e:  # the policy probe's child process died: say so, keep its stderr in the log
        log.error("autocast policy probe failed: %s", e)
        st.error(words["probe_error"].format(code=e.returncode))
    except WorkerCrashed as e:  # logged by mpviz.app.serving.workers; the server and every other session go on
        worker_crash(e, where)
    return None


def attention_trace(rc: RunConfig) -> mpviz.AttentionTrace | None:
    """The traced run for `rc`, or None after showing why it cannot run; view models then read the same shared run
    without a word on the page (mpviz.presentation.runs.attention_trace)."""
    return _shown_errors(runs.attention_trace.cached(rc), lambda: runs.attention_trace(rc), "trace")


def attention_lesson(rc: RunConfig) -> bytes | None:
    """The attention lesson's bundle as JSON bytes (mpviz.bundle), or None after showing why it cannot run."""
    return _shown_errors(runs.attention_lesson.cached(rc), lambda: runs.attention_lesson(rc), "lesson")


def kernel_notice() -> None:
    """Say so when this machine's low-precision kernels crashed in the probe (mpviz.kernel_probe); else nothing."""
    probe, words = ensure_safe_kernels(), text.section("common")
    if probe.crashed_signal is None:
        return
    fields = dict(kernel=probe.crashed_kernel or "?", signal=probe.signal_name, cap=probe.isa_cap_applied)
    if probe.user_isa is not None:
        st.warning(words["kernels_user_failed"].format(isa=probe.user_isa, **fields), icon="⚠️")
    elif probe.ok:  # what the cap did to the results is what the probe measured (mpviz.kernel_probe)
        key = (
            "kernels_capped_differ" if probe.differed else "kernels_capped_same" if probe.compared else "kernels_capped"
        )
        compared = dict(compared=", ".join(probe.compared), differed=", ".join(probe.differed))
        st.info(words[key].format(**fields, **compared), icon="ℹ️")
    else:
        st.warning(words["kernels_failed"].format(**fields), icon="⚠️")


@st.cache_data(max_entries=256, show_spinner=False)
def bit_layout(value: float, dtype: str, lang: str) -> go.Figure:
    """Bit boxes of `value` stored as `dtype` (sign / exponent / mantissa coloured), from mpviz.formats."""
    return bit_layout_figure(encode(value, dtype), labels=dict(text.load(lang, "common")["bits"]))
