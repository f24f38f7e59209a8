"""Layout in Chromium: no overprinted, cut-off or sideways-scrolling text (every page in zh, presenter mode,
1024×768; the figure pages in English at a desktop, a laptop and a phone viewport).

What a look at a screenshot would catch, measured from the DOM on one page load per page and viewport (shared with
the other tests that judge the same screen: tests/lesson_visits.py): every
piece of text a plotly figure drew, as the quad it covers on screen (rotated tick labels included), must not meet
another (tick labels on one axis, annotations, legend entries, titles; labels inside one trace are placed by its
geometry and left out), nor run past the figure's edge. Segmented controls must not hide an option behind a
sideways scroll, nor the page scroll sideways. (Tables are drawn on a canvas whose scroll width does not say
whether it is cut: wide ones fold into expanders in presenter mode, checked on screenshots.)
"""

import pytest

from tests import lesson_visits
from tests.browser import APP_IDLE, QUIET, ROOM_BANNER, wait_until_still
from tests.lesson_visits import ZH_PROJECTOR, Screen

pytestmark = pytest.mark.browser

TEXT_PROBLEMS = """() => {
  const out = [];
  const quad = (e) => { const b = e.getBBox(), m = e.getScreenCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]); };
  const apart = (p, q, pad) => {  // separating axis theorem on two convex quads, each shrunk by `pad` px
    for (const poly of [p, q]) for (let i = 0; i < 4; i++) {
      const [x1, y1] = poly[i], [x2, y2] = poly[(i + 1) % 4], len = Math.hypot(x2 - x1, y2 - y1) || 1;
      const nx = (y1 - y2) / len, ny = (x2 - x1) / len;
      const a = p.map(([x, y]) => x * nx + y * ny), b = q.map(([x, y]) => x * nx + y * ny);
      if (Math.max(...a) - pad <= Math.min(...b) || Math.max(...b) - pad <= Math.min(...a)) return true;
    }
    return false;
  };
  const shown = (e) => { if (!e.textContent.trim()) return false; const r = e.getBoundingClientRect();
    if (!r.width || !r.height) return false;
    for (let n = e; n && n.tagName !== 'svg'; n = n.parentElement) { const s = getComputedStyle(n);
      if (s.display === 'none' || s.visibility === 'hidden' || +s.opacity === 0) return false; }
    return true; };
  const isTick = (e) => { for (let n = e.parentElement; n && n.tagName !== 'svg'; n = n.parentElement)
    if (/(^| )[xy]\\d*tick( |$)/.test(n.getAttribute('class') || '')) return true; return false; };
  const kind = (e) => isTick(e) ? 'tick' : e.closest('.legend') ? 'legend' : e.closest('.annotation') ? 'annotation'
    : e.closest('.textpoint') ? 'trace' : 'title';
  document.querySelectorAll('.js-plotly-plot').forEach((plot, i) => {
    const frame = plot.getBoundingClientRect();
    const name = `figure ${i + 1} ${(plot.querySelector('.gtitle') || {}).textContent || ''}`.trim();
    const texts = [...plot.querySelectorAll('svg text')].filter(shown), quads = texts.map(quad);
    texts.forEach((e, k) => { const xs = quads[k].map((c) => c[0]), ys = quads[k].map((c) => c[1]);
      if (Math.min(...xs) < frame.left - 1 || Math.max(...xs) > frame.right + 1 ||
          Math.min(...ys) < frame.top - 1 || Math.max(...ys) > frame.bottom + 1)
        out.push(`${name}: "${e.textContent}" (${kind(e)}) is cut by the figure's edge`); });
    for (let a = 0; a < texts.length; a++) for (let b = a + 1; b < texts.length; b++) {
      const [ea, eb] = [texts[a], texts[b]];
      if ((kind(ea) === 'trace' && kind(eb) === 'trace') || ea.contains(eb) || eb.contains(ea)) continue;
      if (!apart(quads[a], quads[b], 1))
        out.push(`${name}: "${ea.textContent}" (${kind(ea)}) overprints "${eb.textContent}" (${kind(eb)})`);
    }
  });
  const controls = '[data-testid=stMain] [data-testid=stButtonGroup] > div:has(> button), ' +
    '[data-testid=stSidebar][aria-expanded=true] [data-testid=stButtonGroup] > div:has(> button)';
  document.querySelectorAll(controls).forEach((g) => {
    if (g.scrollWidth > g.clientWidth + 1) out.push(`"${g.getAttribute('aria-label')}" scrolls sideways`); });
  const main = document.querySelector('[data-testid=stMain]');
  if (main.scrollWidth > main.clientWidth + 1) out.push(`the page scrolls sideways: ${main.scrollWidth} px`);
  return out;
}"""

