"""The stepper's payload, built without Streamlit: what the component receives in the app (mpviz.app.stepper) and what
the offline lesson file embeds (mpviz.presentation.lesson_file), byte for byte the same.

The contract, Python → JS: `data=` is `bytes`, which Streamlit 1.67 forwards untouched as the proto's `bytes`
field; the component receives it as a `Uint8Array` and reads it with `JSON.parse(new TextDecoder().decode(data))`.
The bytes are UTF-8 JSON, assembled by concatenation so that the bundle is never parsed or re-serialised per
session:

    {"bundle": <LessonBundle.to_json()>, "text": {"ui": <stepper.toml>, "glossary": <glossary.toml>},
     "style": {"dtype_colors": {dtype: "#rrggbb"}}, "meta": {"key": <component key>, "locale": "en"}}

The bundle keeps to mpviz/contracts/bundle.schema.json and meta to mpviz/contracts/stepper_meta.schema.json: the
one definition of each, which the stepper imports too (tests/test_stepper.py validates what `_meta` makes).

With `embedded` (a notebook, mpviz.presentation.widget) meta carries "embedded": 1: the stepper is one output among
others on a page it does not own, and leaves the page's URL and its skip links alone. A notebook's bundle past the
caps is streamed (mpviz.event_chunks): its payload holds the bundle's head, and meta carries "stream": {"events":
<count>, "chunk": <events per chunk>}: the stepper fetches the other chunks from the kernel as it steps.
In presenter mode meta also carries "scale" (the component's `--mpv-scale`) and "publish": true, and the stepper
then sends its place back as its state "view" ({step, view, phase, head, el, key}; one rerun per move, of the
presenter's session only), which `mount_stepper` leaves in session state under PLACE for mpviz.app.follow to publish.
Python moves the stepper with mpviz.app.goto.

Every piece is serialised once per process and the joined payload is cached (keyed on the bundle's bytes object,
whose hash Python keeps), so a mount costs a dictionary lookup here; what remains is Streamlit's own hashing and
sending of the element. Callers should keep the bundle JSON as one shared `bytes` object (st.cache_resource,
not st.cache_data, which hands each session a fresh copy).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.resources import files

from mpviz.presentation import locales

# What the package ships of the stepper, built from assets/components/stepper by its build.mjs and committed, so
# running the app needs no node (a test keeps it in step with the sources): the one ES module the hosts run (the
# stepper's modules bundled by esbuild), its markup and CSS, the notebook's anywidget module, the lesson file's page.
STATIC = files("mpviz.presentation").joinpath("static")
BUILT_JS = STATIC.joinpath("stepper.js")
PRESENTER_SCALE = 1.25  # the stepper's type in presenter mode: 20 px instead of 16


def asset(name: str) -> str:
    """The text of one of the stepper's shipped files (STATIC / name)."""
    return STATIC.joinpath(name).read_text(encoding="utf-8")


@lru_cache(maxsize=4)
def stepper_text(locale: str = "en") -> dict:
    """The stepper's words for `locale`: {"ui": stepper.toml, "glossary": glossary.toml}, one object per process."""
    return {"ui": locales.plain(locale, "stepper"), "glossary": locales.plain(locale, "glossary")}


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


def _assemble(bundle: bytes, text: bytes, colors: bytes, meta: bytes) -> bytes:
    return b"".join(
        (b'{"bundle":', bundle, b',"text":', text, b',"style":{"dtype_colors":', colors, b'},"meta":', meta, b"}")
    )


_join = lru_cache(maxsize=16)(_assemble)


@lru_cache(maxsize=16)
def _meta(
    key: str,
    locale: str,
    scale: float = 1.0,
    publish: bool = False,
    embedded: bool = False,
    stream: tuple[int, int] | None = None,
) -> bytes:
    meta: dict = {"key": key, "locale": locale}
    if embedded:
        meta["embedded"] = 1
    if scale != 1.0:
        meta["scale"] = scale
    if publish:
        meta["publish"] = 1
    if stream is not None:
        meta["stream"] = {"events": stream[0], "chunk": stream[1]}
    return json.dumps(meta, separators=(",", ":")).encode()


def stepper_payload(
    bundle_json: str | bytes,
    text: dict,
    colors: dict,
    *,
    key: str = "stepper",
    locale: str = "en",
    presenter: bool = False,
    embedded: bool = False,
    stream: tuple[int, int] | None = None,
) -> bytes:
    """The exact bytes the component receives (see the module docstring); cached, never rebuilt per session.

    An `embedded` payload (a notebook's: one model traced once, possibly megabytes) is assembled uncached, so
    re-running a cell does not keep every earlier model's bundle alive in the process. `stream` (events in all,
    events per chunk) says the bundle is a streamed one's head.
    """
    scale, publish = (PRESENTER_SCALE, True) if presenter else (1.0, False)
    meta = _meta(key, locale, scale, publish, embedded, stream)
    if embedded:
        bundle = bundle_json.encode() if isinstance(bundle_json, str) else bytes(bundle_json)
        return _assemble(bundle, _json_once(text), _json_once(colors), meta)
    bundle = _utf8(bundle_json) if isinstance(bundle_json, str) else bytes(bundle_json)
    return _join(bundle, _json_once(text), _json_once(colors), meta)
