// Layout of the landmark dataflow graph, computed from its topology (bundle.graph), for the width at hand.
// Pure geometry, no DOM. Three arrangements, tried in order until one fits without shrinking text much:
//   "h"  forward left→right on top, backward mirrored below it (∇x under x, flowing right→left)
//   "v"  forward top→bottom on the left, backward mirrored beside it (flowing bottom→top)
//   "s"  stacked, for phones: forward top→bottom, then backward top→bottom, each layered on its own
// Parameter gradients (leaves hanging off one backward node, with no forward tensor of their own) are docked to
// that node as small chips instead of taking a layer each: below it in "h", to its right in "v" and "s" — never
// on the side where edges enter. Edges that skip a layer run in lanes on the band's outer side. Labels cannot
// overlap: every box is sized from measured text and every slot, gap, lane and label strip is reserved first.

export const GL_MIN_SCALE = 0.86; // an arrangement needing more shrinking than this is rejected (text stays readable)

// Topology → layers, mirror partners, docked chips. Independent of the width: computed once per bundle.
// chipRank(id) orders the chips of one node (so the same parameters sit in the same order on every device).
export function glModel(graph, chipRank = () => 0) {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const ins = new Map(),
    outs = new Map();
  for (const n of graph.nodes) {
    ins.set(n.id, []);
    outs.set(n.id, []);
  }
  const edges = [];
  const seen = new Set();
  for (const e of graph.edges) {
    const k = e.from + "\u0000" + e.to;
    if (!byId.has(e.from) || !byId.has(e.to) || seen.has(k)) continue;
    seen.add(k);
    edges.push(e);
    outs.get(e.from).push(e.to);
    ins.get(e.to).push(e.from);
  }
  const order = new Map(graph.nodes.map((n, k) => [n.id, k]));
  const byEvent = (a, b) => byId.get(a).event - byId.get(b).event || order.get(a) - order.get(b);
  const fwd = graph.nodes
    .filter((n) => n.phase === "forward")
    .map((n) => n.id)
    .sort(byEvent);
  const fwdSet = new Set(fwd);
  const bwd = graph.nodes
    .filter((n) => !fwdSet.has(n.id))
    .map((n) => n.id)
    .sort(byEvent);
  const mate = new Map(); // backward id → the forward tensor it is the gradient of
  for (const id of bwd) if (id.startsWith("grad_") && fwdSet.has(id.slice(5))) mate.set(id, id.slice(5));
  const host = new Map(); // chip id → the backward node it hangs off
  for (const id of bwd) {
    const src = ins.get(id);
    if (mate.has(id) || outs.get(id).length || src.length !== 1 || fwdSet.has(src[0])) continue;
    host.set(id, src[0]);
  }
  for (const [chip, h] of host) if (host.has(h)) host.delete(chip); // chips hang off main nodes only
  const main = bwd.filter((id) => !host.has(id));
  const chipsOf = new Map(main.map((id) => [id, []]));
  for (const id of bwd) if (host.has(id)) chipsOf.get(host.get(id)).push(id);
  for (const list of chipsOf.values()) list.sort((a, b) => chipRank(a) - chipRank(b) || byEvent(a, b));
  const layerOf = (ids) => {
    // longest path from the sources, within `ids`
    const inSet = new Set(ids),
      layer = new Map();
    const visit = (id, stack) => {
      if (layer.has(id)) return layer.get(id);
      if (stack.has(id)) return 0; // a trace has no cycles; guard anyway
      stack.add(id);
      let l = 0;
      for (const s of ins.get(id)) if (inSet.has(s)) l = Math.max(l, visit(s, stack) + 1);
      stack.delete(id);
      layer.set(id, l);
      return l;
    };
    for (const id of ids) visit(id, new Set());
    return layer;
  };
  const fwdLayer = layerOf(fwd);
  const ownLayer = layerOf(main);
  const mirrorLayer = new Map(); // a backward node's layer under its forward tensor, else beside its neighbours
  for (const id of main) {
    if (mate.has(id)) {
      mirrorLayer.set(id, fwdLayer.get(mate.get(id)));
      continue;
    }
    const near = [...ins.get(id), ...outs.get(id)].filter((n) => mate.has(n)).map((n) => fwdLayer.get(mate.get(n)));
    mirrorLayer.set(id, near.length ? Math.max(0, Math.min(...near) - 1) : 0);
  }
  const mainEdges = edges.filter((e) => !host.has(e.to));
  const starts = main.filter((id) => !ins.get(id).some((s) => !host.has(s))); // where the backward begins
  return { byId, fwd, main, mate, host, chipsOf, fwdLayer, ownLayer, mirrorLayer, edges: mainEdges, byEvent, starts };
}

