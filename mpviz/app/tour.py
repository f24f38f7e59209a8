"""The guided lesson ("Start here"): stops from mpviz/app/tour.toml, words from mpviz/locales/<lang>/tour.toml, numbers
measured.

A stop is a view (a lesson page, its URL state, and a place in the stepper or a heading to scroll to), a question
and what to notice. While `?tour=N` is in the URL, app.py shows the stop's bar above any lesson (`bar`), with Back
and Next; opening a stop goes through mpviz.app.url.open_view, so the page, its URL state and the stepper move
exactly as a shared link would set them. A "think first" stop asks before it shows: until the bar's Reveal button
is pressed its lesson page does not run at all (`bar` stops the run after the bar), so no dtype on a node, no
inf/NaN mark, no stepper place and no figure can give the answer away; Reveal (`reveal=1` in the URL, so a presenter's
class and the stop's link see what the presenter sees) runs the page, goes to the stop's place and shows the answer
in the bar. The numbers in "what to notice" are facts (FACTS) computed when the bar is drawn, after the page has run,
so they mostly hit the caches the page just filled; only the facts a text quotes are computed.
"""

from __future__ import annotations

import json
import math
import re
import string
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import streamlit as st

from mpviz import claims, formats
from mpviz.app import follow, goto, lessons, text
from mpviz.app.page import guarded
from mpviz.app.run_config import RunConfig, run_config
from mpviz.app.serving import results
from mpviz.app.url import UrlParam, dump_bool, open_view, parse_bool
from mpviz.policy import device_policy
from mpviz.presentation import runs
from mpviz.presentation.memo import memoised
from mpviz.scaler import ScalerSettings
from mpviz.stats import FormatRange

STOPS_FILE = Path(__file__).with_name("tour.toml")
SEEN = "_tour_at"  # session key: the stop whose view this session last opened (its go-to is planned once)
REVEALED = "reveal"  # URL key: the open think-first stop's answer is shown (opening any stop sets it back)
_shown_once: set[int] = set()  # stops this process has shown in full: their page's results and facts are computed
ANSWER_HEIGHT_PX = 120  # a revealed answer's box in the sticky bar: about five lines, longer ones scroll


@dataclass(frozen=True)
class Stop:
    """Where one stop goes (see mpviz/app/tour.toml for the fields)."""

    id: str
    page: str
    query: Mapping[str, str] = field(default_factory=dict)
    section: str | None = None
    target: Mapping[str, Any] | None = None
    think_first: bool = False


@cache
def stops() -> tuple[Stop, ...]:
    with open(STOPS_FILE, "rb") as f:
        raw = tomllib.load(f)["stop"]
    return tuple(
        Stop(
            s["id"],
            s["page"],
            {k: str(v) for k, v in s.get("query", {}).items()},
            s.get("section"),
            s.get("target"),
            bool(s.get("think_first", False)),
        )
        for s in raw
    )


def parse_stop(raw: str) -> int:
    """`?tour=N`: a stop number, 1 … len(stops()); 0 is no tour. ValueError otherwise."""
    n = int(raw)
    if not 0 <= n <= len(stops()):
        raise ValueError(raw)
    return n


def url_params() -> list[UrlParam]:
    """The tour's URL keys (mpviz.app.classroom declares them): `tour=N` the open stop, `reveal=1` its answer shown."""
    return [UrlParam("tour", 0, parse_stop), UrlParam(REVEALED, False, parse_bool, dump_bool)]


def stop_words(stop: Stop) -> Mapping:
    return text.section("tour")["stops"][stop.id]


def lesson_title(slug: str) -> str:
    words = text.section(slug)
    return words.get("nav", words["title"])


# ── opening a stop ──────────────────────────────────────────────────────────────────────────────────────────
def target(stop: Stop) -> dict | None:
    """The go-to that puts this stop's view in front of the reader: a stepper place, or the section's heading."""
    if stop.target is not None:
        return dict(stop.target)
    if stop.section is not None:
        return {"heading": text.section(stop.page)[stop.section]}
    return None


def open_stop(n: int) -> None:
    """Open stop `n` (a button callback): its page with exactly its URL state, `?tour=n` added."""
    stop = stops()[n - 1]
    st.session_state.pop(SEEN, None)  # plan its go-to again, even when it is the stop already open
    st.session_state[REVEALED] = False  # a think-first stop asks again
    open_view(stop.page, {**stop.query, "tour": str(n)})


