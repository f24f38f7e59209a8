// Built by assets/components/stepper/build.mjs from the modules beside it; do not edit (npm run build).
// assets/components/stepper/bytes.js
function sameBytes(a, b) {
  if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}
function b64(text) {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let k = 0; k < bin.length; k++) out[k] = bin.charCodeAt(k);
  return out;
}

// assets/components/stepper/floatbits.js
var FB_TWO = 2n;
function fbSpec(f) {
  const S = f.sign_bits, E = f.exponent_bits, M = f.mantissa_bits;
  const special = f.special_codes;
  const hasSub = f.has_subnormals;
  const top = (1n << BigInt(E + M)) - 1n;
  const skip = special === "ieee" ? 1n << BigInt(M) : special === "top_nan" ? 1n : 0n;
  return {
    name: f.name,
    short: f.short,
    bits: f.bits,
    S,
    E,
    M,
    bias: f.bias,
    hasInf: f.has_inf,
    hasNan: f.has_nan,
    hasSub,
    special,
    hasZero: f.has_zero ?? !(S === 0 && M === 0),
    // only an unsigned, mantissa-less format (e8m0) lacks zero
    hasNegZero: f.has_negative_zero ?? (S === 1 && special !== "negzero_nan"),
    emin: hasSub ? 1 - f.bias : -f.bias,
    // log2 of the smallest normal
    signBit: S ? 1n << BigInt(E + M) : 0n,
    maxMag: top - skip
    // largest finite pattern with the sign clear
  };
}
function fbDecompose(x) {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, x);
  const hi = dv.getUint32(0), lo = dv.getUint32(4);
  const e = hi >>> 20 & 2047;
  const frac = BigInt(hi & 1048575) << 32n | BigInt(lo);
  return e === 0 ? { n: frac, q: -1074 } : { n: frac | 1n << 52n, q: e - 1075 };
}
function fbBitLength(n) {
  return n === 0n ? 0 : n.toString(2).length;
}
function fbNanCode(sp, negative) {
  const s2 = negative ? sp.signBit : 0n;
  const M = BigInt(sp.M);
  if (sp.special === "ieee") return s2 | (1n << BigInt(sp.E)) - 1n << M | 1n << M - 1n;
  if (sp.special === "top_nan") return s2 | (1n << BigInt(sp.E + sp.M)) - 1n;
  return sp.signBit;
}
function fbOverflowCode(sp, negative) {
  const s2 = negative ? sp.signBit : 0n;
  if (sp.hasInf) return s2 | (1n << BigInt(sp.E)) - 1n << BigInt(sp.M);
  if (sp.hasNan) return fbNanCode(sp, negative);
  return s2 | sp.maxMag;
}
function fbRoundMagnitude(sp, n, q) {
  const M = sp.M;
  const e = fbBitLength(n) - 1 + q;
  let qexp = Math.max(e, sp.emin) - M;
  let N = n, D = 1n;
  if (q - qexp >= 0) N = n << BigInt(q - qexp);
  else D = 1n << BigInt(qexp - q);
  let lo = N / D;
  if (!sp.hasSub && e < sp.emin) lo = 0n;
  const hi = lo === 0n && !sp.hasSub ? 1n << BigInt(M) : lo + 1n;
  let k;
  if (N === lo * D) k = lo;
  else {
    const twice = FB_TWO * N, mid = (lo + hi) * D;
    k = twice < mid || twice === mid && lo % FB_TWO === 0n ? lo : hi;
  }
  if (k === 0n && !sp.hasZero) k = 1n << BigInt(M);
  if (k === 0n) return 0n;
  if (k === 1n << BigInt(M + 1)) {
    k >>= 1n;
    qexp += 1;
  }
  if (k < 1n << BigInt(M)) return k;
  return BigInt(qexp + M + sp.bias) << BigInt(M) | k - (1n << BigInt(M));
}
function fbEncode(x, sp) {
  const negative = x < 0 || Object.is(x, -0);
  const s2 = negative ? sp.signBit : 0n;
  if (!sp.S && negative && !Number.isNaN(x)) return fbNanCode(sp, false);
  if (Number.isNaN(x)) return sp.hasNan ? fbNanCode(sp, false) : 0n;
  if (!Number.isFinite(x)) return fbOverflowCode(sp, negative);
  if (x === 0) {
    if (!sp.hasZero) return fbNanCode(sp, false);
    return sp.hasNegZero ? s2 : 0n;
  }
  const { n, q } = fbDecompose(Math.abs(x));
  const mag = fbRoundMagnitude(sp, n, q);
  if (mag > sp.maxMag) return fbOverflowCode(sp, negative);
  if (mag === 0n) return sp.hasNegZero ? s2 : 0n;
  return s2 | mag;
}
function fbSplit(sp, code) {
  const M = BigInt(sp.M), E = BigInt(sp.E);
  return {
    sign: sp.S ? Number(code >> E + M & 1n) : 0,
    e: Number(code >> M & (1n << E) - 1n),
    m: code & (1n << M) - 1n
  };
}
function fbClassify(sp, sign, e, m) {
  const top = 2 ** sp.E - 1;
  if (sp.special === "ieee" && e === top) return m === 0n ? "inf" : "nan";
  if (sp.special === "top_nan" && e === top && m === (1n << BigInt(sp.M)) - 1n) return "nan";
  if (sp.special === "negzero_nan" && sign && e === 0 && m === 0n) return "nan";
  if (e === 0 && sp.hasSub) return m === 0n ? "zero" : "subnormal";
  return "normal";
}
function fbScale(m, k) {
  let v = Number(m);
  while (k < -1e3) {
    v *= 2 ** -1e3;
    k += 1e3;
  }
  while (k > 1e3) {
    v *= 2 ** 1e3;
    k -= 1e3;
  }
  return v * 2 ** k;
}
function fbValue(sp, code) {
  const { sign, e, m } = fbSplit(sp, code);
  const cls = fbClassify(sp, sign, e, m);
  if (cls === "nan") return NaN;
  let mag;
  if (cls === "inf") mag = Infinity;
  else if (cls === "zero" || cls === "subnormal") mag = fbScale(m, 1 - sp.bias - sp.M);
  else mag = fbScale(1n << BigInt(sp.M) | m, e - sp.bias - sp.M);
  return sign ? -mag : mag;
}
function fbNeighbour(sp, code, step) {
  const top = sp.maxMag + (sp.hasInf ? 1n : 0n);
  const lo = sp.S ? -top : 0n;
  const neg = sp.S && (code & sp.signBit) !== 0n;
  const mag = sp.S ? code & sp.signBit - 1n : code;
  const ordinal = (neg ? -mag : mag) + BigInt(step);
  if (ordinal < lo || ordinal > top) return null;
  const next = ordinal < 0n ? sp.signBit | -ordinal : ordinal;
  const v = fbValue(sp, next);
  return Number.isNaN(v) ? null : v;
}
function fbDescribe(x, sp) {
  const code = fbEncode(x, sp);
  const { sign, e, m } = fbSplit(sp, code);
  const cls = fbClassify(sp, sign, e, m);
  const value = fbValue(sp, code);
  const bits = code.toString(2).padStart(sp.bits, "0");
  let ulp = NaN;
  if (cls === "normal") ulp = fbScale(1n, e - sp.bias - sp.M);
  else if (cls === "subnormal" || cls === "zero") ulp = fbScale(1n, sp.emin - sp.M);
  return {
    format: sp.name,
    value,
    bits,
    code,
    cls,
    sign,
    exponentBits: bits.slice(sp.S, sp.S + sp.E),
    mantissaBits: bits.slice(sp.S + sp.E),
    exponentRaw: e,
    exponentUnbiased: cls === "normal" ? e - sp.bias : cls === "subnormal" ? sp.emin : null,
    mantissa: m,
    ulp,
    nextUp: cls === "nan" ? null : fbNeighbour(sp, code, 1),
    nextDown: cls === "nan" ? null : fbNeighbour(sp, code, -1)
  };
}

// assets/components/stepper/graphlayout.js
var GL_MIN_SCALE = 0.86;
function glModel(graph, chipRank = () => 0) {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const ins = /* @__PURE__ */ new Map(), outs = /* @__PURE__ */ new Map();
  for (const n of graph.nodes) {
    ins.set(n.id, []);
    outs.set(n.id, []);
  }
  const edges = [];
  const seen = /* @__PURE__ */ new Set();
  for (const e of graph.edges) {
    const k = e.from + "\0" + e.to;
    if (!byId.has(e.from) || !byId.has(e.to) || seen.has(k)) continue;
    seen.add(k);
    edges.push(e);
    outs.get(e.from).push(e.to);
    ins.get(e.to).push(e.from);
  }
  const order = new Map(graph.nodes.map((n, k) => [n.id, k]));
  const byEvent = (a, b) => byId.get(a).event - byId.get(b).event || order.get(a) - order.get(b);
  const fwd = graph.nodes.filter((n) => n.phase === "forward").map((n) => n.id).sort(byEvent);
  const fwdSet = new Set(fwd);
  const bwd = graph.nodes.filter((n) => !fwdSet.has(n.id)).map((n) => n.id).sort(byEvent);
  const mate = /* @__PURE__ */ new Map();
  for (const id of bwd) if (id.startsWith("grad_") && fwdSet.has(id.slice(5))) mate.set(id, id.slice(5));
  const host = /* @__PURE__ */ new Map();
  for (const id of bwd) {
    const src = ins.get(id);
    if (mate.has(id) || outs.get(id).length || src.length !== 1 || fwdSet.has(src[0])) continue;
    host.set(id, src[0]);
  }
  for (const [chip, h2] of host) if (host.has(h2)) host.delete(chip);
  const main = bwd.filter((id) => !host.has(id));
  const chipsOf = new Map(main.map((id) => [id, []]));
  for (const id of bwd) if (host.has(id)) chipsOf.get(host.get(id)).push(id);
  for (const list of chipsOf.values()) list.sort((a, b) => chipRank(a) - chipRank(b) || byEvent(a, b));
  const layerOf = (ids) => {
    const inSet = new Set(ids), layer = /* @__PURE__ */ new Map();
    const visit = (id, stack) => {
      if (layer.has(id)) return layer.get(id);
      if (stack.has(id)) return 0;
      stack.add(id);
      let l = 0;
      for (const s2 of ins.get(id)) if (inSet.has(s2)) l = Math.max(l, visit(s2, stack) + 1);
      stack.delete(id);
      layer.set(id, l);
      return l;
    };
    for (const id of ids) visit(id, /* @__PURE__ */ new Set());
    return layer;
  };
  const fwdLayer = layerOf(fwd);
  const ownLayer = layerOf(main);
  const mirrorLayer = /* @__PURE__ */ new Map();
  for (const id of main) {
    if (mate.has(id)) {
      mirrorLayer.set(id, fwdLayer.get(mate.get(id)));
      continue;
    }
    const near = [...ins.get(id), ...outs.get(id)].filter((n) => mate.has(n)).map((n) => fwdLayer.get(mate.get(n)));
    mirrorLayer.set(id, near.length ? Math.max(0, Math.min(...near) - 1) : 0);
  }
  const mainEdges = edges.filter((e) => !host.has(e.to));
  const starts = main.filter((id) => !ins.get(id).some((s2) => !host.has(s2)));
  return { byId, fwd, main, mate, host, chipsOf, fwdLayer, ownLayer, mirrorLayer, edges: mainEdges, byEvent, starts };
}
function glArrange(model, mode, size, m) {
  const H = mode === "h";
  const bands = [
    ["forward", model.fwd, model.fwdLayer],
    ["backward", model.main, mode === "s" ? model.ownLayer : model.mirrorLayer]
  ];
  const layerOfId = /* @__PURE__ */ new Map();
  const groups = [];
  for (const [band, ids, layers] of bands) {
    const byLayer = /* @__PURE__ */ new Map();
    for (const id of ids) {
      const l = layers.get(id);
      layerOfId.set(id, l);
      if (!byLayer.has(l)) byLayer.set(l, []);
      byLayer.get(l).push(id);
    }
    for (const [layer, list] of [...byLayer].sort((a, b2) => a[0] - b2[0])) {
      if (band === "backward" && mode !== "s") {
        const rank = (id) => model.mate.has(id) ? model.fwd.indexOf(model.mate.get(id)) : model.fwd.length;
        list.sort((a, b2) => rank(a) - rank(b2) || model.byEvent(a, b2));
      } else list.sort(model.byEvent);
      groups.push({ band, layer, ids: list });
    }
  }
  const b = (id) => size(id, mode);
  const mainSize = (id) => H ? b(id).w : b(id).h;
  const crossSize = (id) => H ? b(id).h : b(id).w;
  const crossGap = m.rowGap;
  const mainGap = H ? m.colGap : m.layerGap;
  const gapAfter = (l) => mode !== "s" && m.gaps?.[l] !== void 0 ? m.gaps[l] : mainGap;
  const slot = (g) => mode === "s" ? `${g.band}:${g.layer}` : `${g.layer}`;
  const extent = /* @__PURE__ */ new Map();
  for (const g of groups) extent.set(slot(g), Math.max(extent.get(slot(g)) ?? 0, ...g.ids.map(mainSize)));
  const groupCross = (g) => g.ids.reduce((t, id) => t + crossSize(id), 0) + crossGap * (g.ids.length - 1);
  const bandCross = (band) => Math.max(0, ...groups.filter((g) => g.band === band).map(groupCross));
  const lanesOf = { forward: [], backward: [] };
  for (const e of model.edges) {
    const fe = model.fwdLayer.has(e.from), te = model.fwdLayer.has(e.to);
    if (fe !== te) continue;
    if (Math.abs(layerOfId.get(e.to) - layerOfId.get(e.from)) !== 1) lanesOf[fe ? "forward" : "backward"].push(e);
  }
  const laneRoom = (band) => lanesOf[band].length ? m.lanePad + lanesOf[band].length * m.laneGap : 0;
  const layerStart = /* @__PURE__ */ new Map();
  const placeLayers = (prefix, count2, start) => {
    let at = start;
    for (let l = 0; l < count2; l++) {
      layerStart.set(prefix + l, at);
      at += (extent.get(prefix + l) ?? 0) + (l < count2 - 1 ? gapAfter(l) : 0);
    }
    return at;
  };
  const count = (band) => 1 + Math.max(-1, ...groups.filter((g) => g.band === band).map((g) => g.layer));
  const cross0 = {}, labels = [], lanes = [];
  const addLanes = (band, at0) => lanesOf[band].forEach((e, i) => lanes.push({ e, index: i, at: at0 - i * m.laneGap }));
  let width, height;
  if (mode === "s") {
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
  const keys = [...layerStart.keys()];
  const bandOfKey = (k) => k.includes(":") ? k.split(":")[0] : "";
  const gapsOf = (k) => {
    const at = keys.indexOf(k), prev = keys[at - 1], next = keys[at + 1];
    const start = layerStart.get(k), end = start + extent.get(k);
    const before = prev !== void 0 && bandOfKey(prev) === bandOfKey(k) ? start - (layerStart.get(prev) + extent.get(prev)) : m.pad;
    const after = next !== void 0 && bandOfKey(next) === bandOfKey(k) ? layerStart.get(next) - end : m.pad;
    return { before, after };
  };
  const flow = { forward: 1, backward: mode === "s" ? 1 : -1 };
  const pos = /* @__PURE__ */ new Map();
  for (const g of groups) {
    const k = slot(g);
    const gaps = gapsOf(k);
    const dir = flow[g.band];
    let c = cross0[g.band] + (bandCross(g.band) - groupCross(g)) / 2;
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
      p.gapIn = dir > 0 ? gaps.before : gaps.after;
      p.gapOut = dir > 0 ? gaps.after : gaps.before;
      pos.set(id, p);
      c += crossSize(id) + crossGap;
    }
  }
  return { mode, width, height, pos, lanes, labels, layerOf: layerOfId, flow };
}
function glChoose(model, size, m, avail, entryNeed = () => 0, modes = ["h", "v", "s"]) {
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
        const need = entryNeed(id);
        const at = a.flow[a.pos.get(id).band] > 0 ? l - 1 : l;
        if (need > 0 && at >= 0 && at < gaps.length) gaps[at] = Math.max(gaps[at], need);
      }
      const wanted = glArrange(model, mode, size, { ...m, gaps });
      const roomy = wanted.width <= avail;
      const base = roomy ? gaps : gaps.map(() => m.colGap);
      const spare = avail - (roomy ? wanted.width : a.width);
      const grown = base.map((g) => Math.max(g, Math.min(m.maxColGap, m.colGap + spare / Math.max(1, base.length))));
      a = glArrange(model, mode, size, { ...m, gaps: grown });
      a.scale = Math.min(1, avail / a.width);
    }
    return a;
  }
  return best;
}
function glEdgePath(a, from, to) {
  const p = a.pos.get(from), q = a.pos.get(to);
  const H = a.mode === "h";
  const dir = a.flow[p.band];
  const mid = (n) => H ? n.ny + n.nh / 2 : n.nx + n.nw / 2;
  const exitAt = (n) => H ? dir > 0 ? n.nx + n.nw : n.nx : dir > 0 ? n.ny + n.nh : n.ny;
  const entryAt = (n) => H ? dir > 0 ? n.nx : n.nx + n.nw : dir > 0 ? n.ny : n.ny + n.nh;
  const xy = (main, cross) => H ? `${main},${cross}` : `${cross},${main}`;
  const lane = a.lanes.find((l) => l.e.from === from && l.e.to === to);
  const m1 = exitAt(p), c1 = mid(p), m2 = entryAt(q), c2 = mid(q);
  if (!lane) {
    const mm = (m1 + m2) / 2;
    return `M${xy(m1, c1)} C${xy(mm, c1)} ${xy(mm, c2)} ${xy(m2, c2)}`;
  }
  const r = Math.min(8, p.gapOut / 5, q.gapIn / 5);
  const k = lane.index ?? 0;
  const g1 = (dir > 0 ? p.span[1] : p.span[0]) + dir * p.gapOut * (0.2 + 0.08 * k);
  const g2 = (dir > 0 ? q.span[0] : q.span[1]) - dir * q.gapIn * (0.8 - 0.08 * k);
  const L = lane.at;
  const s1 = Math.sign(L - c1) || -1, s2 = Math.sign(c2 - L) || 1, sd = Math.sign(g2 - g1) || dir;
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
    `L${xy(m2, c2)}`
  ].join(" ");
  return d;
}