// One arrangement. size(id, mode) → {w, h, nw, nh}: the box with docked chips and the node inside it.
// m: metrics in px {pad, colGap, rowGap (between stacked nodes in "h"), layerGap (between layers in "v"/"s"),
// bandGap, bandLabel, lanePad, laneGap}; m.gaps[l] (optional) overrides the gap between layer l and l + 1.
export function glArrange(model, mode, size, m) {
  const H = mode === "h";
  const bands = [
    ["forward", model.fwd, model.fwdLayer],
    ["backward", model.main, mode === "s" ? model.ownLayer : model.mirrorLayer],
  ];
  const layerOfId = new Map();
  const groups = []; // {band, layer, ids}: the nodes of one layer of one band, side by side on the cross axis
  for (const [band, ids, layers] of bands) {
    const byLayer = new Map();
    for (const id of ids) {
      const l = layers.get(id);
      layerOfId.set(id, l);
      if (!byLayer.has(l)) byLayer.set(l, []);
      byLayer.get(l).push(id);
    }
    for (const [layer, list] of [...byLayer].sort((a, b) => a[0] - b[0])) {
      if (band === "backward" && mode !== "s") {
        // mirror the forward order: ∇q under q, ∇k under k
        const rank = (id) => (model.mate.has(id) ? model.fwd.indexOf(model.mate.get(id)) : model.fwd.length);
        list.sort((a, b) => rank(a) - rank(b) || model.byEvent(a, b));
      } else list.sort(model.byEvent);
      groups.push({ band, layer, ids: list });
    }
  }
  const b = (id) => size(id, mode);
  const mainSize = (id) => (H ? b(id).w : b(id).h);
  const crossSize = (id) => (H ? b(id).h : b(id).w);
  const crossGap = m.rowGap; // between the nodes of one layer, side by side
  const mainGap = H ? m.colGap : m.layerGap;
  const gapAfter = (l) => (mode !== "s" && m.gaps?.[l] !== undefined ? m.gaps[l] : mainGap);
  const slot = (g) => (mode === "s" ? `${g.band}:${g.layer}` : `${g.layer}`); // mirrored bands share layers
  const extent = new Map();
  for (const g of groups) extent.set(slot(g), Math.max(extent.get(slot(g)) ?? 0, ...g.ids.map(mainSize)));
  const groupCross = (g) => g.ids.reduce((t, id) => t + crossSize(id), 0) + crossGap * (g.ids.length - 1);
  const bandCross = (band) => Math.max(0, ...groups.filter((g) => g.band === band).map(groupCross));

  // edges between layers that are not neighbours run in lanes on the band's outer (cross-start) side
  const lanesOf = { forward: [], backward: [] };
  for (const e of model.edges) {
    const fe = model.fwdLayer.has(e.from),
      te = model.fwdLayer.has(e.to);
    if (fe !== te) continue; // between the passes: drawn as the turn from the loss, not here
    if (Math.abs(layerOfId.get(e.to) - layerOfId.get(e.from)) !== 1) lanesOf[fe ? "forward" : "backward"].push(e);
  }
  const laneRoom = (band) => (lanesOf[band].length ? m.lanePad + lanesOf[band].length * m.laneGap : 0);

  const layerStart = new Map();
  const placeLayers = (prefix, count, start) => {
    let at = start;
    for (let l = 0; l < count; l++) {
      layerStart.set(prefix + l, at);
      at += (extent.get(prefix + l) ?? 0) + (l < count - 1 ? gapAfter(l) : 0);
    }
    return at;
  };
  const count = (band) => 1 + Math.max(-1, ...groups.filter((g) => g.band === band).map((g) => g.layer));
  const cross0 = {},
    labels = [],
    lanes = [];
  const addLanes = (band, at0) => lanesOf[band].forEach((e, i) => lanes.push({ e, index: i, at: at0 - i * m.laneGap }));
  let width, height;
  if (mode === "s") {
    // lanes on the left, shared by both bands (they never overlap along the main axis)
    const x0 = m.pad + Math.max(laneRoom("forward"), laneRoom("backward"));
    const fStart = m.pad + m.bandLabel;
    const fEnd = placeLayers("forward:", count("forward"), fStart);
    const bStart = fEnd + m.bandGap + m.bandLabel;
    const bEnd = placeLayers("backward:", count("backward"), bStart);
    cross0.forward = cross0.backward = x0;
    labels.push({ band: "forward", x: x0, y: fStart - m.bandLabel, dir: "down" });
    labels.push({ band: "backward", x: x0, y: bStart - m.bandLabel, dir: "down" });
    addLanes("forward", x0 - m.lanePad);
    addLanes("backward", x0 - m.lanePad);
    width = x0 + Math.max(bandCross("forward"), bandCross("backward")) + m.pad;
    height = bEnd + m.pad;
  } else {
    const n = Math.max(count("forward"), count("backward"));
    const mainEnd = placeLayers("", n, m.pad + (H ? 0 : m.bandLabel));
    const f0 = m.pad + (H ? m.bandLabel : 0) + laneRoom("forward");
    const bLabel = f0 + bandCross("forward") + m.bandGap;
    const b0 = bLabel + (H ? m.bandLabel : 0) + laneRoom("backward");
    cross0.forward = f0;
    cross0.backward = b0;
    addLanes("forward", f0 - m.lanePad);
    addLanes("backward", b0 - m.lanePad);
    const crossEnd = b0 + bandCross("backward") + m.pad;
    if (H) {
      labels.push({ band: "forward", x: m.pad, y: m.pad, dir: "right" });
      labels.push({ band: "backward", x: m.pad, y: bLabel, dir: "left" });
    } else {
      labels.push({ band: "forward", x: f0 - laneRoom("forward"), y: m.pad, dir: "down" });
      labels.push({ band: "backward", x: b0 - laneRoom("backward"), y: m.pad, dir: "up" });
    }
    width = H ? mainEnd + m.pad : crossEnd;
    height = H ? crossEnd : mainEnd + m.pad;
  }
  // the gap on each side of a layer, along the main axis
  const keys = [...layerStart.keys()];
  const bandOfKey = (k) => (k.includes(":") ? k.split(":")[0] : "");
  const gapsOf = (k) => {
    // "s" keys are "band:layer": a band's first layer has no gap before it
    const at = keys.indexOf(k),
      prev = keys[at - 1],
      next = keys[at + 1];
    const start = layerStart.get(k),
      end = start + extent.get(k);
    const before =
      prev !== undefined && bandOfKey(prev) === bandOfKey(k)
        ? start - (layerStart.get(prev) + extent.get(prev))
        : m.pad;
    const after = next !== undefined && bandOfKey(next) === bandOfKey(k) ? layerStart.get(next) - end : m.pad;
    return { before, after };
  };
  // flow direction along the main axis: forward +1; a mirrored backward runs against it
  const flow = { forward: 1, backward: mode === "s" ? 1 : -1 };
  const pos = new Map(); // id → {x, y, w, h (box), nx, ny, nw, nh (the node), band, span, gapIn, gapOut}
  for (const g of groups) {
    const k = slot(g);
    const gaps = gapsOf(k);
    const dir = flow[g.band];
    let c = cross0[g.band] + (bandCross(g.band) - groupCross(g)) / 2; // centre each layer in its band
    for (const id of g.ids) {
      const sz = b(id);
      const at = layerStart.get(k) + (extent.get(k) - mainSize(id)) / 2;
      const p = H ? { x: at, y: c, w: sz.w, h: sz.h } : { x: c, y: at, w: sz.w, h: sz.h };
      p.nw = sz.nw;
      p.nh = sz.nh;
      p.nx = H ? p.x + (sz.w - sz.nw) / 2 : p.x;
      p.ny = H ? p.y : p.y + (sz.h - sz.nh) / 2;
      p.band = g.band;
      p.span = [layerStart.get(k), layerStart.get(k) + extent.get(k)];
      p.gapIn = dir > 0 ? gaps.before : gaps.after; // the gap on its entry side
      p.gapOut = dir > 0 ? gaps.after : gaps.before;
      pos.set(id, p);
      c += crossSize(id) + crossGap;
    }
  }
  return { mode, width, height, pos, lanes, labels, layerOf: layerOfId, flow };
}

