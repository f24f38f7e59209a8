"""Every lesson in a real browser: `streamlit run app.py`, Debian's Chromium driven by Playwright.

Each page opens without an exception block or a section lost to the error boundary, and a full-page screenshot is
kept for a person to look at. (The attention lesson's in-browser journey is tests/test_stepper.py.) The pages are
the English desktop screens the accessibility and layout tests judge too, loaded once (tests/lesson_visits.py). In
CI (CI=true) a missing Chromium is a failure, never a skip.
"""

import pytest

from tests import lesson_visits
from tests.lesson_visits import EN_DESKTOP

pytestmark = pytest.mark.browser


@lesson_visits.probe("screenshot", when=lambda screen: screen in EN_DESKTOP)
def _screenshot(page, screen) -> bytes:
    return page.screenshot(full_page=True)


def test_every_lesson_opens_in_a_real_browser(browser, streamlit_server, tmp_path, printout):
    server, log = streamlit_server
    for screen in EN_DESKTOP:
        seen = lesson_visits.visit(browser, server, screen)
        assert seen["exceptions"] == 0, screen.slug
        assert seen["boundary_errors"] == 0, (screen.slug, log.read_text()[-3000:])
        (tmp_path / f"{screen.slug}.png").write_bytes(seen["screenshot"])
    printout(f"screenshots: {tmp_path}")
