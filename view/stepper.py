"""The attention lesson's in-browser stepper: one `st.components.v2` component fed one pre-serialised payload.

Stepping, clicking graph nodes and heatmap cells, picking elements and exploring bits all happen in the browser
(assets/components/stepper/*.js, bundled into dist/stepper.js) from the lesson bundle; nothing here reruns for them.
Only a new bundle (the sidebar changed the run) mounts new data, and the component then keeps the same tensor in view.

The contract, Python → JS: `data=` is `bytes`, which Streamlit 1.67 forwards untouched as the proto's `bytes`
field; the component receives it as a `Uint8Array` and reads it with `JSON.parse(new TextDecoder().decode(data))`.
The bytes are UTF-8 JSON, assembled by concatenation so that the bundle is never parsed or re-serialised per
session:

    {"bundle": <LessonBundle.to_json()>, "text": {"ui": <stepper.toml>, "glossary": <glossary.toml>},
     "style": {"dtype_colors": {dtype: "#rrggbb"}}, "meta": {"key": <component key>, "locale": "en"}}

With `conceal` meta carries "conceal": 1 and the stepper keeps the run's answer to a "think first" question to itself
(the first inf/NaN's banner and marks; view/tour.py lifts it on reveal).
In presenter mode meta also carries "scale" (the component's `--mpv-scale`) and "publish": true; the stepper is then
laid out for a projector (the graph in a column beside the card, both on a 1024×768 first screen) and sends its
place back as its state "view" ({step, view, phase, head, el, key}; one rerun per move, of the presenter's session
only), which `mount_stepper` leaves in session state under PLACE for view.follow to publish.
Python moves the stepper with view.goto.

Every piece is serialised once per process and the joined payload is cached (keyed on the bundle's bytes object,
whose hash Python keeps), so a mount costs a dictionary lookup here; what remains is Streamlit's own hashing and
sending of the element. Callers should keep the bundle JSON as one shared `bytes` object (st.cache_resource,
not st.cache_data, which hands each session a fresh copy).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import streamlit as st

from view import text
from view.figures.style import DTYPE_COLORS

ASSETS = Path(__file__).resolve().parents[1] / "assets" / "components" / "stepper"
# The one ES module the component runs: the stepper's modules (entry stepper.js) bundled by esbuild and committed,
# so running the app needs no node (assets/components/stepper/build.mjs; a test keeps it in step with the sources).
BUILT_JS = ASSETS / "dist" / "stepper.js"
PRESENTER_SCALE = 1.25  # the stepper's type in presenter mode: 20 px instead of 16
PLACE = "_stepper_place"  # session key: the presenter's stepper place, as its last rerun reported it


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


_component = st.components.v2.component(
    "mpviz_stepper",
    html=_asset("stepper.html"),
    css=_asset("stepper.css"),
    js=BUILT_JS.read_text(encoding="utf-8"),
)


@lru_cache(maxsize=4)
def stepper_text(locale: str = "en") -> dict:
    """The stepper's words for `locale`: {"ui": stepper.toml, "glossary": glossary.toml}, one object per process."""
    return {"ui": text.plain(locale, "stepper"), "glossary": text.plain(locale, "glossary")}


_json_by_id: dict[int, tuple[object, bytes]] = {}


def _json_once(obj: dict) -> bytes:
    """JSON of a dict the caller keeps and never mutates (a text table, the colours), serialised once per object."""
    hit = _json_by_id.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    data = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    if len(_json_by_id) >= 16:  # a few text tables and palettes at most; never grows without bound
        _json_by_id.pop(next(iter(_json_by_id)))
    _json_by_id[id(obj)] = (obj, data)
    return data


@lru_cache(maxsize=8)
def _utf8(text: str) -> bytes:
    return text.encode()


@lru_cache(maxsize=16)
def _join(bundle: bytes, text: bytes, colors: bytes, meta: bytes) -> bytes:
    return b"".join(
        (b'{"bundle":', bundle, b',"text":', text, b',"style":{"dtype_colors":', colors, b'},"meta":', meta, b"}")
    )


@lru_cache(maxsize=16)
def _meta(key: str, locale: str, scale: float = 1.0, publish: bool = False, conceal: bool = False) -> bytes:
    meta: dict = {"key": key, "locale": locale}
    if scale != 1.0:
        meta["scale"] = scale
    if publish:
        meta["publish"] = 1
    if conceal:
        meta["conceal"] = 1
    return json.dumps(meta, separators=(",", ":")).encode()


def stepper_payload(
    bundle_json: str | bytes,
    text: dict,
    colors: dict,
    *,
    key: str = "stepper",
    locale: str = "en",
    presenter: bool = False,
    conceal: bool = False,
) -> bytes:
    """The exact bytes the component receives (see the module docstring); cached, never rebuilt per session."""
    bundle = _utf8(bundle_json) if isinstance(bundle_json, str) else bytes(bundle_json)
    scale, publish = (PRESENTER_SCALE, True) if presenter else (1.0, False)
    meta = _meta(key, locale, scale, publish, conceal)
    return _join(bundle, _json_once(text), _json_once(colors), meta)


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
    conceal: bool = False,
) -> None:
    """Show the stepper for one lesson bundle (`mpviz.bundle.LessonBundle.to_json()`, ideally as shared bytes).

    `text` defaults to this locale's stepper + glossary tables; `colors` to the app's DTYPE_COLORS. `key` names the
    component instance (and its saved place in the browser's sessionStorage); keep it stable across reruns.
    `presenter`: projector-sized, and the stepper reports its place (session state PLACE) for the follow-me room.
    `conceal`: a "think first" stop's answer (where inf/NaN first appears) stays hidden until it is revealed.
    """
    payload = stepper_payload(
        bundle_json,
        text if text is not None else stepper_text(locale),
        colors if colors is not None else DTYPE_COLORS,  # the plotly figures' colours: one palette everywhere
        key=key,
        locale=locale,
        presenter=presenter,
        conceal=conceal,
    )
    if not presenter:
        _component(key=key, data=payload, width="stretch", height="content")
        return
    result = _component(key=key, data=payload, width="stretch", height="content", on_view_change=_moved)
    st.session_state[PLACE] = result.view if isinstance(result.view, dict) else None
