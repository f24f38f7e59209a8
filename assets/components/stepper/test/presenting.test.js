// The stepper's side of the classroom: a go-to target is taken once and only when it names a stepper place; a
// presenter's place goes to Python only when it changed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BundleReader } from "../bundle.js";
import { freshPlace } from "../place.js";
import { goTo, publish } from "../presenting.js";
import { PlaceStore } from "../store.js";
import { BUNDLE } from "./fixture.js";

function fakeStepper(meta = { publish: true }) {
  const sent = [];
  const stepper = {
    meta,
    store: new PlaceStore(new BundleReader(BUNDLE), freshPlace()),
    published: null,
    publishTo: (name, value) => sent.push([name, value]),
    playback: { stop() {} },
    moves: [],
    renders: 0,
    move(change) {
      this.moves.push(change);
      return this.store.move(change);
    },
    render() {
      this.renders += 1;
    },
  };
  return { stepper, sent };
}

test("a presenter's place is sent once per change, and never outside presenter mode", () => {
  const { stepper, sent } = fakeStepper();
  publish(stepper);
  publish(stepper);
  assert.equal(sent.length, 1);
  assert.equal(sent[0][0], "view");
  assert.equal(sent[0][1].step, 0);
  stepper.store.move({ by: 1 });
  publish(stepper);
  assert.deepEqual(
    sent.map(([, v]) => v.step),
    [0, 1],
  );
  const quiet = fakeStepper({ publish: false });
  publish(quiet.stepper);
  assert.equal(quiet.sent.length, 0);
});

test("a go-to target moves the stepper once per id; a heading's target is not the stepper's", () => {
  const { stepper } = fakeStepper();
  goTo(stepper, { id: "presenting-test-heading", target: { heading: "Summary" } });
  assert.equal(stepper.moves.length, 0);
  goTo(stepper, { id: "presenting-test-step", target: { step: 2 } });
  goTo(stepper, { id: "presenting-test-step", target: { step: 2 } });
  assert.equal(stepper.moves.length, 1);
  assert.equal(stepper.store.place.pos, 2);
});
