// The place's store: one move() for every change, kept valid for the run, saying what it changed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BundleReader } from "../bundle.js";
import { freshPlace } from "../place.js";
import { PlaceStore, targetChange } from "../store.js";
import { BUNDLE } from "./fixture.js";

const reader = () => new BundleReader(BUNDLE);
const probs = BUNDLE.landmarks.probs;

test("steps are clamped to the list and say 'step'; no change says null", () => {
  const s = new PlaceStore(reader(), freshPlace());
  assert.equal(s.move({ by: -1 }), null);
  assert.equal(s.move({ by: 1 }), "step");
  assert.equal(s.place.pos, 1);
  assert.equal(s.move({ pos: 10_000 }), "step");
  assert.equal(s.place.pos, s.list().length - 1);
  assert.equal(s.move({ pos: s.place.pos }), null);
});

test("the place is one object, changed in place (panels hold it)", () => {
  const place = freshPlace();
  const s = new PlaceStore(reader(), place);
  s.move({ view: "full", pos: 3, head: 1, el: [1, 2, 3] });
  assert.equal(s.place, place);
  assert.deepEqual([place.view, place.pos, place.head, place.el], ["full", 3, 1, [1, 2, 3]]);
});

test("a view change keeps the event in view; a jump to an op outside the story opens the full list", () => {
  const s = new PlaceStore(reader(), freshPlace());
  s.move({ event: probs });
  assert.equal(s.event().i, probs);
  assert.equal(s.move({ view: "full", phase: "all" }), "step");
  assert.equal(s.event().i, probs);
  s.move({ view: "story" });
  const offStory = BUNDLE.events.findIndex((e) => !s.reader.storyOf.has(e.i));
  s.move({ event: offStory });
  assert.deepEqual([s.place.view, s.event().i], ["full", offStory]);
  s.move({ phase: "forward" });
  const backward = BUNDLE.events.findIndex((e) => e.phase === "backward");
  s.move({ event: backward, prefer: "full" });
  assert.deepEqual([s.place.phase, s.event().i], ["all", backward]); // the phase widened to reach it
});

test("head, element and exploring each say what they changed; a step ends an exploration", () => {
  const s = new PlaceStore(reader(), freshPlace());
  s.move({ event: probs });
  assert.equal(s.move({ head: 99 }), "head");
  assert.equal(s.place.head, BUNDLE.events[probs].out[0].shape[0] - 1); // the heatmap's last head
  assert.equal(s.move({ explore: { value: 2 } }), "explore");
  assert.equal(s.move({ head: 0 }), "head");
  assert.deepEqual(s.place.explore, { value: 2 }); // another head keeps what is explored
  assert.equal(s.move({ el: [0, 1, 1] }), "element");
  assert.equal(s.place.explore, null);
  s.move({ explore: { value: 3 } });
  s.move({ by: 1 });
  assert.equal(s.place.explore, null);
});

test("a new run keeps the same tensor in view", () => {
  const s = new PlaceStore(reader(), freshPlace());
  s.move({ event: probs, prefer: "full" });
  s.rerun(reader());
  assert.equal(s.event().i, probs);
});

test("go-to targets: a landmark, a key, the first inf/NaN or a step; a place the run lacks is null", () => {
  const r = reader();
  assert.deepEqual(targetChange(r, { landmark: "probs", view: "story" }), {
    view: "story",
    phase: undefined,
    event: probs,
    inView: true,
  });
  assert.equal(targetChange(r, { key: BUNDLE.events[3].key }).event, 3);
  assert.equal(targetChange(r, { landmark: "nowhere" }), null);
  assert.equal(targetChange(r, { heading: "Softmax" }), null);
  assert.deepEqual(targetChange(r, { step: "4", head: 1, el: "1.2.3" }), {
    view: undefined,
    phase: undefined,
    head: 1,
    el: ["1", "2", "3"],
    pos: 4,
  });
  const s = new PlaceStore(r, freshPlace());
  s.move(targetChange(r, { step: 4, view: "full", phase: "backward", el: "1.2.3" }));
  assert.deepEqual([s.place.view, s.place.phase, s.place.pos, s.place.el], ["full", "backward", 4, [1, 2, 3]]);
});