// assets/components/stepper/bundle.js
function shownElement(el, smp) {
  return el.map((v, k) => Math.max(0, Math.min(smp.shape[k] - 1, v | 0)));
}
var KEEP_CHUNKS = 32;
function thinEvent(e) {
  return { ...e, out: e.out.map((o) => ({ dtype: o.dtype, shape: o.shape })) };
}
var BundleReader = class {
  /**
   * @param {object} b the lesson bundle (bundle.schema.json, Bundle)
   * @param {string[]} paramOrder parameter names (weight, bias) in the order their gradient chips are drawn
   * @param {{stream?: {events: number, chunk: number} | null}} [options] `stream` (meta.stream): `b` is a streamed
   *   run's head, its events thin but the first chunk's; `fill` makes a chunk whole when it arrives
   */
  constructor(b, paramOrder = [], { stream = null } = {}) {
    this.b = b;
    this.stream = stream;
    this.whole = new Set(stream ? [0] : []);
    this.firstNonfinite = b.first_nonfinite;
    this.sig = JSON.stringify([b.run.config, b.run.device, b.run.autocast_dtype]);
    this.samples = /* @__PURE__ */ new Map();
    this.specs = /* @__PURE__ */ new Map();
    this.storyOf = new Map(b.story.map((st, k) => [st.event, k]));
    this.landmarkEvents = new Set(Object.values(b.landmarks));
    this.keyIndex = new Map(b.events.map((e) => [e.key, e.i]));
    this.castCache = /* @__PURE__ */ new Map();
    this.lists = /* @__PURE__ */ new Map();
    this.model = glModel(b.graph, (id) => {
      const k = paramOrder.indexOf(id.split(".").pop());
      return k < 0 ? paramOrder.length : k;
    });
    this.probsEvent = b.landmarks.probs;
  }
  /** The sample of the attention probabilities, or null (no heatmap). */
  probs() {
    return this.probsEvent === void 0 ? null : this.sample(this.probsEvent);
  }
  // the steps of (view, phase): event indices in execution order; an empty filter falls back to every phase
  list(view, phase) {
    const k = view + "/" + phase;
    if (!this.lists.has(k)) {
      const all = view === "story" ? this.b.story.map((x) => x.event) : this.b.events.map((e) => e.i);
      const some = phase === "all" ? all : all.filter((i) => this.b.events[i].phase === phase);
      this.lists.set(k, some.length ? some : all);
    }
    return this.lists.get(k);
  }
  // the event a place {view, phase, pos} shows: of a streamed run, thin until its chunk arrives (see `ready`)
  eventAt(place) {
    const l = this.list(place.view, place.phase);
    return this.b.events[l[Math.min(place.pos, l.length - 1)]];
  }
  // the chunk of a streamed run that holds event i
  chunkOf(i) {
    return Math.floor(i / this.stream.chunk);
  }
  // is event i whole (its outputs' statistics and sample here)? Always, unless the run is streamed
  ready(i) {
    if (!this.stream) return true;
    const k = this.chunkOf(i);
    if (!this.whole.has(k)) return false;
    this.whole.delete(k);
    this.whole.add(k);
    return true;
  }
  // chunk k of a streamed run arrived (its events whole, in order): they replace the thin ones; past KEEP_CHUNKS
  // the least recently used chunk goes back to thin events. False (and nothing changed) for a chunk that does not
  // fit this run.
  fill(k, events) {
    const first = k * this.stream.chunk;
    const count = Math.min(this.stream.chunk, this.b.events.length - first);
    if (!Array.isArray(events) || count <= 0 || events.length !== count) return false;
    if (events.some((e, j) => e?.i !== first + j || !Array.isArray(e.out))) return false;
    events.forEach((e, j) => this.swap(first + j, e));
    this.whole.delete(k);
    this.whole.add(k);
    while (this.whole.size > KEEP_CHUNKS) {
      const old = this.whole.values().next().value;
      this.whole.delete(old);
      const from = old * this.stream.chunk;
      const end = Math.min(from + this.stream.chunk, this.b.events.length);
      for (let i = from; i < end; i++) this.swap(i, thinEvent(this.b.events[i]));
    }
    return true;
  }
  swap(i, e) {
    this.b.events[i] = e;
    this.samples.delete(i);
    this.castCache.clear();
  }
  // position in the current list of event i: itself, else the story step it is part of (the next one in its phase)
  positionOf(i, view, listPhase) {
    const l = this.list(view, listPhase);
    const at = l.indexOf(i);
    if (at >= 0) return at;
    const phase = this.b.events[i]?.phase;
    const next = l.findIndex((j) => j >= i && this.b.events[j].phase === phase);
    if (next >= 0) return next;
    let best = 0;
    l.forEach((j, k) => {
      if (j <= i) best = k;
    });
    return best;
  }
  // the event of a new bundle that shows the same tensor: same key, else nearest by position within its phase
  matchEvent({ key, i, phase }) {
    if (key && this.keyIndex.has(key)) return this.keyIndex.get(key);
    const same = this.b.events.filter((e) => e.phase === phase);
    if (!same.length) return Math.min(i ?? 0, this.b.events.length - 1);
    return same.reduce((a, e) => Math.abs(e.i - i) < Math.abs(a.i - i) ? e : a).i;
  }
  spec(dtype) {
    if (!this.specs.has(dtype)) {
      const f = this.b.formats[dtype];
      this.specs.set(dtype, f ? fbSpec(f) : null);
    }
    return this.specs.get(dtype);
  }
  // which output of event e a step shows: the landmark's own output (LayerNorm's backward makes three tensors, two
  // of them landmarks), else the first one that was measured
  shownOutput(e) {
    const named = e.landmarks?.length ? this.b.landmark_outputs?.[e.landmarks[0]] : void 0;
    if (named !== void 0 && e.out[named]?.stats) return named;
    return e.out.findIndex((o) => o.stats);
  }
  // the shown output of event i (see shownOutput), its sample decoded once: {shape [m, r, c], of, values, out}
  sample(i) {
    if (this.samples.has(i)) return this.samples.get(i);
    if (!this.ready(i)) return null;
    const e = this.b.events[i];
    const shown = e ? this.shownOutput(e) : -1;
    const k = shown >= 0 && e.out[shown].sample ? shown : e ? e.out.findIndex((o) => o.sample) : -1;
    let got = null;
    if (k >= 0) {
      const smp = e.out[k].sample;
      const bytes = typeof Uint8Array.fromBase64 === "function" ? Uint8Array.fromBase64(smp.values) : b64(smp.values);
      got = {
        shape: smp.shape,
        of: smp.of,
        values: new Float32Array(bytes.buffer, 0, bytes.length >> 2),
        out: e.out[k]
      };
    }
    this.samples.set(i, got);
    return got;
  }
  // autocast's casts of the story step ending at event i (and i itself when it is the gradient of a cast),
  // each with where its input came from: {event, from, to, landmark | param}
  casts(i) {
    if (this.castCache.has(i)) return this.castCache.get(i);
    const k = this.storyOf.get(i);
    const ids = k === void 0 ? [] : [...this.b.story[k].casts];
    if (this.b.events[i]?.cast && !ids.includes(i)) ids.push(i);
    const out = ids.map((c) => {
      const e = this.b.events[c];
      return { event: c, from: e.in[0]?.dtype, to: e.out[0]?.dtype, ...this.castSource(c) };
    });
    this.castCache.set(i, out);
    return out;
  }
  castSource(c) {
    const e = this.b.events[c];
    let src = e.src?.[0];
    for (let hops = 0; hops < 64; hops++) {
      if (typeof src === "string") return { param: src.replace(/^param:/, "") };
      if (typeof src !== "number") return {};
      const p = this.b.events[src];
      if (!p || p.phase !== e.phase) return {};
      if (p.landmarks?.length) return { landmark: p.landmarks[0] };
      src = p.src?.find((x) => typeof x === "number") ?? p.src?.[0];
    }
    return {};
  }
  // the landmark step an event belongs to (for the graph highlight in the Every-op view)
  stepEvent(i) {
    const phase = this.b.events[i].phase;
    const st = this.b.story.find((x) => x.event >= i && this.b.events[x.event].phase === phase);
    return st ? st.event : null;
  }
  // does event i's first measured output hold inf or NaN made by an overflow? (A causal mask's -inf is an input, not
  // an accident: nothing before the first op that created inf/NaN is marked.)
  nonfinite(i) {
    const first = this.firstNonfinite;
    if (!first || i < first.event) return false;
    const st = this.b.events[i]?.out.find((o) => o.stats)?.stats;
    return Boolean(st && (st.nan || st.posinf || st.neginf));
  }
};

// assets/components/stepper/goto.js
var channel = { last: null, pending: null, consumed: null, listeners: /* @__PURE__ */ new Set() };
var TRIES = 100;
var STEPPER_CARD = ".st-key-stepper [data-testid=stBidiComponentIsolated]";
function deliver(component) {
  const d = component.data;
  if (!d || typeof d !== "object" || !d.id || d.id === channel.last) return;
  channel.last = d.id;
  channel.pending = d;
  for (const listener of channel.listeners) listener(d);
  if (typeof d.target?.heading === "string") scrollToHeading(d.target.heading, TRIES);
  if (d.target?.scroll === "card") scrollToCard(d.id, TRIES);
}
function listen(listener) {
  channel.listeners.add(listener);
  return () => channel.listeners.delete(listener);
}
function pending() {
  return channel.pending && channel.pending.id !== channel.consumed ? channel.pending : null;
}
function consumed(id) {
  return channel.consumed === id;
}
function consume(id) {
  channel.consumed = id;
}
function scrollToCard(id, tries) {
  if (channel.last !== id) return;
  const card = document.querySelector(STEPPER_CARD)?.shadowRoot?.querySelector("[data-role=card]");
  if (card && channel.consumed === id) {
    requestAnimationFrame(() => card.scrollIntoView({ block: "nearest", behavior: "instant" }));
  } else if (tries > 0) setTimeout(() => scrollToCard(id, tries - 1), 100);
}
function scrollToHeading(text, tries) {
  const want = text.trim();
  const found = [...document.querySelectorAll("h1, h2, h3, h4")].find((h2) => h2.textContent.trim() === want);
  if (found) {
    const bar = document.querySelector(".st-key-tour_bar");
    found.style.scrollMarginTop = `${bar ? bar.getBoundingClientRect().bottom + 12 : 0}px`;
    holdInView(found);
  } else if (tries > 0) setTimeout(() => scrollToHeading(text, tries - 1), 100);
}
var TICK_MS = 100;
var SETTLE_MS = 1500;
var HOLD_MS = 15e3;
var READER = ["wheel", "touchmove", "keydown", "mousedown"];
function holdInView(heading) {
  let reader = false;
  const onReader = () => {
    reader = true;
  };
  for (const e of READER) window.addEventListener(e, onReader, { capture: true, passive: true });
  const started = performance.now();
  let top = null;
  let still = 0;
  const tick = () => {
    const now = pageTop(heading);
    if (now !== top) {
      top = now;
      still = 0;
      if (!reader) heading.scrollIntoView({ block: "start", behavior: "instant" });
    } else still += TICK_MS;
    if (reader || still >= SETTLE_MS || !heading.isConnected || performance.now() - started > HOLD_MS) {
      for (const e of READER) window.removeEventListener(e, onReader, { capture: true });
    } else setTimeout(tick, TICK_MS);
  };
  tick();
}
function pageTop(element) {
  let y = 0;
  for (let e = element; e; e = e.offsetParent) y += e.offsetTop;
  return y;
}

// assets/components/stepper/keys.js
var FIELD_TAGS = /* @__PURE__ */ new Set(["INPUT", "TEXTAREA", "SELECT", "CANVAS"]);
var ARROW_ROLES = /* @__PURE__ */ new Set([
  "slider",
  "spinbutton",
  "textbox",
  "combobox",
  "listbox",
  "option",
  "menu",
  "menuitem",
  "tab",
  "radio",
  "grid",
  "gridcell",
  "tree",
  "treeitem"
]);
var STEP_KEYS = ["ArrowRight", "ArrowLeft", "Home", "End"];
var lastInput = "none";
if (typeof window !== "undefined") {
  window.addEventListener("pointerdown", () => lastInput = "pointer", { capture: true });
  window.addEventListener("keydown", (e) => lastInput = e.key, { capture: true });
}
function keyMove(e, inside, last) {
  if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return null;
  const target = e.composedPath()[0];
  if (target && (FIELD_TAGS.has(target.tagName) || target.isContentEditable || ARROW_ROLES.has(target.getAttribute?.("role")) || target.closest?.("[role=grid], [role=menu]")))
    return null;
  if (e.key === "ArrowRight") return { by: 1 };
  if (e.key === "ArrowLeft") return { by: -1 };
  if (inside && e.key === "Home") return { pos: 0 };
  if (inside && e.key === "End") return { pos: last };
  return null;
}
var Keys = class {
  /**
   * @param {HTMLElement} app the stepper's region (tabindex -1: focusable, not a Tab stop)
   * @param {() => boolean} embedded whether the stepper is embedded (read on attach)
   * @param {(move: {by: number} | {pos: number}) => void} onMove
   * @param {() => number} last the last position of the current list
   */
  constructor(app, embedded, onMove, last) {
    this.app = app;
    this.isEmbedded = embedded;
    this.embedded = false;
    this.onMove = onMove;
    this.last = last;
    this.target = null;
    this.onKey = (e) => this.handle(e);
  }
  handle(e) {
    const move = keyMove(e, e.composedPath().includes(this.app), this.last());
    if (this.embedded && STEP_KEYS.includes(e.key) && move) e.stopPropagation();
    if (!move) return;
    e.preventDefault();
    this.onMove(move);
  }
  attach() {
    this.embedded = this.isEmbedded();
    this.target = this.embedded ? this.app : window;
    this.target.addEventListener("keydown", this.onKey);
  }
  detach() {
    this.target?.removeEventListener("keydown", this.onKey);
  }
  /** The keyboard to the stepper's region, where ←/→ step. */
  take() {
    this.app.focus({ preventScroll: true });
  }
  // A new run arrived from a change in the page's sidebar: focus still sits on that widget, where ←/→ would move a
  // caret or change a choice (a segmented control is a radio group), so the next → would not step. After a click
  // or Enter the reader is done there: the keyboard comes back to the stepper. A choice moved with arrows, Space
  // or Tab keeps its focus (a keyboard user may be going through the choices).
  takeFromSidebar() {
    if (this.isEmbedded() || !["pointer", "Enter"].includes(lastInput)) return;
    if (document.activeElement?.closest?.("[data-testid=stSidebar]")) this.take();
  }
};

// assets/components/stepper/layout.js
var STAGE_MIN_EM = 40;
var STAGE_CARD_EM = 27.8;
var Layout = class {
  /**
   * @param {HTMLElement} app the stepper's element
   * @param {Element} host the component's host element (what Streamlit scrolls)
   * @param {(changed: {graph: boolean, sizes: boolean}) => void} relayout after a resize: whether the graph needs a
   *   new arrangement, whether the values and heatmap panels need drawing again
   */
  constructor(app, host, relayout) {
    this.app = app;
    this.host = host;
    this.relayout = relayout;
    this.$ = (role) => app.querySelector(`[data-role=${role}]`);
    this.geom = {};
    this.measured = /* @__PURE__ */ new Map();
    this.stage = false;
    this.pending = false;
    this.resize = new ResizeObserver(() => this.schedule());
    this.shifted = new IntersectionObserver(() => this.measureTop(), { threshold: [0, 1] });
  }
  /** Read the sizes again (the texts measured so far are forgotten). */
  measure(publish2) {
    this.stage = Boolean(publish2);
    const cs = getComputedStyle(this.app);
    const font = parseFloat(cs.fontSize) || 16;
    const stage = this.stage && this.app.clientWidth >= STAGE_MIN_EM * font;
    this.app.classList.toggle("mpv-stage", stage);
    if (stage) {
      this.measureTop();
      this.app.style.setProperty("--mpv-controls-h", `${this.$("controls").offsetHeight}px`);
    }
    Object.assign(this.geom, {
      font,
      family: cs.fontFamily || "sans-serif",
      stage,
      // on a stage the graph's column is as wide as its arrangement needs, up to what the card leaves it
      graph: stage ? this.app.clientWidth - STAGE_CARD_EM * font : this.$("graph").clientWidth,
      values: this.$("values").clientWidth,
      heat: this.$("heat").clientWidth,
      measureText: (text, px, weight = 400) => this.measureText(text, px, weight)
    });
    this.measured = /* @__PURE__ */ new Map();
    return this.geom;
  }
  // on a stage: where the graph's column starts in the page scrolled to its start (the card's top: the graph itself
  // is sticky), so that the column ends at the first screen's bottom. Again whenever the graph's visible part changes
  // (this.shifted): what Streamlit shows above the stepper may grow after it mounted.
  measureTop() {
    if (!this.app.classList.contains("mpv-stage")) return;
    let scrolled = window.scrollY;
    for (let n = this.host; n; n = n.parentElement) scrolled += n.scrollTop;
    const top = `${Math.round(this.$("card").getBoundingClientRect().top + scrolled)}px`;
    if (this.app.style.getPropertyValue("--mpv-graph-top") !== top) this.app.style.setProperty("--mpv-graph-top", top);
  }
  // cached per build: labels repeat from step to step
  measureText(text, px, weight = 400) {
    const k = `${weight}|${px}|${text}`;
    if (!this.measured.has(k)) {
      const ctx = this.canvas ??= document.createElement("canvas").getContext("2d");
      ctx.font = `${weight} ${px}px ${this.geom.family}`;
      this.measured.set(k, ctx.measureText(text).width);
    }
    return this.measured.get(k);
  }
  // after a resize, once per frame: measure again and say what the new sizes need drawn again
  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      const before = { ...this.geom };
      const g = this.measure(this.stage);
      this.relayout({
        graph: Math.abs(g.graph - before.graph) > 4 || g.font !== before.font || g.stage !== before.stage,
        sizes: g.values !== before.values || g.heat !== before.heat || g.font !== before.font
      });
    });
  }
  observe() {
    this.resize.observe(this.app);
    this.shifted.observe(this.$("graph"));
  }
  disconnect() {
    this.resize.disconnect();
    this.shifted.disconnect();
  }
};

