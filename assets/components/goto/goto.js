// The "go to" channel (mpviz/app/goto.py): Python tells the page where to go without reloading it. The component draws
// nothing; its data is {id, target}. A target is delivered once per id: remounts and reruns that repeat the same
// data do nothing. It is handed on in two ways, so the order of mounting does not matter:
//  - window event "mpviz:goto" (detail = {id, target}) for whoever listens now (the attention stepper);
//  - the registry's `pending`, which a stepper that mounts later consumes (it records the id in `consumed`).
// A target's `heading` (the text of a heading of the page) is scrolled into view, below the tour's sticky bar; a
// target with `scroll: "card"` (a follower's: mpviz/app/follow.py) scrolls the stepper's step card into view once the
// stepper has moved, so a student sees the card the presenter shows.
// No network, no HTML from strings.

const GOTO = (window[Symbol.for("mpviz.goto")] ??= { last: null, pending: null, consumed: null });
const HEADING_TRIES = 20;  // the page may still be drawing: look again every 100 ms, 2 s at most

export default function goTo(component) {
  const d = component.data;
  if (!d || typeof d !== "object" || !d.id || d.id === GOTO.last) return;
  GOTO.last = d.id;
  GOTO.pending = d;
  window.dispatchEvent(new CustomEvent("mpviz:goto", { detail: d }));
  if (typeof d.target?.heading === "string") scrollToHeading(d.target.heading, HEADING_TRIES);
  if (d.target?.scroll === "card") scrollToCard(d.id, HEADING_TRIES);
}

function scrollToCard(id, tries) {
  if (GOTO.last !== id) return;  // a newer place arrived: it scrolls for itself
  const host = document.querySelector(".st-key-stepper [data-testid=stBidiComponentIsolated]");
  const card = host?.shadowRoot?.querySelector("[data-role=card]");
  if (card && GOTO.consumed === id) {  // the stepper took this place (and rendered it): bring its card into view
    requestAnimationFrame(() => card.scrollIntoView({ block: "nearest", behavior: "instant" }));
  }
  else if (tries > 0) setTimeout(() => scrollToCard(id, tries - 1), 100);
}

function scrollToHeading(text, tries) {
  const want = text.trim();
  const found = [...document.querySelectorAll("h1, h2, h3, h4")].find((h) => h.textContent.trim() === want);
  if (found) {
    const bar = document.querySelector(".st-key-tour_bar");  // the guided lesson's sticky bar covers the top
    found.style.scrollMarginTop = `${bar ? bar.getBoundingClientRect().bottom + 12 : 0}px`;
    holdInView(found);
  }
  else if (tries > 0) setTimeout(() => scrollToHeading(text, tries - 1), 100);
}

// Charts and tables above the heading may still be drawing when it is found: as they grow, the heading slides down
// and out of view (seen on the softmax lesson, whose charts drew after the scroll). So it is scrolled to again each
// time it has moved, until it has stayed put for SETTLE_MS, for HOLD_MS at most, or until the reader scrolls.
const TICK_MS = 100;
const SETTLE_MS = 600;
const HOLD_MS = 5000;
const READER = ["wheel", "touchmove", "keydown", "mousedown"];

function holdInView(heading) {
  let reader = false;
  const onReader = () => { reader = true; };
  for (const e of READER) window.addEventListener(e, onReader, { capture: true, passive: true });
  const started = performance.now();
  let top = null;
  let still = 0;
  const tick = () => {
    const now = pageTop(heading);
    if (now !== top) {
      top = now;
      still = 0;
      if (!reader) heading.scrollIntoView({ block: "start", behavior: "instant" });
    }
    else still += TICK_MS;
    if (reader || still >= SETTLE_MS || !heading.isConnected || performance.now() - started > HOLD_MS) {
      for (const e of READER) window.removeEventListener(e, onReader, { capture: true });
    }
    else setTimeout(tick, TICK_MS);
  };
  tick();
}

function pageTop(element) {  // the heading's place in the page, whatever is scrolled
  let y = 0;
  for (let e = element; e; e = e.offsetParent) y += e.offsetTop;
  return y;
}
