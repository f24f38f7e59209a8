"""The one way page tests open the app: AppTest of app.py, switched to a page, with URL parameters set."""

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")
BOUNDARY = re.compile(r"error id `[0-9a-f]{8}`")  # mpviz.app.page.guarded's message (common.toml section_failed)


def page_app(page: str, timeout: float = 240, opened: tuple[str, ...] = (), **params: str) -> AppTest:
    """app.py switched to `page` ("mpviz/pages/x.py") with `params` as ?key=value and the reference sections
    `opened` (their keys: mpviz.app.page.reference) open; not run yet (call .run())."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for key, value in params.items():
        at.query_params[key] = value
    for key in opened:
        at.session_state[key] = True
    return at.switch_page(page)


def failures(at: AppTest) -> list[str]:
    """Uncaught exceptions and sections the page's error boundary caught: a passing page has none."""
    return [e.value for e in at.exception] + [e.value for e in at.error if BOUNDARY.search(e.value)]