// mpviz/contracts/stepper_meta.schema.json
var stepper_meta_schema_default = {
  $id: "mpviz/contracts/stepper_meta.schema.json",
  title: "StepperMeta",
  description: `The stepper payload's "meta" (mpviz/presentation/stepper_payload.py builds it, assets/components/stepper/meta.js reads it): how this mount of the stepper behaves. A flag is present (1) or absent, never 0.`,
  type: "object",
  properties: {
    key: {
      description: "the component's key: names its saved place in the browser's sessionStorage",
      type: "string"
    },
    locale: { description: "the language the words are in", type: "string" },
    scale: {
      description: "the component's --mpv-scale (presenter mode's larger type); absent: 1",
      type: "number",
      exclusiveMinimum: 0
    },
    publish: {
      description: 'presenter mode: the stepper sends its place to Python (state "view") and is laid out for a projector',
      const: 1
    },
    stream: {
      description: "a notebook's bundle past the caps, streamed (mpviz/event_chunks.py): the bundle is its head, every event thin but the first chunk's; the stepper asks the kernel for the others a chunk at a time",
      type: "object",
      properties: {
        events: { description: "events in all", type: "integer", minimum: 1 },
        chunk: { description: "events per chunk (chunk k holds events k·chunk … k·chunk + chunk − 1)", type: "integer", minimum: 1 }
      },
      required: ["events", "chunk"],
      additionalProperties: false
    },
    embedded: {
      description: "one output among others on a page the stepper does not own (a notebook): no URL, no skip link, keys only while focus is in it",
      const: 1
    }
  },
  required: ["key", "locale"],
  additionalProperties: false
};

// assets/components/stepper/meta.js
var META_FIELDS = Object.keys(stepper_meta_schema_default.properties);
function readMeta(raw) {
  const m = Object.fromEntries(META_FIELDS.map((k) => [k, raw?.[k]]));
  return {
    key: typeof m.key === "string" && m.key ? m.key : "stepper",
    locale: typeof m.locale === "string" && m.locale ? m.locale : "en",
    scale: Number(m.scale) > 0 ? Number(m.scale) : 1,
    publish: Boolean(m.publish),
    stream: readStream(m.stream),
    embedded: Boolean(m.embedded)
  };
}
function readStream(raw) {
  const events = Number(raw?.events);
  const chunk = Number(raw?.chunk);
  return Number.isInteger(events) && events > 0 && Number.isInteger(chunk) && chunk > 0 ? { events, chunk } : null;
}

// assets/components/stepper/dom.js
var SVGNS = "http://www.w3.org/2000/svg";
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  for (const k of kids.flat()) if (k !== null && k !== void 0 && k !== false) el.append(k);
  return el;
}
function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVGNS, tag);
  setAttrs(el, attrs);
  for (const k of kids.flat()) if (k !== null && k !== void 0 && k !== false) el.append(k);
  return el;
}
function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === void 0 || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
}

// assets/components/stepper/panel.js
var Panel = class {
  /**
   * @param {Context} ctx
   * @param {HTMLElement} el the panel's own element (it replaces only its children)
   */
  constructor(ctx, el) {
    this.ctx = ctx;
    this.el = el;
  }
  get b() {
    return this.ctx.bundle.b;
  }
  get bundle() {
    return this.ctx.bundle;
  }
  get w() {
    return this.ctx.words;
  }
  get place() {
    return this.ctx.place;
  }
  get geom() {
    return this.ctx.geom;
  }
  emit(type, ...args) {
    this.ctx.emit(type, ...args);
  }
  // the event the place shows
  event() {
    return this.ctx.bundle.eventAt(this.ctx.place);
  }
  // a step whose event has not arrived yet (a streamed run): `note` (words, or null) instead of the panel's drawing
  pending(note) {
    this.el.replaceChildren(...note ? [h("p", { class: "mpv-muted mpv-pending", role: "status" }, note)] : []);
  }
};

// assets/components/stepper/banners.js
var BannersPanel = class extends Panel {
  // once per bundle
  build() {
    const box = this.el;
    box.replaceChildren();
    const fn = this.bundle.firstNonfinite;
    if (fn) {
      const e = this.b.events[fn.event];
      const o = e.out.find((x) => x.stats && (x.stats.nan || x.stats.posinf || x.stats.neginf));
      const msg = h(
        "p",
        {},
        this.w.t("banner.nonfinite", {
          op_link: this.w.opLink(e.i),
          op: e.op,
          module: e.module || this.w.ts("card.model"),
          phase: this.w.ts(`phases.${e.phase}`),
          what: this.w.whatNonfinite(o?.stats)
        })
      );
      if ("counterpart_event" in fn && this.b.run.counterpart_device) {
        const device = this.w.deviceName(this.b.run.counterpart_device);
        msg.append(
          " ",
          fn.counterpart_event === null ? this.w.t("banner.other_finite", { device }) : this.w.t("banner.other_nonfinite", { device, index: fn.counterpart_event })
        );
      }
      const jump = h(
        "button",
        {
          type: "button",
          class: "mpv-btn",
          dataset: { act: "jump-nonfinite" },
          onclick: () => this.emit("jump", e.i, "full")
        },
        this.w.ts("banner.jump", { index: e.i })
      );
      box.append(h("div", { class: "mpv-banner mpv-alarm", role: "alert" }, msg, jump));
    }
    if (this.b.run.reference_failed) {
      const note = h("p", {}, this.w.t("banner.reference_failed", { error: this.b.run.reference_failed }));
      box.append(h("div", { class: "mpv-banner mpv-note" }, note));
    }
    const limits = this.b.run.emulation_limits || [];
    if (limits.length) {
      const note = h("p", {}, this.w.t("banner.emulated"));
      for (const code of limits) {
        if (code === "backward_emulated") continue;
        note.append(" ", this.w.has(`limits.${code}`) ? this.w.t(`limits.${code}`) : code);
      }
      box.append(h("div", { class: "mpv-banner mpv-note" }, note));
    }
  }
};

// assets/components/stepper/card.js
var CardPanel = class extends Panel {
  // per step
  render() {
    const e = this.event();
    const card = this.el;
    const head = h("h2", { class: "mpv-op-title" }, this.w.t("card.title", { index: e.i, op: e.op }));
    for (const lm of e.landmarks)
      head.append(" ", h("span", { class: "mpv-lm" }, this.w.t("card.landmark", { name: lm })));
    const meta = h(
      "p",
      { class: "mpv-meta" },
      this.w.t("card.module", {
        module: e.module || this.w.ts("card.model"),
        phase: this.w.ts(`phases.${e.phase}`)
      })
    );
    if (e.node) {
      meta.append(" · ", this.w.t("card.node", { node: e.node }));
      if (e.fwd !== null && e.fwd !== void 0)
        meta.append(" ", this.w.t("card.node_fwd", { op_link: this.w.opLink(e.fwd) }));
    }
    const ins = h(
      "span",
      { class: "mpv-dtypes" },
      ...e.in.length ? e.in.map((x) => this.w.dtypeBadge(x.dtype, x.shape)) : [this.w.ts("card.none")]
    );
    const outs = h(
      "span",
      { class: "mpv-dtypes" },
      ...e.out.length ? e.out.map((x) => this.w.dtypeBadge(x.dtype, x.shape)) : [this.w.ts("card.none")]
    );
    const flow = h(
      "p",
      { class: "mpv-flow" },
      h("span", { class: "mpv-flow-label" }, this.w.ts("card.inputs")),
      ins,
      h("span", { class: "mpv-arrow", "aria-hidden": "true" }, "→"),
      h("span", { class: "mpv-flow-label" }, this.w.ts("card.outputs")),
      outs
    );
    if (e.cast) {
      flow.append(
        h(
          "span",
          { class: "mpv-cast-badge" },
          e.phase === "forward" ? this.w.t("card.cast_badge", { op: e.cast_for || "?" }) : this.w.t("card.cast_badge_bwd")
        )
      );
    }
    const parts = [head, meta, flow];
    const srcs = (e.src || []).map(
      (x) => typeof x === "number" ? this.w.opLink(x) : typeof x === "string" ? h("code", {}, x.replace(/^param:/, "")) : null
    ).filter(Boolean);
    if (srcs.length) parts.push(h("p", { class: "mpv-src" }, this.w.t("card.sources", { list: this.w.listOf(srcs) })));
    if (e.other_dtype && this.b.run.counterpart_device) {
      parts.push(
        h(
          "p",
          { class: "mpv-other" },
          this.w.t("card.other_device", {
            a: this.w.deviceName(this.b.run.device),
            b: this.w.deviceName(this.b.run.counterpart_device),
            da: this.w.dtypeBadge(e.out[0]?.dtype),
            db: this.w.dtypeBadge(e.other_dtype)
          })
        )
      );
    }
    if (e.creates_nonfinite) {
      const o = e.out.find((x) => x.stats && (x.stats.nan || x.stats.posinf || x.stats.neginf));
      parts.push(
        h(
          "p",
          { class: "mpv-alarm-line" },
          this.w.t("card.creates_nonfinite", { what: this.w.whatNonfinite(o?.stats) })
        )
      );
    }
    if (e.phase === "backward" && (this.b.run.emulation_limits || []).includes("backward_emulated")) {
      parts.push(h("p", { class: "mpv-small" }, this.w.t("limits.backward_emulated")));
    }
    const k = this.bundle.storyOf.get(e.i);
    if (k !== void 0 && this.b.story[k].notices?.length) {
      const ul = h("ul", { class: "mpv-notices" });
      for (const n of this.b.story[k].notices) ul.append(h("li", { dataset: { kind: n.kind } }, this.notice(n)));
      parts.push(h("h3", {}, this.w.ts("card.notice_title")), ul);
    }
    card.replaceChildren(...parts);
  }
  // one "what to notice" fact → a sentence from its template
  notice(n) {
    const dt = (d) => this.w.dtypeBadge(d);
    const cat = (c) => c ? this.w.term(c, c) : this.w.ts("notice.no_category");
    const code = (x) => h("code", {}, x);
    switch (n.kind) {
      case "cast_for_policy": {
        const items = (n.casts || []).map(
          (c) => this.w.t("notice.cast_item", {
            input: c.input === null || c.input === void 0 ? c.input_event !== null && c.input_event !== void 0 ? this.w.t("notice.input_event", { op_link: this.w.opLink(c.input_event) }) : this.w.ts("notice.input_unknown") : c.input.startsWith("param:") ? this.w.t("notice.input_param", { name: c.input.slice(6) }) : code(c.input),
            from: dt(c.from),
            to: dt(c.to),
            op_link: this.w.opLink(c.event)
          })
        );
        return this.w.t("notice.cast_for_policy", {
          op: n.op,
          policy: this.w.policyName(n.policy),
          category: cat(n.category),
          casts: this.w.listOf(items)
        });
      }
      case "runs_in_arriving_dtype": {
        const frag = this.w.t("notice.runs_in_arriving_dtype", {
          op: n.op,
          dtype: dt(n.dtype),
          policy: this.w.policyName(n.policy)
        });
        if (n.other) {
          frag.append(
            " ",
            this.w.t("notice.runs_other", {
              policy: this.w.policyName(n.other.policy),
              op: n.other.op,
              category: cat(n.other.category),
              dtype: dt(n.other.dtype)
            })
          );
        }
        return frag;
      }
      case "type_promotion":
        return this.w.t("notice.type_promotion", {
          op: n.op,
          inputs: this.w.listOf((n.inputs || []).map(dt)),
          output: dt(n.output)
        });
      case "grad_follows_forward": {
        const same = n.dtype === n.forward_dtype;
        const frag = this.w.t(same ? "notice.grad_follows_forward" : "notice.grad_differs", {
          forward: n.forward,
          dtype: dt(n.dtype),
          forward_dtype: dt(n.forward_dtype)
        });
        if (n.casts?.length) {
          frag.append(
            " ",
            this.w.t("notice.grad_casts", { links: this.w.listOf(n.casts.map((c) => this.w.opLink(c))) })
          );
        }
        return frag;
      }
      case "param_grad_direct":
        return this.w.t("notice.param_grad_direct", { param: n.param, dtype: dt(n.dtype) });
      case "param_grad_upcast":
        return this.w.t("notice.param_grad_upcast", {
          param: n.param,
          node: n.node,
          op_link: this.w.opLink(n.event),
          from: dt(n.from),
          to: dt(n.to)
        });
      case "nonfinite_created":
        return this.w.t("notice.nonfinite_created", {
          op_link: this.w.opLink(n.event),
          op: n.op,
          what: this.w.whatNonfinite(n)
        });
      case "other_device_dtype":
        return this.w.t("notice.other_device_dtype", {
          policy: this.w.policyName(n.policy),
          dtype: dt(n.dtype),
          here: dt(n.here)
        });
      case "dtype_argument":
      case "dtype_argument_converted":
      case "listed_arrived_same":
      case "listed_arrived_here_only":
      case "listed_arrived": {
        const opt = (x, f) => x ? f(x) : void 0;
        return this.w.t(`notice.${n.kind}`, {
          ...n,
          policy: this.w.policyName(n.policy),
          other_policy: opt(n.other_policy, (x) => this.w.policyName(x)),
          category: cat(n.category),
          other_category: opt(n.other_category, cat),
          dtype: dt(n.dtype),
          cast_from: opt(n.cast_from, dt),
          cast_to: opt(n.cast_to, dt)
        });
      }
      default:
        return this.w.has(`notice.${n.kind}`) ? this.w.t(`notice.${n.kind}`, n) : document.createTextNode(n.kind);
    }
  }
};

// mpviz/contracts/personal_keys.json
var personal_keys_default = ["present", "room", "follow", "handover"];

// mpviz/contracts/stepper_keys.json
var stepper_keys_default = {
  description: "The stepper's own URL keys (assets/components/stepper/place.js writes them without a rerun; mpviz/app/url.py keeps them out of what Python owns and mpviz.app.goto moves them). place: the keys a place is written as; legacy_element: the element's old spelling (em, er, ec), read and dropped; views and phases: the values view and phase take; stop: the guided lesson's stop (mpviz/app/tour.py), a URL that changes it opens another view, into which the stepper carries no place (urlsync.js).",
  place: ["step", "view", "phase", "head", "el"],
  legacy_element: ["em", "er", "ec"],
  views: ["story", "full"],
  phases: ["all", "forward", "backward"],
  stop: "tour"
};

// assets/components/stepper/place.js
var VIEWS = stepper_keys_default.views;
var PHASES = stepper_keys_default.phases;
var PARAMS = stepper_keys_default.place;
var LEGACY_EL = stepper_keys_default.legacy_element;
var STOP = stepper_keys_default.stop;
function stopOf(url, base) {
  try {
    return new URL(url, base).searchParams.get(STOP);
  } catch {
    return null;
  }
}
var PERSONAL = personal_keys_default;
function sharedLink(href, lang) {
  const link = new URL(href);
  for (const k of PERSONAL) link.searchParams.delete(k);
  if (lang) link.searchParams.set("lang", lang);
  return link.toString();
}
function freshPlace() {
  return { view: "story", phase: "all", pos: 0, head: 0, el: [0, 0, 0], explore: null };
}
function parseEl(src) {
  const el = typeof src.el === "string" ? src.el.split(".") : LEGACY_EL.map((k) => src[k]);
  return [0, 1, 2].map((k) => Math.max(0, parseInt(el[k], 10) || 0));
}
function hasPlace(q) {
  return PARAMS.some((k) => q.has(k)) || LEGACY_EL.some((k) => q.has(k));
}
function restorePlace(q, saved, reader, later) {
  const fromUrl = hasPlace(q);
  const place = freshPlace();
  const src = fromUrl ? Object.fromEntries(q) : saved || {};
  if (VIEWS.includes(src.view)) place.view = src.view;
  if (PHASES.includes(src.phase)) place.phase = src.phase;
  place.head = Math.max(0, parseInt(src.head, 10) || 0);
  place.el = parseEl(src);
  const step = Math.max(0, parseInt(src.step, 10) || 0);
  const stale = later && saved && saved.sig !== reader.sig && saved.view === place.view && saved.phase === place.phase && String(saved.step) === String(src.step ?? "");
  place.pos = stale ? reader.positionOf(
    reader.matchEvent({ key: saved.key, i: saved.i, phase: saved.eventPhase }),
    place.view,
    place.phase
  ) : Math.min(step, reader.list(place.view, place.phase).length - 1);
  return place;
}
function savedPlace(place, e, sig) {
  return {
    view: place.view,
    phase: place.phase,
    step: place.pos,
    head: place.head,
    el: place.el.join("."),
    key: e.key,
    i: e.i,
    eventPhase: e.phase,
    sig
  };
}
function mergePlace(url, base, place, withHead) {
  const u = new URL(url, base);
  const q = u.searchParams;
  q.set("step", String(place.pos));
  q.set("view", place.view);
  q.set("phase", place.phase);
  if (withHead) q.set("head", String(place.head));
  else q.delete("head");
  q.set("el", place.el.join("."));
  for (const k of LEGACY_EL) q.delete(k);
  return u.toString();
}

