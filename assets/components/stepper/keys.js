// The keyboard: ←/→ step the lesson, Home/End (with focus in the stepper) go to its ends, unless focus is somewhere
// those keys already mean something (a field, a slider, a radio group, a grid, a menu). Embedded in a page that is
// not ours (a notebook), keys step only while focus is in the stepper, and go no further. After the page's sidebar
// brought a new run by a click or Enter, the keyboard comes back to the stepper.

const FIELD_TAGS = new Set(["INPUT", "TEXTAREA", "SELECT", "CANVAS"]);
const ARROW_ROLES = new Set([
  "slider",
  "spinbutton",
  "textbox",
  "combobox",
  "listbox",
  "option",
  "menu",
  "menuitem",
  "tab",
  "radio",
  "grid",
  "gridcell",
  "tree",
  "treeitem",
]);
const STEP_KEYS = ["ArrowRight", "ArrowLeft", "Home", "End"];

// the kind of the page's last input ("pointer" or a key's name): whether a sidebar change was a click or a key.
// One listener pair per page (this module is evaluated once per page).
let lastInput = "none";
if (typeof window !== "undefined") {
  window.addEventListener("pointerdown", () => (lastInput = "pointer"), { capture: true });
  window.addEventListener("keydown", (e) => (lastInput = e.key), { capture: true });
}

/**
 * What a key press asks of the stepper: a move (panel.js actions' `by` or `pos`), or null.
 * @param {KeyboardEvent} e
 * @param {boolean} inside whether focus is in the stepper
 * @param {number} last the last position of the current list
 * @returns {{by: number} | {pos: number} | null}
 */
export function keyMove(e, inside, last) {
  if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return null;
  const target = e.composedPath()[0];
  if (
    target &&
    (FIELD_TAGS.has(target.tagName) ||
      target.isContentEditable ||
      ARROW_ROLES.has(target.getAttribute?.("role")) ||
      target.closest?.("[role=grid], [role=menu]"))
  )
    return null;
  if (e.key === "ArrowRight") return { by: 1 };
  if (e.key === "ArrowLeft") return { by: -1 };
  if (inside && e.key === "Home") return { pos: 0 };
  if (inside && e.key === "End") return { pos: last };
  return null;
}

export class Keys {
  /**
   * @param {HTMLElement} app the stepper's region (tabindex -1: focusable, not a Tab stop)
   * @param {() => boolean} embedded whether the stepper is embedded (read on attach)
   * @param {(move: {by: number} | {pos: number}) => void} onMove
   * @param {() => number} last the last position of the current list
   */
  constructor(app, embedded, onMove, last) {
    this.app = app;
    this.isEmbedded = embedded;
    this.embedded = false;
    this.onMove = onMove;
    this.last = last;
    this.target = null;
    this.onKey = (e) => this.handle(e);
  }

  handle(e) {
    const move = keyMove(e, e.composedPath().includes(this.app), this.last());
    // embedded, the page's handlers (a notebook's, which may swallow keys bubbling through the output) come after
    if (this.embedded && STEP_KEYS.includes(e.key) && move) e.stopPropagation();
    if (!move) return;
    e.preventDefault();
    this.onMove(move);
  }

  attach() {
    this.embedded = this.isEmbedded();
    this.target = this.embedded ? this.app : window; // embedded: the page's own keys act everywhere else
    this.target.addEventListener("keydown", this.onKey);
  }

  detach() {
    this.target?.removeEventListener("keydown", this.onKey);
  }

  /** The keyboard to the stepper's region, where ←/→ step. */
  take() {
    this.app.focus({ preventScroll: true });
  }

  // A new run arrived from a change in the page's sidebar: focus still sits on that widget, where ←/→ would move a
  // caret or change a choice (a segmented control is a radio group), so the next → would not step. After a click
  // or Enter the reader is done there: the keyboard comes back to the stepper. A choice moved with arrows, Space
  // or Tab keeps its focus (a keyboard user may be going through the choices).
  takeFromSidebar() {
    if (this.isEmbedded() || !["pointer", "Enter"].includes(lastInput)) return;
    if (document.activeElement?.closest?.("[data-testid=stSidebar]")) this.take();
  }
}
