"""Accessibility in Chromium: axe-core on every page, in English and in Chinese in presenter mode.

The two screens of a page cover the three ways it is read: English words with the normal CSS at a desktop (expert
sections open), and Chinese words with the projector's CSS and colours at a projector's 1024×768 (presenter mode
folds expert sections away). Colour and contrast rules depend on the CSS, naming rules on the words; neither depends
on the other. Each screen is loaded once for every test that judges it (tests/lesson_visits.py).

axe-core comes bundled in the `axe-playwright-python` wheel (axe.min.js, MPL-2.0), injected with Playwright: no
CDN. Its experimental rules run too (label-content-name-mismatch among them: a control's visible text must be
part of its accessible name). A page passes with no critical and no serious finding; moderate and minor ones are
printed with the rest of the counts, not asserted.

The attention lesson's stepper (assets/components/stepper, a shadow root under `.st-key-stepper`) is judged by
its own, separately named test, so that a failure says whether the page or the stepper needs mending.
"""

from importlib.resources import files

import pytest

from tests import lesson_visits
from tests.lesson_visits import EN_DESKTOP, ZH_PROJECTOR, Screen

pytestmark = pytest.mark.browser

AXE_JS = (files("axe_playwright_python") / "axe.min.js").read_text(encoding="utf-8")
BLOCKING = ("critical", "serious")
STEPPER = ".st-key-stepper"
STEPPER_READY = """() => { const h = document.querySelector('.st-key-stepper [data-testid=stBidiComponentIsolated]');
  const app = h && h.shadowRoot && h.shadowRoot.querySelector('[data-role=app]');
  return !!app && app.dataset.event !== undefined; }"""
# No finite animation or transition still running: a rerun fades its elements back in from stale, and axe would
# judge a caption's contrast half-way through the fade.
SETTLED = """() => document.getAnimations().every((a) => a.playState !== 'running'
  || a.effect.getComputedTiming().endTime === Infinity)"""
# Every rule, experimental ones included; each finding tagged with whether it lies inside the stepper (a node in
# a shadow root is targeted as [[host, inner]]: its host says where it is).
AXE_RUN = """async (stepper) => {
  const rules = Object.fromEntries(axe.getRules(['experimental']).map((r) => [r.ruleId, {enabled: true}]));
  const result = await axe.run(document, {resultTypes: ['violations'], rules});
  return result.violations.flatMap((v) => v.nodes.map((n) => {
    const first = Array.isArray(n.target[0]) ? n.target[0][0] : n.target[0];
    const el = document.querySelector(first);
    return {rule: v.id, impact: n.impact || v.impact, target: JSON.stringify(n.target),
            stepper: !!(el && el.closest(stepper)), why: (n.failureSummary || '').replace(/\\s+/g, ' ')};
  }));
}"""
SCREENS = EN_DESKTOP + ZH_PROJECTOR


@lesson_visits.probe("axe", when=lambda screen: screen in SCREENS)
def _axe(page, screen: Screen) -> list[dict]:
    """axe's findings on a loaded page once the stepper (where there is one) has drawn and nothing animates."""
    if page.locator(STEPPER).count():
        page.wait_for_function(STEPPER_READY, timeout=120_000)
    page.wait_for_function(SETTLED, timeout=60_000)
    page.evaluate(AXE_JS)
    return page.evaluate(AXE_RUN, STEPPER)


def _findings(browser, server: str, screen: Screen) -> list[dict]:
    return lesson_visits.visit(browser, server, screen)["axe"]


def _counts(findings: list[dict]) -> str:
    impacts = ("critical", "serious", "moderate", "minor")
    return " ".join(f"{i} {sum(f['impact'] == i for f in findings)}" for i in impacts)


def _blocking(findings: list[dict]) -> list[str]:
    return [f"{f['rule']} ({f['impact']}) {f['target']}: {f['why']}" for f in findings if f["impact"] in BLOCKING]


@pytest.mark.parametrize("screen", SCREENS, ids=lambda screen: screen.id)
def test_no_critical_or_serious_axe_finding_outside_the_stepper(browser, streamlit_server, screen, printout):
    server, _ = streamlit_server
    findings = [f for f in _findings(browser, server, screen) if not f["stepper"]]
    printout(f"{screen.id} outside the stepper: {_counts(findings)}")
    problems = _blocking(findings)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("screen", [s for s in SCREENS if s.slug == "attention"], ids=lambda screen: screen.id)
def test_no_critical_or_serious_axe_finding_in_the_stepper(browser, streamlit_server, screen, printout):
    server, _ = streamlit_server
    findings = [f for f in _findings(browser, server, screen) if f["stepper"]]
    printout(f"{screen.id} in the stepper: {_counts(findings)}")
    problems = _blocking(findings)
    assert problems == [], "\n".join(problems)
