"""The stepper in a notebook (Jupyter, VS Code, marimo): an anywidget that mounts the same built stepper.

`stepper_widget(bundle, locale)` returns a `StepperWidget` whose module is assets/components/stepper/notebook.js,
the notebook's host adapter, and whose traits carry the built stepper (mpviz/presentation/static/stepper.js, the one
copy of its code), its CSS and markup, and the payload the app's component receives (mpviz.presentation.stepper_payload,
with meta.embedded set). The browser imports the stepper once and steps through the bundle without asking the kernel
anything: the widget syncs nothing back. `mpviz.show` (mpviz/presentation/notebook.py) traces a model and calls this;
while it traces, a `ProgressLine` says how far it is in the cell's output. No Streamlit here.

A bundle past the caps is streamed (mpviz.event_chunks): the payload holds its head, the widget keeps the chunks,
and the stepper asks for a chunk with one of anywidget's custom messages. The protocol (`chunk_reply`):

    stepper → kernel  {"type": "events", "chunk": k}
    kernel → stepper  {"type": "events", "chunk": k}, buffers [chunk k's JSON array of events]
                      {"type": "events", "chunk": k, "error": "no_chunk" | "released"}, no buffers

An answer is a lookup of bytes serialised once, so the kernel spends a millisecond on it between cells. At most
`STREAMS_KEPT` widgets keep their chunks: making another releases the oldest's (its stepper then says the steps
are gone and to run the cell again), so the kernel holds at most STREAMS_KEPT × MAX_STREAM_BYTES of events.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from typing import Any

import anywidget
import traitlets

from mpviz.bundle import LessonBundle
from mpviz.event_chunks import EventChunks
from mpviz.model_bundle import ModelBundleError, Progress
from mpviz.presentation import locales
from mpviz.presentation.palette import DTYPE_COLORS
from mpviz.presentation.stepper_payload import BUILT_JS, asset, stepper_payload, stepper_text


class StepperWidget(anywidget.AnyWidget):
    """One model's stepper in a notebook output. `payload` is the JSON bytes the stepper reads (see the module
    docstring); the other traits are the stepper's own files, the same for every widget."""

    _esm = asset("notebook.js")
    _stepper_js = traitlets.Unicode(BUILT_JS.read_text(encoding="utf-8")).tag(sync=True)
    _stepper_css = traitlets.Unicode(asset("stepper.css")).tag(sync=True)
    _stepper_html = traitlets.Unicode(asset("stepper.html")).tag(sync=True)
    payload = traitlets.Bytes(b"").tag(sync=True)

    def __init__(self, chunks: EventChunks | None = None, **kwargs: Any) -> None:
        """`chunks`: a streamed bundle's events (the payload then holds its head), answered on request."""
        super().__init__(**kwargs)
        self.chunks = chunks
        if chunks is not None:
            _kept.append(self)
            while len(_kept) > STREAMS_KEPT:
                _kept.popleft().chunks = None  # its stepper is told "released" from now on
            self.on_msg(self._answer)

    def _answer(self, _widget: object, content: object, _buffers: object) -> None:
        reply, buffers = chunk_reply(self.chunks, content)
        if reply is not None:
            self.send(reply, buffers)

    @property
    def bundle(self) -> dict:
        """The bundle this widget shows, parsed from its payload (for checks: the browser reads the bytes); of a
        streamed one, its head (every event past the first chunk thin: `chunks` holds them whole)."""
        return json.loads(self.payload)["bundle"]


STREAMS_KEPT = 2  # streamed widgets whose chunks the kernel keeps at once (see the module docstring)
_kept: deque[StepperWidget] = deque()


def chunk_reply(chunks: EventChunks | None, content: object) -> tuple[dict | None, list[bytes]]:
    """The answer to one custom message from the stepper (see the module docstring): (message, buffers), or
    (None, []) for a message that is not a request for events (ignored: anything may arrive on a comm)."""
    if not isinstance(content, dict) or content.get("type") != "events":
        return None, []
    k = content.get("chunk")
    if not isinstance(k, int) or isinstance(k, bool):
        return {"type": "events", "chunk": None, "error": "no_chunk"}, []
    if chunks is None:
        return {"type": "events", "chunk": k, "error": "released"}, []
    try:
        return {"type": "events", "chunk": k}, [chunks.chunk(k)]
    except IndexError:
        return {"type": "events", "chunk": k, "error": "no_chunk"}, []


