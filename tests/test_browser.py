"""One real-browser smoke test: `streamlit run app.py`, Debian's Chromium driven by Playwright.

In CI (CI=true) a missing Chromium is a failure, never a skip: .ci/run installs it.
"""

import os
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("chromium-headless-shell")
APP_IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


def _require_chromium() -> str:
    if CHROMIUM:
        return CHROMIUM
    if os.environ.get("CI"):
        pytest.fail("Chromium is missing in CI: .ci/run must `apt-get install -y chromium`")
    pytest.skip("no chromium on this machine (apt-get install -y chromium); CI runs this test for real")


def test_attention_page_in_a_real_browser(streamlit_server, tmp_path):
    server, _ = streamlit_server
    exe = _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=exe,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page(viewport={"width": 1600, "height": 1200})
        page.goto(f"{server}/?dtype=fp16")
        page.wait_for_selector(APP_IDLE, timeout=180_000)
        page.get_by_text("Attention, step by step").first.wait_for(timeout=60_000)
        heading = page.locator("h3").first.inner_text()
        page.get_by_role("button", name="Next ▶").click()
        page.wait_for_timeout(500)
        page.wait_for_selector(APP_IDLE, timeout=120_000)
        assert page.locator("h3").first.inner_text() != heading
        assert page.locator("[data-testid='stException']").count() == 0
        assert "step=1" in page.url  # the view lives in the URL
        shot = tmp_path / "attention.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        print(f"screenshot: {shot}")
        for slug in ("policy", "formats", "softmax", "scaler"):  # every page opens without an exception block
            page.goto(f"{server}/{slug}")
            page.wait_for_selector(APP_IDLE, timeout=180_000)
            page.wait_for_timeout(300)
            page.wait_for_selector(APP_IDLE, timeout=180_000)
            assert page.locator("[data-testid='stException']").count() == 0, slug
            page.screenshot(path=str(tmp_path / f"{slug}.png"), full_page=True)
        browser.close()
