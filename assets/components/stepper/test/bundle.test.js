import assert from "node:assert/strict";
import { test } from "node:test";
import { BundleReader, shownElement } from "../bundle.js";
import { BUNDLE } from "./fixture.js";

const r = new BundleReader(BUNDLE, ["weight", "bias"]);

test("lists: the story is the landmark steps, the full view every op; a phase filters", () => {
  assert.deepEqual(
    r.list("story", "all"),
    BUNDLE.story.map((s) => s.event),
  );
  assert.equal(r.list("full", "all").length, BUNDLE.events.length);
  assert.ok(r.list("full", "backward").every((i) => BUNDLE.events[i].phase === "backward"));
});

test("an op that is not a story step sits at the story step it is part of", () => {
  const i = BUNDLE.events.findIndex((e) => !e.landmarks.length && e.phase === "forward");
  const pos = r.positionOf(i, "story", "all");
  assert.ok(r.list("story", "all")[pos] >= i);
  assert.equal(r.eventAt({ view: "full", phase: "all", pos: i }).i, i);
});

test("a new run keeps the same tensor by key", () => {
  const e = BUNDLE.events[BUNDLE.landmarks.scores];
  assert.equal(r.matchEvent({ key: e.key, i: 0, phase: "forward" }), e.i);
});

test("samples decode to float32 of their shape; the heatmap's is every head", () => {
  const probs = r.probs();
  assert.deepEqual(probs.shape, [2, 8, 8]);
  assert.equal(probs.values.length, 2 * 8 * 8);
  const row = probs.values.slice(0, 8).reduce((a, b) => a + b, 0); // softmax rows sum to 1 (bf16-rounded)
  assert.ok(Math.abs(row - 1) < 0.05, String(row));
  assert.deepEqual(shownElement([5, 99, -1], probs), [1, 7, 0]);
});

test("casts name where their input came from", () => {
  const probsStep = r.casts(BUNDLE.landmarks.q);
  for (const c of probsStep) assert.ok(c.param || c.landmark || Object.keys(c).length === 3, JSON.stringify(c));
});
