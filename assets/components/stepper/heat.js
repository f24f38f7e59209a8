// The attention heatmap: one head's probabilities on a canvas (cividis, specials marked), its legend, readout and
// the cell under the pointer or the keyboard.

import { shownElement } from "./bundle.js";
import { h } from "./dom.js";
import { fmtSig } from "./numbers.js";
import { Panel } from "./panel.js";

const HEAT_MAX_PX = 460;
const PRIMARY = "#3b5bdb";
const SPECIAL_RGB = { nan: [212, 0, 106], posinf: [255, 127, 14], neginf: [23, 190, 207] }; // heatmap specials
const SPECIAL_MARK = { nan: "×", posinf: "+", neginf: "−" };

// cividis (colour-blind-safe, perceptually uniform): a few stops, linearly interpolated
const CIVIDIS = [
  [0, 34, 78],
  [38, 65, 108],
  [87, 92, 109],
  [125, 124, 120],
  [165, 157, 116],
  [208, 192, 96],
  [253, 234, 69],
];
export function cividisRGB(t) {
  t = Math.max(0, Math.min(1, Number.isFinite(t) ? t : 0)) * (CIVIDIS.length - 1);
  const k = Math.min(CIVIDIS.length - 2, Math.floor(t)),
    f = t - k;
  return CIVIDIS[k].map((v, j) => Math.round(v + (CIVIDIS[k + 1][j] - v) * f));
}

function cividis(t) {
  return `rgb(${cividisRGB(t).join(",")})`;
}

export class HeatPanel extends Panel {
  // once per bundle (the stepper has clamped the place's head to the heads this run has)
  build() {
    const box = this.el;
    box.hidden = !this.b.graph.nodes.length; // a model's bundle (mpviz.show): no attention, nothing to say here
    if (box.hidden) {
      box.replaceChildren();
      this.heat = null;
      return;
    }
    if (!this.bundle.probs()) {
      box.replaceChildren(
        h("h2", {}, this.w.ts("heat.title_none")),
        h("p", { class: "mpv-muted" }, this.w.t("heat.no_probs")),
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
      onchange: () => this.emit("head", Number(sel.value)),
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
      h("label", { class: "mpv-field-label" }, this.w.ts("heat.head"), " ", sel),
    );
    const note =
      smp.of && (smp.of[smp.of.length - 1] > smp.shape[2] || smp.of[0] > smp.shape[0])
        ? h(
            "p",
            { class: "mpv-small" },
            this.w.t("heat.sampled", { m: smp.shape[0], r: smp.shape[1], c: smp.shape[2] }),
          )
        : null;
    box.replaceChildren(
      this.heat.title,
      head,
      h("div", { class: "mpv-heat-wrap" }, h("span", { class: "mpv-axis-y" }, this.w.ts("heat.rows")), canvas),
      h("p", { class: "mpv-axis-x" }, this.w.ts("heat.cols")),
      readout,
      legend,
      ...(note ? [note] : []),
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
    const picked =
      e.i === this.bundle.probsEvent && shownElement(this.place.el, smp)[0] === head
        ? shownElement(this.place.el, smp)
        : null;
    const cursor = this.heat.focused ? this.heat.cursor : null;
    const key = JSON.stringify([head, cell, picked, cursor]);
    if (key === this.heat.drawn) return; // most steps change nothing here
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
    // one pixel per element into an image, scaled up without smoothing: cheap even for 64×64
    const base = head * R * C;
    let lo = Infinity,
      hi = -Infinity;
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
    const pixels = (this.heat.pixels ??= document.createElement("canvas"));
    pixels.width = C;
    pixels.height = R;
    pixels.getContext("2d").putImageData(img, 0, 0);
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(pixels, 0, 0, C * cell, R * cell);
    if (cell >= 10 && specials.length) {
      // NaN / ±inf get a glyph too, not only a colour
      ctx.font = `bold ${Math.round(cell * 0.7)}px sans-serif`;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.fillStyle = "#ffffff";
      for (const [k, kind] of specials) {
        ctx.fillText(SPECIAL_MARK[kind], (k % C) * cell + cell / 2, Math.floor(k / C) * cell + cell / 2 + 1);
      }
    }
    if (picked) {
      // the inspected element, outlined
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
      style: `background:linear-gradient(90deg,${[0, 0.25, 0.5, 0.75, 1].map((t) => cividis(t)).join(",")})`,
    });
    const sw = (k) =>
      h(
        "span",
        { class: "mpv-legend-item" },
        h("span", { class: "mpv-swatch", style: `background:rgb(${SPECIAL_RGB[k].join(",")})` }, SPECIAL_MARK[k]),
        this.w.ts(`heat.${k}`),
      );
    this.heat.legend.replaceChildren(
      h("span", { class: "mpv-legend-item" }, fmtSig(lo, 3), grad, fmtSig(hi, 3)),
      sw("nan"),
      sw("posinf"),
      sw("neginf"),
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
    const c = Math.floor((ev.clientX - rect.left) / g.cell),
      r = Math.floor((ev.clientY - rect.top) / g.cell);
    return r >= 0 && r < g.R && c >= 0 && c < g.C ? [r, c] : null;
  }

  heatKey(ev) {
    const g = this.heat.geom;
    const cur =
      this.heat.cursor ??
      (this.event().i === this.bundle.probsEvent && this.place.el[0] === this.place.head
        ? [this.place.el[1], this.place.el[2]]
        : [0, 0]);
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
}
