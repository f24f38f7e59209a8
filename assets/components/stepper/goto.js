// The "go to" channel (mpviz/app/goto.py): Python tells the page where to go without reloading it. Its component (the
// same bundle as the stepper, so both share this module: see stepper.js's default export) draws nothing; its data is
// {id, target}. A target is delivered once per id: remounts and reruns that repeat the same data do nothing. It is
// handed on in two ways, so the order of mounting does not matter:
//  - to whoever listens now (`listen`: the attention stepper);
//  - as the channel's pending target, which a stepper that mounts later takes (`pending`, then `consume`).
// A target's `heading` (the text of a heading of the page) is scrolled into view, below the tour's sticky bar; a
// target with `scroll: "card"` (a follower's: mpviz/app/follow.py) scrolls the stepper's step card into view once the
// stepper has taken it, so a student sees the card the presenter shows.
// No network, no HTML from strings.

const channel = { last: null, pending: null, consumed: null, listeners: new Set() };
const TRIES = 100; // the page may still be drawing (slowly on a busy server): look again every 100 ms, 10 s at most
const STEPPER_CARD = ".st-key-stepper [data-testid=stBidiComponentIsolated]";

/** @typedef {{id: string, target: object, waited?: boolean}} Goto */

/** The go-to component's mount: deliver `component.data` ({id, target}) once per id. */
export function deliver(component) {
  const d = component.data;
  if (!d || typeof d !== "object" || !d.id || d.id === channel.last) return;
  channel.last = d.id;
  channel.pending = d;
  for (const listener of channel.listeners) listener(d);
  if (typeof d.target?.heading === "string") scrollToHeading(d.target.heading, TRIES);
  if (d.target?.scroll === "card") scrollToCard(d.id, TRIES);
}

/** Call `listener(goto)` for each target delivered from now on; returns the function that stops it. */
export function listen(listener) {
  channel.listeners.add(listener);
  return () => channel.listeners.delete(listener);
}

/** @returns {Goto | null} the last target delivered, unless a stepper has taken it */
export function pending() {
  return channel.pending && channel.pending.id !== channel.consumed ? channel.pending : null;
}

/** Whether target `id` has been taken. */
export function consumed(id) {
  return channel.consumed === id;
}

/** A stepper took target `id` (no other stepper takes it again). */
export function consume(id) {
  channel.consumed = id;
}

function scrollToCard(id, tries) {
  if (channel.last !== id) return; // a newer place arrived: it scrolls for itself
  const card = document.querySelector(STEPPER_CARD)?.shadowRoot?.querySelector("[data-role=card]");
  if (card && channel.consumed === id) {
    // the stepper took this place (and rendered it): bring its card into view
    requestAnimationFrame(() => card.scrollIntoView({ block: "nearest", behavior: "instant" }));
  } else if (tries > 0) setTimeout(() => scrollToCard(id, tries - 1), 100);
}

function scrollToHeading(text, tries) {
  const want = text.trim();
  const found = [...document.querySelectorAll("h1, h2, h3, h4")].find((h) => h.textContent.trim() === want);
  if (found) {
    const bar = document.querySelector(".st-key-tour_bar"); // the guided lesson's sticky bar covers the top
    found.style.scrollMarginTop = `${bar ? bar.getBoundingClientRect().bottom + 12 : 0}px`;
    holdInView(found);
  } else if (tries > 0) setTimeout(() => scrollToHeading(text, tries - 1), 100);
}

// Charts and tables above the heading may still be drawing when it is found: as they grow, the heading slides down
// and out of view (seen on the softmax lesson, whose charts drew after the scroll). So it is scrolled to again each
// time it has moved, until it has stayed put for SETTLE_MS, for HOLD_MS at most, or until the reader scrolls (a
// busy server draws the charts above it seconds apart, so both are generous: the reader's first move ends it).
const TICK_MS = 100;
const SETTLE_MS = 1500;
const HOLD_MS = 15000;
const READER = ["wheel", "touchmove", "keydown", "mousedown"];

function holdInView(heading) {
  let reader = false;
  const onReader = () => {
    reader = true;
  };
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
    } else still += TICK_MS;
    if (reader || still >= SETTLE_MS || !heading.isConnected || performance.now() - started > HOLD_MS) {
      for (const e of READER) window.removeEventListener(e, onReader, { capture: true });
    } else setTimeout(tick, TICK_MS);
  };
  tick();
}

// the heading's place in the page, whatever is scrolled
function pageTop(element) {
  let y = 0;
  for (let e = element; e; e = e.offsetParent) y += e.offsetTop;
  return y;
}
