// Play: a step per PLAY_MS to the end, from the start when already there; stop says so to the controls.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PLAY_MS, Playback } from "../playback.js";

// a clock whose intervals fire only when told to (tick)
function fakeClock() {
  const timers = new Map();
  let id = 0;
  return {
    setInterval: (fn, ms) => (timers.set(++id, { fn, ms }), id),
    clearInterval: (k) => timers.delete(k),
    tick(ms) {
      for (let t = PLAY_MS; t <= ms; t += PLAY_MS) for (const k of [...timers.keys()]) timers.get(k)?.fn();
    },
  };
}

test("plays to the end and stops there; from the end it starts over", () => {
  const clock = fakeClock();
  let pos = 0;
  const shown = [];
  const last = 3;
  const p = new Playback(
    {
      atEnd: () => pos >= last,
      step: () => pos++,
      restart: () => (pos = 0),
      shown: (playing) => shown.push(playing),
    },
    clock,
  );
  p.toggle();
  assert.ok(p.playing);
  clock.tick(PLAY_MS * 10);
  assert.equal(pos, last);
  assert.ok(!p.playing);
  p.toggle(); // at the end: from the start again
  assert.equal(pos, 0);
  clock.tick(PLAY_MS);
  assert.equal(pos, 1);
  p.toggle(); // a second press stops
  clock.tick(PLAY_MS * 5);
  assert.equal(pos, 1);
  assert.deepEqual(shown, [true, false, true, false]);
});