// assets/components/stepper/controls.js
var ControlsPanel = class extends Panel {
  // once per bundle
  build() {
    const c = this.el;
    c.replaceChildren();
    const btn = (act, label, extra = {}) => h("button", { type: "button", class: "mpv-btn", dataset: { act }, "aria-label": label, ...extra }, label);
    this.prevBtn = btn("prev", this.w.ts("controls.prev"), { onclick: () => this.emit("move", -1) });
    this.nextBtn = btn("next", this.w.ts("controls.next"), { onclick: () => this.emit("move", 1) });
    this.playBtn = btn("play", this.w.ts("controls.play"), {
      onclick: () => this.emit("play"),
      "aria-pressed": "false"
    });
    this.slider = h("input", {
      type: "range",
      class: "mpv-slider",
      min: 0,
      step: 1,
      dataset: { act: "slider" },
      "aria-label": this.w.ts("controls.step_label"),
      oninput: () => this.emit("go", Number(this.slider.value))
    });
    this.posLabel = h("span", { class: "mpv-pos", "aria-hidden": "true" });
    const seg = (name, options, labelPath) => {
      const group = h("div", { class: "mpv-seg", role: "radiogroup", "aria-label": this.w.ts(labelPath) });
      const pick = (o) => this.emit("view", name === "view" ? o : this.place.view, name === "phase" ? o : this.place.phase);
      for (const o of options) {
        group.append(
          h(
            "button",
            {
              type: "button",
              role: "radio",
              dataset: { [name]: o },
              onclick: (e) => {
                pick(o);
                if (e.detail > 0) this.emit("keys");
              }
            },
            this.w.ts(`${name}s.${o}`)
          )
        );
      }
      group.addEventListener("keydown", (e) => {
        const d = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
        if (!d) return;
        e.preventDefault();
        const now = options.indexOf(name === "view" ? this.place.view : this.place.phase);
        const next = options[(now + d + options.length) % options.length];
        pick(next);
        group.querySelector(`[data-${name}="${next}"]`).focus();
      });
      return h("div", { class: "mpv-field" }, h("span", { class: "mpv-field-label" }, this.w.ts(labelPath)), group);
    };
    this.copyBtn = btn("copy", this.w.ts("controls.copy_link"), { onclick: () => this.emit("copy") });
    c.append(
      h("div", { class: "mpv-steprow" }, this.prevBtn, this.playBtn, this.nextBtn, this.slider, this.posLabel),
      h(
        "div",
        { class: "mpv-viewrow" },
        seg("view", VIEWS, "controls.view"),
        seg("phase", PHASES, "controls.phase"),
        this.copyBtn,
        h("span", { class: "mpv-hint" }, this.w.t("controls.keys_hint"))
      )
    );
  }
  // per step: the slider, the position, what can be pressed; returns the step's spoken position
  render() {
    const l = this.bundle.list(this.place.view, this.place.phase);
    const e = this.event();
    this.slider.max = String(l.length - 1);
    this.slider.value = String(this.place.pos);
    const name = e.landmarks.length ? e.landmarks.join(", ") : e.op;
    const spoken = this.w.ts("controls.position_aria", { n: this.place.pos + 1, total: l.length, index: e.i, name });
    this.slider.setAttribute("aria-valuetext", spoken);
    this.posLabel.replaceChildren(
      this.w.t("controls.position", { n: this.place.pos + 1, total: l.length, index: e.i })
    );
    this.prevBtn.disabled = this.place.pos === 0;
    this.nextBtn.disabled = this.place.pos >= l.length - 1;
    for (const b of this.el.querySelectorAll("[role=radio]")) {
      const on = b.dataset.view ? b.dataset.view === this.place.view : b.dataset.phase === this.place.phase;
      b.setAttribute("aria-checked", String(on));
      b.tabIndex = on ? 0 : -1;
    }
    return spoken;
  }
  setPlaying(on) {
    if (!this.playBtn) return;
    this.playBtn.textContent = this.w.ts(on ? "controls.pause" : "controls.play");
    this.playBtn.setAttribute("aria-pressed", String(on));
  }
  // the copy button's label for a moment: "copied" / "copy failed", then back (path: a text key)
  flashCopy(path) {
    this.copyBtn.textContent = this.w.ts(path);
    setTimeout(() => {
      this.copyBtn.textContent = this.w.ts("controls.copy_link");
    }, 1800);
  }
};

// assets/components/stepper/numbers.js
function num(x) {
  if (typeof x === "number") return x;
  if (x === "inf") return Infinity;
  if (x === "-inf") return -Infinity;
  if (x === "nan") return NaN;
  return x === null || x === void 0 ? null : Number(x);
}
function fmtSig(x, digits = 4) {
  x = num(x);
  if (x === null) return "—";
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "+inf";
  if (x === -Infinity) return "−inf";
  if (x === 0) return Object.is(x, -0) ? "−0" : "0";
  const a = Math.abs(x);
  const t = a >= 1e5 || a < 1e-3 ? x.toExponential(digits - 1).replace(/\.?0+e/, "e") : String(+x.toPrecision(digits));
  return t.replace("-", "−");
}
function fmtExact(x) {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "+inf";
  if (x === -Infinity) return "−inf";
  if (Object.is(x, -0)) return "−0";
  return String(x).replace("-", "−");
}
function pow2Text(k) {
  return `2^${k}`.replace("-", "−");
}

// assets/components/stepper/element.js
function focusKey(el) {
  return el?.dataset?.bit !== void 0 ? `[data-bit="${el.dataset.bit}"]` : el?.dataset?.act ? `[data-act="${el.dataset.act}"]` : null;
}
var ElementPanel = class extends Panel {
  // per step, and after each exploring move (picker, bit, ±ulp), which keeps focus on the same control
  render() {
    const root = this.el.getRootNode();
    const had = root.activeElement && this.el.contains(root.activeElement) ? focusKey(root.activeElement) : null;
    this.draw();
    if (!had) return;
    const again = this.el.querySelector(had) ?? this.el.querySelector("[data-act=ulp-up]");
    if (again && !again.disabled) again.focus();
    else this.el.querySelector("[data-bit]")?.focus();
  }
  draw() {
    const e = this.event();
    const box = this.el;
    const smp = this.bundle.sample(e.i);
    const sp = smp ? this.bundle.spec(smp.out.dtype) : null;
    if (!smp || !sp) {
      box.replaceChildren(
        h("h2", {}, this.w.ts("element.title")),
        h("p", { class: "mpv-muted" }, this.w.ts("element.none"))
      );
      return;
    }
    const [m, r, c] = shownElement(this.place.el, smp);
    const [M, R, C] = smp.shape;
    const own = smp.values[(m * R + r) * C + c];
    const value = this.place.explore ? this.place.explore.value : own;
    const d = fbDescribe(value, sp);
    const picker = h("div", { class: "mpv-picker" });
    const field = (k, label, max) => {
      const inp = h("input", {
        type: "number",
        min: 0,
        max,
        step: 1,
        value: [m, r, c][k],
        class: "mpv-num",
        dataset: { act: `el-${k}` },
        "aria-label": label
      });
      inp.addEventListener("change", () => {
        const el = [m, r, c];
        el[k] = Math.max(0, Math.min(max, Math.round(Number(inp.value)) || 0));
        this.emit("element", el);
      });
      return h("label", { class: "mpv-field-label" }, label, " ", inp);
    };
    picker.append(
      field(0, this.w.ts("element.mat"), M - 1),
      field(1, this.w.ts("element.row"), R - 1),
      field(2, this.w.ts("element.col"), C - 1)
    );
    const title = h(
      "h2",
      {},
      this.w.t("element.title_of", { name: e.landmarks[0] ?? e.op, dtype: this.w.dtypeBadge(sp.name) })
    );
    const valueLine = h(
      "p",
      { class: "mpv-value-line" },
      this.w.t(this.place.explore ? "element.exploring" : "element.value", {
        m,
        r,
        c,
        value: h("code", { class: "mpv-value", dataset: { value: String(d.value) } }, fmtExact(d.value)),
        dtype: sp.name
      })
    );
    const bits = h("div", {
      class: `mpv-bits${sp.bits > 16 ? " mpv-bits-wide" : ""}`,
      role: "group",
      "aria-label": this.w.ts("element.bits_aria")
    });
    const field_ = (cls, from, to, label) => {
      const grp = h("div", { class: `mpv-bitfield ${cls}` }, h("span", { class: "mpv-bitfield-label" }, label));
      const row = h("div", { class: "mpv-bitrow" });
      for (let k = from; k < to; k++) {
        const bit = d.bits[k];
        row.append(
          h(
            "button",
            {
              type: "button",
              class: "mpv-bit",
              dataset: { bit: sp.bits - 1 - k },
              "aria-label": this.w.ts("element.bit_aria", { k: sp.bits - 1 - k, v: bit }),
              onclick: () => this.flipBit(sp, d.code, sp.bits - 1 - k)
            },
            bit
          )
        );
      }
      grp.append(row);
      return grp;
    };
    if (sp.S) bits.append(field_("mpv-sign", 0, 1, this.w.ts("element.sign")));
    bits.append(field_("mpv-exp", sp.S, sp.S + sp.E, this.w.ts("element.exponent")));
    if (sp.M) bits.append(field_("mpv-man", sp.S + sp.E, sp.bits, this.w.ts("element.mantissa")));
    const parts = [title, picker, valueLine, bits, h("p", { class: "mpv-arith" }, this.arithmetic(d, sp))];
    const step = (dir) => {
      const v = dir > 0 ? d.nextUp : d.nextDown;
      return h(
        "button",
        {
          type: "button",
          class: "mpv-btn",
          dataset: { act: dir > 0 ? "ulp-up" : "ulp-down" },
          disabled: v === null,
          onclick: () => this.emit("explore", { value: v })
        },
        this.w.ts(dir > 0 ? "element.ulp_up" : "element.ulp_down", { value: v === null ? "—" : fmtExact(v) })
      );
    };
    const nav = h("div", { class: "mpv-ulp" }, step(-1), step(1));
    if (this.place.explore) {
      nav.append(
        h(
          "button",
          {
            type: "button",
            class: "mpv-btn mpv-btn-quiet",
            dataset: { act: "ulp-reset" },
            onclick: () => this.emit("explore", null)
          },
          this.w.ts("element.back", { value: fmtExact(own) })
        )
      );
    }
    parts.push(nav);
    if (Number.isFinite(d.ulp)) {
      parts.push(
        h(
          "p",
          { class: "mpv-small" },
          this.w.t("element.ulp_line", {
            ulp: `${pow2Text(Math.round(Math.log2(d.ulp)))} = ${fmtExact(d.ulp)}`,
            gl_ulp: this.w.term("ulp"),
            binade: d.cls === "normal" ? `[${pow2Text(d.exponentUnbiased)}, ${pow2Text(d.exponentUnbiased + 1)})` : "—"
          })
        )
      );
    }
    if (smp.of && smp.of.reduce((a, b) => a * b, 1) > M * R * C) {
      parts.push(h("p", { class: "mpv-small" }, this.w.t("element.sampled", { m: M, r: R, c: C })));
    }
    box.replaceChildren(...parts);
  }
  flipBit(sp, code, k) {
    this.emit("explore", { value: fbValue(sp, code ^ 1n << BigInt(k)) });
  }
  arithmetic(d, sp) {
    const sign = d.sign ? "−1" : "+1";
    if (d.cls === "nan") return this.w.t("element.arith_nan");
    if (d.cls === "inf") return this.w.t("element.arith_inf", { sign: d.sign ? "−" : "+" });
    if (d.cls === "zero") return this.w.t("element.arith_zero", { sign: d.sign ? "−" : "+" });
    const man = d.mantissaBits;
    const frac = sp.M ? Number(d.mantissa) / 2 ** sp.M : 0;
    if (d.cls === "subnormal") {
      return this.w.t("element.arith_sub", {
        sign,
        bias: sp.bias,
        e: 1 - sp.bias,
        m: man,
        mval: fmtExact(frac),
        value: fmtExact(d.value),
        gl_subnormal: this.w.term("subnormal")
      });
    }
    return this.w.t("element.arith_normal", {
      sign,
      raw: d.exponentRaw,
      bias: sp.bias,
      e: d.exponentUnbiased,
      m: man || "0",
      mval: fmtExact(1 + frac),
      value: fmtExact(d.value)
    });
  }
};

// assets/components/stepper/errors.js
var ErrorsPanel = class extends Panel {
  // once per bundle
  build() {
    const box = this.el;
    const names = Object.keys(this.b.landmarks).filter((n) => this.b.errors?.[n]);
    if (!names.length) {
      box.replaceChildren();
      this.errRows = /* @__PURE__ */ new Map();
      return;
    }
    const vals = names.flatMap((n) => {
      const e = this.b.errors[n];
      const v = num(e.rel ?? e.abs_rms);
      return v > 0 && Number.isFinite(v) ? [v] : [];
    });
    const lo = Math.floor(Math.log10(Math.min(1e-8, ...vals))), hi = Math.max(0, Math.ceil(Math.log10(Math.max(...vals, 1e-8))));
    const cols = h("div", { class: "mpv-err-cols" });
    this.errRows = /* @__PURE__ */ new Map();
    for (const phase of ["forward", "backward"]) {
      const col = h("div", { class: "mpv-err-col" }, h("h3", {}, this.w.ts(`phases.${phase}`)));
      for (const n of names) {
        const ev = this.b.landmarks[n];
        if (this.b.events[ev].phase !== phase) continue;
        const err = this.b.errors[n];
        const row = h("button", {
          type: "button",
          class: "mpv-err-row",
          dataset: { landmark: n },
          onclick: () => this.emit("jump", ev)
        });
        const track = h("span", { class: "mpv-err-track" });
        let label;
        if (err.nonfinite) {
          track.append(h("span", { class: "mpv-err-bar mpv-err-nonfinite", style: "width:100%" }));
          label = this.w.ts("errors.nonfinite");
        } else {
          const isAbs = err.rel === null || err.rel === void 0;
          const v = num(isAbs ? err.abs_rms : err.rel);
          if (v > 0) {
            const w = Math.max(1.5, Math.min(100, (Math.log10(v) - lo) / (hi - lo) * 100));
            track.append(h("span", { class: `mpv-err-bar${isAbs ? " mpv-err-abs" : ""}`, style: `width:${w}%` }));
            label = (isAbs ? this.w.ts("errors.abs_mark") + " " : "") + fmtSig(v, 2);
          } else {
            track.append(h("span", { class: "mpv-err-zero" }));
            label = this.w.ts("errors.exact");
          }
        }
        row.append(
          h("span", { class: "mpv-err-name", title: n }, n),
          track,
          h("span", { class: "mpv-err-val" }, label)
        );
        col.append(row);
        this.errRows.set(n, row);
      }
      cols.append(col);
    }
    const axis = h("p", { class: "mpv-caption" }, this.w.t("errors.axis", { lo: `1e${lo}`, hi: `1e${hi}` }));
    box.replaceChildren(
      h("h2", {}, this.w.t("errors.title")),
      h("p", { class: "mpv-caption" }, this.w.t("errors.caption", { floor: fmtSig(this.b.error_floor, 1) })),
      cols,
      axis
    );
  }
  // per step
  render() {
    if (!this.errRows) return;
    const e = this.event();
    const ev = this.bundle.landmarkEvents.has(e.i) ? e.i : this.bundle.stepEvent(e.i);
    for (const [n, row] of this.errRows) {
      const on = this.b.landmarks[n] === ev;
      row.classList.toggle("mpv-current", on);
      if (on) row.setAttribute("aria-current", "step");
      else row.removeAttribute("aria-current");
    }
  }
};

