// The landmark dataflow graph: nodes coloured by dtype, parameter-gradient chips, cast tags, the highlight of the
// current step, and relayout when the width changes (the geometry itself is graphlayout.js, pure). On a stage
// (presenter mode, stepper.js) the figure scrolls in a column of its own and keeps the current node in view.
// Accessible names start with the node's visible text (WCAG 2.5.3, label in name): "∇q bf16, …".

import { h, s } from "./dom.js";
import { glChoose, glEdgePath } from "./graphlayout.js";
import { Panel } from "./panel.js";

const CAST_COLOR = "#f5b400";

export class GraphPanel extends Panel {
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
          this.w.t("graph.legend_other", { device: this.w.deviceName(this.b.run.counterpart_device) }),
        ),
      );
    }
    if (this.b.counts.casts) {
      leg.append(
        h("span", { class: "mpv-legend-item" }, h("span", { class: "mpv-cast-key" }), this.w.t("graph.legend_cast")),
      );
    }
    if (this.b.graph.nodes.some((n) => this.bundle.nonfinite(n.event))) {
      leg.append(
        h("span", { class: "mpv-legend-item" }, h("span", { class: "mpv-bad-key" }, "!"), this.w.t("graph.legend_bad")),
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
    // {badge: "⚑3", pair: "fp32→bf16" when every cast goes the same way}
    if (!casts.length) return null;
    const pairs = new Set(casts.map((c) => `${c.from}>${c.to}`));
    return {
      badge: this.w.ts("graph.cast_badge", { n: casts.length }),
      pair:
        pairs.size === 1
          ? this.w.ts("graph.cast_pair", { from: this.w.short(casts[0].from), to: this.w.short(casts[0].to) })
          : null,
    };
  }

  // once per bundle and whenever the figure's width or the font changes
  layout() {
    const fontPx = this.geom.font;
    const avail = Math.max(260, (this.geom.graph || 800) - 2 * fontPx - 2); // the figure's padding and border
    const measure = (text, px, weight = 400) => this.geom.measureText(text, px, weight);
    const f = fontPx,
      small = Math.round(f * 0.8);
    const padX = f * 0.6,
      nh = f * 2.75,
      chipH = f * 1.55,
      chipGap = f * 0.3;
    const chipW = (c) => Math.max(f * 2.2, measure(this.chipLabel(c), small, 700) + f * 0.9);
    const sizes = new Map();
    // a node's box: the node, and its parameter-gradient chips in a row below ("h") or a column to its right
    const size = (id, mode) => {
      const k = id + "/" + mode;
      if (sizes.has(k)) return sizes.get(k);
      const n = this.bundle.model.byId.get(id);
      const nw = Math.max(
        f * 3.2,
        measure(this.nodeLabel(id), f, 700) + 2 * padX + (n.other_dtype ? f * 0.5 : 0),
        measure(this.w.short(n.dtype), small) + 2 * padX,
      );
      const chips = this.bundle.model.chipsOf.get(id) || [];
      let w = nw,
        hh = nh;
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
      // the two-line cast tag of a node: its lines and size, or null
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
      laneGap: f * 0.6,
    };
    const a = glChoose(this.bundle.model, size, m, avail, (id) => (tag(id) ? (tag(id).w + 11) / 0.7 + 4 : 0));
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
      dataset: { mode: a.mode },
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
            orient: "auto-start-reverse",
          },
          s("path", { d: "M0,1 L10,5 L0,9 z", class: "mpv-arrowhead" }),
        ),
      ),
    );
    for (const l of a.labels) {
      svg.append(
        s("text", { x: l.x, y: l.y + f * 1.05, class: "mpv-band-label" }, this.w.ts(`graph.band.${l.band}_${l.dir}`)),
      );
    }
    const edgeLayer = s("g", { class: "mpv-edges" });
    const nodeLayer = s("g", { class: "mpv-nodes" });
    const labelLayer = s("g", { class: "mpv-cast-labels" });
    svg.append(edgeLayer, nodeLayer, labelLayer);
    this.nodeEls = new Map();
    // the turn from the loss into the backward pass
    const last = this.bundle.model.fwd[this.bundle.model.fwd.length - 1];
    for (const start of this.bundle.model.starts) {
      const p = a.pos.get(last),
        q = a.pos.get(start);
      if (!p || !q) continue;
      let d;
      if (a.mode === "h") {
        const x1 = p.nx + p.nw / 2,
          y1 = p.ny + p.nh,
          x2 = q.nx + q.nw,
          y2 = q.ny + q.nh / 2;
        d = `M${x1},${y1} C${x1},${y2} ${x1},${y2} ${x2},${y2}`;
      } else if (a.mode === "v") {
        const x1 = p.nx + p.nw,
          y1 = p.ny + p.nh / 2,
          x2 = q.nx,
          y2 = q.ny + q.nh / 2;
        d = `M${x1},${y1} C${(x1 + x2) / 2},${y1} ${(x1 + x2) / 2},${y2} ${x2},${y2}`;
      } else {
        const x1 = p.nx + p.nw / 2,
          y1 = p.ny + p.nh,
          x2 = q.nx + q.nw / 2,
          y2 = q.ny;
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
          dataset: { from: e.from, to: e.to },
        }),
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
      let cx = row
        ? p.x + (p.w - (chips.reduce((t, c) => t + chipW(c), 0) + chipGap * (chips.length - 1))) / 2
        : p.nx + p.nw + chipGap * 2;
      let cy = row
        ? p.ny + p.nh + chipGap * 2
        : p.y + (p.h - (chips.length * chipH + (chips.length - 1) * chipGap)) / 2;
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
            small,
          ),
        );
        if (row) cx += w + chipGap;
        else cy += chipH + chipGap;
      }
      // autocast's casts on the way into this node: a two-line tag in the gap before it when that gap has room
      // ("h"), else a corner badge on the node
      const lab = this.castLabel(this.bundle.casts(n.event));
      if (!lab) continue;
      const t = tag(id);
      if (a.mode === "h" && t && t.w + 11 <= p.gapIn * 0.7) {
        const x = a.flow[p.band] < 0 ? p.nx + p.nw + 11 : p.nx - 11 - t.w; // on the wire, clear of the arrowhead
        labelLayer.append(this.castTag(t.lines, x, p.ny + (p.nh - t.h) / 2, t.w, t.h, small, n.event));
      } else {
        const bw = measure(lab.badge, small, 700) + f * 0.6,
          bh = small * 1.45;
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
    lines.forEach((text, k) =>
      g.append(
        s(
          "text",
          { x: x + w / 2, y: top + px * (1.2 * k + 0.95), "text-anchor": "middle", class: "mpv-cast-text" },
          text,
        ),
      ),
    );
    g.append(s("title", {}, this.castTooltipText(event)));
    return g;
  }

  castTooltipText(event) {
    return this.bundle
      .casts(event)
      .map((c) =>
        this.w.ts("graph.cast_item", {
          source: c.landmark ?? (c.param ? this.w.ts("notice.input_param", { name: c.param }) : "?"),
          from: c.from,
          to: c.to,
          index: c.event,
        }),
      )
      .join("\n");
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
        index: n.event,
      }),
    });
    g.append(s("rect", { x: x - 3, y: y - 3, width: w + 6, height: hh + 6, rx: 10, class: "mpv-node-ring" }));
    g.append(s("rect", { x, y, width: w, height: hh, rx: 7, fill: bg, class: "mpv-node-body" }));
    if (n.other_dtype) {
      const sw = f * 0.5;
      g.append(
        s("path", {
          d: `M${x + w - sw},${y} h${sw - 7} a7,7 0 0 1 7,7 v${hh - 14} a7,7 0 0 1 -7,7 h${7 - sw} z`,
          fill: this.w.color(n.other_dtype),
          class: "mpv-node-stripe",
        }),
      );
    }
    const cx = x + (w - (n.other_dtype ? f * 0.5 : 0)) / 2;
    g.append(
      s(
        "text",
        { x: cx, y: y + hh * 0.45, "text-anchor": "middle", class: "mpv-node-name", fill: ink },
        this.nodeLabel(id),
      ),
      " ", // the two lines read as "∇q bf16", not "∇qbf16": the accessible name starts with exactly that
      s(
        "text",
        { x: cx, y: y + hh * 0.8, "text-anchor": "middle", class: "mpv-node-dtype", fill: ink },
        this.w.short(n.dtype),
      ),
    );
    if (this.bundle.nonfinite(n.event)) g.append(this.badMark(x, y + hh, f * 0.45));
    g.append(s("title", {}, this.nodeTitle(id, n)));
    this.wireNode(g, n.event);
    this.nodeEls.set(id, g);
    return g;
  }

  badMark(cx, cy, r) {
    // "this tensor holds inf/NaN": a dark red disc with "!", on the node's bottom-left corner
    return s(
      "g",
      { class: "mpv-bad" },
      s("circle", { cx, cy, r }),
      s("text", { x: cx, y: cy + r * 0.55, "text-anchor": "middle", "font-size": r * 1.6 }, "!"),
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
        index: n.event,
      }),
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
        this.chipLabel(id),
      ),
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
        index: n.event,
      }),
    ];
    if (n.other_dtype) {
      lines.push(
        this.w.ts("graph.node_other", {
          device: this.w.deviceName(this.b.run.counterpart_device),
          dtype: n.other_dtype,
        }),
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
      const n = node.getBoundingClientRect(),
        b = box.getBoundingClientRect(),
        margin = this.geom.font;
      if (n.top >= b.top + margin && n.bottom <= b.bottom - margin) return;
      box.scrollTop += n.top - b.top - (b.height - n.height) / 2;
    });
  }

  // focus the node of a landmark, when focus was on a node (a click or Enter on a node keeps the keyboard there)
  focusNode(landmark) {
    const node = this.nodeEls?.get(landmark);
    if (node && this.el.getRootNode().activeElement?.closest?.(".mpv-node")) node.focus?.();
  }
}
