// The banners above the stepper: the first op that made inf/NaN (with a jump to it), what this run emulates, and a
// model whose float64 copy could not run (no errors to show).

import { h } from "./dom.js";
import { Panel } from "./panel.js";

export class BannersPanel extends Panel {
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
          what: this.w.whatNonfinite(o?.stats),
        }),
      );
      if ("counterpart_event" in fn && this.b.run.counterpart_device) {
        const device = this.w.deviceName(this.b.run.counterpart_device);
        msg.append(
          " ",
          fn.counterpart_event === null
            ? this.w.t("banner.other_finite", { device })
            : this.w.t("banner.other_nonfinite", { device, index: fn.counterpart_event }),
        );
      }
      const jump = h(
        "button",
        {
          type: "button",
          class: "mpv-btn",
          dataset: { act: "jump-nonfinite" },
          onclick: () => this.emit("jump", e.i, "full"),
        },
        this.w.ts("banner.jump", { index: e.i }),
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
        if (code === "backward_emulated") continue; // said on each backward step's card instead
        note.append(" ", this.w.has(`limits.${code}`) ? this.w.t(`limits.${code}`) : code);
      }
      box.append(h("div", { class: "mpv-banner mpv-note" }, note));
    }
  }
}