// assets/components/stepper/graph.js
var CAST_COLOR = "#f5b400";
var GraphPanel = class extends Panel {
  // once per bundle
  build() {
    const fig = this.el;
    fig.replaceChildren();
    this.graphTitle = h("figcaption", { class: "mpv-title" }, this.w.t("graph.title"));
    this.graphBox = h("div", { class: "mpv-graph-box" });
    fig.append(this.graphTitle, this.graphBox, this.graphLegend());
    this.layout();
  }
  graphLegend() {
    const dtypes = [...new Set(this.b.graph.nodes.flatMap((n) => [n.dtype, n.other_dtype]).filter(Boolean))];
    const leg = h("div", { class: "mpv-legend" });
    for (const d of dtypes) leg.append(h("span", { class: "mpv-legend-item" }, this.w.dtypeBadge(d), " ", d));
    if (this.b.graph.nodes.some((n) => n.other_dtype)) {
      leg.append(
        h(
          "span",
          { class: "mpv-legend-item" },
          h("span", { class: "mpv-stripe-key" }),
          this.w.t("graph.legend_other", { device: this.w.deviceName(this.b.run.counterpart_device) })
        )
      );
    }
    if (this.b.counts.casts) {
      leg.append(
        h("span", { class: "mpv-legend-item" }, h("span", { class: "mpv-cast-key" }), this.w.t("graph.legend_cast"))
      );
    }
    if (this.b.graph.nodes.some((n) => this.bundle.nonfinite(n.event))) {
      leg.append(
        h("span", { class: "mpv-legend-item" }, h("span", { class: "mpv-bad-key" }, "!"), this.w.t("graph.legend_bad"))
      );
    }
    leg.append(h("span", { class: "mpv-legend-item" }, this.w.t("graph.legend_grad")));
    return leg;
  }
  nodeLabel(id) {
    const f = this.bundle.model.mate.get(id);
    return f ? this.w.ts("graph.grad_prefix") + f : id;
  }
  chipLabel(id) {
    const name = id.replace(/^grad_/, "");
    const last = name.split(".").pop();
    const short = this.w.lookup(`graph.param_short.${last}`) ?? last;
    return this.w.ts("graph.grad_prefix") + short;
  }
  castLabel(casts) {
    if (!casts.length) return null;
    const pairs = new Set(casts.map((c) => `${c.from}>${c.to}`));
    return {
      badge: this.w.ts("graph.cast_badge", { n: casts.length }),
      pair: pairs.size === 1 ? this.w.ts("graph.cast_pair", { from: this.w.short(casts[0].from), to: this.w.short(casts[0].to) }) : null
    };
  }
  // once per bundle and whenever the figure's width or the font changes
  layout() {
    const fontPx = this.geom.font;
    const avail = Math.max(260, (this.geom.graph || 800) - 2 * fontPx - 2);
    const measure = (text, px, weight = 400) => this.geom.measureText(text, px, weight);
    const f = fontPx, small = Math.round(f * 0.8);
    const padX = f * 0.6, nh = f * 2.75, chipH = f * 1.55, chipGap = f * 0.3;
    const chipW = (c) => Math.max(f * 2.2, measure(this.chipLabel(c), small, 700) + f * 0.9);
    const sizes = /* @__PURE__ */ new Map();
    const size = (id, mode) => {
      const k = id + "/" + mode;
      if (sizes.has(k)) return sizes.get(k);
      const n = this.bundle.model.byId.get(id);
      const nw = Math.max(
        f * 3.2,
        measure(this.nodeLabel(id), f, 700) + 2 * padX + (n.other_dtype ? f * 0.5 : 0),
        measure(this.w.short(n.dtype), small) + 2 * padX
      );
      const chips = this.bundle.model.chipsOf.get(id) || [];
      let w = nw, hh = nh;
      if (chips.length && mode === "h") {
        w = Math.max(nw, chips.reduce((t, c) => t + chipW(c), 0) + chipGap * (chips.length - 1));
        hh = nh + chipGap * 2 + chipH;
      } else if (chips.length) {
        w = nw + chipGap * 2 + Math.max(...chips.map(chipW));
        hh = Math.max(nh, chips.length * chipH + (chips.length - 1) * chipGap);
      }
      const out = { w, h: hh, nw, nh };
      sizes.set(k, out);
      return out;
    };
    const tag = (id) => {
      const lab = this.castLabel(this.bundle.casts(this.bundle.model.byId.get(id).event));
      if (!lab?.pair) return null;
      const lines = [lab.badge, lab.pair];
      return { lines, w: Math.max(...lines.map((t) => measure(t, small, 700))) + f * 0.7, h: small * 2.9 };
    };
    const m = {
      pad: f * 0.75,
      colGap: f * 1.6,
      maxColGap: f * 8,
      rowGap: f * 0.9,
      layerGap: f * 1.9,
      bandGap: f * 1.6,
      bandLabel: f * 1.5,
      lanePad: f * 0.7,
      laneGap: f * 0.6
    };
    const a = glChoose(this.bundle.model, size, m, avail, (id) => tag(id) ? (tag(id).w + 11) / 0.7 + 4 : 0);
    this.arr = a;
    this.drawGraph(a, size, { f, small, chipH, chipGap, chipW, measure, tag });
  }
  drawGraph(a, size, { f, small, chipH, chipGap, chipW, measure, tag }) {
    const svg = s("svg", {
      class: `mpv-svg mpv-${a.mode}`,
      viewBox: `0 0 ${a.width} ${a.height}`,
      width: a.width * a.scale,
      height: a.height * a.scale,
      role: "group",
      "aria-label": this.w.ts("graph.title"),
      dataset: { mode: a.mode }
    });
    svg.append(
      s(
        "defs",
        {},
        s(
          "marker",
          {
            id: "mpv-arrow",
            viewBox: "0 0 10 10",
            refX: 9,
            refY: 5,
            markerWidth: 9,
            markerHeight: 9,
            markerUnits: "userSpaceOnUse",
            orient: "auto-start-reverse"
          },
          s("path", { d: "M0,1 L10,5 L0,9 z", class: "mpv-arrowhead" })
        )
      )
    );
    for (const l of a.labels) {
      svg.append(
        s("text", { x: l.x, y: l.y + f * 1.05, class: "mpv-band-label" }, this.w.ts(`graph.band.${l.band}_${l.dir}`))
      );
    }
    const edgeLayer = s("g", { class: "mpv-edges" });
    const nodeLayer = s("g", { class: "mpv-nodes" });
    const labelLayer = s("g", { class: "mpv-cast-labels" });
    svg.append(edgeLayer, nodeLayer, labelLayer);
    this.nodeEls = /* @__PURE__ */ new Map();
    const last = this.bundle.model.fwd[this.bundle.model.fwd.length - 1];
    for (const start of this.bundle.model.starts) {
      const p = a.pos.get(last), q = a.pos.get(start);
      if (!p || !q) continue;
      let d;
      if (a.mode === "h") {
        const x1 = p.nx + p.nw / 2, y1 = p.ny + p.nh, x2 = q.nx + q.nw, y2 = q.ny + q.nh / 2;
        d = `M${x1},${y1} C${x1},${y2} ${x1},${y2} ${x2},${y2}`;
      } else if (a.mode === "v") {
        const x1 = p.nx + p.nw, y1 = p.ny + p.nh / 2, x2 = q.nx, y2 = q.ny + q.nh / 2;
        d = `M${x1},${y1} C${(x1 + x2) / 2},${y1} ${(x1 + x2) / 2},${y2} ${x2},${y2}`;
      } else {
        const x1 = p.nx + p.nw / 2, y1 = p.ny + p.nh, x2 = q.nx + q.nw / 2, y2 = q.ny;
        d = `M${x1},${y1} C${x1},${(y1 + y2) / 2} ${x2},${(y1 + y2) / 2} ${x2},${y2}`;
      }
      edgeLayer.append(s("path", { d, class: "mpv-edge mpv-turn", "marker-end": "url(#mpv-arrow)" }));
    }
    for (const e of this.bundle.model.edges) {
      const to = this.bundle.model.byId.get(e.to);
      const cast = this.bundle.casts(to.event).some((c) => c.landmark === e.from);
      edgeLayer.append(
        s("path", {
          d: glEdgePath(a, e.from, e.to),
          class: `mpv-edge${cast ? " mpv-edge-cast" : ""}`,
          "marker-end": "url(#mpv-arrow)",
          dataset: { from: e.from, to: e.to }
        })
      );
    }
    const ids = [...this.bundle.model.fwd, ...this.bundle.model.main];
    for (const id of ids) {
      const p = a.pos.get(id);
      const n = this.bundle.model.byId.get(id);
      const g = this.nodeGroup(id, n, p.nx, p.ny, p.nw, p.nh, f);
      nodeLayer.append(g);
      const chips = this.bundle.model.chipsOf.get(id) || [];
      const row = a.mode === "h";
      let cx = row ? p.x + (p.w - (chips.reduce((t2, c) => t2 + chipW(c), 0) + chipGap * (chips.length - 1))) / 2 : p.nx + p.nw + chipGap * 2;
      let cy = row ? p.ny + p.nh + chipGap * 2 : p.y + (p.h - (chips.length * chipH + (chips.length - 1) * chipGap)) / 2;
      for (const c of chips) {
        const w = chipW(c);
        nodeLayer.append(
          this.chipGroup(
            c,
            this.bundle.model.byId.get(c),
            cx,
            cy,
            row ? w : Math.max(...chips.map(chipW)),
            chipH,
            small
          )
        );
        if (row) cx += w + chipGap;
        else cy += chipH + chipGap;
      }
      const lab = this.castLabel(this.bundle.casts(n.event));
      if (!lab) continue;
      const t = tag(id);
      if (a.mode === "h" && t && t.w + 11 <= p.gapIn * 0.7) {
        const x = a.flow[p.band] < 0 ? p.nx + p.nw + 11 : p.nx - 11 - t.w;
        labelLayer.append(this.castTag(t.lines, x, p.ny + (p.nh - t.h) / 2, t.w, t.h, small, n.event));
      } else {
        const bw = measure(lab.badge, small, 700) + f * 0.6, bh = small * 1.45;
        labelLayer.append(this.castTag([lab.badge], p.nx + p.nw - bw * 0.75, p.ny - bh / 2, bw, bh, small, n.event));
      }
    }
    this.graphBox.replaceChildren(svg);
    this.svg = svg;
    this.render();
  }
  castTag(lines, x, y, w, hh, px, event) {
    const g = s("g", { class: "mpv-cast-tag", dataset: { castsFor: event } });
    g.append(s("rect", { x, y, width: w, height: hh, rx: Math.min(hh / 2, px * 0.7), fill: CAST_COLOR }));
    const top = y + (hh - lines.length * px * 1.2) / 2;
    lines.forEach(
      (text, k) => g.append(
        s(
          "text",
          { x: x + w / 2, y: top + px * (1.2 * k + 0.95), "text-anchor": "middle", class: "mpv-cast-text" },
          text
        )
      )
    );
    g.append(s("title", {}, this.castTooltipText(event)));
    return g;
  }
  castTooltipText(event) {
    return this.bundle.casts(event).map(
      (c) => this.w.ts("graph.cast_item", {
        source: c.landmark ?? (c.param ? this.w.ts("notice.input_param", { name: c.param }) : "?"),
        from: c.from,
        to: c.to,
        index: c.event
      })
    ).join("\n");
  }
  nodeGroup(id, n, x, y, w, hh, f) {
    const bg = this.w.color(n.dtype);
    const ink = this.w.ink(bg);
    const g = s("g", {
      class: "mpv-node",
      tabindex: 0,
      role: "button",
      dataset: { node: id, event: n.event },
      "aria-label": this.w.ts("graph.node_aria", {
        name: this.nodeLabel(id),
        dtype: this.w.short(n.dtype),
        index: n.event
      })
    });
    g.append(s("rect", { x: x - 3, y: y - 3, width: w + 6, height: hh + 6, rx: 10, class: "mpv-node-ring" }));
    g.append(s("rect", { x, y, width: w, height: hh, rx: 7, fill: bg, class: "mpv-node-body" }));
    if (n.other_dtype) {
      const sw = f * 0.5;
      g.append(
        s("path", {
          d: `M${x + w - sw},${y} h${sw - 7} a7,7 0 0 1 7,7 v${hh - 14} a7,7 0 0 1 -7,7 h${7 - sw} z`,
          fill: this.w.color(n.other_dtype),
          class: "mpv-node-stripe"
        })
      );
    }
    const cx = x + (w - (n.other_dtype ? f * 0.5 : 0)) / 2;
    g.append(
      s(
        "text",
        { x: cx, y: y + hh * 0.45, "text-anchor": "middle", class: "mpv-node-name", fill: ink },
        this.nodeLabel(id)
      ),
      " ",
      // the two lines read as "∇q bf16", not "∇qbf16": the accessible name starts with exactly that
      s(
        "text",
        { x: cx, y: y + hh * 0.8, "text-anchor": "middle", class: "mpv-node-dtype", fill: ink },
        this.w.short(n.dtype)
      )
    );
    if (this.bundle.nonfinite(n.event)) g.append(this.badMark(x, y + hh, f * 0.45));
    g.append(s("title", {}, this.nodeTitle(id, n)));
    this.wireNode(g, n.event);
    this.nodeEls.set(id, g);
    return g;
  }
  badMark(cx, cy, r) {
    return s(
      "g",
      { class: "mpv-bad" },
      s("circle", { cx, cy, r }),
      s("text", { x: cx, y: cy + r * 0.55, "text-anchor": "middle", "font-size": r * 1.6 }, "!")
    );
  }
  chipGroup(id, n, x, y, w, hh, px) {
    const bg = this.w.color(n.dtype);
    const g = s("g", {
      class: "mpv-node mpv-chip",
      tabindex: 0,
      role: "button",
      dataset: { node: id, event: n.event },
      "aria-label": this.w.ts("graph.node_aria", {
        name: `${this.chipLabel(id)} (${id.replace(/^grad_/, "")})`,
        dtype: this.w.short(n.dtype),
        index: n.event
      })
    });
    g.append(s("rect", { x: x - 3, y: y - 3, width: w + 6, height: hh + 6, rx: 8, class: "mpv-node-ring" }));
    g.append(s("rect", { x, y, width: w, height: hh, rx: 5, fill: bg, class: "mpv-node-body" }));
    if (this.bundle.nonfinite(n.event)) g.append(this.badMark(x, y + hh, px * 0.4));
    if (this.b.events[n.event]?.cast) {
      g.append(s("circle", { cx: x + w - 1, cy: y + 1, r: px * 0.32, fill: CAST_COLOR, class: "mpv-chip-cast" }));
    }
    g.append(
      s(
        "text",
        { x: x + w / 2, y: y + hh * 0.7, "text-anchor": "middle", class: "mpv-chip-name", fill: this.w.ink(bg) },
        this.chipLabel(id)
      )
    );
    g.append(s("title", {}, this.nodeTitle(id, n)));
    this.wireNode(g, n.event);
    this.nodeEls.set(id, g);
    return g;
  }
  nodeTitle(id, n) {
    const lines = [
      this.w.ts("graph.node_title", {
        name: id,
        dtype: n.dtype,
        shape: this.w.shapeText(n.shape || []),
        index: n.event
      })
    ];
    if (n.other_dtype) {
      lines.push(
        this.w.ts("graph.node_other", {
          device: this.w.deviceName(this.b.run.counterpart_device),
          dtype: n.other_dtype
        })
      );
    }
    const casts = this.castTooltipText(n.event);
    if (casts) lines.push(casts);
    return lines.join("\n");
  }
  wireNode(g, event) {
    g.addEventListener("click", () => this.emit("jump", event));
    g.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        this.emit("jump", event);
      }
    });
  }
  // per step: the current node (or the one the step is part of) ringed
  render() {
    if (!this.nodeEls) return;
    const e = this.event();
    const exact = this.bundle.landmarkEvents.has(e.i);
    const target = exact ? e.i : this.bundle.stepEvent(e.i);
    for (const [, g] of this.nodeEls) {
      const ev = Number(g.dataset.event);
      g.classList.toggle("mpv-current", ev === target && exact);
      g.classList.toggle("mpv-pending", ev === target && !exact);
      if (ev === target) g.setAttribute("aria-current", "step");
      else g.removeAttribute("aria-current");
    }
    if (this.geom.stage) this.keepInView();
  }
  // on a stage the graph scrolls inside its own column: bring the current node into it (centred) when the step
  // leaves it, never scrolling the page. After the frame's layout, which the step needs anyway.
  keepInView() {
    cancelAnimationFrame(this.viewFrame);
    this.viewFrame = requestAnimationFrame(() => {
      const node = this.svg?.querySelector("[aria-current]");
      const box = this.el;
      if (!node || box.scrollHeight <= box.clientHeight) return;
      const n = node.getBoundingClientRect(), b = box.getBoundingClientRect(), margin = this.geom.font;
      if (n.top >= b.top + margin && n.bottom <= b.bottom - margin) return;
      box.scrollTop += n.top - b.top - (b.height - n.height) / 2;
    });
  }
  // focus the node of a landmark, when focus was on a node (a click or Enter on a node keeps the keyboard there)
  focusNode(landmark) {
    const node = this.nodeEls?.get(landmark);
    if (node && this.el.getRootNode().activeElement?.closest?.(".mpv-node")) node.focus?.();
  }
};

// assets/components/stepper/heat.js
var HEAT_MAX_PX = 460;
var PRIMARY = "#3b5bdb";
var SPECIAL_RGB = { nan: [212, 0, 106], posinf: [255, 127, 14], neginf: [23, 190, 207] };
var SPECIAL_MARK = { nan: "×", posinf: "+", neginf: "−" };
var CIVIDIS = [
  [0, 34, 78],
  [38, 65, 108],
  [87, 92, 109],
  [125, 124, 120],
  [165, 157, 116],
  [208, 192, 96],
  [253, 234, 69]
];
function cividisRGB(t) {
  t = Math.max(0, Math.min(1, Number.isFinite(t) ? t : 0)) * (CIVIDIS.length - 1);
  const k = Math.min(CIVIDIS.length - 2, Math.floor(t)), f = t - k;
  return CIVIDIS[k].map((v, j) => Math.round(v + (CIVIDIS[k + 1][j] - v) * f));
}
function cividis(t) {
  return `rgb(${cividisRGB(t).join(",")})`;
}
var HeatPanel = class extends Panel {
  // once per bundle (the stepper has clamped the place's head to the heads this run has)
  build() {
    const box = this.el;
    box.hidden = !this.b.graph.nodes.length;
    if (box.hidden) {
      box.replaceChildren();
      this.heat = null;
      return;
    }
    if (!this.bundle.probs()) {
      box.replaceChildren(
        h("h2", {}, this.w.ts("heat.title_none")),
        h("p", { class: "mpv-muted" }, this.w.t("heat.no_probs"))
      );
      this.heat = null;
      return;
    }
    const smp = this.bundle.sample(this.bundle.probsEvent);
    const heads = smp.shape[0];
    const sel = h("select", {
      class: "mpv-select",
      dataset: { act: "head" },
      "aria-label": this.w.ts("heat.head"),
      onchange: () => this.emit("head", Number(sel.value))
    });
    for (let k = 0; k < heads; k++) sel.append(h("option", { value: k }, String(k)));
    const canvas = h("canvas", { class: "mpv-heat-canvas", tabindex: 0, role: "img", dataset: { act: "heatmap" } });
    const readout = h("p", { class: "mpv-readout", "aria-live": "polite" });
    const legend = h("div", { class: "mpv-heat-legend" });
    this.heat = { canvas, sel, readout, legend, cursor: null, title: h("h2", {}) };
    canvas.addEventListener("click", (ev) => {
      const cell = this.cellAt(ev);
      if (cell) this.inspectCell(cell[0], cell[1]);
    });
    canvas.addEventListener("mousemove", (ev) => {
      this.heat.cursor = this.cellAt(ev);
      this.heatReadout();
    });
    canvas.addEventListener("mouseleave", () => {
      this.heat.cursor = null;
      this.heatReadout();
    });
    canvas.addEventListener("keydown", (ev) => this.heatKey(ev));
    canvas.addEventListener("focus", () => {
      this.heat.focused = true;
      this.render();
    });
    canvas.addEventListener("blur", () => {
      this.heat.focused = false;
      this.render();
    });
    const head = h(
      "div",
      { class: "mpv-heat-head" },
      h("label", { class: "mpv-field-label" }, this.w.ts("heat.head"), " ", sel)
    );
    const note = smp.of && (smp.of[smp.of.length - 1] > smp.shape[2] || smp.of[0] > smp.shape[0]) ? h(
      "p",
      { class: "mpv-small" },
      this.w.t("heat.sampled", { m: smp.shape[0], r: smp.shape[1], c: smp.shape[2] })
    ) : null;
    box.replaceChildren(
      this.heat.title,
      head,
      h("div", { class: "mpv-heat-wrap" }, h("span", { class: "mpv-axis-y" }, this.w.ts("heat.rows")), canvas),
      h("p", { class: "mpv-axis-x" }, this.w.ts("heat.cols")),
      readout,
      legend,
      ...note ? [note] : []
    );
  }
  heatGeometry() {
    const smp = this.bundle.sample(this.bundle.probsEvent);
    const [, R, C] = smp.shape;
    const avail = Math.max(160, Math.min(HEAT_MAX_PX, (this.geom.heat || 400) - 4 * this.geom.font));
    const cell = Math.max(2, Math.floor(avail / Math.max(R, C)));
    return { smp, R, C, cell, w: cell * C, hgt: cell * R };
  }
  // per step (redraws only when what it shows changed), and on a resize
  render() {
    if (!this.heat) return;
    const { smp, R, C, cell, w, hgt } = this.heatGeometry();
    const { canvas, sel } = this.heat;
    const head = this.place.head;
    const e = this.event();
    const picked = e.i === this.bundle.probsEvent && shownElement(this.place.el, smp)[0] === head ? shownElement(this.place.el, smp) : null;
    const cursor = this.heat.focused ? this.heat.cursor : null;
    const key = JSON.stringify([head, cell, picked, cursor]);
    if (key === this.heat.drawn) return;
    this.heat.drawn = key;
    sel.value = String(head);
    this.heat.title.replaceChildren(this.w.t("heat.title", { head }));
    canvas.setAttribute("aria-label", this.w.ts("heat.aria", { head, rows: R, cols: C }));
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(hgt * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(hgt * dpr);
      canvas.style.width = `${w}px`;
      canvas.style.height = `${hgt}px`;
    }
    const base = head * R * C;
    let lo = Infinity, hi = -Infinity;
    for (let k = 0; k < R * C; k++) {
      const v = smp.values[base + k];
      if (Number.isFinite(v)) {
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
    }
    if (!(hi > lo)) hi = lo + 1;
    this.heat.range = [lo, hi];
    const img = new ImageData(C, R);
    const specials = [];
    for (let k = 0; k < R * C; k++) {
      const v = smp.values[base + k];
      let rgb;
      if (Number.isFinite(v)) rgb = cividisRGB((v - lo) / (hi - lo));
      else {
        const kind = Number.isNaN(v) ? "nan" : v > 0 ? "posinf" : "neginf";
        rgb = SPECIAL_RGB[kind];
        specials.push([k, kind]);
      }
      img.data.set([rgb[0], rgb[1], rgb[2], 255], 4 * k);
    }
    const pixels = this.heat.pixels ??= document.createElement("canvas");
    pixels.width = C;
    pixels.height = R;
    pixels.getContext("2d").putImageData(img, 0, 0);
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(pixels, 0, 0, C * cell, R * cell);
    if (cell >= 10 && specials.length) {
      ctx.font = `bold ${Math.round(cell * 0.7)}px sans-serif`;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.fillStyle = "#ffffff";
      for (const [k, kind] of specials) {
        ctx.fillText(SPECIAL_MARK[kind], k % C * cell + cell / 2, Math.floor(k / C) * cell + cell / 2 + 1);
      }
    }
    if (picked) {
      const [, r, c] = picked;
      ctx.lineWidth = Math.max(2, cell / 6);
      ctx.strokeStyle = "#ffffff";
      ctx.strokeRect(c * cell + 1, r * cell + 1, cell - 2, cell - 2);
      ctx.strokeStyle = "#000000";
      ctx.lineWidth = 1.5;
      ctx.strokeRect(c * cell - 0.5, r * cell - 0.5, cell + 1, cell + 1);
    }
    if (cursor) {
      const [r, c] = cursor;
      ctx.strokeStyle = PRIMARY;
      ctx.lineWidth = 2;
      ctx.strokeRect(c * cell + 1, r * cell + 1, cell - 2, cell - 2);
    }
    this.heat.geom = { R, C, cell };
    this.heatLegend();
    this.heatReadout();
  }
  heatLegend() {
    const [lo, hi] = this.heat.range;
    const grad = h("span", {
      class: "mpv-ramp",
      style: `background:linear-gradient(90deg,${[0, 0.25, 0.5, 0.75, 1].map((t) => cividis(t)).join(",")})`
    });
    const sw = (k) => h(
      "span",
      { class: "mpv-legend-item" },
      h("span", { class: "mpv-swatch", style: `background:rgb(${SPECIAL_RGB[k].join(",")})` }, SPECIAL_MARK[k]),
      this.w.ts(`heat.${k}`)
    );
    this.heat.legend.replaceChildren(
      h("span", { class: "mpv-legend-item" }, fmtSig(lo, 3), grad, fmtSig(hi, 3)),
      sw("nan"),
      sw("posinf"),
      sw("neginf")
    );
  }
  heatReadout() {
    const cur = this.heat.cursor;
    if (!cur) {
      this.heat.readout.replaceChildren(this.w.t("heat.hint"));
      return;
    }
    const smp = this.bundle.sample(this.bundle.probsEvent);
    const [, R, C] = smp.shape;
    const v = smp.values[this.place.head * R * C + cur[0] * C + cur[1]];
    this.heat.readout.replaceChildren(this.w.t("heat.readout", { row: cur[0], col: cur[1], value: fmtSig(v, 4) }));
  }
  cellAt(ev) {
    const g = this.heat.geom;
    const rect = this.heat.canvas.getBoundingClientRect();
    const c = Math.floor((ev.clientX - rect.left) / g.cell), r = Math.floor((ev.clientY - rect.top) / g.cell);
    return r >= 0 && r < g.R && c >= 0 && c < g.C ? [r, c] : null;
  }
  heatKey(ev) {
    const g = this.heat.geom;
    const cur = this.heat.cursor ?? (this.event().i === this.bundle.probsEvent && this.place.el[0] === this.place.head ? [this.place.el[1], this.place.el[2]] : [0, 0]);
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    if (moves[ev.key]) {
      ev.preventDefault();
      ev.stopPropagation();
      const [dr, dc] = moves[ev.key];
      this.heat.cursor = [Math.max(0, Math.min(g.R - 1, cur[0] + dr)), Math.max(0, Math.min(g.C - 1, cur[1] + dc))];
      this.render();
    } else if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      ev.stopPropagation();
      this.inspectCell(cur[0], cur[1]);
    }
  }
  inspectCell(r, c) {
    this.emit("inspect", [this.place.head, r, c]);
  }
};

