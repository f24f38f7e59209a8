"""The attention lesson's in-browser stepper: one `st.components.v2` component fed one pre-serialised payload.

Stepping, clicking graph nodes and heatmap cells, picking elements and exploring bits all happen in the browser
(assets/components/stepper/*.js, bundled into mpviz/presentation/static/stepper.js) from the lesson bundle; nothing here
reruns for them. Only a new bundle (the sidebar changed the run) mounts new data, and the component then keeps the same
tensor in view. The payload (its contract, Python → JS, and its caching) is built in mpviz.presentation.stepper_payload,
which needs no Streamlit: the CLI's offline lesson file (mpviz.presentation.lesson_file) embeds the same bytes and
mounts the same module without a server. In presenter mode the stepper is laid out for a projector: the graph in a
column beside the card, both on a 1024×768 first screen.
"""

from __future__ import annotations

import streamlit as st

from mpviz.presentation.palette import DTYPE_COLORS
from mpviz.presentation.stepper_payload import BUILT_JS, asset, stepper_payload, stepper_text

PLACE = "_stepper_place"  # session key: the presenter's stepper place, as its last rerun reported it


_component = st.components.v2.component(
    "mpviz_stepper",
    html=asset("stepper.html"),
    css=asset("stepper.css"),
    js=BUILT_JS.read_text(encoding="utf-8"),
)


def _moved() -> None:
    """The presenter's stepper moved: its new place is read from the mount's result in the rerun that follows."""


def mount_stepper(
    bundle_json: str | bytes,
    text: dict | None = None,
    *,
    key: str = "stepper",
    colors: dict | None = None,
    locale: str = "en",
    presenter: bool = False,
) -> None:
    """Show the stepper for one lesson bundle (`mpviz.bundle.LessonBundle.to_json()`, ideally as shared bytes).

    `text` defaults to this locale's stepper + glossary tables; `colors` to the app's DTYPE_COLORS. `key` names the
    component instance (and its saved place in the browser's sessionStorage); keep it stable across reruns.
    `presenter`: projector-sized, and the stepper reports its place (session state PLACE) for the follow-me room.
    """
    payload = stepper_payload(
        bundle_json,
        text if text is not None else stepper_text(locale),
        colors if colors is not None else DTYPE_COLORS,  # the plotly figures' colours: one palette everywhere
        key=key,
        locale=locale,
        presenter=presenter,
    )
    if not presenter:
        _component(key=key, data=payload, width="stretch", height="content")
        return
    result = _component(key=key, data=payload, width="stretch", height="content", on_view_change=_moved)
    st.session_state[PLACE] = result.view if isinstance(result.view, dict) else None
