// Any model's stepper (mpviz.show) mounted in jsdom from a real notebook payload (fixtures/model_payload.json,
// written by `python -m tests.test_notebook`): the module tree instead of the landmark graph, every step rendered
// reading only the bundle schema's fields, the tree following the current op, keyboard-operable as a WAI-ARIA tree, and
// the stepper embedded: keys only inside it, the page's URL and body left alone.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { host, window } from "./dom-env.js";
import { readSchema, recorded } from "./recorder.js";

const { default: mountStepper } = await import("../stepper.js");

const BYTES = readFileSync(new URL("./fixtures/model_payload.json", import.meta.url));
const PAYLOAD = JSON.parse(BYTES.toString("utf8"));
const B = PAYLOAD.bundle;

function mount(data = new Uint8Array(BYTES)) {
  window.sessionStorage.clear();
  const root = host();
  const detach = mountStepper({ parentElement: root, data, setStateValue() {} });
  return { root, app: root.querySelector("[data-role=app]"), detach };
}

const key = (el, k) => el.dispatchEvent(new window.KeyboardEvent("keydown", { key: k, bubbles: true, composed: true }));
const marked = (root) => [...root.querySelectorAll(".mpv-tree-on")].map((r) => r.dataset.path);

test("the graph is the module tree; every step of both views renders, reading only declared fields", () => {
  const defs = readSchema();
  const misses = new Set();
  const bundle = recorded(structuredClone(B), { kind: "ref", name: "Bundle" }, defs, misses);
  const { root, app, detach } = mount({ ...PAYLOAD, bundle });
  assert.equal(root.querySelectorAll(".mpv-node").length, 0);
  assert.ok(root.querySelector("[role=tree]"));
  assert.ok(root.querySelector("[data-role=heat]").hidden); // no attention here
  for (const view of ["story", "full"]) {
    root.querySelector(`[data-view=${view}]`).click();
    const slider = root.querySelector("[data-act=slider]");
    slider.value = "0";
    slider.dispatchEvent(new window.Event("input"));
    const seen = new Set();
    for (let k = 0; k < 400; k++) {
      const e = B.events[Number(app.dataset.event)];
      seen.add(e.i);
      assert.deepEqual(marked(root), [e.module], `step ${k}`); // the current op's module, open and marked
      assert.equal(root.querySelector(".mpv-flow-on [data-event]")?.dataset.event, String(e.i));
      if (root.querySelector("[data-act=next]").disabled) break;
      root.querySelector("[data-act=next]").click();
    }
    assert.equal(seen.size, view === "story" ? B.story.length : B.events.length, view);
  }
  assert.deepEqual([...misses], []);
  detach();
});

test("the tree counts ops and casts per module, its ancestors included", () => {
  const { root, detach } = mount();
  const row = (path) => root.querySelector(`[role=treeitem][data-path="${path}"]`);
  const all = row("");
  assert.ok(all.textContent.includes(String(B.events.length)));
  assert.ok(all.textContent.includes(`⚑${B.counts.casts}`));
  const head = B.events.filter((e) => e.module === "head").length;
  assert.ok(row("head").textContent.includes(String(head)));
  assert.equal(row("head").getAttribute("aria-level"), "2");
  detach();
});

test("arrows move through the tree and open or close it; Enter goes to the module's first op", () => {
  const { root, app, detach } = mount();
  const stop = () => root.querySelectorAll("[role=treeitem][tabindex='0']");
  assert.equal(stop().length, 1); // one row in the Tab order
  const tree = root.querySelector("[role=tree]");
  stop()[0].focus();
  key(root.activeElement, "Home");
  assert.equal(root.activeElement.dataset.path, "");
  key(root.activeElement, "ArrowLeft"); // the open model closes: one row left
  assert.equal(tree.querySelectorAll("[role=treeitem]").length, 1);
  assert.equal(root.activeElement.getAttribute("aria-expanded"), "false");
  key(root.activeElement, "ArrowRight"); // opens again
  key(root.activeElement, "ArrowRight"); // and moves into it
  const first = root.activeElement.dataset.path;
  assert.equal(first, "embed");
  key(root.activeElement, "End");
  const last = root.activeElement.dataset.path;
  assert.equal(last, "head");
  const step = app.dataset.step;
  key(root.activeElement, "Enter");
  assert.equal(Number(app.dataset.event), B.events.find((e) => e.module === "head").i);
  assert.notEqual(app.dataset.step, step);
  assert.deepEqual(marked(root), ["head"]);
  assert.equal(root.activeElement?.dataset.path, "head"); // focus stays in the tree
  assert.equal(stop().length, 1);
  // closed modules open again when the stepper reaches an op inside them
  key(root.activeElement, "Home");
  key(root.activeElement, "ArrowLeft");
  assert.deepEqual(marked(root), []); // the reader closed the path to the current op: it stays closed
  root.querySelector("[data-view=full]").click();
  const inside = B.events.find((e) => e.module === "blocks.1.mlp.0").i;
  const slider = root.querySelector("[data-act=slider]");
  slider.value = String(inside); // in the Every-op view over both phases, step k is op k
  slider.dispatchEvent(new window.Event("input"));
  assert.deepEqual(marked(root), ["blocks.1.mlp.0"]);
  const path = [...root.querySelectorAll(".mpv-tree-path")].map((r) => r.dataset.path);
  assert.deepEqual(path, ["", "blocks", "blocks.1", "blocks.1.mlp"]);
  detach();
});

test("embedded: keys step only inside the stepper, the URL and the page's body stay as they were", async () => {
  const url = window.location.href;
  const before = window.document.body.firstElementChild;
  const { app, detach } = mount();
  assert.ok(app.classList.contains("mpv-embedded"));
  key(window.document.body, "ArrowRight"); // elsewhere on the page: the notebook's key, not ours
  assert.equal(app.dataset.step, "0");
  key(app, "ArrowRight");
  assert.equal(app.dataset.step, "1");
  await new Promise((r) => setTimeout(r, 200)); // past the URL write's coalescing
  assert.equal(window.location.href, url);
  assert.equal(window.document.querySelector("a[data-mpv-skip]"), null);
  assert.equal(window.document.body.firstElementChild, before);
  detach();
});

test("a model whose float64 copy failed says so, with no error bars", () => {
  const bundle = { ...B, run: { ...B.run, reference_failed: "RuntimeError" }, errors: {} };
  const { root, detach } = mount({ ...PAYLOAD, bundle });
  assert.ok(root.querySelector("[data-role=banners]").textContent.includes("RuntimeError"));
  assert.equal(root.querySelectorAll(".mpv-err-row").length, 0);
  detach();
});
