"""One real-browser smoke test: `streamlit run app.py`, Debian's Chromium driven by Playwright.

In CI (CI=true) a missing Chromium is a failure, never a skip: .ci/run installs it.
"""

import os
import shutil
from pathlib import Path

import pytest

from mpviz.lessons import LESSONS

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("chromium-headless-shell")
APP_IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
HAS_HEATMAP = (
    "() => [...document.querySelectorAll('.js-plotly-plot')].some(p => p.data?.some(d => d.type === 'heatmap'))"
)
CELL_CENTRE = """([col, row]) => {  // page coordinates of a heatmap cell's centre, from plotly's own axes
    const p = [...document.querySelectorAll('.js-plotly-plot')].find(p => p.data?.some(d => d.type === 'heatmap'));
    const L = p._fullLayout, r = p.getBoundingClientRect();
    return [r.left + L._size.l + L.xaxis.l2p(col), r.top + L._size.t + L.yaxis.l2p(row)];
}"""


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
        page = browser.new_page(viewport={"width": 1600, "height": 2600})  # tall: no scrolling to the heatmap
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
        # click a heatmap cell (the invisible-scatter trick): the picker jumps to that element of probs
        page.wait_for_function(HAS_HEATMAP, timeout=60_000)
        x, y = page.evaluate(CELL_CENTRE, [3, 7])
        page.mouse.move(x, y)
        page.mouse.click(x, y)
        page.wait_for_timeout(800)
        page.wait_for_selector(APP_IDLE, timeout=120_000)
        page.wait_for_url("**er=7**", timeout=60_000)
        assert "ec=3" in page.url and "_softmax" in page.locator("h3").first.inner_text()
        shot = tmp_path / "attention.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        print(f"screenshot: {shot}")
        for slug in (entry.slug for entry in LESSONS if entry.slug != "attention"):  # each opens without an exception
            page.goto(f"{server}/{slug}")
            page.wait_for_selector(APP_IDLE, timeout=180_000)
            page.wait_for_timeout(300)
            page.wait_for_selector(APP_IDLE, timeout=180_000)
            assert page.locator("[data-testid='stException']").count() == 0, slug
            page.screenshot(path=str(tmp_path / f"{slug}.png"), full_page=True)
        browser.close()
