"""The keyboard and the Back button in Chromium: ←/→ keep stepping the attention lesson after the sidebar changed
the run or the view was clicked, a flipped bit on the formats page keeps the keyboard, and one Back leaves the
attention lesson's view.

Each test waits on what the page shows (the stepper's place, where focus is, the URL), never on a fixed time.
"""

import json

import pytest

from tests.browser import APP_IDLE, settle
from tests.test_stepper import STATE

pytestmark = pytest.mark.browser

STEPPER = ".st-key-stepper [data-testid=stBidiComponentIsolated]"
KEYS_IN_STEPPER = f"() => document.activeElement === document.querySelector('{STEPPER}')"
CHECKED_VIEW = f"""() => document.querySelector('{STEPPER}').shadowRoot
  .querySelector('[data-view][aria-checked=true]').dataset.view"""


def _open_attention(browser, server, query=""):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(f"{server}/{query}")
    page.wait_for_selector(APP_IDLE, timeout=300_000)
    page.wait_for_function(f"({STATE})() !== null", timeout=120_000)
    return context, page


def _step_right(page) -> int:
    before = page.evaluate(STATE)["step"]
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"({STATE})().step === {before + 1}", timeout=30_000)
    return before + 1


def test_arrows_step_after_a_sidebar_change_and_after_clicking_a_view(browser, streamlit_server):
    """A click on the sidebar's dtype, or Enter in its seed field, brings a new run and leaves ←/→ with the
    stepper (not on the sidebar's radio group or in the field); after a click on "Every ATen op", → steps in it."""
    server, _ = streamlit_server
    context, page = _open_attention(browser, server)
    sidebar = page.locator("[data-testid=stSidebar]")

    sidebar.get_by_role("radio", name="float16", exact=True).click()
    page.wait_for_function(KEYS_IN_STEPPER, timeout=300_000)  # the new run arrived and took the keyboard back
    _step_right(page)
    assert "dtype=fp16" in page.url  # → stepped the lesson, not the sidebar's choice

    sidebar.get_by_text("The block:").click()  # the block's knobs are folded (their values in its title)
    seed = sidebar.get_by_label("Seed")
    seed.fill("3")
    seed.press("Enter")
    page.wait_for_function(KEYS_IN_STEPPER, timeout=300_000)
    _step_right(page)
    assert "seed=3" in page.url

    page.locator(f"{STEPPER} [data-view=full]").click()
    page.wait_for_function(f"({CHECKED_VIEW})() === 'full'", timeout=30_000)
    now = page.evaluate(STATE)["step"]
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"({STATE})().step === {now + 1}", timeout=30_000)
    assert page.evaluate(CHECKED_VIEW) == "full", "→ switched the view back instead of stepping"
    context.close()


def test_one_back_leaves_the_attention_lesson(browser, streamlit_server):
    """From another page, Back returns to the attention lesson's view, and one more Back leaves it: Streamlit's
    push of the lesson's URL without the stepper's keys adds no second entry for the same view."""
    server, _ = streamlit_server
    context, page = _open_attention(browser, server, "?dtype=fp16")
    _step_right(page)
    # The stepper writes its place into the URL a moment after the step (urlsync.js coalesces held keys)
    page.wait_for_function("location.search.includes('step=1')", timeout=30_000)
    page.locator("[data-testid=stSidebarNav] a", has_text="Autocast policy").click()
    page.wait_for_url("**/policy**", timeout=60_000)
    page.wait_for_selector(APP_IDLE, timeout=300_000)
    page.go_back()
    page.wait_for_function("location.pathname === '/' && location.search.includes('step=1')", timeout=60_000)
    page.go_back()
    page.wait_for_url("about:blank", timeout=60_000)
    context.close()


FLIPPER = ".st-key-bits [data-testid=stBidiComponentIsolated]"  # mpviz/app/bit_flipper.py's one component
FOCUSED_BIT = f"""() => {{ const b = document.querySelector('{FLIPPER}')?.shadowRoot?.activeElement;
  if (!b || !b.matches('button.bit')) return null;
  return {{short: b.dataset.short, position: b.dataset.position, pressed: b.getAttribute('aria-pressed')}}; }}"""


def test_a_flipped_bit_keeps_the_keyboard(browser, streamlit_server):
    """Flipping a bit of the formats page reruns it and draws the new patterns: focus stays on the same bit, now
    showing its new state, so the next key flips on from there. Enter, then Space, then a click, one after another
    on one page: each flip starts from where the last one left the keyboard."""
    server, _ = streamlit_server
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(f"{server}/formats")
    settle(page)
    bit = page.locator(f"{FLIPPER} button.bit[data-short=fp16][data-position='12']")  # an exponent bit
    bit.focus()
    for how in ("Enter", "Space", "click"):
        typed = page.locator(".st-key-value input").input_value()
        before = page.evaluate(FOCUSED_BIT)
        assert before is not None, how
        if how == "click":
            bit.click()
        else:
            page.keyboard.press(how)
        page.wait_for_function(f"document.querySelector('.st-key-value input').value !== {json.dumps(typed)}")
        settle(page)  # the rerun the flip caused has drawn the bits again
        after = {**before, "pressed": "false" if before["pressed"] == "true" else "true"}
        want = json.dumps(json.dumps(after, separators=(",", ":")))  # JSON.stringify's spelling, as a JS string
        page.wait_for_function(f"JSON.stringify(({FOCUSED_BIT})()) === {want}")
    context.close()