// assets/components/stepper/modtree.js
function mtParent(path) {
  if (path === "") return null;
  const k = path.lastIndexOf(".");
  return k < 0 ? "" : path.slice(0, k);
}
function mtAncestors(path) {
  const out = [];
  for (let p = path; p !== null; p = mtParent(p)) out.push(p);
  return out.reverse();
}
function mtBuild(events) {
  const nodes = /* @__PURE__ */ new Map();
  const node = (path) => {
    let n = nodes.get(path);
    if (n) return n;
    const parent = mtParent(path);
    if (parent !== null) node(parent);
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
      depth: parent === null ? 0 : nodes.get(parent).depth + 1
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
      if (n.first[e.phase] === void 0) n.first[e.phase] = e.i;
    }
  }
  return nodes;
}
function mtRows(tree, expanded) {
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
function mtKey(rows, k, key) {
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
function mtFlow(events, node, phase) {
  const ops = node.own.filter((i) => events[i].phase === phase);
  const inList = new Set(ops);
  const level = /* @__PURE__ */ new Map();
  const from = /* @__PURE__ */ new Map();
  for (const i of ops) {
    const src = [...new Set((events[i].src || []).filter((s2) => typeof s2 === "number" && inList.has(s2)))];
    from.set(i, src);
    level.set(i, src.length ? Math.max(...src.map((s2) => level.get(s2))) + 1 : 0);
  }
  ops.sort((a, b) => level.get(a) - level.get(b) || a - b);
  return { ops, level, from };
}
function mtWindow(ops, current, max) {
  if (ops.length <= max) return { start: 0, shown: ops };
  const at = Math.max(0, ops.indexOf(current));
  const start = Math.max(0, Math.min(ops.length - max, at - (max >> 1)));
  return { start, shown: ops.slice(start, start + max) };
}

// assets/components/stepper/treepanel.js
var FLOW_MAX = 48;
function keepVisible(box, el) {
  if (!box || !el) return;
  const top = el.offsetTop;
  if (top < box.scrollTop || top + el.offsetHeight > box.scrollTop + box.clientHeight)
    box.scrollTop = Math.max(0, top - box.clientHeight / 3);
}
var TreePanel = class extends Panel {
  // once per bundle
  build() {
    this.tree = mtBuild(this.b.events);
    this.expanded = /* @__PURE__ */ new Set([""]);
    this.module = null;
    this.focusPath = "";
    this.rowEls = /* @__PURE__ */ new Map();
    const fig = this.el;
    const model = this.b.run.config?.model ?? "";
    this.list = h("ul", { class: "mpv-tree", role: "tree", "aria-label": this.w.ts("tree.label") });
    this.list.addEventListener("keydown", (e) => this.onKey(e));
    this.flowTitle = h("h3", { class: "mpv-flow-title" });
    this.flow = h("ol", { class: "mpv-flow", "aria-label": this.w.ts("tree.flow_label") });
    fig.replaceChildren(
      h(
        "figcaption",
        { class: "mpv-title" },
        this.w.t("tree.title", { model, events: this.w.int(this.b.events.length) })
      ),
      h(
        "div",
        { class: "mpv-tree-box" },
        h("div", { class: "mpv-tree-col" }, this.list),
        h("div", { class: "mpv-flow-col" }, this.flowTitle, this.flow)
      )
    );
    this.flowKey = null;
    this.rows = [];
  }
  layout() {
  }
  // per step
  render() {
    const e = this.event();
    if (e.module !== this.module) {
      this.module = e.module;
      const closed = mtAncestors(e.module).filter((p) => !this.expanded.has(p));
      for (const p of closed) this.expanded.add(p);
      if (closed.length) this.drawRows();
      if (!this.list.contains(this.el.getRootNode().activeElement)) this.moveTabStop(e.module);
    }
    const moved = this.marked !== e.module;
    this.markRows(e);
    const flowMoved = this.drawFlow(e);
    if (moved) keepVisible(this.list.parentElement, this.rowEls.get(e.module));
    if (flowMoved) keepVisible(this.flow.parentElement, this.flowEls.get(e.i));
  }
  drawRows() {
    this.rows = mtRows(this.tree, this.expanded);
    this.rowEls = /* @__PURE__ */ new Map();
    const items = this.rows.map((r, k) => {
      const n = this.tree.get(r.path);
      const marks = [h("span", { class: "mpv-tree-ops" }, this.w.ts("tree.ops", { n: this.w.int(n.ops) }))];
      if (n.casts)
        marks.push(
          h(
            "span",
            { class: "mpv-tree-cast", title: this.w.ts("tree.casts_name", { n: n.casts }) },
            this.w.ts("tree.casts", { n: n.casts })
          )
        );
      if (n.bad) marks.push(h("span", { class: "mpv-tree-bad" }, this.w.ts("tree.bad")));
      const li = h(
        "li",
        {
          role: "treeitem",
          class: "mpv-tree-row",
          "aria-level": r.depth + 1,
          "aria-expanded": r.leaf ? null : String(r.open),
          "aria-selected": "false",
          tabindex: r.path === this.focusPath ? "0" : "-1",
          style: `--mpv-depth:${r.depth}`,
          dataset: { path: r.path },
          onclick: (ev) => {
            this.moveTabStop(r.path);
            if (ev.target.closest(".mpv-tree-twisty")) this.toggle(r.path);
            else this.jumpTo(r.path);
          }
        },
        h("span", { class: "mpv-tree-twisty", "aria-hidden": "true" }, r.leaf ? "" : r.open ? "▾" : "▸"),
        h("span", { class: "mpv-tree-name" }, r.path === "" ? this.w.ts("tree.model") : n.name),
        " ",
        ...marks
      );
      li.dataset.row = String(k);
      this.rowEls.set(r.path, li);
      return li;
    });
    if (!this.rowEls.has(this.focusPath)) this.focusPath = "";
    this.rowEls.get(this.focusPath).tabIndex = 0;
    this.list.replaceChildren(...items);
    this.marked = null;
  }
  // the one row in the Tab order
  moveTabStop(path) {
    if (!this.rowEls.has(path)) return;
    this.rowEls.get(this.focusPath)?.setAttribute("tabindex", "-1");
    this.focusPath = path;
    this.rowEls.get(path).tabIndex = 0;
  }
  markRows(e) {
    const on = new Set(mtAncestors(e.module));
    if (this.marked === e.module) return;
    for (const [path, li] of this.rowEls) {
      li.classList.toggle("mpv-tree-path", on.has(path) && path !== e.module);
      li.classList.toggle("mpv-tree-on", path === e.module);
      li.setAttribute("aria-selected", String(path === e.module));
    }
    this.marked = e.module;
  }
  // the current module's ops (a window of them), the current one marked; whether the mark moved
  drawFlow(e) {
    const node = this.tree.get(e.module);
    const key = `${e.module}|${e.phase}`;
    if (key !== this.flowKey) {
      this.flowKey = key;
      this.flowOps = mtFlow(this.b.events, node, e.phase);
      this.flowTitle.replaceChildren(
        this.w.t("tree.flow_title", {
          module: e.module || this.w.ts("tree.model"),
          phase: this.w.ts(`phases.${e.phase}`)
        })
      );
      this.flowStart = -1;
    }
    const { ops, level, from } = this.flowOps;
    const { start, shown } = mtWindow(ops, e.i, FLOW_MAX);
    if (start !== this.flowStart) {
      this.flowStart = start;
      this.flowEls = /* @__PURE__ */ new Map();
      const items = shown.map((i) => {
        const ev = this.b.events[i];
        const out = ev.out[0];
        const src = from.get(i);
        const li = h(
          "li",
          { class: "mpv-flow-op", style: `--mpv-level:${Math.min(level.get(i), 12)}` },
          h(
            "button",
            {
              type: "button",
              class: "mpv-flow-btn",
              dataset: { event: i },
              onclick: () => this.emit("jump", i, "full")
            },
            `#${i} ${ev.op.replace(/^aten\./, "").replace(/\.default$/, "")}`
          ),
          " ",
          out ? this.w.dtypeBadge(out.dtype) : null,
          ev.cast ? h("span", { class: "mpv-tree-cast" }, this.w.ts("tree.casts", { n: 1 })) : null,
          src.length ? h("span", { class: "mpv-flow-from" }, " ", this.w.ts("tree.flow_from", { from: src.join(", #") })) : null
        );
        this.flowEls.set(i, li);
        return li;
      });
      const more = ops.length - shown.length;
      if (more > 0) items.push(h("li", { class: "mpv-flow-more" }, this.w.ts("tree.flow_more", { n: more })));
      this.flow.replaceChildren(...items);
      this.flowOn = null;
    }
    if (this.flowOn === e.i) return false;
    this.flowEls.get(this.flowOn)?.classList.remove("mpv-flow-on");
    this.flowEls.get(e.i)?.classList.add("mpv-flow-on");
    this.flowOn = e.i;
    return true;
  }
  toggle(path) {
    if (this.expanded.has(path)) this.expanded.delete(path);
    else this.expanded.add(path);
    this.drawRows();
    this.markRows(this.event());
    this.rowEls.get(path)?.focus();
  }
  // the module's first op in the phase the reader is in (else its first op at all)
  jumpTo(path) {
    const first = this.tree.get(path).first;
    const i = first[this.place.phase] ?? first.all;
    if (i >= 0) this.emit("jump", i);
  }
  onKey(e) {
    const li = e.target.closest?.("[role=treeitem]");
    if (!li) return;
    const k = Number(li.dataset.row);
    const act = mtKey(this.rows, k, e.key);
    if (!act) return;
    e.preventDefault();
    e.stopPropagation();
    const target = this.rows[act.focus]?.path ?? "";
    if (act.expand !== void 0 || act.collapse !== void 0) {
      this.focusPath = target;
      const path = act.expand ?? act.collapse;
      if (act.expand !== void 0) this.expanded.add(path);
      else this.expanded.delete(path);
      this.drawRows();
      this.markRows(this.event());
    } else {
      this.moveTabStop(target);
    }
    if (act.jump !== void 0) this.jumpTo(act.jump);
    this.rowEls.get(target)?.focus();
  }
  // after a jump: keep focus in the tree when it was there (the stepper asks the graph to show the landmark)
  focusNode() {
    const active = this.el.getRootNode().activeElement;
    if (this.list.contains(active)) this.rowEls.get(this.focusPath)?.focus();
  }
};

// assets/components/stepper/values.js
var ValuesPanel = class extends Panel {
  // per step, and on a resize
  render() {
    const e = this.event();
    const box = this.el;
    const out = e.out[this.bundle.shownOutput(e)];
    if (!out) {
      box.replaceChildren(
        h("h2", {}, this.w.ts("values.title")),
        h("p", { class: "mpv-muted" }, this.w.ts("values.no_float"))
      );
      return;
    }
    const st = out.stats;
    const cell = (label, value, cls) => h(
      "div",
      { class: `mpv-stat ${cls || ""}` },
      h("span", { class: "mpv-stat-label" }, label),
      h("span", { class: "mpv-stat-value" }, value)
    );
    const stats = h(
      "div",
      { class: "mpv-stats" },
      ...["min", "max", "abs_max", "mean", "std"].map((k) => cell(this.w.t(`values.${k}`), fmtSig(st[k]))),
      ...["nan", "posinf", "neginf", "zero"].map(
        (k) => cell(this.w.t(`values.${k}`), this.w.int(st[k] ?? 0), k !== "zero" && st[k] ? "mpv-bad" : "")
      ),
      cell(this.w.t("values.subnormal"), this.w.int(st.subnormal ?? 0)),
      cell(this.w.t("values.numel"), this.w.int(st.numel ?? 0))
    );
    const fmts = this.b.range_formats.filter((f) => this.b.formats[f]);
    const table = h(
      "table",
      { class: "mpv-fmt-table" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, this.w.ts("values.if_stored")),
          ...fmts.map((f) => h("th", { scope: "col" }, this.w.dtypeBadge(f)))
        )
      ),
      h(
        "tbody",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "row" }, this.w.t("values.overflow")),
          ...fmts.map(
            (f) => h(
              "td",
              {},
              this.pct(st.overflow?.[f]),
              " ",
              h("span", { class: "mpv-muted" }, this.w.t(`values.overflow_to.${this.b.formats[f].overflow}`))
            )
          )
        ),
        h(
          "tr",
          {},
          h("th", { scope: "row" }, this.w.t("values.underflow")),
          ...fmts.map((f) => h("td", {}, this.pct(st.underflow?.[f])))
        )
      )
    );
    const parts = [h("h2", {}, this.w.t("values.title_of", { dtype: this.w.dtypeBadge(out.dtype) })), stats, table];
    if (st.sampled) {
      parts.push(h("p", { class: "mpv-small" }, this.w.t("values.sampled", { n: this.w.int(st.sampled) })));
    }
    parts.push(h("h3", {}, this.w.t("values.hist_title")), this.histogram(st, out.dtype, fmts));
    const err = e.landmarks.length ? this.b.errors?.[e.landmarks[0]] : null;
    if (err) parts.push(h("p", { class: "mpv-err-line" }, this.errorLine(err)));
    const fp16 = st.underflow?.float16;
    if (e.phase === "backward" && fp16 > 0) {
      parts.push(h("p", { class: "mpv-small" }, this.w.t("values.loss_scale_hint", { pct: this.pct(fp16) })));
    }
    box.replaceChildren(...parts);
  }
  pct(x) {
    if (x === void 0 || x === null) return "—";
    if (x === 0) return "0%";
    const p = x * 100;
    return (p < 0.01 ? "<0.01" : p < 10 ? p.toPrecision(2) : p.toFixed(1)) + "%";
  }
  errorLine(err) {
    if (err.nonfinite) return this.w.t("errors.line_nonfinite");
    if (err.rel === null || err.rel === void 0) return this.w.t("errors.line_abs", { abs: fmtSig(err.abs_rms, 3) });
    return this.w.t("errors.line_rel", { rel: fmtSig(err.rel, 3), abs: fmtSig(err.max_abs, 3) });
  }
  zones(f) {
    const sp = this.b.formats[f];
    const emax = Math.floor(Math.log2(sp.max));
    const ulpMax = 2 ** (emax - sp.mantissa_bits);
    return {
      under: Math.log2(sp.smallest_subnormal / 2),
      normal: Math.log2(sp.smallest_normal),
      over: Math.log2(sp.max + ulpMax / 2),
      overflow: sp.overflow
    };
  }
  histogram(st, dtype, fmts) {
    const hist = st.log2_hist || [];
    const f = this.geom.font;
    const width = Math.max(260, (this.geom.values || 480) - 2 * f - 2);
    const small = Math.round(f * 0.75);
    const exps = hist.map((x) => x[0]);
    const bounds = fmts.flatMap((k) => Object.values(this.zones(k)).filter((v) => typeof v === "number")).filter((v) => Math.abs(v) <= 40);
    const lo = Math.floor(Math.min(...exps, ...bounds)) - 2, hi = Math.ceil(Math.max(...exps, ...bounds)) + 2;
    const left = f * 3.2, right = f * 0.6, top = f * 0.4, barH = f * 7, stripH = f * 1.3, gap = f * 0.3;
    const height = top + barH + f * 1.7 + fmts.length * (stripH + gap) + f * 0.4;
    const X = (v) => left + (v - lo) / (hi - lo) * (width - left - right);
    const maxC = Math.max(1, ...hist.map((x) => x[1]));
    const svg = s("svg", {
      class: "mpv-hist",
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      "aria-label": this.w.ts("values.hist_aria")
    });
    svg.append(s("line", { x1: left, x2: width - right, y1: top + barH, y2: top + barH, class: "mpv-axis" }));
    const color = this.w.color(dtype);
    for (const [ex, c] of hist) {
      const hh = Math.max(1, Math.log10(c + 1) / Math.log10(maxC + 1) * barH);
      svg.append(
        s(
          "rect",
          {
            x: X(ex) + 0.5,
            y: top + barH - hh,
            width: Math.max(1, X(ex + 1) - X(ex) - 1),
            height: hh,
            fill: color,
            class: "mpv-hist-bar"
          },
          s("title", {}, `${pow2Text(ex)}: ${c}`)
        )
      );
    }
    const step = Math.max(1, Math.ceil((hi - lo) / ((width - left) / (f * 3))));
    for (let ex = Math.ceil(lo / step) * step; ex <= hi; ex += step) {
      svg.append(
        s(
          "text",
          { x: X(ex), y: top + barH + f * 1.1, "text-anchor": "middle", class: "mpv-tick", "font-size": small },
          String(ex).replace("-", "−")
        )
      );
    }
    svg.append(
      s(
        "text",
        { x: left - 4, y: top + f * 0.8, "text-anchor": "end", class: "mpv-tick", "font-size": small },
        this.w.int(maxC)
      )
    );
    let y = top + barH + f * 1.7;
    const zoneClass = ["mpv-z-flush", "mpv-z-sub", "mpv-z-normal", "mpv-z-over"];
    for (const k of fmts) {
      const z = this.zones(k);
      const edges = [lo, z.under, z.normal, z.over, hi].map((v) => Math.max(lo, Math.min(hi, v)));
      svg.append(
        s(
          "text",
          { x: left - 4, y: y + stripH * 0.75, "text-anchor": "end", class: "mpv-strip-label", "font-size": small },
          this.w.short(k)
        )
      );
      const names = ["flush", "subnormal", "normal", `over_${z.overflow}`];
      for (let j = 0; j < 4; j++) {
        const x0 = X(edges[j]), x1 = X(edges[j + 1]);
        if (x1 - x0 <= 0) continue;
        const label = this.w.ts(`values.zone.${names[j]}`);
        const g = s(
          "g",
          {},
          s("rect", { x: x0, y, width: x1 - x0, height: stripH, class: zoneClass[j] }),
          s("title", {}, `${this.w.short(k)}: ${label}`)
        );
        if (this.geom.measureText(label, small) + 6 < x1 - x0) {
          g.append(
            s(
              "text",
              {
                x: (x0 + x1) / 2,
                y: y + stripH * 0.72,
                "text-anchor": "middle",
                class: "mpv-zone-text",
                "font-size": small
              },
              label
            )
          );
        }
        svg.append(g);
      }
      y += stripH + gap;
    }
    return h("div", { class: "mpv-hist-box" }, svg, h("p", { class: "mpv-caption" }, this.w.t("values.hist_caption")));
  }
};