// The first arrangement that fits `avail` px at a scale ≥ GL_MIN_SCALE; the narrowest one otherwise.
// In "h", spare width goes first to the gaps where a node wants room on its entry side (entryNeed(id) px: its
// cast tag) when all of them fit, then evenly to every gap up to m.maxColGap.
export function glChoose(model, size, m, avail, entryNeed = () => 0, modes = ["h", "v", "s"]) {
  let best = null;
  for (const mode of modes) {
    let a = glArrange(model, mode, size, m);
    a.scale = Math.min(1, avail / a.width);
    if (a.scale < GL_MIN_SCALE) {
      if (!best || a.width < best.width) best = a;
      continue;
    }
    if (mode === "h") {
      const n = 1 + Math.max(...a.layerOf.values());
      const gaps = new Array(Math.max(0, n - 1)).fill(m.colGap);
      for (const [id, l] of a.layerOf) {
        // entry side: before the layer going forward, after it going back
        const need = entryNeed(id);
        const at = a.flow[a.pos.get(id).band] > 0 ? l - 1 : l;
        if (need > 0 && at >= 0 && at < gaps.length) gaps[at] = Math.max(gaps[at], need);
      }
      const wanted = glArrange(model, mode, size, { ...m, gaps });
      const roomy = wanted.width <= avail;
      const base = roomy ? gaps : gaps.map(() => m.colGap);
      const spare = avail - (roomy ? wanted.width : a.width);
      // each gap grows by at most spare / n, so the total stays within `avail`
      const grown = base.map((g) => Math.max(g, Math.min(m.maxColGap, m.colGap + spare / Math.max(1, base.length))));
      a = glArrange(model, mode, size, { ...m, gaps: grown });
      a.scale = Math.min(1, avail / a.width);
    }
    return a;
  }
  return best;
}

