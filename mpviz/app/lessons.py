"""The registry of lessons: one entry per page of the app, read by app.py (navigation), the tests and the CLI.

A lesson's slug names everything that belongs to it: the page `mpviz/pages/<slug>.py`, its URL path `/<slug>`, and its
words `mpviz/locales/<lang>/<slug>.toml` (whose `title`/`nav` keys name it). Adding a lesson means adding its files and
one `Lesson` here; nothing else lists lessons.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path


@dataclass(frozen=True)
class Lesson:
    slug: str  # URL path, page file and locale file name
    icon: str  # a Material Symbols name, shown in the navigation
    commands: tuple[str, ...] = ()  # CLI subcommands (python -m mpviz …) that print this lesson's measurements
    # How the page uses the shared run config (the attention block, device, autocast dtype): "controls" shows the
    # sidebar's widgets, "summary" reads the run and shows it in one line, "none" does not use it at all.
    run_config: str = "controls"
    url_in_browser: bool = False  # a browser component keeps the view in the URL: the server cannot build the link
    home: bool = False  # the page at "/" (exactly one); navigation lists lessons in registry order all the same

    @property
    def page(self) -> Path:
        """The page's script, inside the installed package (Streamlit runs it by path)."""
        return _script(self.slug)


LESSONS: tuple[Lesson, ...] = (
    Lesson("tour", ":material/flag:", run_config="none"),  # "Start here": the guided lesson through the others
    Lesson("attention", ":material/footprint:", ("trace",), url_in_browser=True, home=True),
    Lesson("policy", ":material/rule:", ("policy",), run_config="summary"),
    Lesson("formats", ":material/memory:", ("bits",), run_config="summary"),
    Lesson("softmax", ":material/functions:", ("softmax",), run_config="summary"),
    Lesson("scaler", ":material/speed:", ("scaler", "recipes")),
    Lesson("fp8", ":material/compress:", ("fp8",), run_config="none"),  # below 16 bits: fp8, MXFP8, NVFP4 recipes
    Lesson("claims", ":material/fact_check:", ("claims",), run_config="none"),
    Lesson("glossary", ":material/menu_book:", run_config="none"),  # the terms the lessons use (glossary.toml)
)


@cache  # found once per process: every run of every page lists all the lessons' scripts (navigation)
def _script(slug: str) -> Path:
    return Path(str(files("mpviz.pages").joinpath(f"{slug}.py")))


def lesson(slug: str) -> Lesson:
    """The registered lesson with this slug (KeyError if there is none)."""
    for entry in LESSONS:
        if entry.slug == slug:
            return entry
    raise KeyError(slug)
