// The go-to channel: each target once per id, to whoever listens now and to a stepper that mounts later.
import assert from "node:assert/strict";
import { test } from "node:test";
import { window } from "./dom-env.js";

const goto = await import("../goto.js");

test("a target is delivered once per id: listeners now, pending for later, until consumed", () => {
  const heard = [];
  const stop = goto.listen((d) => heard.push(d.id));
  goto.deliver({ data: { id: "a", target: { step: 1 } } });
  goto.deliver({ data: { id: "a", target: { step: 1 } } }); // a rerun mounting the same data again
  goto.deliver({ data: null });
  assert.deepEqual(heard, ["a"]);
  assert.equal(goto.pending().id, "a");
  goto.consume("a");
  assert.ok(goto.consumed("a"));
  assert.equal(goto.pending(), null);
  stop();
  goto.deliver({ data: { id: "b", target: { step: 2 } } });
  assert.deepEqual(heard, ["a"]); // stopped listening
  assert.equal(goto.pending().id, "b");
});

test("a heading target scrolls that heading into view, below the tour's bar", () => {
  const h = window.document.createElement("h2");
  h.textContent = "Softmax overflow";
  window.document.body.append(h);
  let scrolled = 0;
  h.scrollIntoView = () => scrolled++;
  goto.deliver({ data: { id: "c", target: { heading: " Softmax overflow " } } });
  assert.equal(scrolled, 1);
  assert.equal(h.style.scrollMarginTop, "0px");
});
