// The error of every landmark against float64, one bar each, forward and backward side by side; the current
// step's row marked.

import { h } from "./dom.js";
import { fmtSig, num } from "./numbers.js";
import { Panel } from "./panel.js";

export class ErrorsPanel extends Panel {
  // once per bundle
  build() {
    const box = this.el;
    const names = Object.keys(this.b.landmarks).filter((n) => this.b.errors?.[n]);
    if (!names.length) {
      box.replaceChildren();
      this.errRows = new Map();
      return;
    }
    const vals = names.flatMap((n) => {
      const e = this.b.errors[n];
      const v = num(e.rel ?? e.abs_rms);
      return v > 0 && Number.isFinite(v) ? [v] : [];
    });
    const lo = Math.floor(Math.log10(Math.min(1e-8, ...vals))),
      hi = Math.max(0, Math.ceil(Math.log10(Math.max(...vals, 1e-8))));
    const cols = h("div", { class: "mpv-err-cols" });
    this.errRows = new Map();
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
          onclick: () => this.emit("jump", ev),
        });
        const track = h("span", { class: "mpv-err-track" });
        let label;
        if (err.nonfinite) {
          track.append(h("span", { class: "mpv-err-bar mpv-err-nonfinite", style: "width:100%" }));
          label = this.w.ts("errors.nonfinite");
        } else {
          const isAbs = err.rel === null || err.rel === undefined;
          const v = num(isAbs ? err.abs_rms : err.rel);
          if (v > 0) {
            const w = Math.max(1.5, Math.min(100, ((Math.log10(v) - lo) / (hi - lo)) * 100));
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
          h("span", { class: "mpv-err-val" }, label),
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
      axis,
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
}
