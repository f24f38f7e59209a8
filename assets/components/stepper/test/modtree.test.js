import assert from "node:assert/strict";
import { test } from "node:test";
import { mtAncestors, mtBuild, mtFlow, mtKey, mtParent, mtRows, mtWindow } from "../modtree.js";

// a GPT-2-shaped stack of `blocks` blocks: forward then backward, a cast before each linear, sources chained
function gpt(blocks) {
  const events = [];
  const add = (phase, module, op, src = [], extra = {}) => {
    const i = events.length;
    events.push({ i, phase, module, op, src, cast: false, creates_nonfinite: false, ...extra });
    return i;
  };
  const forward = () => {
    let x = add("forward", "transformer.wte", "aten.embedding.default");
    for (let b = 0; b < blocks; b++) {
      const h = `transformer.h.${b}`;
      const ln = add("forward", `${h}.ln_1`, "aten.native_layer_norm.default", [x]);
      const c = add("forward", `${h}.attn.c_attn`, "aten._to_copy.default", [ln], { cast: true });
      const qkv = add("forward", `${h}.attn.c_attn`, "aten.addmm.default", [c]);
      const s = add("forward", `${h}.attn`, "aten.bmm.default", [qkv, qkv]);
      const p = add("forward", `${h}.attn`, "aten._softmax.default", [s]);
      const o = add("forward", `${h}.attn`, "aten.bmm.default", [p, qkv]);
      const proj = add("forward", `${h}.attn.c_proj`, "aten.addmm.default", [o]);
      x = add("forward", h, "aten.add.Tensor", [x, proj]);
      const fc = add("forward", `${h}.mlp.c_fc`, "aten.addmm.default", [x]);
      const act = add("forward", `${h}.mlp.act`, "aten.gelu.default", [fc]);
      const mp = add("forward", `${h}.mlp.c_proj`, "aten.addmm.default", [act]);
      x = add("forward", h, "aten.add.Tensor", [x, mp]);
    }
    return add("forward", "", "aten.sum.default", [x]);
  };
  const loss = forward();
  let g = add("backward", "", "aten.ones_like.default", [loss]);
  for (let b = blocks - 1; b >= 0; b--) {
    const h = `transformer.h.${b}`;
    for (const m of ["mlp.c_proj", "mlp.act", "mlp.c_fc", "attn.c_proj", "attn", "attn", "attn.c_attn", "ln_1"])
      for (const op of ["aten.mm.default", "aten.mm.default", "aten.sum.dim_IntList", "aten.add.Tensor"])
        g = add("backward", `${h}.${m}`, op, [g]);
  }
  return events;
}

test("paths: parent and ancestors", () => {
  assert.equal(mtParent("a.b.c"), "a.b");
  assert.equal(mtParent("a"), "");
  assert.equal(mtParent(""), null);
  assert.deepEqual(mtAncestors("transformer.h.0"), ["", "transformer", "transformer.h", "transformer.h.0"]);
  assert.deepEqual(mtAncestors(""), [""]);
});

test("the tree counts each op in its module and every ancestor, parents before children, in run order", () => {
  const events = gpt(2);
  const tree = mtBuild(events);
  const root = tree.get("");
  assert.equal(root.ops, events.length);
  assert.equal(root.casts, 2); // one cast per block (nothing marks the backward ones here)
  // a ModuleList that runs nothing itself is there, as the parent of the blocks
  assert.deepEqual(tree.get("transformer.h").children, ["transformer.h.0", "transformer.h.1"]);
  assert.deepEqual(tree.get("transformer.h").own, []);
  assert.deepEqual(tree.get("transformer").children, ["transformer.wte", "transformer.h"]);
  const attn = tree.get("transformer.h.0.attn");
  assert.equal(attn.own.length, 3 + 8); // bmm, softmax, bmm forward; eight backward
  assert.equal(attn.ops, attn.own.length + tree.get("transformer.h.0.attn.c_attn").ops + 1 + 4);
  assert.equal(attn.depth, 4);
  const paths = [...tree.keys()];
  for (const [p, n] of tree) if (n.parent !== null) assert.ok(paths.indexOf(n.parent) < paths.indexOf(p), p);
  assert.ok(attn.first.forward < attn.first.backward);
  assert.equal(attn.first.all, attn.first.forward);
});

test("inf/NaN made by an op is counted up the tree", () => {
  const events = gpt(1);
  const soft = events.find((e) => e.op === "aten._softmax.default");
  soft.creates_nonfinite = true;
  const tree = mtBuild(events);
  for (const p of mtAncestors(soft.module)) assert.equal(tree.get(p).bad, 1, p);
  assert.equal(tree.get("transformer.h.0.mlp").bad, 0);
});

