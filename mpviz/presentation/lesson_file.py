"""The offline lesson file: the attention stepper, one lesson bundle and the words of every language in one HTML file.

`lesson_html(bundle, lang)` fills assets/components/stepper/export.html. The file works from file:// with no server
and no network (a classroom without reliable internet, an LMS page, static hosting at zero server cost): the
stepper's built module, its CSS and markup, the payload the app's component receives
(mpviz.presentation.stepper_payload: the same JSON) and each language's words are inside it, and its
Content-Security-Policy lets the browser fetch nothing. `python -m mpviz export` writes it (mpviz/cli/export.py). No
Streamlit here.

What goes into the page is escaped for where it goes: words as HTML text, JSON inside `<script type="application/
json">` with every "<" written as the JSON escape \\u003c, so no "</script>" or "<!--" in a string can end or
bend the element (JSON has "<" only inside strings, so the replacement keeps the text valid JSON, meaning the same).
"""

from __future__ import annotations

import html
import json
import re

from mpviz.bundle import LessonBundle
from mpviz.presentation import locales
from mpviz.presentation.palette import DTYPE_COLORS
from mpviz.presentation.stepper_payload import BUILT_JS, asset, stepper_payload, stepper_text

KEY = "lesson"  # the stepper's key: its place in the browser's sessionStorage is "mpviz.stepper.lesson"
# the template's slots: <!-- @name --> where text or elements go, ="@name" in an attribute
_SLOT = re.compile(r'<!-- @(\w+) -->|(?<==)"@(\w+)"')


def script_json(data: str | bytes) -> str:
    """JSON text made safe as the content of a <script> element (see the module docstring); parses to the same."""
    text = data.decode() if isinstance(data, bytes) else data
    return text.replace("<", "\\u003c")


def _json_script(element_id: str, data: str | bytes) -> str:
    return f'<script type="application/json" id="{element_id}">{script_json(data)}</script>'


def page_words(bundle: LessonBundle, lang: str) -> dict[str, str]:
    """The page's words around the stepper in `lang`, filled in for this run (the host script swaps them)."""
    lesson, common, words = (locales.load(lang, s) for s in ("attention", "common", "lesson_file"))
    run = bundle.data["run"]
    cfg = run["config"]
    dtype = run["autocast_dtype"] or common["dtype_labels"]["off"]
    return {
        "title": lesson["title"],
        "intro": lesson["intro"],
        "run": words["run"].format(
            device=common["device_labels"].get(run["device"], run["device"]),
            dtype=dtype,
            seq=cfg["seq_len"],
            dim=cfg["d_model"],
            heads=cfg["n_heads"],
            seed=cfg["seed"],
        ),
        "offline": words["offline"],
        "language": common["language"],
    }


def lesson_html(bundle: LessonBundle, lang: str = locales.DEFAULT_LANGUAGE) -> str:
    """The whole lesson file for `bundle`, opening in `lang` (one of locales.LANGUAGES; `?lang=` overrides it)."""
    if lang not in locales.LANGUAGES:
        raise ValueError(f"no words in {lang!r} ({' | '.join(locales.LANGUAGES)})")
    css = asset("stepper.css")
    if "</" in css:  # inside <style> it would end the element; the stepper's own CSS never needs it
        raise ValueError("the stepper's CSS contains '</'")
    payload = stepper_payload(bundle.to_json(), stepper_text(lang), DTYPE_COLORS, key=KEY, locale=lang)
    words = {code: {"page": page_words(bundle, code), "stepper": stepper_text(code)} for code in locales.LANGUAGES}
    page = words[lang]["page"]
    buttons = "".join(
        f'<button type="button" data-lang="{code}" lang="{code}" aria-pressed="{str(code == lang).lower()}">'
        f"{html.escape(locales.load(code, 'lesson_file')['language_name'])}</button>"
        for code in locales.LANGUAGES
    )
    slots = {
        "lang": lang,
        "languages": buttons,
        "stepper": f'<template shadowrootmode="open"><style>{css}</style>{asset("stepper.html")}</template>',
        "data": "".join(
            (
                _json_script("mpv-payload", payload),
                _json_script("mpv-words", json.dumps(words, ensure_ascii=False, separators=(",", ":"))),
                _json_script("mpv-module", json.dumps(BUILT_JS.read_text(encoding="utf-8"), ensure_ascii=False)),
            )
        ),
        **{name: html.escape(text) for name, text in page.items()},
    }
    # one pass, so nothing filled in is read again for slots
    return _SLOT.sub(lambda m: slots[m[1]] if m[1] else f'"{slots[m[2]]}"', asset("export.html"))