def leave_tour() -> None:
    st.session_state["tour"] = 0
    st.session_state.pop(SEEN, None)
    st.session_state[REVEALED] = False


def reveal(n: int) -> None:
    """The Reveal button of think-first stop `n`: its page runs now, its go-to is planned, its answer shown."""
    st.session_state[REVEALED] = True
    st.session_state.pop(SEEN, None)


def _hidden(n: int) -> bool:
    return stops()[n - 1].think_first and not st.session_state.get(REVEALED, False)


def plan_arrival(n: int, page: str) -> None:
    """On the first run that shows stop `n` on its own page (by Next/Back or by a shared link), plan its go-to.
    A follower's place comes from the presenter instead."""
    stop = stops()[n - 1]
    if st.session_state.get(SEEN) == n or page != stop.page or follow.following() or _hidden(n):
        return
    st.session_state[SEEN] = n
    if (t := target(stop)) is not None:
        goto.plan(stop.page, t)


# ── facts: the measurements a stop's words quote ────────────────────────────────────────────────────────────
@memoised()
def _bundle_facts(rc: RunConfig) -> dict:
    """Per landmark of the run's lesson bundle: its dtype, the other device's dtype, the casts of its step; and
    the first op that made inf/NaN (its phase in the viewer's words). Parsed once per run config, language and
    process from the cached bundle bytes."""
    b = json.loads(results.attention_lesson(rc) or b"null")
    if b is None:
        return {}
    events = b["events"]
    first_out = {name: events[i]["out"][b["landmark_outputs"].get(name, 0)] for name, i in b["landmarks"].items()}
    dtype = {name: out["dtype"] for name, out in first_out.items()}
    other = {name: events[i].get("other_dtype", dtype[name]) for name, i in b["landmarks"].items()}
    casts = {name: len(step["casts"]) for step in b["story"] for name in step["landmarks"]}
    fn = b.get("first_nonfinite")
    first = None
    if fn:
        e = events[fn["event"]]
        phases = text.section("stepper")["phases"]
        first = SimpleNamespace(op=e["op"], event=e["i"], phase=phases.get(e["phase"], e["phase"]))
    return {"dtype": dtype, "other_dtype": other, "casts": casts, "first_nonfinite": first}


def _format_facts(stop: Stop, rc: RunConfig) -> dict:
    """Every format's range, read from mpviz.formats (ml_dtypes/torch finfo): max, ln(max), smallest subnormal,
    mantissa bits, and the magnitude at or below which a value rounds to zero (mpviz.stats.FormatRange, found by
    rounding); keyed by short name (fp16, bf16, …)."""
    return {
        spec.short: SimpleNamespace(
            max=spec.max,
            ln_max=math.log(spec.max),
            smallest_subnormal=spec.smallest_subnormal,
            mantissa_bits=spec.mantissa_bits,
            underflow_at=FormatRange.of(spec.name).underflow_at,
        )
        for spec in formats.all_formats()
    }


def _stored_facts(stop: Stop, rc: RunConfig) -> dict:
    """The stop's value as each of its formats stores it (mpviz.formats.encode: .value, .ulp)."""
    return {f: formats.encode(stop.query["value"], f) for f in stop.query["fmts"].split(",")}


def _verdict_facts(stop: Stop, rc: RunConfig) -> dict:
    """How many claims got each verdict, from the same shared checks the claims page runs; slow ones pending."""
    fast = [c for c in claims.CLAIMS if not c.on_demand]
    checked = [runs.claim_check(c.id) for c in fast]
    return claims.verdict_counts(checked) | {"pending": len(claims.CLAIMS) - len(fast)}


FACTS: dict[str, Callable[[Stop, RunConfig], Any]] = {
    "dtype": lambda stop, rc: _bundle_facts(rc)["dtype"],
    "other_dtype": lambda stop, rc: _bundle_facts(rc)["other_dtype"],
    "casts": lambda stop, rc: _bundle_facts(rc)["casts"],
    "first_nonfinite": lambda stop, rc: _bundle_facts(rc)["first_nonfinite"],
    "formats": _format_facts,
    "stored": _stored_facts,
    "policy_ops": lambda stop, rc: {d: len(device_policy(d).ops()) for d in ("cpu", "cuda")},
    "scaler": lambda stop, rc: ScalerSettings.defaults(rc.device),  # a fresh torch.amp.GradScaler's settings
    "verdicts": _verdict_facts,
    "query": lambda stop, rc: stop.query,
}