test("rows: only expanded modules show their children, depth first", () => {
  const tree = mtBuild(gpt(2));
  assert.deepEqual(
    mtRows(tree, new Set()).map((r) => r.path),
    [""],
  );
  const rows = mtRows(tree, new Set(mtAncestors("transformer.h.1.attn")));
  assert.deepEqual(
    rows.map((r) => r.path),
    [
      "",
      "transformer",
      "transformer.wte",
      "transformer.h",
      "transformer.h.0",
      "transformer.h.1",
      "transformer.h.1.ln_1",
      "transformer.h.1.attn",
      "transformer.h.1.attn.c_attn",
      "transformer.h.1.attn.c_proj",
      "transformer.h.1.mlp",
      "",
    ].slice(0, -1),
  );
  const attn = rows.find((r) => r.path === "transformer.h.1.attn");
  assert.ok(attn.open && !attn.leaf && attn.depth === 4);
  assert.ok(rows.find((r) => r.path === "transformer.h.0").open === false);
});

test("a GPT-2-sized stack (12 blocks, 500+ ops) stays a short tree: 12 block rows under the stack", () => {
  const events = gpt(12);
  assert.ok(events.length >= 500, String(events.length));
  const tree = mtBuild(events);
  const rows = mtRows(tree, new Set(["", "transformer", "transformer.h"]));
  assert.equal(rows.length, 3 + 1 + 12); // the model, transformer, wte, h and its 12 blocks
  assert.equal(tree.get("transformer.h").ops, events.length - 2 - 1); // all but wte, the loss and its gradient
});

test("keys follow the WAI-ARIA tree pattern", () => {
  const tree = mtBuild(gpt(2));
  const rows = mtRows(tree, new Set(["", "transformer"]));
  const at = (p) => rows.findIndex((r) => r.path === p);
  assert.deepEqual(mtKey(rows, 0, "ArrowDown"), { focus: 1 });
  assert.deepEqual(mtKey(rows, 0, "ArrowUp"), { focus: 0 });
  assert.deepEqual(mtKey(rows, 1, "End"), { focus: rows.length - 1 });
  assert.deepEqual(mtKey(rows, 2, "Home"), { focus: 0 });
  // closed with children: → opens it; open: → moves into it
  assert.deepEqual(mtKey(rows, at("transformer.h"), "ArrowRight"), {
    focus: at("transformer.h"),
    expand: "transformer.h",
  });
  assert.deepEqual(mtKey(rows, at("transformer"), "ArrowRight"), { focus: at("transformer") + 1 });
  // a leaf: → stays
  assert.deepEqual(mtKey(rows, at("transformer.wte"), "ArrowRight"), { focus: at("transformer.wte") });
  // open: ← closes it; closed or a leaf: ← goes to the parent
  assert.deepEqual(mtKey(rows, at("transformer"), "ArrowLeft"), { focus: at("transformer"), collapse: "transformer" });
  assert.deepEqual(mtKey(rows, at("transformer.wte"), "ArrowLeft"), { focus: at("transformer") });
  assert.deepEqual(mtKey(rows, 0, "ArrowLeft"), { focus: 0, collapse: "" });
  assert.deepEqual(mtKey(rows, at("transformer.h"), "Enter"), { focus: at("transformer.h"), jump: "transformer.h" });
  assert.equal(mtKey(rows, 0, "x"), null);
});

test("a module's ops in dataflow order: levels from its own sources, ties in run order", () => {
  const events = gpt(1);
  const tree = mtBuild(events);
  const attn = tree.get("transformer.h.0.attn");
  const flow = mtFlow(events, attn, "forward");
  const [s, p, o] = attn.own.slice(0, 3); // bmm (scores), softmax, bmm (context)
  assert.deepEqual(flow.ops, [s, p, o]);
  assert.deepEqual(
    [s, p, o].map((i) => flow.level.get(i)),
    [0, 1, 2],
  );
  assert.deepEqual(flow.from.get(o), [p]); // qkv comes from a child module: not in this list
  assert.deepEqual(flow.from.get(s), []);
  // the backward list holds only backward ops
  assert.ok(mtFlow(events, attn, "backward").ops.every((i) => events[i].phase === "backward"));
  // two independent ops share a level and keep their run order
  const two = [
    { i: 0, phase: "forward", module: "m", src: [null] },
    { i: 1, phase: "forward", module: "m", src: [null] },
    { i: 2, phase: "forward", module: "m", src: [1, 0, 0] },
  ];
  const f = mtFlow(two, mtBuild(two).get("m"), "forward");
  assert.deepEqual(f.ops, [0, 1, 2]);
  assert.deepEqual(f.from.get(2), [1, 0]);
});

test("a long flow is windowed around the current op", () => {
  const ops = Array.from({ length: 100 }, (_, k) => k * 2);
  assert.deepEqual(mtWindow(ops.slice(0, 5), 4, 10), { start: 0, shown: ops.slice(0, 5) });
  const w = mtWindow(ops, 100, 10);
  assert.equal(w.shown.length, 10);
  assert.ok(w.shown.includes(100));
  assert.equal(mtWindow(ops, 198, 10).start, 90);
  assert.equal(mtWindow(ops, 7, 10).start, 0); // not in the list: the first ones
});
