// The formats page's bit pills keep the keyboard (mpviz/app/bit_focus.py). Flipping a bit (click, Enter or Space) reruns
// the page, and Streamlit draws that field's pills anew: the focused button is gone and focus falls to the page's
// body. So the page remembers which bit was pressed (its widget's st-key class and its place in the row) and, when
// the rerun has drawn the row again and focus is still nowhere, focuses the same bit. Draws nothing; installed once
// per page however often a rerun mounts it. No network, no HTML from strings.

const KEEP = (window[Symbol.for("mpviz.bitfocus")] ??= { installed: false, pressed: null });
const BITS = "[class*='st-key-bits-']";
const FORGET_MS = 20000; // a rerun slower than this (a loaded server) loses the focus, as before

function pressedBit(target) {
  const button = target?.closest?.(`${BITS} button[data-variant=pills]`);
  if (!button) return null;
  const widget = button.closest(BITS);
  const key = [...widget.classList].find((c) => c.startsWith("st-key-bits-"));
  const index = [...widget.querySelectorAll("button[data-variant=pills]")].indexOf(button);
  return key && index >= 0 ? { key, index, at: Date.now() } : null;
}

function restore() {
  const p = KEEP.pressed;
  if (!p) return;
  if (Date.now() - p.at > FORGET_MS) {
    KEEP.pressed = null;
    return;
  }
  const active = document.activeElement;
  if (active && active !== document.body) {
    if (!active.closest?.(BITS)) KEEP.pressed = null; // the reader moved on: leave focus where it is
    return;
  }
  const button = document.querySelectorAll(`.${CSS.escape(p.key)} button[data-variant=pills]`)[p.index];
  if (button) button.focus({ preventScroll: true });
}

function install() {
  if (KEEP.installed) return;
  KEEP.installed = true;
  const remember = (e) => {
    const bit = pressedBit(e.target);
    if (bit) KEEP.pressed = bit;
  };
  window.addEventListener("pointerdown", remember, { capture: true });
  window.addEventListener("keydown", (e) => (e.key === "Enter" || e.key === " ") && remember(e), { capture: true });
  // the rerun replaces the row's buttons: look again whenever the page's DOM changes
  new MutationObserver(restore).observe(document.body, { childList: true, subtree: true });
}

export default function keepBitFocus() {
  install();
  restore();
}
