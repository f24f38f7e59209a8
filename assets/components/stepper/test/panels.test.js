// The whole stepper mounted in jsdom from the real payload: every panel built and rendered for every step, and the
// accessibility promises the browser tests cannot see cheaply (names, focus).

import assert from "node:assert/strict";
import { test } from "node:test";
import { host, window } from "./dom-env.js";
import { PAYLOAD, PAYLOAD_BYTES } from "./fixture.js";
import { readSchema, recorded } from "./recorder.js";

const { default: mountStepper } = await import("../stepper.js");

// data: the payload's bytes, as Streamlit hands them over (or an object, which the stepper also takes)
function mount(data = new Uint8Array(PAYLOAD_BYTES)) {
  const root = host();
  mountStepper({ parentElement: root, data, setStateValue() {} });
  return { root, app: root.querySelector("[data-role=app]") };
}

const press = (key) => window.dispatchEvent(new window.KeyboardEvent("keydown", { key, bubbles: true }));

test("every step of both views renders every panel, reading only bundle fields its schema declares", () => {
  const defs = readSchema();
  const misses = new Set();
  const bundle = recorded(structuredClone(PAYLOAD.bundle), { kind: "ref", name: "Bundle" }, defs, misses);
  const { root, app } = mount({ ...PAYLOAD, bundle });
  for (const view of ["story", "full"]) {
    root.querySelector(`[data-view=${view}]`).click();
    const slider = root.querySelector("[data-act=slider]");
    slider.value = "0";
    slider.dispatchEvent(new window.Event("input"));
    assert.ok(root.querySelector("[data-act=prev]").disabled);
    const seen = new Set();
    for (let k = 0; k < 400 && !root.querySelector("[data-act=next]").disabled; k++) {
      seen.add(app.dataset.event);
      assert.ok(root.querySelector(".mpv-op-title").textContent.includes(`#${app.dataset.event}`));
      root.querySelector("[data-act=next]").click();
    }
    seen.add(app.dataset.event);
    const want = view === "story" ? PAYLOAD.bundle.story.length : PAYLOAD.bundle.events.length;
    assert.equal(seen.size, want, view);
  }
  assert.deepEqual([...misses], []);
});

test("a graph node jumps to its op; its accessible name starts with its visible text", () => {
  const { root, app } = mount();
  const nodes = [...root.querySelectorAll(".mpv-node")];
  assert.equal(nodes.length, PAYLOAD.bundle.graph.nodes.length);
  for (const g of nodes) {
    const visible = [...g.querySelectorAll("text")].map((t) => t.textContent).join(" ");
    const name = g.getAttribute("aria-label");
    const words = (s) =>
      s
        .replace(/[^\p{L}\p{N}∇ ]/gu, " ")
        .split(/\s+/)
        .filter(Boolean)
        .join(" ");
    assert.ok(words(name).startsWith(words(visible)), `${visible} ⊄ ${name}`);
  }
  root.querySelector("[data-node=scores]").dispatchEvent(new window.MouseEvent("click", { bubbles: true }));
  assert.equal(Number(app.dataset.event), PAYLOAD.bundle.landmarks.scores);
  assert.deepEqual(
    [...root.querySelectorAll(".mpv-node.mpv-current")].map((n) => n.dataset.node),
    ["scores"],
  );
});

test("flipping a bit explores a new value and keeps the keyboard on that bit", () => {
  const { root } = mount();
  const value = () => root.querySelector(".mpv-value").dataset.value;
  const before = value();
  const bit = root.querySelector("[data-bit='14']");
  bit.focus();
  bit.click();
  assert.notEqual(value(), before);
  assert.equal(root.activeElement?.dataset.bit, "14");
  root.querySelector("[data-act=ulp-reset]").focus();
  root.querySelector("[data-act=ulp-reset]").click();
  assert.equal(value(), before);
  assert.equal(root.activeElement?.dataset.act, "ulp-up"); // the gone button's neighbour
});

test("a heatmap cell picks that element of the probabilities", () => {
  const { root, app } = mount();
  const canvas = root.querySelector("[data-act=heatmap]");
  canvas.dispatchEvent(new window.KeyboardEvent("keydown", { key: "ArrowDown", bubbles: true }));
  canvas.dispatchEvent(new window.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  assert.equal(Number(app.dataset.event), PAYLOAD.bundle.landmarks.probs);
  assert.deepEqual(
    [...root.querySelectorAll("[data-act^=el-]")].map((i) => Number(i.value)),
    [0, 1, 0],
  );
});

test("the place goes into the URL, and stays there when the page rewrites its query", async () => {
  await new Promise((r) => setTimeout(r, 200)); // the earlier tests' steppers have written their places
  window.history.replaceState(null, "", "/attention");
  window.sessionStorage.clear(); // a tab new to the lesson
  const { app } = mount();
  press("ArrowRight");
  await new Promise((r) => setTimeout(r, 200)); // URL writes are coalesced
  assert.equal(new URL(window.location.href).searchParams.get("step"), app.dataset.step);
  window.history.replaceState(null, "", "/attention?lang=en"); // as Streamlit does after a rerun
  const q = new URL(window.location.href).searchParams;
  assert.equal(q.get("lang"), "en");
  assert.equal(q.get("step"), app.dataset.step);
});

test("a skip link, first on the page, moves focus to the stepper; detaching takes it away", () => {
  const root = host();
  const detach = mountStepper({ parentElement: root, data: new Uint8Array(PAYLOAD_BYTES), setStateValue() {} });
  const app = root.querySelector("[data-role=app]");
  const link = window.document.body.firstElementChild;
  assert.equal(link.textContent, PAYLOAD.text.ui.controls.skip_link);
  assert.equal(window.document.querySelectorAll("a[data-mpv-skip]").length, 1);
  assert.equal(app.getAttribute("role"), "region");
  assert.equal(app.getAttribute("aria-label"), PAYLOAD.text.ui.controls.region);
  link.click();
  assert.equal(root.activeElement, app);
  detach();
  assert.equal(window.document.querySelector("a[data-mpv-skip]"), null);
});
