"""View state in the URL: each piece of state a link should reproduce is a `UrlParam` (`?key=value`, declared in
mpviz.presentation.url_params, where view models declare theirs too).

On a session's first run `seed_from_url` reads every param into session state (a bad value warns and falls back
to the default); widgets bound to those keys then own the values (kept across pages that don't draw them);
`write_url` mirrors them back, leaving defaults out so links stay short. Old spellings of a key (`aliases`) are
still read, so links shared before a rename open the same view, and are replaced by the current key when the URL
is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import streamlit as st

from mpviz import contracts
from mpviz.app import lessons, text
from mpviz.app.page import PERSONAL_KEYS, warn
from mpviz.presentation.url_params import UrlParam as UrlParam
from mpviz.presentation.url_params import dump_bool as dump_bool
from mpviz.presentation.url_params import parse_bool as parse_bool
from mpviz.presentation.url_params import parse_choice as parse_choice


def _raw(p: UrlParam) -> tuple[str, str] | None:
    """(key it was found under, raw value) from the URL, the current key first, then old spellings."""
    for key in (p.key, *p.aliases):
        raw = st.query_params.get(key)
        if raw is not None:
            return key, raw
    return None


_KEPT = "_url_state"  # session key: every URL param's last value, as a plain dict (see seed_from_url)

# URL keys each page has declared (page url path → keys, old spellings included), as measured at run time: the
# hostile-URL tests read this to attack every parameter of every lesson without a hand-kept list.
DECLARED: dict[str, set[str]] = {}


def seed_from_url(params: list[UrlParam], *, kept_apart: bool = False) -> None:
    """On a session's first run, put each param's URL value (or its default, with a warning) into session state.

    On later runs each value is written back to itself: Streamlit drops a widget's value at the end of a run that
    did not draw the widget, and a value set through session state is kept (so a walk through pages that don't
    draw the sidebar's widgets keeps the run, and the URL never gets `dtype=None`). A copy in a plain dict
    (`_KEPT`, with `kept_apart`: the shared run config), which no widget cleanup touches, restores a value
    Streamlit dropped anyway: a presenter's banner fragment rerunning on its timer across a page change did, and
    the run fell back to its defaults.
    """
    DECLARED.setdefault(st.session_state.get("_page", ""), set()).update(k for p in params for k in (p.key, *p.aliases))
    kept = st.session_state.setdefault(_KEPT, {}) if kept_apart else {}
    for p in params:
        if p.key in st.session_state:
            st.session_state[p.key] = kept[p.key] = st.session_state[p.key]
            continue
        if p.key in kept:  # dropped by Streamlit's widget cleanup (a fragment's rerun across a page change)
            st.session_state[p.key] = kept[p.key]
            continue
        found = _raw(p)
        if found is None:
            st.session_state[p.key] = kept[p.key] = p.default
            continue
        key, raw = found
        try:
            st.session_state[p.key] = kept[p.key] = p.parse(raw)
        except (ValueError, TypeError, OverflowError):
            st.session_state[p.key] = kept[p.key] = p.default
            warn(
                text.section("common")["bad_param"].format(
                    param=text.echo(f"{key}={raw}"), used=text.echo(p.dump(p.default))
                )
            )


def write_url(params: list[UrlParam]) -> None:
    """Mirror the current values into the URL; defaults and old spellings are left out so links stay short."""
    # The URL read once: every access to st.query_params takes the session's lock and checks for a rerun, and a
    # key it lacks raises KeyError inside (a class pays for that, on every run of every page, once per param).
    current = st.query_params.to_dict()
    for p in params:
        for old in p.aliases:
            if old in current:
                del st.query_params[old]
        value = st.session_state.get(p.key, p.default)
        if value == p.default:
            if p.key in current:
                del st.query_params[p.key]
        elif current.get(p.key) != p.dump(value):
            st.query_params[p.key] = p.dump(value)


def any_set(params: list[UrlParam], keys: Iterable[str]) -> bool:
    """Whether any of `keys` holds another value than its param's default (a link or the reader set it): a folded
    section with such a knob opens, so nothing set is hidden."""
    wanted = set(keys)
    return any(st.session_state.get(p.key, p.default) != p.default for p in params if p.key in wanted)


KEEP = ("lang", *PERSONAL_KEYS)  # a session's own settings: opening another view keeps them
# the stepper's own (mpviz/contracts/stepper_keys.json): it writes them in the browser, mpviz.app.goto moves them
BROWSER_KEYS = (*contracts.PLACE_KEYS, *contracts.LEGACY_ELEMENT_KEYS)
_REQUESTED = "_open_view"


def open_view(page: str, query: Mapping[str, str]) -> None:
    """Ask for lesson `page` with exactly `query` as its URL state (every key it does not name at its default, the
    session's own KEEP settings kept). Safe in a widget callback; the next run (or this one, if its app.py has not
    reached `open_requested_view` yet) applies it."""
    st.session_state[_REQUESTED] = (page, {k: str(v) for k, v in query.items()})


def open_requested_view(current_page: str) -> None:
    """At the top of a run, before any widget: apply `open_view`'s request. Every URL state the old or the new view
    names is dropped from session state, so `seed_from_url` reads it again from the new URL; another page is
    switched to (this run ends there)."""
    requested = st.session_state.pop(_REQUESTED, None)
    if requested is None:
        return
    page, query = requested
    kept = {k: st.query_params[k] for k in KEEP if k in st.query_params}
    declared = set().union(*DECLARED.values())  # every key a page has seeded: only those live in session state
    for key in ({*st.query_params, *query} & declared) - set(KEEP):
        st.session_state.pop(key, None)
    kept = st.session_state.get(_KEPT, {})
    for key in declared - set(KEEP):  # an opened view is exactly its query: nothing kept comes back
        kept.pop(key, None)
    new = {**query, **kept}
    if page != current_page:
        st.switch_page(lessons.lesson(page).page, query_params=new)
    st.query_params.from_dict(new)
