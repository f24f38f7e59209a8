// Sizes read once per build or resize, and what a resize needs drawn again; tooltips for glossary terms.
import assert from "node:assert/strict";
import { test } from "node:test";
import { host, window } from "./dom-env.js";

const { Layout } = await import("../layout.js");
const { Tips } = await import("../tips.js");

function sized(app, widths) {
  for (const [role, w] of Object.entries(widths))
    Object.defineProperty(app.querySelector(`[data-role=${role}]`), "clientWidth", { value: w, configurable: true });
}

test("the geometry is one object, measured again on a resize; a wider graph asks for a new arrangement", async () => {
  const root = host();
  const app = root.querySelector("[data-role=app]");
  sized(app, { graph: 600, values: 300, heat: 300 });
  const changes = [];
  const layout = new Layout(app, root.host, (c) => changes.push(c));
  const geom = layout.measure(false);
  assert.deepEqual([geom.graph, geom.values, geom.stage], [600, 300, false]);
  assert.equal(geom.measureText("abcd", 10), 24); // dom-env: 0.6 em a character
  sized(app, { graph: 800, values: 300, heat: 300 });
  layout.schedule();
  layout.schedule(); // once per frame
  await new Promise((done) => window.requestAnimationFrame(done));
  assert.equal(layout.measure(false), geom);
  assert.deepEqual(changes, [{ graph: true, sizes: false }]);
});

test("a glossary term shows its definition as text; leaving it hides it", () => {
  const root = host();
  const app = root.querySelector("[data-role=app]");
  const term = window.document.createElement("span");
  term.className = "mpv-term";
  term.dataset.term = "ulp";
  app.append(term);
  const words = {
    text: { glossary: { ulp: { term: "ulp", text: "<b>unit</b> in the last place" } } },
    t: (key, _a, table) => table.ulp.text,
  };
  const tips = new Tips(app, () => words);
  tips.attach();
  term.dispatchEvent(new window.MouseEvent("mouseover", { bubbles: true }));
  const tip = app.querySelector("[data-role=tip]");
  assert.equal(tip.hidden, false);
  assert.equal(tip.textContent, "ulp<b>unit</b> in the last place"); // as text, never as markup
  term.dispatchEvent(new window.MouseEvent("mouseout", { bubbles: true }));
  assert.equal(tip.hidden, true);
  tips.detach();
});