def require_locale(locale: str) -> None:
    """ValueError unless the stepper has words in `locale` (one of locales.LANGUAGES): checked before a trace."""
    if locale not in locales.LANGUAGES:
        raise ValueError(f"no words in {locale!r} ({' | '.join(locales.LANGUAGES)})")


def stepper_widget(
    bundle: LessonBundle, locale: str = locales.DEFAULT_LANGUAGE, chunks: EventChunks | None = None
) -> StepperWidget:
    """A widget showing `bundle` with the stepper's words in `locale` (one of locales.LANGUAGES); with `chunks`,
    `bundle` is a streamed bundle's head (mpviz.model_bundle.model_stream) and the widget answers for the rest."""
    require_locale(locale)
    data = bundle.to_json().encode()
    # the stepper's saved place (sessionStorage) belongs to this bundle: a re-run cell with the same model keeps it
    key = "notebook-" + hashlib.sha1(data, usedforsecurity=False).hexdigest()[:12]
    stream = (chunks.count, chunks.size) if chunks is not None else None
    payload = stepper_payload(
        data, stepper_text(locale), DTYPE_COLORS, key=key, locale=locale, embedded=True, stream=stream
    )
    return StepperWidget(chunks=chunks, payload=payload)


def error_text(err: ModelBundleError, locale: str = locales.DEFAULT_LANGUAGE) -> str:
    """What a notebook says when mpviz.model_bundle cannot bundle a model (its caps, a request it cannot trace,
    a loss it cannot run backward from), in `locale`'s words: what was wrong and what to do instead."""
    words = locales.load(locale, "notebook")
    if err.code == "too_large_to_stream":
        template = words["too_large_to_stream"][err.detail]
        if err.detail == "events":
            return template.format(size=f"{err.size:,}", cap=f"{err.cap:,}")
        return template.format(size=f"{err.size / 2**20:.3g}", cap=f"{err.cap / 2**20:.3g}")
    template = words[err.code]
    if err.code == "too_many_bytes":
        return template.format(size=f"{err.size / 2**20:.3g}", cap=f"{err.cap / 2**20:.3g}")
    return template.format(size=f"{err.size:,}", cap=f"{err.cap:,}", detail=err.detail)


SHOW_AFTER = 1.0  # seconds: a trace quicker than this shows no progress line at all


class ProgressLine:
    """One line in the running cell's output that a long trace keeps up to date (mpviz.model_bundle's `Progress`):
    the phase, the ops so far, the time spent and about how much is left. Plain text, updated in place through
    IPython's display handles; outside IPython (a script) it shows nothing."""

    def __init__(self, locale: str = locales.DEFAULT_LANGUAGE) -> None:
        self.words = locales.load(locale, "notebook")["progress"]
        self.handle = None
        self.last: Progress | None = None
        try:
            from IPython import get_ipython  # a dependency of anywidget's hosts; absent, there is no notebook

            self.live = get_ipython() is not None
        except ImportError:
            self.live = False

    def _line(self, key: str, p: Progress) -> str:
        left = f"{p.left:.0f}" if p.left is not None else "?"
        return self.words[key].format(ops=f"{p.ops:,}", elapsed=f"{p.elapsed:.1f}", left=left)

    def _show(self, text: str) -> None:
        from IPython.display import display

        if self.handle is None:
            self.handle = display({"text/plain": text}, raw=True, display_id=True)
        else:
            self.handle.update({"text/plain": text}, raw=True)

    def __call__(self, p: Progress) -> None:
        self.last = p
        if self.live and (self.handle is not None or p.elapsed >= SHOW_AFTER):
            self._show(self._line(p.phase, p))

    def close(self, interrupted: bool = False) -> None:
        """The last line: done, or interrupted (the state-restoring guarantees held); nothing if none was shown."""
        if self.handle is not None and self.last is not None:
            self._show(self._line("interrupted" if interrupted else "done", self.last))
