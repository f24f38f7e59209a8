"""The stepper in a notebook (Jupyter, VS Code, marimo): an anywidget that mounts the same built stepper.

`stepper_widget(bundle, locale)` returns a `StepperWidget` whose module is assets/components/stepper/notebook.js,
the notebook's host adapter, and whose traits carry the built stepper (dist/stepper.js, the one copy of its code),
its CSS and markup, and the payload the app's component receives (view.stepper_payload, with meta.embedded set).
The browser imports the stepper once and steps through the bundle without asking the kernel anything: the widget
syncs nothing back. `mpviz.show` (mpviz/notebook.py) traces a model and calls this. No Streamlit here.
"""

from __future__ import annotations

import hashlib
import json

import anywidget
import traitlets

from mpviz.bundle import LessonBundle
from mpviz.model_bundle import ModelBundleError
from view import locales
from view.figures.style import DTYPE_COLORS
from view.stepper_payload import BUILT_JS, asset, stepper_payload, stepper_text


class StepperWidget(anywidget.AnyWidget):
    """One model's stepper in a notebook output. `payload` is the JSON bytes the stepper reads (see the module
    docstring); the other traits are the stepper's own files, the same for every widget."""

    _esm = asset("notebook.js")
    _stepper_js = traitlets.Unicode(BUILT_JS.read_text(encoding="utf-8")).tag(sync=True)
    _stepper_css = traitlets.Unicode(asset("stepper.css")).tag(sync=True)
    _stepper_html = traitlets.Unicode(asset("stepper.html")).tag(sync=True)
    payload = traitlets.Bytes(b"").tag(sync=True)

    @property
    def bundle(self) -> dict:
        """The bundle this widget shows, parsed from its payload (for checks: the browser reads the bytes)."""
        return json.loads(self.payload)["bundle"]


def require_locale(locale: str) -> None:
    """ValueError unless the stepper has words in `locale` (one of locales.LANGUAGES): checked before a trace."""
    if locale not in locales.LANGUAGES:
        raise ValueError(f"no words in {locale!r} ({' | '.join(locales.LANGUAGES)})")


def stepper_widget(bundle: LessonBundle, locale: str = locales.DEFAULT_LANGUAGE) -> StepperWidget:
    """A widget showing `bundle` with the stepper's words in `locale` (one of locales.LANGUAGES)."""
    require_locale(locale)
    data = bundle.to_json().encode()
    # the stepper's saved place (sessionStorage) belongs to this bundle: a re-run cell with the same model keeps it
    key = "notebook-" + hashlib.sha1(data, usedforsecurity=False).hexdigest()[:12]
    payload = stepper_payload(data, stepper_text(locale), DTYPE_COLORS, key=key, locale=locale, embedded=True)
    return StepperWidget(payload=payload)


def error_text(err: ModelBundleError, locale: str = locales.DEFAULT_LANGUAGE) -> str:
    """What a notebook says when mpviz.model_bundle cannot bundle a model (its caps, a model with nothing to
    run backward from), in `locale`'s words."""
    template = locales.load(locale, "notebook")[err.code]
    if err.code == "too_many_bytes":
        return template.format(size=f"{err.size / 2**20:.3g}", cap=f"{err.cap / 2**20:.3g}")
    return template.format(size=f"{err.size:,}", cap=f"{err.cap:,}")
