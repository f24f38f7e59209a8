"""Every lesson in a real browser: `streamlit run app.py`, Debian's Chromium driven by Playwright.

Each page opens without an exception block or a section lost to the error boundary. (The attention lesson's
in-browser journey is tests/test_stepper.py.) In CI (CI=true) a missing Chromium is a failure, never a skip.
"""

import pytest

from mpviz.app.lessons import LESSONS
from tests.browser import APP_IDLE

pytestmark = pytest.mark.browser
BOUNDARY_ERROR = "[data-testid='stAlertContentError']:has-text('error id')"


def test_every_lesson_opens_in_a_real_browser(browser, streamlit_server, tmp_path, printout):
    server, log = streamlit_server
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    for entry in LESSONS:
        page.goto(f"{server}/{entry.slug}")
        page.wait_for_selector(APP_IDLE, timeout=180_000)
        page.wait_for_timeout(300)
        page.wait_for_selector(APP_IDLE, timeout=180_000)
        assert page.locator("[data-testid='stException']").count() == 0, entry.slug
        assert page.locator(BOUNDARY_ERROR).count() == 0, (entry.slug, log.read_text()[-3000:])
        page.screenshot(path=str(tmp_path / f"{entry.slug}.png"), full_page=True)
    printout(f"screenshots: {tmp_path}")
    page.close()