// assets/components/stepper/panels.js
var BUILT = ["banners", "controls", "graph", "errors", "heat"];
var PER_STEP = ["graph", "card", "values", "errors", "heat", "element"];
var PENDING_STEP = ["graph", "card", "errors", "heat"];
function makePanels(ctx, $) {
  const panel = (Kind, role) => new Kind(ctx, $(role));
  const panels = {
    banners: panel(BannersPanel, "banners"),
    controls: panel(ControlsPanel, "controls"),
    graph: panel(ctx.bundle.b.graph.nodes.length ? GraphPanel : TreePanel, "graph"),
    errors: panel(ErrorsPanel, "errors"),
    heat: panel(HeatPanel, "heat"),
    card: panel(CardPanel, "card"),
    values: panel(ValuesPanel, "values"),
    element: panel(ElementPanel, "element")
  };
  for (const p of BUILT) panels[p].build();
  return panels;
}
function drawStep(panels) {
  const spoken = panels.controls.render();
  for (const p of PER_STEP) panels[p].render();
  return spoken;
}
function drawPending(panels, note) {
  const spoken = panels.controls.render();
  for (const p of PENDING_STEP) panels[p].render();
  panels.values.pending(note);
  panels.element.pending(null);
  return spoken;
}

// assets/components/stepper/playback.js
var PLAY_MS = 1400;
var Playback = class {
  /**
   * @param {{atEnd: () => boolean, step: () => void, restart: () => void, shown: (playing: boolean) => void}} to
   *   atEnd: whether the place is at the list's last step; step: one step on; restart: back to the first step;
   *   shown: tell the controls whether it plays
   * @param {{setInterval: typeof setInterval, clearInterval: typeof clearInterval}} [clock] the timers (a test's)
   */
  constructor(to, clock = globalThis) {
    this.to = to;
    this.clock = clock;
    this.timer = null;
  }
  get playing() {
    return this.timer !== null;
  }
  toggle() {
    if (this.playing) return this.stop();
    if (this.to.atEnd()) this.to.restart();
    this.timer = this.clock.setInterval(() => {
      if (this.to.atEnd()) return this.stop();
      this.to.step();
    }, PLAY_MS);
    this.to.shown(true);
  }
  stop() {
    this.clock.clearInterval(this.timer);
    this.timer = null;
    this.to.shown(false);
  }
};

// assets/components/stepper/skiplink.js
var HIDDEN = "position:absolute;left:-10000px;top:0;width:1px;height:1px;overflow:hidden";
var SHOWN = [
  "position:fixed;left:12px;top:12px;z-index:2147483647;padding:10px 16px;border-radius:6px",
  "background:#1f2329;color:#ffffff;font:600 16px/1.2 sans-serif;text-decoration:underline",
  "outline:3px solid #3b5bdb;outline-offset:2px"
].join(";");
var SkipLink = class {
  /** @param {Document} doc the page */
  constructor(doc) {
    this.doc = doc;
    this.link = null;
  }
  /**
   * Show the link (created once, first in <body>) with `label`; activating it calls `onActivate`.
   * @param {string} label
   * @param {Element | undefined} target the stepper's element in the page's own DOM (its shadow host): the link
   *   points at its id, so the link reads as a skip link to tools that cannot see into the shadow root
   * @param {() => void} onActivate
   */
  attach(label, target, onActivate) {
    const doc = this.doc;
    let a = doc.querySelector("body > a[data-mpv-skip]");
    if (!a) {
      a = doc.createElement("a");
      a.dataset.mpvSkip = "";
      a.style.cssText = HIDDEN;
      a.addEventListener("focus", () => a.style.cssText = SHOWN);
      a.addEventListener("blur", () => a.style.cssText = HIDDEN);
      a.addEventListener("click", (e) => {
        e.preventDefault();
        a.mpvActivate?.();
      });
    }
    if (doc.body.firstChild !== a) doc.body.prepend(a);
    if (target && !target.id) target.id = "mpv-stepper";
    a.href = `#${target?.id ?? ""}`;
    a.textContent = label;
    a.mpvActivate = onActivate;
    this.link = a;
  }
  /** Remove the link, unless another stepper has taken it over since. */
  detach(onActivate) {
    if (this.link && this.link.mpvActivate === onActivate) this.link.remove();
    this.link = null;
  }
};

// assets/components/stepper/store.js
var PlaceStore = class {
  /**
   * @param {import("./bundle.js").BundleReader} reader the run
   * @param {import("./panel.js").Place} place where to start (kept as the one object panels read)
   */
  constructor(reader, place) {
    this.reader = reader;
    this.place = place;
    this.clamp();
  }
  event() {
    return this.reader.eventAt(this.place);
  }
  list() {
    return this.reader.list(this.place.view, this.place.phase);
  }
  positionOf(i) {
    return this.reader.positionOf(i, this.place.view, this.place.phase);
  }
  /** A new run of the same lesson: the same tensor stays in view (matched by key, index and phase). */
  rerun(reader) {
    const e = this.event();
    this.reader = reader;
    this.place.pos = this.positionOf(reader.matchEvent({ key: e.key, i: e.i, phase: e.phase }));
    this.place.explore = null;
    this.clamp();
  }
  /**
   * Apply `change`. A new step or element ends an exploration (unless the change sets `explore`).
   * @param {Change} change
   * @returns {Moved | null} what changed (null: nothing)
   */
  move(change) {
    const p = this.place;
    const before = { pos: p.pos, view: p.view, phase: p.phase, head: p.head, el: p.el.join("."), explore: p.explore };
    const shown = this.event().i;
    if (VIEWS.includes(change.view)) p.view = change.view;
    if (PHASES.includes(change.phase)) p.phase = change.phase;
    if (change.head !== void 0) p.head = Math.max(0, parseInt(change.head, 10) || 0);
    if (change.el !== void 0) p.el = [0, 1, 2].map((k) => Math.max(0, parseInt(change.el[k], 10) || 0));
    if (change.event !== void 0) {
      let view = change.prefer || p.view;
      if (!change.prefer && !change.inView && view === "story" && !this.reader.storyOf.has(change.event)) view = "full";
      if (p.phase !== "all" && this.reader.b.events[change.event].phase !== p.phase) p.phase = "all";
      p.view = view;
      p.pos = this.positionOf(change.event);
    } else if (change.pos !== void 0) p.pos = Math.trunc(Number(change.pos)) || 0;
    else if (change.by !== void 0) p.pos += change.by;
    else if (p.view !== before.view || p.phase !== before.phase) p.pos = this.positionOf(shown);
    this.clamp();
    const stepped = p.pos !== before.pos || p.view !== before.view || p.phase !== before.phase;
    const picked = p.el.join(".") !== before.el;
    if (change.explore !== void 0) p.explore = change.explore;
    else if (stepped || picked) p.explore = null;
    if (stepped) return "step";
    if (picked) return "element";
    if (p.head !== before.head) return "head";
    if (p.explore !== before.explore) return "explore";
    return null;
  }
  // a position inside the list, a head the run's heatmap has
  clamp() {
    const p = this.place;
    p.pos = Math.max(0, Math.min(p.pos, this.list().length - 1));
    const heads = this.reader.probs()?.shape[0];
    if (heads) p.head = Math.max(0, Math.min(p.head, heads - 1));
  }
};
function targetChange(reader, t) {
  const b = reader.b;
  const i = typeof t.key === "string" && reader.keyIndex.has(t.key) ? reader.keyIndex.get(t.key) : typeof t.landmark === "string" && Object.hasOwn(b.landmarks, t.landmark) ? b.landmarks[t.landmark] : t.nonfinite && b.first_nonfinite ? b.first_nonfinite.event : null;
  if (i === null && !("step" in t)) return null;
  const change = { view: t.view, phase: t.phase };
  if (t.head !== void 0) change.head = t.head;
  if (t.el !== void 0) change.el = String(t.el).split(".");
  if (i !== null) return { ...change, event: i, inView: true };
  return { ...change, pos: parseInt(t.step, 10) || 0 };
}

// assets/components/stepper/presenting.js
var STEPPER_TARGET = ["landmark", "key", "step", "nonfinite"];
function takePendingGoto(stepper) {
  const d = pending();
  if (d) goTo(stepper, d);
}
function goTo(stepper, d) {
  const t = d?.target;
  if (!d || !t || consumed(d.id) || !stepper.store) return;
  if (!STEPPER_TARGET.some((k) => k in t)) return;
  const change = targetChange(stepper.store.reader, t);
  if (!change && !d.waited) {
    d.waited = true;
    return;
  }
  consume(d.id);
  stepper.playback.stop();
  if (stepper.move(change ?? targetChange(stepper.store.reader, { ...t, step: 0 })) !== "step") stepper.render();
}
function publish(stepper) {
  if (!stepper.meta.publish || !stepper.publishTo || !stepper.store) return;
  const p = stepper.store.place;
  const place = {
    step: p.pos,
    view: p.view,
    phase: p.phase,
    head: p.head,
    el: p.el.join("."),
    key: stepper.store.event().key
  };
  const json = JSON.stringify(place);
  if (json === stepper.published) return;
  stepper.published = json;
  stepper.publishTo("view", place);
}

// assets/components/stepper/stream.js
function bytesOf(buffer) {
  if (buffer instanceof Uint8Array) return buffer;
  if (ArrayBuffer.isView(buffer)) return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  if (buffer instanceof ArrayBuffer) return new Uint8Array(buffer);
  return null;
}
function parseChunk(buffer) {
  const bytes = bytesOf(buffer);
  if (!bytes) return null;
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}
var EventFetcher = class {
  /**
   * @param {import("./bundle.js").BundleReader} reader a streamed run's reader (its `stream` set)
   * @param {EventChannel | null | undefined} channel null where the host cannot ask (then every fetch fails)
   * @param {(chunk: number) => void} onArrive a chunk is whole now
   */
  constructor(reader, channel2, onArrive) {
    this.reader = reader;
    this.channel = channel2 ?? null;
    this.onArrive = onArrive;
    this.asked = /* @__PURE__ */ new Set();
    this.failed = /* @__PURE__ */ new Map();
    this.unlisten = this.channel ? this.channel.listen((msg, buffers) => this.receive(msg, buffers)) : () => {
    };
  }
  /** Whether event i can be drawn now; if not, its chunk is asked for (once) unless it failed. */
  want(i) {
    if (this.reader.ready(i)) return true;
    this.ask(this.reader.chunkOf(i));
    return false;
  }
  /** Ask ahead for the chunk after event i's, so stepping on finds it whole. */
  askAhead(i) {
    const next = this.reader.chunkOf(i) + 1;
    if (next * this.reader.stream.chunk < this.reader.b.events.length && !this.reader.whole.has(next)) this.ask(next);
  }
  ask(k) {
    if (this.asked.has(k) || this.failed.has(k)) return;
    if (!this.channel) {
      this.failed.set(k, "no_channel");
      return;
    }
    this.asked.add(k);
    this.channel.request(k);
  }
  /** The kernel's refusal of event i's chunk, or null. */
  failure(i) {
    return this.failed.get(this.reader.chunkOf(i)) ?? null;
  }
  /** One message from the kernel: a chunk (its JSON in the first buffer) or a refusal; anything else ignored. */
  receive(msg, buffers) {
    if (msg?.type !== "events" || !Number.isInteger(msg.chunk)) return;
    const k = msg.chunk;
    this.asked.delete(k);
    if (typeof msg.error === "string") {
      this.failed.set(k, msg.error);
    } else {
      if (!this.reader.fill(k, parseChunk(buffers?.[0]))) this.failed.set(k, "bad_chunk");
    }
    this.onArrive(k);
  }
  close() {
    this.unlisten();
  }
};
function pendingNote(fetcher, words, n, i) {
  const failure = fetcher.failure(i);
  if (!failure) return words.ts("stream.loading", { n });
  const reason = words.has(`stream.${failure}`) ? words.ts(`stream.${failure}`) : failure;
  return words.ts("stream.failed", { n, reason });
}

// assets/components/stepper/tips.js
var Tips = class {
  /**
   * @param {HTMLElement} app the stepper's element (holds the [data-role=tip] element)
   * @param {() => import("./words.js").Words} words the current words
   */
  constructor(app, words) {
    this.app = app;
    this.words = words;
    this.tip = app.querySelector("[data-role=tip]");
    this.show = (e) => this.showFor(e.target);
    this.hide = () => this.tip.hidden = true;
  }
  showFor(target) {
    const el = target.closest?.(".mpv-term");
    if (!el) return;
    const w = this.words();
    const g = w.text.glossary?.[el.dataset.term];
    if (!g) return;
    this.tip.replaceChildren(
      h("strong", {}, g.term ?? el.dataset.term),
      h("span", {}, w.t(`${el.dataset.term}.text`, {}, w.text.glossary))
    );
    this.tip.hidden = false;
    const r = el.getBoundingClientRect(), box = this.app.getBoundingClientRect();
    const width = Math.min(360, box.width - 16);
    this.tip.style.maxWidth = `${width}px`;
    this.tip.style.left = `${Math.max(8, Math.min(r.left - box.left, box.width - width - 8))}px`;
    this.tip.style.top = `${r.bottom - box.top + 6}px`;
  }
  // the listeners, as [type, handler]
  listeners() {
    return [
      ["mouseover", this.show],
      ["focusin", this.show],
      ["mouseout", this.hide],
      ["focusout", this.hide]
    ];
  }
  attach() {
    for (const [type, fn] of this.listeners()) this.app.addEventListener(type, fn);
  }
  detach() {
    for (const [type, fn] of this.listeners()) this.app.removeEventListener(type, fn);
  }
};

