"""The "go to" channel: Python moves the page's view without reloading it (assets/components/stepper/goto.js).

A tour stop or a presenter's step on the attention lesson is a place inside the stepper, which keeps its state in
the browser; a rerun cannot set it. So Python mounts this invisible component with the target, and the browser
hands it to the stepper (to a stepper listening now, or as a pending target a stepper mounting later picks up).
Each target has an id and is delivered once, however often a rerun mounts it again. The component runs the
stepper's own built module (mpviz/presentation/static/stepper.js, whose default export tells the two components apart by
name): Streamlit imports one module per distinct text, so the channel and the stepper share it and talk through an
import, not through the page's globals.

Targets: {"landmark" | "key" | "step", "view", "phase", "head", "el"} for the stepper (see store.js `targetChange`),
{"heading": text} to scroll a heading of the page into view.
"""

from __future__ import annotations

import secrets

import streamlit as st

from mpviz.presentation.stepper_payload import BUILT_JS

_component = st.components.v2.component("mpviz_goto", js=BUILT_JS.read_text(encoding="utf-8"))
PENDING = "_goto"  # session key: the go-to the next full run mounts, {"id", "page", "target"}


def new_id() -> str:
    return secrets.token_hex(4)


def plan(page: str, target: dict) -> None:
    """Deliver `target` on lesson `page` the next time app.py finishes a run there (see `mount_planned`)."""
    st.session_state[PENDING] = {"id": new_id(), "page": page, "target": dict(target)}


def mount(goto_id: str, target: dict, *, key: str = "goto") -> None:
    """Mount the channel with this target now (in the current container; it takes no space)."""
    _component(key=key, data={"id": goto_id, "target": target}, width="stretch", height="content")


def mount_planned(page: str) -> None:
    """The planned go-to, if it is for this page. Mounted on every run of that page until another is planned: the
    browser delivers it once (by id), and a run that a rerun interrupted still gets it there."""
    planned = st.session_state.get(PENDING)
    if planned and planned["page"] == page:
        mount(planned["id"], planned["target"])
