"""What a look at the page in Chromium would catch, measured from the DOM: the sidebar's dtype choices on one row
with every border drawn, the attention heatmap's axis names read left to right at body size, and no failed request
of ours on any lesson page.
"""

import itertools

import pytest

from mpviz.app.lessons import LESSONS
from tests.browser import APP_IDLE
from tests.test_stepper import STATE

pytestmark = pytest.mark.browser

DTYPE_BUTTONS = """() => [...document.querySelectorAll('.st-key-dtype button[data-variant=segmented_control]')]
  .map((b) => { const r = b.getBoundingClientRect(), s = getComputedStyle(b);
    return {text: b.textContent, top: Math.round(r.top), left: r.left, right: r.right,
            borders: [s.borderLeftWidth, s.borderRightWidth].map(parseFloat)}; })"""
HEAT_AXES = """() => [...document.querySelector('.st-key-stepper [data-testid=stBidiComponentIsolated]').shadowRoot
  .querySelectorAll('.mpv-axis-y, .mpv-axis-x')].map((e) => { const r = e.getBoundingClientRect(),
    s = getComputedStyle(e); return {text: e.textContent, width: r.width, height: r.height,
    px: parseFloat(s.fontSize), writing: s.writingMode, transform: s.transform}; })"""
# Streamlit's frontend, opened on a page's own path, first looks for its server there (streamlit/streamlit#7074):
# these two requests fail on every page but the first, by Streamlit's design, before it finds the server at "/".
STREAMLIT_PROBES = ("_stcore/health", "_stcore/host-config")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_sidebar_dtype_choices_sit_on_one_row_with_their_borders(browser, streamlit_server, lang):
    server, _ = streamlit_server
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(f"{server}/?lang={lang}")
    page.wait_for_selector(APP_IDLE, timeout=300_000)
    page.wait_for_function(f"({DTYPE_BUTTONS})().length === 3", timeout=60_000)
    buttons = page.evaluate(DTYPE_BUTTONS)
    context.close()
    assert len({b["top"] for b in buttons}) == 1, buttons
    for left, right in itertools.pairwise(buttons):
        assert right["left"] >= left["right"], (left, right)  # side by side, neither drawn over the other
    assert all(b["borders"] == [1, 1] for b in buttons), buttons


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_heatmap_axis_names_read_left_to_right(browser, streamlit_server, lang):
    server, _ = streamlit_server
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(f"{server}/?lang={lang}")
    page.wait_for_selector(APP_IDLE, timeout=300_000)
    page.wait_for_function(f"({STATE})() !== null", timeout=120_000)
    axes = page.evaluate(HEAT_AXES)
    body = page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
    context.close()
    assert len(axes) == 2, axes
    for axis in axes:
        assert axis["writing"] == "horizontal-tb" and axis["transform"] == "none", axis
        assert axis["width"] > axis["height"], axis
        assert axis["px"] >= 0.85 * body, (axis, body)


def test_no_request_of_ours_fails_on_any_lesson_page(browser, streamlit_server):
    server, _ = streamlit_server
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    failed = []
    page.on("response", lambda r: r.status >= 400 and failed.append((r.status, r.url)))
    ours = []
    for entry in LESSONS:
        failed.clear()
        page.goto(f"{server}/{entry.slug}")
        page.wait_for_selector(APP_IDLE, timeout=300_000)
        probes = {f"{server}/{entry.slug}/{p}" for p in STREAMLIT_PROBES}  # made before the app connects
        ours += [(entry.slug, status, url) for status, url in failed if url not in probes]
    context.close()
    assert ours == [], ours