// assets/components/stepper/history.js
var PLACE_KEYS = [...PARAMS, ...LEGACY_EL];
var HistoryAdapter = class {
  /**
   * @param {object} registry the page-wide registry (survives Streamlit re-evaluating the module); holds the
   *   originals and the active owner, so a page is wrapped once however often the module runs
   * @param {History} history the page's history object
   * @param {{href: string}} [here] the page's location (what a push is compared with)
   */
  constructor(registry, history, here = globalThis.location) {
    this.registry = registry;
    this.history = history;
    if (!registry.history) {
      const original = { push: history.pushState.bind(history), replace: history.replaceState.bind(history) };
      registry.history = original;
      for (const [name, write] of [
        ["pushState", original.push],
        ["replaceState", original.replace]
      ]) {
        history[name] = (state, unused, url) => {
          let merged;
          try {
            merged = registry.active?.mergeUrl(url) ?? url;
          } catch {
            merged = url;
          }
          if (name === "pushState" && here) {
            if (sameUrl(merged, here.href, PLACE_KEYS)) return original.replace(state, unused, here.href);
            if (queryFilledIn(merged, here.href)) return original.replace(state, unused, merged);
          }
          return write(state, unused, merged);
        };
      }
    }
  }
  /** @param {UrlOwner} owner the stepper whose keys every URL of its page keeps, until it releases */
  claim(owner) {
    this.registry.active = owner;
  }
  /** @param {UrlOwner} owner */
  release(owner) {
    if (this.registry.active === owner) this.registry.active = null;
  }
  /** Write a URL as is (the unwrapped replaceState). */
  replace(url) {
    this.registry.history.replace(this.history.state, "", url);
  }
};
function queryFilledIn(url, current) {
  const [a, b] = both(url, current);
  return a !== null && a.origin === b.origin && a.pathname === b.pathname && b.search === "" && a.search !== "";
}
function sameUrl(url, current, ignored = []) {
  const [a, b] = both(url, current);
  if (a === null) return false;
  const query = (u) => [...u.searchParams].filter(([k]) => !ignored.includes(k)).map(([k, v]) => `${k}=${v}`).sort().join("&");
  return a.origin === b.origin && a.pathname === b.pathname && a.hash === b.hash && query(a) === query(b);
}
function both(url, current) {
  if (url == null) return [null, null];
  try {
    return [new URL(url, current), new URL(current)];
  } catch {
    return [null, null];
  }
}

// assets/components/stepper/urlsync.js
var URL_WRITE_MS = 150;
var PAGE = { history: null, active: null, loaded: false };
var UrlSync = class {
  /**
   * @param {import("./meta.js").Meta} meta
   * @param {() => import("./store.js").PlaceStore} store the place's store (null until the first run has loaded)
   * @param {Element} app the stepper's element (a URL is merged only while it is in the page)
   * @param {{onWrite?: () => void, page?: object, win?: Window}} [opts] onWrite: after each URL write (publishing)
   */
  constructor(meta, store, app, { onWrite = () => {
  }, page = PAGE, win = globalThis } = {}) {
    this.meta = meta;
    this.store = store;
    this.app = app;
    this.onWrite = onWrite;
    this.page = page;
    this.win = win;
    this.timer = null;
    this.path = null;
    this.history = null;
    this.stop = null;
    this.fromSaved = false;
  }
  /** The place belongs to the view the page shows now (each run the stepper is drawn in). */
  claimStop() {
    this.stop = stopOf(this.win.location.href);
  }
  storeKey() {
    return `mpviz.stepper.${this.meta.key}`;
  }
  /** The place to start from: the URL's keys (a shared link), else what this tab saved. */
  restore(reader) {
    let saved;
    try {
      saved = JSON.parse(this.win.sessionStorage.getItem(this.storeKey()) || "null");
    } catch {
      saved = null;
    }
    const later = this.page.loaded;
    this.page.loaded = true;
    const query = this.meta.embedded ? new URLSearchParams() : new URLSearchParams(this.win.location.search);
    this.fromSaved = Boolean(saved) && !hasPlace(query);
    return restorePlace(query, saved, reader, later);
  }
  /** A place read back from this tab is written into the URL again: coming Back to the lesson, the page may have
   * rewritten its URL without the stepper's keys before this stepper was drawn. */
  showRestored() {
    if (this.fromSaved) this.write();
    this.fromSaved = false;
  }
  /** Keep the place in sessionStorage now, in the URL shortly. */
  save() {
    const state = savedPlace(this.store().place, this.store().event(), this.store().reader.sig);
    try {
      this.win.sessionStorage.setItem(this.storeKey(), JSON.stringify(state));
    } catch {
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.write(), URL_WRITE_MS);
  }
  /** Write the place into the URL now (a pending write is done). */
  write() {
    clearTimeout(this.timer);
    if (this.meta.embedded) return;
    const href = this.win.location.href;
    const next = this.mergeUrl(href);
    if (next !== href) this.history.replace(next);
    this.onWrite();
  }
  // `url` with the stepper's keys set to its current place, if it is a URL of the page the stepper lives on; any
  // other URL unchanged (the history adapter calls this for every URL the page writes)
  mergeUrl(url) {
    if (url == null || !this.path || !this.store() || !this.app.isConnected) return url;
    if (new URL(url, this.win.location.href).pathname !== this.path) return url;
    if (stopOf(url, this.win.location.href) !== this.stop) return url;
    return mergePlace(url, this.win.location.href, this.store().place, Boolean(this.store().reader.probs()));
  }
  /** The link "Copy link" hands out (the place written first). */
  link() {
    this.write();
    return sharedLink(this.win.location.href, this.meta.locale);
  }
  /** The page the stepper is on now owns the URL's stepper keys (back on it after a detach: they are written). */
  attach() {
    this.path = this.win.location.pathname;
    this.claimStop();
    if (this.meta.embedded) return;
    const back = this.history !== null;
    this.history ??= new HistoryAdapter(this.page, this.win.history, this.win.location);
    this.history.claim(this);
    if (back) this.write();
  }
  /** Write what is pending and let go of the page's URLs. */
  detach() {
    if (!this.path) return;
    this.write();
    this.history?.release(this);
    this.path = null;
  }
};

// assets/components/stepper/words.js
var Words = class {
  /**
   * @param {{ui: object, glossary: object}} text the payload's text tables (mpviz/locales/<locale>/stepper.toml, glossary.toml)
   * @param {{dtype_colors?: Object<string, string>}} style the payload's colours
   * @param {Object<string, object>} formats the bundle's formats by short name (bundle.schema.json, Format)
   * @param {string} locale BCP 47 tag for numbers and lists
   * @param {(type: string, ...args: any[]) => void} emit the stepper's action channel (an op link jumps)
   */
  constructor(text, style, formats, locale, emit) {
    this.text = text;
    this.style = style;
    this.formats = formats;
    this.locale = locale;
    this.emit = emit;
    this.listFormat = null;
    this.intFormat = null;
  }
  // ── text ──
  lookup(path, table = this.text.ui) {
    let v = table;
    for (const p of path.split(".")) v = v && typeof v === "object" ? v[p] : void 0;
    return typeof v === "string" ? v : null;
  }
  has(path) {
    return this.lookup(path) !== null;
  }
  // template → DocumentFragment: {name} filled (Nodes as they are, the rest as text), `code` and **bold** markup
  t(path, vals = {}, table = this.text.ui) {
    const tpl = this.lookup(path, table) ?? path;
    const frag = document.createDocumentFragment();
    const re = /`([^`]+)`|\*\*(.+?)\*\*/g;
    let last = 0, m;
    while (m = re.exec(tpl)) {
      this.fill(frag, tpl.slice(last, m.index), vals);
      const el = document.createElement(m[1] !== void 0 ? "code" : "strong");
      this.fill(el, m[1] ?? m[2], vals);
      frag.append(el);
      last = re.lastIndex;
    }
    this.fill(frag, tpl.slice(last), vals);
    return frag;
  }
  fill(parent, text, vals) {
    const parts = text.split(/(\{\{|\}\}|\{\w+\})/);
    for (const p of parts) {
      if (!p) continue;
      if (p === "{{" || p === "}}") parent.append(p[0]);
      else if (/^\{\w+\}$/.test(p)) {
        const name = p.slice(1, -1);
        const v = name.startsWith("gl_") && !(name in vals) ? this.term(name.slice(3)) : vals[name];
        if (v instanceof Node) parent.append(v.parentNode ? v.cloneNode(true) : v);
        else parent.append(v === void 0 || v === null ? p : String(v));
      } else parent.append(p);
    }
  }
  // plain string (for aria-label, title): markup dropped
  ts(path, vals = {}) {
    return this.t(path, vals).textContent;
  }
  // a term of art with its glossary definition on hover and keyboard focus
  term(key, shown) {
    const g = this.text.glossary?.[key];
    const el = h("span", { class: "mpv-term", tabindex: 0, dataset: { term: key } }, shown ?? g?.term ?? key);
    if (g) el.setAttribute("aria-describedby", "mpv-tip");
    return el;
  }
  listOf(items) {
    const frag = document.createDocumentFragment();
    if (!items.length) return frag;
    const marks = items.map((_, k) => `${k}`);
    const parts = (this.listFormat ??= new Intl.ListFormat(this.locale, { type: "conjunction" })).formatToParts(marks);
    for (const p of parts) {
      if (p.type === "element") {
        const k = Number(p.value.slice(1, -1));
        const v = items[k];
        frag.append(v instanceof Node ? v : String(v));
      } else frag.append(p.value);
    }
    return frag;
  }
  // "3 NaN and 2 +inf" from a tensor's stats
  whatNonfinite(st) {
    if (!st) return "";
    const items = [];
    if (st.nan) items.push(this.ts("notice.what_nan", { n: this.int(st.nan) }));
    if (st.posinf) items.push(this.ts("notice.what_posinf", { n: this.int(st.posinf) }));
    if (st.neginf) items.push(this.ts("notice.what_neginf", { n: this.int(st.neginf) }));
    return this.listOf(items);
  }
  // ── little visual atoms ──
  color(dtype) {
    return this.style.dtype_colors?.[dtype] ?? "#999999";
  }
  short(dtype) {
    return this.formats[dtype]?.short ?? dtype ?? "—";
  }
  ink(bg) {
    const c = [1, 3, 5].map((k) => parseInt(bg.slice(k, k + 2), 16) / 255).map((v) => v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    const L = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    return (L + 0.05) / 0.05 >= 1.05 / (L + 0.05) ? "#111111" : "#ffffff";
  }
  dtypeBadge(dtype, shape) {
    const bg = this.color(dtype);
    return h(
      "span",
      { class: "mpv-dtype", style: `background:${bg};color:${this.ink(bg)}`, title: dtype },
      this.short(dtype),
      shape ? h("span", { class: "mpv-shape" }, this.shapeText(shape)) : null
    );
  }
  shapeText(shape) {
    return shape.length ? shape.join("×") : this.ts("card.scalar");
  }
  opLink(i) {
    return h(
      "button",
      {
        type: "button",
        class: "mpv-link",
        dataset: { op: i },
        onclick: () => this.emit("jump", i, "full")
      },
      this.ts("card.op_ref", { index: i })
    );
  }
  int(n) {
    return (this.intFormat ??= new Intl.NumberFormat(this.locale)).format(n);
  }
  deviceName(d) {
    return this.has(`devices.${d}`) ? this.ts(`devices.${d}`) : d;
  }
  policyName(p) {
    return this.has(`policies.${p}`) ? this.ts(`policies.${p}`) : p;
  }
};

// assets/components/stepper/stepper.js
var APPS = /* @__PURE__ */ new WeakMap();
function mount(component) {
  if (String(component.name ?? "").endsWith("mpviz_goto")) return deliver(component);
  return mountStepper(component);
}
function mountStepper(component) {
  const root = component.parentElement;
  let app = APPS.get(root);
  if (!app) {
    app = new Stepper(root);
    APPS.set(root, app);
  }
  app.publishTo = component.setStateValue;
  app.channel = component.events ?? null;
  app.load(component.data);
  return () => app.detach();
}
var Stepper = class {
  constructor(root) {
    this.root = root;
    this.app = root.querySelector("[data-role=app]");
    this.$ = (role) => this.app.querySelector(`[data-role=${role}]`);
    this.skip = new SkipLink(document);
    this.onSkip = () => {
      this.app.scrollIntoView({ block: "start" });
      this.app.focus({ preventScroll: true });
    };
    this.raw = null;
    this.store = null;
    this.panels = null;
    this.listening = false;
    this.meta = readMeta(null);
    this.url = new UrlSync(this.meta, () => this.store, this.app, { onWrite: () => publish(this) });
    this.keys = new Keys(
      this.app,
      () => this.meta.embedded,
      (m) => this.move(m),
      () => this.store.list().length - 1
    );
    this.publishTo = null;
    this.channel = null;
    this.fetcher = null;
    this.published = null;
    this.layout = new Layout(this.app, root.host, (changed) => this.relayout(changed));
    this.tips = new Tips(this.app, () => this.words);
    this.playback = new Playback({
      atEnd: () => this.store.place.pos >= this.store.list().length - 1,
      step: () => this.move({ by: 1 }),
      restart: () => this.move({ pos: 0 }),
      shown: (playing) => this.panels?.controls.setPlaying(playing)
    });
    this.actions = {
      jump: (i, prefer) => this.jump(i, prefer),
      move: (d) => this.move({ by: d }),
      go: (pos) => this.move({ pos }),
      view: (view, phase) => this.move({ view, phase }),
      play: () => this.playback.toggle(),
      keys: () => this.keys.take(),
      copy: () => this.copyLink(),
      head: (k) => this.move({ head: k }),
      element: (el) => this.move({ el }),
      explore: (value) => this.move({ explore: value }),
      inspect: (el) => this.jump(this.store.reader.probsEvent, void 0, { el })
    };
  }
  emit(type, ...args) {
    this.actions[type](...args);
  }
  // ── data ──
  load(data) {
    this.url.claimStop();
    if (data === this.raw || sameBytes(data, this.raw)) {
      this.attach();
      return takePendingGoto(this);
    }
    this.raw = data;
    const payload = typeof data === "string" ? JSON.parse(data) : data instanceof Uint8Array || data instanceof ArrayBuffer ? JSON.parse(new TextDecoder().decode(data)) : data;
    const text = payload.text || { ui: {}, glossary: {} };
    Object.assign(this.meta, readMeta(payload.meta));
    const b = payload.bundle;
    this.words = new Words(text, payload.style || {}, b.formats, this.meta.locale, (...a) => this.emit(...a));
    const reader = new BundleReader(b, Object.keys(text.ui.graph?.param_short ?? {}), { stream: this.meta.stream });
    this.fetcher?.close();
    this.fetcher = reader.stream ? new EventFetcher(reader, this.channel, (k) => this.arrived(reader, k)) : null;
    const rerun = this.store !== null;
    if (rerun)
      this.store.rerun(reader);
    else this.store = new PlaceStore(reader, this.url.restore(reader));
    this.app.style.setProperty("--mpv-scale", String(this.meta.scale));
    this.app.classList.toggle("mpv-embedded", this.meta.embedded);
    this.build();
    this.attach();
    if (!rerun) this.url.showRestored();
    if (rerun) this.keys.takeFromSidebar();
    takePendingGoto(this);
    publish(this);
  }
  // ── moving: every change of the place goes through the store's one `move`; then what it changed is drawn ──
  move(change) {
    const moved = this.store.move(change);
    const drawn = this.store.reader.ready(this.store.event().i);
    if (moved === "step") this.render();
    else if (!drawn) {
    } else if (moved === "element") {
      this.panels.element.render();
      if (this.store.event().i === this.store.reader.probsEvent) this.panels.heat.render();
    } else if (moved === "head") this.panels.heat.render();
    else if (moved === "explore") this.panels.element.render();
    if (moved && moved !== "explore") this.url.save();
    return moved;
  }
  // show event i (in `prefer`, else the Story view when it is a story step), and its graph node
  jump(i, prefer, extra = {}) {
    this.move({ ...extra, event: i, prefer });
    this.panels.graph.focusNode(this.store.reader.b.events[i].landmarks?.[0]);
  }
  // ── building (once per bundle) and drawing ──
  build() {
    const geom = this.layout.measure(this.meta.publish);
    this.app.setAttribute("aria-label", this.words.ts("controls.region"));
    if (this.listening && !this.meta.embedded)
      this.skip.attach(this.words.ts("controls.skip_link"), this.root.host, this.onSkip);
    const ctx = {
      bundle: this.store.reader,
      place: this.store.place,
      words: this.words,
      emit: (...a) => this.emit(...a),
      geom
    };
    this.panels = makePanels(ctx, this.$);
    this.render();
  }
  render() {
    const e = this.store.event();
    const ready = !this.fetcher || this.fetcher.want(e.i);
    let spoken;
    if (ready) {
      spoken = drawStep(this.panels);
      this.fetcher?.askAhead(e.i);
    } else {
      const note = pendingNote(this.fetcher, this.words, this.store.place.pos + 1, e.i);
      spoken = `${drawPending(this.panels, note)} ${note}`;
    }
    this.$("live").textContent = spoken;
    this.url.save();
    this.app.dataset.step = String(this.store.place.pos);
    this.app.dataset.event = String(e.i);
    if (ready) delete this.app.dataset.pending;
    else this.app.dataset.pending = this.fetcher.failure(e.i) ? "failed" : "loading";
  }
  // a chunk of a streamed run arrived (or was refused): the step waiting for it is drawn
  arrived(reader, k) {
    if (this.store?.reader !== reader || !this.panels) return;
    if (reader.chunkOf(this.store.event().i) === k) this.render();
  }
  // after a resize (layout.js): what the new sizes need drawn again
  relayout({ graph, sizes }) {
    if (!this.panels) return;
    if (graph) this.panels.graph.layout();
    if (sizes) {
      this.panels.values.render();
      this.panels.heat.render();
    }
  }
  async copyLink() {
    const url = this.url.link();
    try {
      await navigator.clipboard.writeText(url);
      this.panels.controls.flashCopy("controls.copied");
    } catch {
      this.panels.controls.flashCopy("controls.copy_failed");
      window.prompt?.(this.words.ts("controls.copy_link"), url);
    }
  }
  // ── listeners ──
  attach() {
    if (this.listening) return;
    this.listening = true;
    this.url.attach();
    if (!this.meta.embedded) this.skip.attach(this.words.ts("controls.skip_link"), this.root.host, this.onSkip);
    this.keys.attach();
    this.stopListening = listen((d) => goTo(this, d));
    this.layout.observe();
    this.tips.attach();
  }
  detach() {
    if (!this.listening) return;
    this.listening = false;
    this.playback.stop();
    this.url.detach();
    this.skip.detach(this.onSkip);
    this.keys.detach();
    this.stopListening();
    this.layout.disconnect();
    this.tips.detach();
  }
};
export {
  mount as default,
  mountStepper
};
