// The landmark dataflow graph drawn in SVG: nodes, parameter-gradient chips, cast tags, highlight of the current
// step, and relayout when the width changes (the geometry itself is graphlayout.js).
// A mixin of the Stepper class (stepper.js): methods only, on the one Stepper's `this` (its bundle `b`, text,
// place `st`, elements). Plain script: view/stepper.py concatenates it, in SCRIPTS order, before stepper.js.

const CAST_COLOR = "#f5b400";

const GraphView = (Base) => class extends Base {
  // ── the graph ──
  buildGraph() {
    const fig = this.$("graph");
    fig.replaceChildren();
    this.graphTitle = h("figcaption", { class: "mpv-title" }, this.t("graph.title"));
    this.graphBox = h("div", { class: "mpv-graph-box" });
    fig.append(this.graphTitle, this.graphBox, this.graphLegend());
    this.layoutGraph();
  }

  graphLegend() {
    const dtypes = [...new Set(this.b.graph.nodes.flatMap((n) => [n.dtype, n.other_dtype]).filter(Boolean))];
    const leg = h("div", { class: "mpv-legend" });
    for (const d of dtypes) leg.append(h("span", { class: "mpv-legend-item" }, this.dtypeBadge(d), " ", d));
    if (this.b.graph.nodes.some((n) => n.other_dtype)) {
      leg.append(h("span", { class: "mpv-legend-item" }, h("span", { class: "mpv-stripe-key" }),
        this.t("graph.legend_other", { device: this.deviceName(this.b.run.counterpart_device) })));
    }
    if (this.b.counts.casts) {
      leg.append(h("span", { class: "mpv-legend-item" }, h("span", { class: "mpv-cast-key" }),
        this.t("graph.legend_cast")));
    }
    if (this.b.graph.nodes.some((n) => this.nonfinite(n.event))) {
      leg.append(h("span", { class: "mpv-legend-item" }, h("span", { class: "mpv-bad-key" }, "!"),
        this.t("graph.legend_bad")));
    }
    leg.append(h("span", { class: "mpv-legend-item" }, this.t("graph.legend_grad")));
    return leg;
  }

  nodeLabel(id) {
    const f = this.model.mate.get(id);
    return f ? this.ts("graph.grad_prefix") + f : id;
  }

  chipLabel(id) {
    const name = id.replace(/^grad_/, "");
    const last = name.split(".").pop();
    const short = this.lookup(`graph.param_short.${last}`) ?? last;
    return this.ts("graph.grad_prefix") + short;
  }

  castLabel(casts) {  // {badge: "⚑3", pair: "fp32→bf16" when every cast goes the same way}
    if (!casts.length) return null;
    const pairs = new Set(casts.map((c) => `${c.from}>${c.to}`));
    return {
      badge: this.ts("graph.cast_badge", { n: casts.length }),
      pair: pairs.size === 1 ? this.ts("graph.cast_pair", { from: this.short(casts[0].from), to: this.short(casts[0].to) })
        : null,
    };
  }

  layoutGraph() {
    const fontPx = this.geom.font;
    const avail = Math.max(260, (this.geom.graph || 800) - 2 * fontPx - 2);  // the figure's padding and border
    const measure = (text, px, weight = 400) => this.measureText(text, px, weight);
    const f = fontPx, small = Math.round(f * 0.8);
    const padX = f * 0.6, nh = f * 2.75, chipH = f * 1.55, chipGap = f * 0.3;
    const chipW = (c) => Math.max(f * 2.2, measure(this.chipLabel(c), small, 700) + f * 0.9);
    const sizes = new Map();
    // a node's box: the node, and its parameter-gradient chips in a row below ("h") or a column to its right
    const size = (id, mode) => {
      const k = id + "/" + mode;
      if (sizes.has(k)) return sizes.get(k);
      const n = this.model.byId.get(id);
      const nw = Math.max(f * 3.2, measure(this.nodeLabel(id), f, 700) + 2 * padX + (n.other_dtype ? f * 0.5 : 0),
        measure(this.short(n.dtype), small) + 2 * padX);
      const chips = this.model.chipsOf.get(id) || [];
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
    const tag = (id) => {  // the two-line cast tag of a node: its lines and size, or null
      const lab = this.castLabel(this.casts(this.model.byId.get(id).event));
      if (!lab?.pair) return null;
      const lines = [lab.badge, lab.pair];
      return { lines, w: Math.max(...lines.map((t) => measure(t, small, 700))) + f * 0.7, h: small * 2.9 };
    };
    const m = { pad: f * 0.75, colGap: f * 1.6, maxColGap: f * 8, rowGap: f * 0.9, layerGap: f * 1.9, bandGap: f * 1.6,
      bandLabel: f * 1.5, lanePad: f * 0.7, laneGap: f * 0.6 };
    const a = glChoose(this.model, size, m, avail, (id) => (tag(id) ? (tag(id).w + 11) / 0.7 + 4 : 0));
    this.arr = a;
    this.drawGraph(a, size, { f, small, chipH, chipGap, chipW, measure, tag });
  }

  drawGraph(a, size, { f, small, chipH, chipGap, chipW, measure, tag }) {
    const svg = s("svg", {
      class: `mpv-svg mpv-${a.mode}`, viewBox: `0 0 ${a.width} ${a.height}`, width: a.width * a.scale,
      height: a.height * a.scale, role: "group", "aria-label": this.ts("graph.title"),
      dataset: { mode: a.mode },
    });
    svg.append(s("defs", {}, s("marker", { id: "mpv-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9,
      markerHeight: 9, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" },
    s("path", { d: "M0,1 L10,5 L0,9 z", class: "mpv-arrowhead" }))));
    for (const l of a.labels) {
      svg.append(s("text", { x: l.x, y: l.y + f * 1.05, class: "mpv-band-label" }, this.ts(`graph.band.${l.band}_${l.dir}`)));
    }
    const edgeLayer = s("g", { class: "mpv-edges" });
    const nodeLayer = s("g", { class: "mpv-nodes" });
    const labelLayer = s("g", { class: "mpv-cast-labels" });
    svg.append(edgeLayer, nodeLayer, labelLayer);
    this.nodeEls = new Map();
    // the turn from the loss into the backward pass
    const last = this.model.fwd[this.model.fwd.length - 1];
    for (const start of this.model.starts) {
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
    for (const e of this.model.edges) {
      const to = this.model.byId.get(e.to);
      const cast = this.casts(to.event).some((c) => c.landmark === e.from);
      edgeLayer.append(s("path", { d: glEdgePath(a, e.from, e.to), class: `mpv-edge${cast ? " mpv-edge-cast" : ""}`,
        "marker-end": "url(#mpv-arrow)", dataset: { from: e.from, to: e.to } }));
    }
    const ids = [...this.model.fwd, ...this.model.main];
    for (const id of ids) {
      const p = a.pos.get(id);
      const n = this.model.byId.get(id);
      const g = this.nodeGroup(id, n, p.nx, p.ny, p.nw, p.nh, f, small);
      nodeLayer.append(g);
      const chips = this.model.chipsOf.get(id) || [];
      const row = a.mode === "h";
      let cx = row ? p.x + (p.w - (chips.reduce((t, c) => t + chipW(c), 0) + chipGap * (chips.length - 1))) / 2
        : p.nx + p.nw + chipGap * 2;
      let cy = row ? p.ny + p.nh + chipGap * 2 : p.y + (p.h - (chips.length * chipH + (chips.length - 1) * chipGap)) / 2;
      for (const c of chips) {
        const w = chipW(c);
        nodeLayer.append(this.chipGroup(c, this.model.byId.get(c), cx, cy, row ? w : Math.max(...chips.map(chipW)),
          chipH, small));
        if (row) cx += w + chipGap;
        else cy += chipH + chipGap;
      }
      // autocast's casts on the way into this node: a two-line tag in the gap before it when that gap has room
      // ("h"), else a corner badge on the node
      const lab = this.castLabel(this.casts(n.event));
      if (!lab) continue;
      const t = tag(id);
      if (a.mode === "h" && t && t.w + 11 <= p.gapIn * 0.7) {
        const x = a.flow[p.band] < 0 ? p.nx + p.nw + 11 : p.nx - 11 - t.w;  // on the wire, clear of the arrowhead
        labelLayer.append(this.castTag(t.lines, x, p.ny + (p.nh - t.h) / 2, t.w, t.h, small, n.event));
      } else {
        const bw = measure(lab.badge, small, 700) + f * 0.6, bh = small * 1.45;
        labelLayer.append(this.castTag([lab.badge], p.nx + p.nw - bw * 0.75, p.ny - bh / 2, bw, bh, small, n.event));
      }
    }
    this.graphBox.replaceChildren(svg);
    this.svg = svg;
    this.highlightGraph();
  }

  castTag(lines, x, y, w, hh, px, event) {
    const g = s("g", { class: "mpv-cast-tag", dataset: { castsFor: event } });
    g.append(s("rect", { x, y, width: w, height: hh, rx: Math.min(hh / 2, px * 0.7), fill: CAST_COLOR }));
    const top = y + (hh - lines.length * px * 1.2) / 2;
    lines.forEach((text, k) => g.append(s("text", { x: x + w / 2, y: top + px * (1.2 * k + 0.95), "text-anchor": "middle",
      class: "mpv-cast-text" }, text)));
    g.append(s("title", {}, this.castTooltipText(event)));
    return g;
  }

  castTooltipText(event) {
    return this.casts(event).map((c) => this.ts("graph.cast_item", {
      source: c.landmark ?? (c.param ? this.ts("notice.input_param", { name: c.param }) : "?"),
      from: c.from, to: c.to, index: c.event,
    })).join("\n");
  }

  nodeGroup(id, n, x, y, w, hh, f, small) {
    const bg = this.color(n.dtype);
    const ink = this.ink(bg);
    const g = s("g", { class: "mpv-node", tabindex: 0, role: "button", dataset: { node: id, event: n.event },
      "aria-label": this.ts("graph.node_aria", { name: id, dtype: n.dtype, index: n.event }) });
    g.append(s("rect", { x: x - 3, y: y - 3, width: w + 6, height: hh + 6, rx: 10, class: "mpv-node-ring" }));
    g.append(s("rect", { x, y, width: w, height: hh, rx: 7, fill: bg, class: "mpv-node-body" }));
    if (n.other_dtype) {
      const sw = f * 0.5;
      g.append(s("path", { d: `M${x + w - sw},${y} h${sw - 7} a7,7 0 0 1 7,7 v${hh - 14} a7,7 0 0 1 -7,7 h${7 - sw} z`,
        fill: this.color(n.other_dtype), class: "mpv-node-stripe" }));
    }
    const cx = x + (w - (n.other_dtype ? f * 0.5 : 0)) / 2;
    g.append(s("text", { x: cx, y: y + hh * 0.45, "text-anchor": "middle", class: "mpv-node-name", fill: ink },
      this.nodeLabel(id)));
    g.append(s("text", { x: cx, y: y + hh * 0.8, "text-anchor": "middle", class: "mpv-node-dtype", fill: ink },
      this.short(n.dtype)));
    if (this.nonfinite(n.event)) g.append(this.badMark(x, y + hh, f * 0.45));
    g.append(s("title", {}, this.nodeTitle(id, n)));
    this.wireNode(g, n.event);
    this.nodeEls.set(id, g);
    return g;
  }

  badMark(cx, cy, r) {  // "this tensor holds inf/NaN": a dark red disc with "!", on the node's bottom-left corner
    return s("g", { class: "mpv-bad" }, s("circle", { cx, cy, r }), s("text", { x: cx, y: cy + r * 0.55,
      "text-anchor": "middle", "font-size": r * 1.6 }, "!"));
  }

  chipGroup(id, n, x, y, w, hh, px) {
    const bg = this.color(n.dtype);
    const g = s("g", { class: "mpv-node mpv-chip", tabindex: 0, role: "button", dataset: { node: id, event: n.event },
      "aria-label": this.ts("graph.node_aria", { name: id, dtype: n.dtype, index: n.event }) });
    g.append(s("rect", { x: x - 3, y: y - 3, width: w + 6, height: hh + 6, rx: 8, class: "mpv-node-ring" }));
    g.append(s("rect", { x, y, width: w, height: hh, rx: 5, fill: bg, class: "mpv-node-body" }));
    if (this.nonfinite(n.event)) g.append(this.badMark(x, y + hh, px * 0.4));
    if (this.b.events[n.event]?.cast) {
      g.append(s("circle", { cx: x + w - 1, cy: y + 1, r: px * 0.32, fill: CAST_COLOR, class: "mpv-chip-cast" }));
    }
    g.append(s("text", { x: x + w / 2, y: y + hh * 0.7, "text-anchor": "middle", class: "mpv-chip-name",
      fill: this.ink(bg) }, this.chipLabel(id)));
    g.append(s("title", {}, this.nodeTitle(id, n)));
    this.wireNode(g, n.event);
    this.nodeEls.set(id, g);
    return g;
  }

  // does event i's first measured output hold inf or NaN made by an overflow? (A causal mask's -inf is an input, not
  // an accident: nothing before the first op that created inf/NaN is marked.)
  nonfinite(i) {
    const first = this.b.first_nonfinite;
    if (!first || this.meta.conceal || i < first.event) return false;  // concealed: a "think first" stop's answer
    const st = this.b.events[i]?.out.find((o) => o.stats)?.stats;
    return Boolean(st && (st.nan || st.posinf || st.neginf));
  }

  nodeTitle(id, n) {
    const lines = [this.ts("graph.node_title", { name: id, dtype: n.dtype, shape: this.shapeText(n.shape || []),
      index: n.event })];
    if (n.other_dtype) {
      lines.push(this.ts("graph.node_other", { device: this.deviceName(this.b.run.counterpart_device),
        dtype: n.other_dtype }));
    }
    const casts = this.castTooltipText(n.event);
    if (casts) lines.push(casts);
    return lines.join("\n");
  }

  wireNode(g, event) {
    g.addEventListener("click", () => this.jumpTo(event));
    g.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        this.jumpTo(event);
      }
    });
  }

  highlightGraph() {
    if (!this.nodeEls) return;
    const e = this.event();
    const exact = this.landmarkEvents.has(e.i);
    const target = exact ? e.i : this.stepEvent(e.i);
    for (const [, g] of this.nodeEls) {
      const ev = Number(g.dataset.event);
      g.classList.toggle("mpv-current", ev === target && exact);
      g.classList.toggle("mpv-pending", ev === target && !exact);
      if (ev === target) g.setAttribute("aria-current", "step");
      else g.removeAttribute("aria-current");
    }
  }

  // sizes the panels draw to, read once per build or resize (never in the middle of a step: that would force a
  // layout of everything the step just changed)
  measureGeom() {
    const cs = getComputedStyle(this.app);
    this.geom = {
      font: parseFloat(cs.fontSize) || 16,
      family: cs.fontFamily || "sans-serif",
      graph: this.$("graph").clientWidth,
      values: this.$("values").clientWidth,
      heat: this.$("heat").clientWidth,
    };
    this.measured = new Map();
  }

  scheduleLayout() {
    if (this.layoutPending) return;
    this.layoutPending = true;
    requestAnimationFrame(() => {
      this.layoutPending = false;
      const before = this.geom;
      this.measureGeom();
      if (Math.abs(this.geom.graph - before.graph) > 4 || this.geom.font !== before.font) this.layoutGraph();
      if (this.geom.values !== before.values || this.geom.heat !== before.heat || this.geom.font !== before.font) {
        this.renderValues();
        this.renderHeat();
      }
    });
  }
};