FIGURES = ("scaler", "softmax", "formats", "policy")
# a projector in a Chinese class; the figure pages in English at a desktop (the screens every test judges), a laptop
# and a phone
SCREENS = ZH_PROJECTOR + [
    Screen(slug, size=size) for size in ((1440, 900), (1024, 768), (390, 844)) for slug in FIGURES
]
lesson_visits.probe("text_problems", when=lambda screen: screen in SCREENS)(
    lambda page, screen: page.evaluate(TEXT_PROBLEMS)
)


@pytest.mark.parametrize("screen", SCREENS, ids=lambda screen: screen.id)
def test_no_text_overprinted_cut_off_or_scrolled_away(browser, streamlit_server, screen):
    server, _ = streamlit_server
    problems = lesson_visits.visit(browser, server, screen)["text_problems"]
    assert problems == [], "\n".join(problems)


STEPPER_BOXES = """() => {
  const r = document.querySelector('.st-key-stepper [data-testid=stBidiComponentIsolated]').shadowRoot;
  const box = (el) => { const b = el.getBoundingClientRect(), k = ['top', 'bottom', 'left', 'right'];
    return Object.fromEntries(k.map((side) => [side, Math.round(b[side])])); };
  const node = r.querySelector('.mpv-node[aria-current]');
  const svg = node.ownerSVGElement;  // its name's size on screen: the type's size times the drawing's scale
  const px = parseFloat(getComputedStyle(node.querySelector('text')).fontSize)
    * svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return {graph: box(r.querySelector('[data-role=graph]')), card: box(r.querySelector('[data-role=card]')),
          node: {...box(node), id: node.dataset.node, px: Math.round(px * 10) / 10},
          height: document.querySelector('[data-testid=stMain]').scrollHeight}; }"""


CARD_END_IN_VIEW = """() => document.querySelector('.st-key-stepper [data-testid=stBidiComponentIsolated]')
  .shadowRoot.querySelector('[data-role=card]').scrollIntoView({block: 'end'})"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_projector_shows_the_graph_and_the_step_card_without_scrolling(browser, streamlit_server, printout, lang):
    """Issue 16 item 5: at 1024×768 in presenter mode the first screen holds the graph and the current step's card,
    the current node inside the graph's visible part, its name at presenter size (not shrunk to fit). Stepping into
    the backward pass scrolls the graph in its own column, never the page; a card taller than what is left of the
    first screen (the later ones, up to ~550 px) starts on it, and scrolled to its end the graph stays in view."""
    from tests.test_stepper import STATE

    server, _ = streamlit_server
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    page.goto(f"{server}/?present=1&lang={lang}")
    page.wait_for_selector(APP_IDLE, timeout=300_000)
    # The room's banner replaces "opening a room…" once the browser has said its presenter key: the first screen
    page.wait_for_selector(ROOM_BANNER, timeout=60_000)
    page.wait_for_function(f"({STATE})() !== null", timeout=60_000)
    page.wait_for_function(QUIET, timeout=60_000)
    wait_until_still(page, STEPPER_BOXES)
    first = page.evaluate(STEPPER_BOXES)
    for _ in range(20):  # well into the backward pass: the graph's far end
        page.keyboard.press("ArrowRight")
    page.wait_for_function(f"({STATE})().step === 20", timeout=10_000)
    wait_until_still(page, STEPPER_BOXES)  # the graph's column has scrolled its node into view
    later = page.evaluate(STEPPER_BOXES)
    page.evaluate(CARD_END_IN_VIEW)
    wait_until_still(page, STEPPER_BOXES)
    scrolled = page.evaluate(STEPPER_BOXES)
    context.close()
    printout(
        f"presenter mode, {lang}, 1024×768: page {first['height']} px tall, graph {first['graph']},"
        f" card {first['card']} (px from the top); after 20 steps: card {later['card']}, node {later['node']}"
    )
    for part in ("graph", "card"):
        assert first[part]["top"] >= 0 and first[part]["bottom"] <= 768, (part, first[part])
    assert later["graph"] == first["graph"], "stepping scrolled the page"
    assert later["card"]["top"] == first["card"]["top"]
    assert later["node"]["id"] != first["node"]["id"]
    assert scrolled["card"]["bottom"] <= 768
    for boxes in (first, later, scrolled):
        graph, node = boxes["graph"], boxes["node"]
        assert graph["top"] >= 0 and graph["bottom"] <= 768, graph
        assert graph["top"] <= node["top"] and node["bottom"] <= graph["bottom"], (node, graph)
        assert graph["left"] <= node["left"] and node["right"] <= graph["right"], (node, graph)
        assert node["px"] >= 0.86 * 20, node  # presenter type (20 px), shrunk no more than the graph's layout allows