def fields(template: str) -> set[str]:
    """The facts a template quotes: `{dtype[q]}` → "dtype"."""
    return {re.match(r"\w*", f).group() for _, f, _, _ in string.Formatter().parse(template) if f is not None}


def fill(template: str, stop: Stop, rc: RunConfig | None = None) -> str:
    """The template with the facts it quotes, measured now (only those: a question quoting a format's range costs
    nothing, a notice quoting the trace reads the run's bundle)."""
    rc = rc or run_config()
    return template.format(**{name: FACTS[name](stop, rc) for name in fields(template)})


# ── the bar above a lesson ──────────────────────────────────────────────────────────────────────────────────
def bar(lesson: lessons.Lesson) -> Callable[[], None] | None:
    """The open stop's bar, at the top of the page (nothing without `?tour=N`). Returns what draws its "what to
    notice" once the page has run (its numbers then come from warm caches), or None.

    A think-first stop not revealed yet ends the run here (st.stop, after the bar): its page must not draw
    anything that answers the question, so it is not run until Reveal."""
    n = st.session_state.get("tour", 0)
    if not n:
        return None
    stop, words, bar_words = stops()[n - 1], stop_words(stops()[n - 1]), text.section("tour")["bar"]
    plan_arrival(n, lesson.slug)
    box = st.container(border=True, key="tour_bar")  # sticky (assets/style.css): stays in view while scrolling
    rc = run_config()
    last = n == len(stops())
    here = lesson.slug == stop.page
    asking = here and _hidden(n)
    with box:
        title = bar_words["title"].format(n=n, total=len(stops()), title=words["title"])
        st.markdown(f"**{title}**  \n" + bar_words["think"].format(question=fill(words["question"], stop, rc)))
        row = st.container(horizontal=True, vertical_alignment="center")
        row.button(bar_words["back"], on_click=open_stop, args=(n - 1,), disabled=n == 1, key="tour_back")
        row.button(bar_words["next"], on_click=open_stop, args=(n + 1,), disabled=last, key="tour_next", type="primary")
        if asking:
            row.button(bar_words["reveal"], on_click=reveal, args=(n,), key="tour_reveal", type="primary")
        elif here and stop.think_first:  # revealed: the answer in the bar itself, no second click to read it; a
            # long one scrolls inside it, so that the sticky bar never covers much of the lesson
            notice = st.container(height=ANSWER_HEIGHT_PX, border=False).empty()
        elif here:
            notice = row.popover(bar_words["notice"]).empty()
        else:  # the reader went elsewhere with the tour open
            row.button(bar_words["reopen"], on_click=open_stop, args=(n,), key="tour_reopen")
        row.button(bar_words["leave"], on_click=leave_tour, key="tour_leave", type="tertiary")
        if asking:
            st.caption(bar_words["asking"].format(lesson=lesson_title(stop.page)))
        elif not here:
            st.caption(bar_words["elsewhere"].format(lesson=lesson_title(stop.page)))
        elif last:
            st.caption(bar_words["last"])
        # A first visit computes the stop's page and then its facts (a fresh server: tens of seconds on a busy
        # machine): the bar says what, and how far along, for the whole wait, whatever the page itself shows.
        progress = st.empty() if here and not asking and n not in _shown_once else None
        if progress is not None:
            progress.caption(
                bar_words["preparing"].format(part=bar_words["part_page"].format(lesson=lesson_title(stop.page)))
            )
    if asking:
        st.stop()
    if not here:
        return None

    def draw_notice() -> None:
        if progress is not None:
            progress.caption(bar_words["preparing"].format(part=bar_words["part_notice"]))
        with notice.container(), guarded("tour notice"):
            answer = fill(words["notice"], stop, rc)
            st.markdown(bar_words["answer"].format(notice=answer) if stop.think_first else answer)
            _shown_once.add(n)
        if progress is not None:
            progress.empty()

    return draw_notice