// SVG path data of an edge between two placed nodes. Neighbouring layers: a curve from the exit side
// to the entry side. Farther (a lane edge): out of the exit side into the gap after its layer, along that gap to
// the lane outside the band, along the lane, down the gap before the target's layer and in at its entry side;
// gaps and lanes hold no nodes, so such an edge never crosses one.
export function glEdgePath(a, from, to) {
  const p = a.pos.get(from),
    q = a.pos.get(to);
  const H = a.mode === "h";
  const dir = a.flow[p.band];
  // main/cross coordinates of a node's exit and entry points (the node's middle on its cross axis)
  const mid = (n) => (H ? n.ny + n.nh / 2 : n.nx + n.nw / 2);
  const exitAt = (n) => (H ? (dir > 0 ? n.nx + n.nw : n.nx) : dir > 0 ? n.ny + n.nh : n.ny);
  const entryAt = (n) => (H ? (dir > 0 ? n.nx : n.nx + n.nw) : dir > 0 ? n.ny : n.ny + n.nh);
  const xy = (main, cross) => (H ? `${main},${cross}` : `${cross},${main}`);
  const lane = a.lanes.find((l) => l.e.from === from && l.e.to === to);
  const m1 = exitAt(p),
    c1 = mid(p),
    m2 = entryAt(q),
    c2 = mid(q);
  if (!lane) {
    const mm = (m1 + m2) / 2;
    return `M${xy(m1, c1)} C${xy(mm, c1)} ${xy(mm, c2)} ${xy(m2, c2)}`;
  }
  const r = Math.min(8, p.gapOut / 5, q.gapIn / 5);
  const k = lane.index ?? 0;
  const g1 = (dir > 0 ? p.span[1] : p.span[0]) + dir * p.gapOut * (0.2 + 0.08 * k); // into the gap after p
  const g2 = (dir > 0 ? q.span[0] : q.span[1]) - dir * q.gapIn * (0.8 - 0.08 * k); // far side of q's gap
  const L = lane.at;
  const s1 = Math.sign(L - c1) || -1,
    s2 = Math.sign(c2 - L) || 1,
    sd = Math.sign(g2 - g1) || dir;
  const d = [
    `M${xy(m1, c1)}`,
    `L${xy(g1 - dir * r, c1)}`,
    `Q${xy(g1, c1)} ${xy(g1, c1 + s1 * r)}`,
    `L${xy(g1, L - s1 * r)}`,
    `Q${xy(g1, L)} ${xy(g1 + sd * r, L)}`,
    `L${xy(g2 - sd * r, L)}`,
    `Q${xy(g2, L)} ${xy(g2, L + s2 * r)}`,
    `L${xy(g2, c2 - s2 * r)}`,
    `Q${xy(g2, c2)} ${xy(g2 + dir * r, c2)}`,
    `L${xy(m2, c2)}`,
  ].join(" ");
  return d;
}
