import assert from "node:assert/strict";
import { test } from "node:test";
import { glArrange, glChoose, glEdgePath, glModel } from "../graphlayout.js";
import { BUNDLE } from "./fixture.js";

const model = glModel(BUNDLE.graph);
const size = (id) => ({ w: 40 + id.length * 7, h: 44, nw: 40 + id.length * 7, nh: 44 });
const M = {
  pad: 12,
  colGap: 26,
  maxColGap: 128,
  rowGap: 14,
  layerGap: 30,
  bandGap: 26,
  bandLabel: 24,
  lanePad: 11,
  laneGap: 10,
};

test("the model splits the passes, mirrors gradients and docks parameter gradients as chips", () => {
  const nodes = BUNDLE.graph.nodes;
  assert.equal(model.fwd.length, nodes.filter((n) => n.phase === "forward").length);
  assert.equal(model.mate.get("grad_q"), "q");
  assert.ok(model.host.has("grad_attn.q_proj.weight")); // a chip, hanging off a backward node
  assert.ok(!model.main.includes("grad_attn.q_proj.weight"));
  assert.deepEqual(model.fwd.slice(0, 2), ["x", "x_norm"]);
});

for (const mode of ["h", "v", "s"]) {
  test(`"${mode}": no two boxes overlap and all lie inside the drawing`, () => {
    const a = glArrange(model, mode, size, M);
    const boxes = [...a.pos.entries()];
    for (const [id, p] of boxes) {
      assert.ok(p.x >= 0 && p.y >= 0 && p.x + p.w <= a.width + 1e-9 && p.y + p.h <= a.height + 1e-9, id);
    }
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const [p, q] = [boxes[i][1], boxes[j][1]];
        const apart = p.x + p.w <= q.x || q.x + q.w <= p.x || p.y + p.h <= q.y || q.y + q.h <= p.y;
        assert.ok(apart, `${boxes[i][0]} overlaps ${boxes[j][0]}`);
      }
    }
    for (const e of model.edges) assert.match(glEdgePath(a, e.from, e.to), /^M[\d.]+,[\d.]+ /);
  });
}

test("a wide figure gets the side-by-side layout, a phone the stacked one", () => {
  assert.equal(glChoose(model, size, M, 4000).mode, "h");
  assert.equal(glChoose(model, size, M, 200).mode, "s");
});
