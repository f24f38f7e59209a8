// The keyboard: which keys step, where they do not, and focus coming back to the stepper after a sidebar click.
import assert from "node:assert/strict";
import { test } from "node:test";
import { window } from "./dom-env.js";

const { Keys, keyMove } = await import("../keys.js");
const doc = window.document;

function press(target, key, opts = {}) {
  const e = new window.KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, composed: true, ...opts });
  target.dispatchEvent(e);
  return e;
}

test("←/→ step anywhere, Home/End only inside; fields, radio groups and modifiers keep their keys", () => {
  const app = doc.createElement("div");
  const input = doc.createElement("input");
  const radio = doc.createElement("button");
  radio.setAttribute("role", "radio");
  doc.body.append(app, input, radio);
  const moves = [];
  const keys = new Keys(
    app,
    () => false,
    (m) => moves.push(m),
    () => 9,
  );
  keys.attach();
  try {
    assert.ok(press(doc.body, "ArrowRight").defaultPrevented);
    press(doc.body, "ArrowLeft");
    press(doc.body, "End"); // outside the stepper: the page scrolls
    press(app, "End");
    press(app, "Home");
    press(input, "ArrowRight");
    press(radio, "ArrowLeft");
    press(doc.body, "ArrowRight", { ctrlKey: true });
    assert.deepEqual(moves, [{ by: 1 }, { by: -1 }, { pos: 9 }, { pos: 0 }]);
  } finally {
    keys.detach();
  }
  press(doc.body, "ArrowRight");
  assert.equal(moves.length, 4); // detached: nothing more
});

test("embedded: keys act only inside the stepper and stop there", () => {
  const outer = doc.createElement("div");
  const app = doc.createElement("div");
  outer.append(app);
  doc.body.append(outer);
  const moves = [];
  const keys = new Keys(
    app,
    () => true,
    (m) => moves.push(m),
    () => 3,
  );
  keys.attach();
  let reachedOuter = 0;
  outer.addEventListener("keydown", () => reachedOuter++);
  press(doc.body, "ArrowRight");
  press(app, "ArrowRight");
  assert.deepEqual(moves, [{ by: 1 }]);
  assert.equal(reachedOuter, 0);
  keys.detach();
});

test("keyMove alone: a prevented key is someone else's", () => {
  const e = new window.KeyboardEvent("keydown", { key: "ArrowRight", cancelable: true });
  e.preventDefault();
  assert.equal(keyMove(e, true, 5), null);
});

test("after a click in the sidebar the keyboard comes back to the stepper; after a key press it stays", () => {
  const sidebar = doc.createElement("div");
  sidebar.dataset.testid = "stSidebar";
  const choice = doc.createElement("button");
  sidebar.append(choice);
  const app = doc.createElement("div");
  app.tabIndex = -1;
  doc.body.append(sidebar, app);
  const keys = new Keys(
    app,
    () => false,
    () => {},
    () => 0,
  );
  choice.focus();
  press(choice, " "); // a keyboard user going through the choices
  keys.takeFromSidebar();
  assert.equal(doc.activeElement, choice);
  choice.dispatchEvent(new window.Event("pointerdown", { bubbles: true }));
  keys.takeFromSidebar();
  assert.equal(doc.activeElement, app);
});
