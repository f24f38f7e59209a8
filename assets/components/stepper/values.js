// The values panel: a tensor's stats, what each format would make of it, the exponent histogram against each
// format's zones, and the error line of a landmark.

import { h, s } from "./dom.js";
import { fmtSig, pow2Text } from "./numbers.js";
import { Panel } from "./panel.js";

export class ValuesPanel extends Panel {
  // per step, and on a resize
  render() {
    const e = this.event();
    const box = this.el;
    const out = e.out[this.bundle.shownOutput(e)];
    if (!out) {
      box.replaceChildren(
        h("h2", {}, this.w.ts("values.title")),
        h("p", { class: "mpv-muted" }, this.w.ts("values.no_float")),
      );
      return;
    }
    const st = out.stats;
    const cell = (label, value, cls) =>
      h(
        "div",
        { class: `mpv-stat ${cls || ""}` },
        h("span", { class: "mpv-stat-label" }, label),
        h("span", { class: "mpv-stat-value" }, value),
      );
    const stats = h(
      "div",
      { class: "mpv-stats" },
      ...["min", "max", "abs_max", "mean", "std"].map((k) => cell(this.w.t(`values.${k}`), fmtSig(st[k]))),
      ...["nan", "posinf", "neginf", "zero"].map((k) =>
        cell(this.w.t(`values.${k}`), this.w.int(st[k] ?? 0), k !== "zero" && st[k] ? "mpv-bad" : ""),
      ),
      cell(this.w.t("values.subnormal"), this.w.int(st.subnormal ?? 0)),
      cell(this.w.t("values.numel"), this.w.int(st.numel ?? 0)),
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
          ...fmts.map((f) => h("th", { scope: "col" }, this.w.dtypeBadge(f))),
        ),
      ),
      h(
        "tbody",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "row" }, this.w.t("values.overflow")),
          ...fmts.map((f) =>
            h(
              "td",
              {},
              this.pct(st.overflow?.[f]),
              " ",
              h("span", { class: "mpv-muted" }, this.w.t(`values.overflow_to.${this.b.formats[f].overflow}`)),
            ),
          ),
        ),
        h(
          "tr",
          {},
          h("th", { scope: "row" }, this.w.t("values.underflow")),
          ...fmts.map((f) => h("td", {}, this.pct(st.underflow?.[f]))),
        ),
      ),
    );
    const parts = [h("h2", {}, this.w.t("values.title_of", { dtype: this.w.dtypeBadge(out.dtype) })), stats, table];
    if (st.sampled) {
      // a large output of a model traced at real size: which figures are estimates, from how many elements
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
    if (x === undefined || x === null) return "—";
    if (x === 0) return "0%";
    const p = x * 100;
    return (p < 0.01 ? "<0.01" : p < 10 ? p.toPrecision(2) : p.toFixed(1)) + "%";
  }

  errorLine(err) {
    if (err.nonfinite) return this.w.t("errors.line_nonfinite");
    if (err.rel === null || err.rel === undefined) return this.w.t("errors.line_abs", { abs: fmtSig(err.abs_rms, 3) });
    return this.w.t("errors.line_rel", { rel: fmtSig(err.rel, 3), abs: fmtSig(err.max_abs, 3) });
  }

  zones(f) {
    // exponent (log2) boundaries of a format's zones, from its layout
    const sp = this.b.formats[f];
    const emax = Math.floor(Math.log2(sp.max));
    const ulpMax = 2 ** (emax - sp.mantissa_bits);
    return {
      under: Math.log2(sp.smallest_subnormal / 2),
      normal: Math.log2(sp.smallest_normal),
      over: Math.log2(sp.max + ulpMax / 2),
      overflow: sp.overflow,
    };
  }

  histogram(st, dtype, fmts) {
    const hist = st.log2_hist || [];
    const f = this.geom.font;
    const width = Math.max(260, (this.geom.values || 480) - 2 * f - 2);
    const small = Math.round(f * 0.75);
    const exps = hist.map((x) => x[0]);
    const bounds = fmts
      .flatMap((k) => Object.values(this.zones(k)).filter((v) => typeof v === "number"))
      .filter((v) => Math.abs(v) <= 40);
    const lo = Math.floor(Math.min(...exps, ...bounds)) - 2,
      hi = Math.ceil(Math.max(...exps, ...bounds)) + 2;
    const left = f * 3.2,
      right = f * 0.6,
      top = f * 0.4,
      barH = f * 7,
      stripH = f * 1.3,
      gap = f * 0.3;
    const height = top + barH + f * 1.7 + fmts.length * (stripH + gap) + f * 0.4;
    const X = (v) => left + ((v - lo) / (hi - lo)) * (width - left - right);
    const maxC = Math.max(1, ...hist.map((x) => x[1]));
    const svg = s("svg", {
      class: "mpv-hist",
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      "aria-label": this.w.ts("values.hist_aria"),
    });
    svg.append(s("line", { x1: left, x2: width - right, y1: top + barH, y2: top + barH, class: "mpv-axis" }));
    const color = this.w.color(dtype);
    for (const [ex, c] of hist) {
      const hh = Math.max(1, (Math.log10(c + 1) / Math.log10(maxC + 1)) * barH);
      svg.append(
        s(
          "rect",
          {
            x: X(ex) + 0.5,
            y: top + barH - hh,
            width: Math.max(1, X(ex + 1) - X(ex) - 1),
            height: hh,
            fill: color,
            class: "mpv-hist-bar",
          },
          s("title", {}, `${pow2Text(ex)}: ${c}`),
        ),
      );
    }
    const step = Math.max(1, Math.ceil((hi - lo) / ((width - left) / (f * 3))));
    for (let ex = Math.ceil(lo / step) * step; ex <= hi; ex += step) {
      svg.append(
        s(
          "text",
          { x: X(ex), y: top + barH + f * 1.1, "text-anchor": "middle", class: "mpv-tick", "font-size": small },
          String(ex).replace("-", "−"),
        ),
      );
    }
    svg.append(
      s(
        "text",
        { x: left - 4, y: top + f * 0.8, "text-anchor": "end", class: "mpv-tick", "font-size": small },
        this.w.int(maxC),
      ),
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
          this.w.short(k),
        ),
      );
      const names = ["flush", "subnormal", "normal", `over_${z.overflow}`];
      for (let j = 0; j < 4; j++) {
        const x0 = X(edges[j]),
          x1 = X(edges[j + 1]);
        if (x1 - x0 <= 0) continue;
        const label = this.w.ts(`values.zone.${names[j]}`);
        const g = s(
          "g",
          {},
          s("rect", { x: x0, y, width: x1 - x0, height: stripH, class: zoneClass[j] }),
          s("title", {}, `${this.w.short(k)}: ${label}`),
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
                "font-size": small,
              },
              label,
            ),
          );
        }
        svg.append(g);
      }
      y += stripH + gap;
    }
    return h("div", { class: "mpv-hist-box" }, svg, h("p", { class: "mpv-caption" }, this.w.t("values.hist_caption")));
  }
}
