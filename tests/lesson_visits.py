"""One page load per lesson and screen, shared by every browser test that judges that screen.

A lesson's page load costs seconds against the shared server (a minute for a cold scaler or claims run); reading
the loaded page costs milliseconds. So the modules that judge whole pages (tests/test_a11y_browser.py,
test_browser.py, test_layout_browser.py, test_looks_browser.py) each register, at import, what they read off a
loaded page (a probe, for the screens it applies to), and the first test that asks for a screen loads it once, in
a fresh browser context, and runs every registered probe on it; later tests read the results. (pytest-xdist runs
every test that uses the app's server on one worker, in order: the results stay in that process. A module run
alone registers only its own probes.)

Every load also records its failed requests and counts exception blocks and error-boundary messages.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mpviz.app.lessons import LESSONS
from tests.browser import settle

__all__ = ["EN_DESKTOP", "ZH_PROJECTOR", "Screen", "Seen", "probe", "visit"]

HOME = next(e.slug for e in LESSONS if e.home)  # the home lesson lives at "/"
EXCEPTION = "[data-testid='stException']"
BOUNDARY_ERROR = "[data-testid='stAlertContentError']:has-text('error id')"  # the app's error boundary
# Streamlit's frontend, opened on a page's own path, first looks for its server there (streamlit/streamlit#7074):
# these two requests fail on every page but the first, by Streamlit's design, before it finds the server at "/".
STREAMLIT_PROBES = ("_stcore/health", "_stcore/host-config")


@dataclass(frozen=True)
class Screen:
    """A lesson as one reader sees it: its words, presenter mode or not, the browser's viewport."""

    slug: str
    lang: str = "en"
    present: bool = False
    size: tuple[int, int] = (1440, 900)

    @property
    def id(self) -> str:
        w, h = self.size
        return f"{self.lang}-{'present' if self.present else 'normal'}-{w}x{h}-{self.slug}"

    @property
    def path(self) -> str:
        return "" if self.slug == HOME else self.slug

    def url(self, server: str) -> str:
        # ?recipes=1 adds the scaler's recipe comparison: every screen of that page judges it too
        query = (
            f"lang={self.lang}"
            + ("&present=1" if self.present else "")
            + ("&recipes=1" if self.slug == "scaler" else "")
        )
        return f"{server}/{self.path}?{query}"


EN_DESKTOP = [Screen(e.slug) for e in LESSONS]  # English, normal CSS, a desktop
ZH_PROJECTOR = [Screen(e.slug, "zh", True, (1024, 768)) for e in LESSONS]  # a projector in a Chinese class

Probe = Callable[[Any, Screen], Any]  # (Playwright page, screen) → what a test asserts on
_probes: dict[str, tuple[Probe, Callable[[Screen], bool]]] = {}
_seen: dict[Screen, "Seen | Exception"] = {}


def probe(name: str, when: Callable[[Screen], bool] = lambda screen: True) -> Callable[[Probe], Probe]:
    """Register `fn(page, screen)` under `name`, run on every loaded screen for which `when(screen)` holds."""

    def register(fn: Probe) -> Probe:
        _probes[name] = (fn, when)
        return fn

    return register


class Seen(dict):
    """A loaded screen's facts by name. A probe that raised is raised again by the test that reads it, and only
    there: another module's failing probe fails no test of this one."""

    def __getitem__(self, name: str) -> Any:
        value = super().__getitem__(name)
        if isinstance(value, Exception):
            raise value
        return value


def visit(browser, server: str, screen: Screen) -> Seen:
    """What `screen` showed: every registered probe's result by name, and `failed` (our requests that failed:
    (status, URL)), `exceptions` and `boundary_errors` (counts). Loaded once per process; a load that failed
    (the page never settled) fails every test that asks for it, without loading it again."""
    if screen not in _seen:
        try:
            _seen[screen] = _load(browser, server, screen)
        except Exception as e:
            _seen[screen] = e
    seen = _seen[screen]
    if isinstance(seen, Exception):
        raise seen
    return seen


def _load(browser, server: str, screen: Screen) -> Seen:
    context = browser.new_context(viewport=dict(zip(("width", "height"), screen.size, strict=True)))
    try:
        page = context.new_page()
        failed: list[tuple[int, str]] = []
        page.on("response", lambda r: r.status >= 400 and failed.append((r.status, r.url)))
        page.goto(screen.url(server))
        settle(page, present=screen.present)
        seen = Seen(exceptions=page.locator(EXCEPTION).count(), boundary_errors=page.locator(BOUNDARY_ERROR).count())
        for name, (fn, when) in _probes.items():
            if when(screen):
                try:
                    seen[name] = fn(page, screen)
                except Exception as e:  # Playwright's timeouts and errors: kept for the test that reads them
                    seen[name] = e
        probes = {f"{server}/{screen.path}/{p}" for p in STREAMLIT_PROBES}  # made before the app connects
        seen["failed"] = [(status, url) for status, url in failed if url not in probes]
        return seen
    finally:
        context.close()
