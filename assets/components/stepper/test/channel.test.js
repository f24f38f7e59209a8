// The stepper and the go-to channel in one bundle: the entry's default export tells the two components apart by
// name, and a target delivered to the channel moves a stepper mounted before or after it (a tour stop, a
// presenter's step reaching a follower).
import assert from "node:assert/strict";
import { test } from "node:test";
import { host } from "./dom-env.js";
import { PAYLOAD_BYTES } from "./fixture.js";

const { default: mount } = await import("../stepper.js");
const { BUNDLE } = await import("./fixture.js");

// a stepper mounted as Streamlit mounts it: its element, and the cleanup Streamlit calls when it unmounts
function stepper() {
  const root = host();
  const data = new Uint8Array(PAYLOAD_BYTES);
  const unmount = mount({ name: "mpviz_stepper", parentElement: root, data, setStateValue() {} });
  return { app: root.querySelector("[data-role=app]"), unmount };
}

test("a presenter's place reaches a mounted stepper; a later stepper takes a pending one", () => {
  const { app, unmount } = stepper();
  const e = BUNDLE.events[BUNDLE.landmarks.probs];
  const place = { step: 0, view: "full", phase: "all", head: 0, el: "0.1.2", key: e.key, scroll: "card" };
  mount({ name: "mpviz_goto", parentElement: host(), data: { id: "follow-1", target: place } });
  assert.equal(app.dataset.event, String(e.i));
  const later = BUNDLE.events[BUNDLE.landmarks.scores];
  mount({ name: "mpviz_goto", parentElement: host(), data: { id: "tour-2", target: { landmark: "scores" } } });
  assert.equal(app.dataset.event, String(later.i)); // the listening stepper took it
  unmount(); // another page: no stepper listens until the next one mounts
  const next = { id: "tour-3", target: { landmark: "probs", view: "full" } };
  mount({ name: "mpviz_goto", parentElement: host(), data: next });
  assert.equal(app.dataset.event, String(later.i)); // the unmounted stepper did not take it
  assert.equal(stepper().app.dataset.event, String(e.i)); // the pending target, taken on mount
});
