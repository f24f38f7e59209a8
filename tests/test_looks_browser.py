"""What a look at the page in Chromium would catch, measured from the DOM: the sidebar's dtype choices on one row
with every border drawn, the attention heatmap's axis names read left to right at body size, and no failed request
of ours on any lesson page. Each is read off the screens the other browser tests judge, loaded once
(tests/lesson_visits.py); the Chinese sidebar and heatmap off one more (the attention lesson in Chinese, not
presented).
"""

import itertools

import pytest

from tests import lesson_visits
from tests.lesson_visits import EN_DESKTOP, Screen
from tests.test_stepper import STATE

pytestmark = pytest.mark.browser

ATTENTION = {lang: Screen("attention", lang) for lang in ("en", "zh")}  # en: one of EN_DESKTOP
DTYPE_BUTTONS = """() => [...document.querySelectorAll('.st-key-dtype button[data-variant=segmented_control]')]
  .map((b) => { const r = b.getBoundingClientRect(), s = getComputedStyle(b);
    return {text: b.textContent, top: Math.round(r.top), left: r.left, right: r.right,
            borders: [s.borderLeftWidth, s.borderRightWidth].map(parseFloat)}; })"""
HEAT_AXES = """() => [...document.querySelector('.st-key-stepper [data-testid=stBidiComponentIsolated]').shadowRoot
  .querySelectorAll('.mpv-axis-y, .mpv-axis-x')].map((e) => { const r = e.getBoundingClientRect(),
    s = getComputedStyle(e); return {text: e.textContent, width: r.width, height: r.height,
    px: parseFloat(s.fontSize), writing: s.writingMode, transform: s.transform}; })"""


@lesson_visits.probe("dtype_buttons", when=lambda screen: screen in ATTENTION.values())
def _dtype_buttons(page, screen) -> list[dict]:
    page.wait_for_function(f"({DTYPE_BUTTONS})().length === 3", timeout=60_000)
    return page.evaluate(DTYPE_BUTTONS)


@lesson_visits.probe("heat_axes", when=lambda screen: screen in ATTENTION.values())
def _heat_axes(page, screen) -> dict:
    page.wait_for_function(f"({STATE})() !== null", timeout=120_000)
    return {
        "axes": page.evaluate(HEAT_AXES),
        "body": page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)"),
    }


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_sidebar_dtype_choices_sit_on_one_row_with_their_borders(browser, streamlit_server, lang):
    server, _ = streamlit_server
    buttons = lesson_visits.visit(browser, server, ATTENTION[lang])["dtype_buttons"]
    assert len({b["top"] for b in buttons}) == 1, buttons
    for left, right in itertools.pairwise(buttons):
        assert right["left"] >= left["right"], (left, right)  # side by side, neither drawn over the other
    assert all(b["borders"] == [1, 1] for b in buttons), buttons


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_heatmap_axis_names_read_left_to_right(browser, streamlit_server, lang):
    server, _ = streamlit_server
    seen = lesson_visits.visit(browser, server, ATTENTION[lang])["heat_axes"]
    axes, body = seen["axes"], seen["body"]
    assert len(axes) == 2, axes
    for axis in axes:
        assert axis["writing"] == "horizontal-tb" and axis["transform"] == "none", axis
        assert axis["width"] > axis["height"], axis
        assert axis["px"] >= 0.85 * body, (axis, body)


def test_no_request_of_ours_fails_on_any_lesson_page(browser, streamlit_server):
    """Every request a lesson's page load makes answers (Streamlit's two probes of a page's own path excepted: see
    tests/lesson_visits.py)."""
    server, _ = streamlit_server
    ours = [(s.slug, *failed) for s in EN_DESKTOP for failed in lesson_visits.visit(browser, server, s)["failed"]]
    assert ours == [], ours
