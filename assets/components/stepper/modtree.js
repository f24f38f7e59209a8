// The module tree of any model's bundle (mpviz/model_bundle.py, shown by mpviz.show): every `named_modules()` path
// its ops ran in, with op, cast and inf/NaN counts that include the module's descendants; which rows are visible
// for a set of expanded modules; moving through those rows by keyboard; and one module's own ops in dataflow
// order. Pure: no DOM, unit-tested under node (test/modtree.test.js). treepanel.js draws it.

/**
 * @typedef {object} ModNode
 * @property {string} path its named_modules() path; "" is the model itself
 * @property {string} name its last path part ("" for the model)
 * @property {string | null} parent the parent's path (null for the model)
 * @property {string[]} children in the order they first ran
 * @property {number[]} own the events that ran in this module itself, not in a child, in execution order
 * @property {number} ops events in it and its descendants
 * @property {number} casts autocast's casts (or their gradients) among them
 * @property {number} bad events among them whose own arithmetic made inf/NaN
 * @property {{all: number, forward?: number, backward?: number}} first its first event, overall and per phase
 * @property {number} depth 0 for the model
 */

/** "a.b.c" → "a.b"; "a" → ""; "" → null */
export function mtParent(path) {
  if (path === "") return null;
  const k = path.lastIndexOf(".");
  return k < 0 ? "" : path.slice(0, k);
}

/** The paths from the model down to `path`, both included: "a.b" → ["", "a", "a.b"]. */
export function mtAncestors(path) {
  const out = [];
  for (let p = path; p !== null; p = mtParent(p)) out.push(p);
  return out.reverse();
}

/**
 * The tree of the modules the events ran in (modules that ran nothing of their own, such as a ModuleList, are there
 * as the parents of those that did).
 * @param {object[]} events the bundle's events (bundle.schema.json, Event)
 * @returns {Map<string, ModNode>} path → node, the model ("") first, parents before children
 */
export function mtBuild(events) {
  const nodes = new Map();
  const node = (path) => {
    let n = nodes.get(path);
    if (n) return n;
    const parent = mtParent(path);
    if (parent !== null) node(parent); // parents first, so children keep the order they first ran in
    n = {
      path,
      name: path.slice(path.lastIndexOf(".") + 1),
      parent,
      children: [],
      own: [],
      ops: 0,
      casts: 0,
      bad: 0,
      first: { all: -1 },
      depth: parent === null ? 0 : nodes.get(parent).depth + 1,
    };
    nodes.set(path, n);
    if (parent !== null) nodes.get(parent).children.push(path);
    return n;
  };
  node("");
  for (const e of events) {
    node(e.module).own.push(e.i);
    for (let p = e.module; p !== null; p = mtParent(p)) {
      const n = nodes.get(p);
      n.ops += 1;
      if (e.cast) n.casts += 1;
      if (e.creates_nonfinite) n.bad += 1;
      if (n.first.all < 0) n.first.all = e.i;
      if (n.first[e.phase] === undefined) n.first[e.phase] = e.i;
    }
  }
  return nodes;
}

/**
 * The rows a reader sees: the model and, under every expanded module, its children, depth first.
 * @param {Map<string, ModNode>} tree
 * @param {Set<string>} expanded
 * @returns {{path: string, depth: number, parent: string | null, open: boolean, leaf: boolean}[]}
 */
export function mtRows(tree, expanded) {
  const rows = [];
  const walk = (path) => {
    const n = tree.get(path);
    const open = expanded.has(path) && n.children.length > 0;
    rows.push({ path, depth: n.depth, parent: n.parent, open, leaf: n.children.length === 0 });
    if (open) for (const c of n.children) walk(c);
  };
  walk("");
  return rows;
}

/**
 * What a key does on row k of a tree (the WAI-ARIA tree pattern): ↑/↓ move, Home/End go to the ends, → opens a
 * closed module or moves into an open one, ← closes an open one or moves to its parent, Enter/Space go to the
 * module's first op. Returns null for any other key.
 * @param {ReturnType<typeof mtRows>} rows
 * @param {number} k the focused row
 * @param {string} key KeyboardEvent.key
 * @returns {{focus: number, expand?: string, collapse?: string, jump?: string} | null}
 */
export function mtKey(rows, k, key) {
  const row = rows[k];
  const last = rows.length - 1;
  switch (key) {
    case "ArrowDown":
      return { focus: Math.min(last, k + 1) };
    case "ArrowUp":
      return { focus: Math.max(0, k - 1) };
    case "Home":
      return { focus: 0 };
    case "End":
      return { focus: last };
    case "ArrowRight":
      if (row.leaf) return { focus: k };
      return row.open ? { focus: k + 1 } : { focus: k, expand: row.path };
    case "ArrowLeft":
      if (row.open) return { focus: k, collapse: row.path };
      return { focus: row.parent === null ? k : rows.findIndex((r) => r.path === row.parent) };
    case "Enter":
    case " ":
      return { focus: k, jump: row.path };
    default:
      return null;
  }
}

/**
 * One module's own ops of one phase in dataflow order: each op's level is one more than the deepest level among
 * the ops of the same list it reads (0 when it reads none of them), and ops are ordered by level, then by when they
 * ran. `from` lists, per op, the ops of the list whose outputs it reads.
 * @param {object[]} events the bundle's events (bundle.schema.json, Event)
 * @param {ModNode} node
 * @param {string} phase "forward" | "backward"
 * @returns {{ops: number[], level: Map<number, number>, from: Map<number, number[]>}}
 */
export function mtFlow(events, node, phase) {
  const ops = node.own.filter((i) => events[i].phase === phase);
  const inList = new Set(ops);
  const level = new Map();
  const from = new Map();
  for (const i of ops) {
    // execution order is a topological order: every source in the list already has its level
    const src = [...new Set((events[i].src || []).filter((s) => typeof s === "number" && inList.has(s)))];
    from.set(i, src);
    level.set(i, src.length ? Math.max(...src.map((s) => level.get(s))) + 1 : 0);
  }
  ops.sort((a, b) => level.get(a) - level.get(b) || a - b);
  return { ops, level, from };
}

/**
 * At most `max` ops of a flow, as a window that holds `current` when it is there (else the first ones).
 * @param {number[]} ops
 * @param {number} current
 * @param {number} max
 * @returns {{start: number, shown: number[]}}
 */
export function mtWindow(ops, current, max) {
  if (ops.length <= max) return { start: 0, shown: ops };
  const at = Math.max(0, ops.indexOf(current));
  const start = Math.max(0, Math.min(ops.length - max, at - (max >> 1)));
  return { start, shown: ops.slice(start, start + max) };
}
