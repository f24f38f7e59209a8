// The stepper's one place (panel.js `Place`) and the one way it moves: `move(change)`. Panels hold the same place
// object and only read it; every change (a step, a view, a jump to an op, the head, the element, a go-to target)
// goes through `move`, which keeps the place valid for the run and says what changed, so the stepper redraws only
// that. No DOM.
import { PHASES, VIEWS } from "./place.js";

/** @typedef {"step" | "head" | "element" | "explore"} Moved what a move changed, widest first */

/**
 * @typedef {object} Change
 * @property {number} [pos] a position in the list of the (new) view and phase
 * @property {number} [by] a step relative to the current position
 * @property {number} [event] an event to show: in the Story view when it is a story step (else in `prefer`),
 *   widening the phase if needed
 * @property {"story" | "full"} [prefer] the view to show `event` in
 * @property {boolean} [inView] show `event` in the view as it is (a go-to target's), never falling back to the full
 *   list
 * @property {"story" | "full"} [view] a view; with `phase` and no position, the same event stays in view
 * @property {"all" | "forward" | "backward"} [phase]
 * @property {number} [head] the heatmap's head
 * @property {number[]} [el] the chosen element
 * @property {{value: number} | null} [explore] a value explored away from the element's own
 */

export class PlaceStore {
  /**
   * @param {import("./bundle.js").BundleReader} reader the run
   * @param {import("./panel.js").Place} place where to start (kept as the one object panels read)
   */
  constructor(reader, place) {
    this.reader = reader;
    this.place = place;
    this.clamp();
  }

  event() {
    return this.reader.eventAt(this.place);
  }

  list() {
    return this.reader.list(this.place.view, this.place.phase);
  }

  positionOf(i) {
    return this.reader.positionOf(i, this.place.view, this.place.phase);
  }

  /** A new run of the same lesson: the same tensor stays in view (matched by key, index and phase). */
  rerun(reader) {
    const e = this.event();
    this.reader = reader;
    this.place.pos = this.positionOf(reader.matchEvent({ key: e.key, i: e.i, phase: e.phase }));
    this.place.explore = null;
    this.clamp();
  }

  /**
   * Apply `change`. A new step or element ends an exploration (unless the change sets `explore`).
   * @param {Change} change
   * @returns {Moved | null} what changed (null: nothing)
   */
  move(change) {
    const p = this.place;
    const before = { pos: p.pos, view: p.view, phase: p.phase, head: p.head, el: p.el.join("."), explore: p.explore };
    const shown = this.event().i;
    if (VIEWS.includes(change.view)) p.view = change.view;
    if (PHASES.includes(change.phase)) p.phase = change.phase;
    if (change.head !== undefined) p.head = Math.max(0, parseInt(change.head, 10) || 0);
    if (change.el !== undefined) p.el = [0, 1, 2].map((k) => Math.max(0, parseInt(change.el[k], 10) || 0));
    if (change.event !== undefined) {
      let view = change.prefer || p.view;
      if (!change.prefer && !change.inView && view === "story" && !this.reader.storyOf.has(change.event)) view = "full";
      if (p.phase !== "all" && this.reader.b.events[change.event].phase !== p.phase) p.phase = "all";
      p.view = view;
      p.pos = this.positionOf(change.event);
    } else if (change.pos !== undefined) p.pos = Math.trunc(Number(change.pos)) || 0;
    else if (change.by !== undefined) p.pos += change.by;
    else if (p.view !== before.view || p.phase !== before.phase) p.pos = this.positionOf(shown);
    this.clamp();
    const stepped = p.pos !== before.pos || p.view !== before.view || p.phase !== before.phase;
    const picked = p.el.join(".") !== before.el;
    if (change.explore !== undefined) p.explore = change.explore;
    else if (stepped || picked) p.explore = null;
    if (stepped) return "step";
    if (picked) return "element";
    if (p.head !== before.head) return "head";
    if (p.explore !== before.explore) return "explore";
    return null;
  }

  // a position inside the list, a head the run's heatmap has
  clamp() {
    const p = this.place;
    p.pos = Math.max(0, Math.min(p.pos, this.list().length - 1));
    const heads = this.reader.probs()?.shape[0];
    if (heads) p.head = Math.max(0, Math.min(p.head, heads - 1));
  }
}

/**
 * The change a go-to target asks for ({landmark | key | nonfinite | step, view, phase, head, el}; mpviz/app/goto.py), or
 * null when it names no place of this run (a landmark or key this run lacks, or no stepper place at all: a heading).
 * @param {import("./bundle.js").BundleReader} reader
 * @param {object} t the target
 * @returns {import("./store.js").Change | null}
 */
export function targetChange(reader, t) {
  const b = reader.b;
  const i =
    typeof t.key === "string" && reader.keyIndex.has(t.key)
      ? reader.keyIndex.get(t.key)
      : typeof t.landmark === "string" && Object.hasOwn(b.landmarks, t.landmark)
        ? b.landmarks[t.landmark]
        : t.nonfinite && b.first_nonfinite
          ? b.first_nonfinite.event // the op the red banner names
          : null;
  if (i === null && !("step" in t)) return null;
  const change = { view: t.view, phase: t.phase };
  if (t.head !== undefined) change.head = t.head;
  if (t.el !== undefined) change.el = String(t.el).split(".");
  if (i !== null) return { ...change, event: i, inView: true };
  return { ...change, pos: parseInt(t.step, 10) || 0 };
}
