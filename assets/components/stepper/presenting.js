// The stepper's side of the classroom. A place Python names over the go-to channel (goto.js: a tour stop's, a
// followed presenter's) is taken once, by whichever stepper can show it; in presenter mode each new place goes to
// Python (one rerun there), whose room tells the followers. Both act on a mounted Stepper (stepper.js).
import * as goto from "./goto.js";
import { targetChange } from "./store.js";

const STEPPER_TARGET = ["landmark", "key", "step", "nonfinite"]; // a go-to target for the stepper names one

/** Take the go-to channel's target that arrived before `stepper` could (its bundle was on its way). */
export function takePendingGoto(stepper) {
  const d = goto.pending();
  if (d) goTo(stepper, d);
}

/** Move `stepper` to a place named by Python ({id, target}; store.js `targetChange`); each id once. */
export function goTo(stepper, d) {
  const t = d?.target;
  if (!d || !t || goto.consumed(d.id) || !stepper.store) return;
  if (!STEPPER_TARGET.some((k) => k in t)) return; // not the stepper's (a heading)
  const change = targetChange(stepper.store.reader, t);
  // A place this run lacks may belong to the run the same Python run is sending: wait for the next bundle, once.
  if (!change && !d.waited) {
    d.waited = true;
    return;
  }
  goto.consume(d.id);
  stepper.playback.stop();
  // a target always redraws, so a follower's card is drawn before goto.js scrolls to it
  if (stepper.move(change ?? targetChange(stepper.store.reader, { ...t, step: 0 })) !== "step") stepper.render();
}

/** Presenter mode: send `stepper`'s place to Python through its component's state; nothing when unchanged. */
export function publish(stepper) {
  if (!stepper.meta.publish || !stepper.publishTo || !stepper.store) return;
  const p = stepper.store.place;
  const place = {
    step: p.pos,
    view: p.view,
    phase: p.phase,
    head: p.head,
    el: p.el.join("."),
    key: stepper.store.event().key,
  };
  const json = JSON.stringify(place);
  if (json === stepper.published) return;
  stepper.published = json;
  stepper.publishTo("view", place);
}
