// The controls: previous / play / next, the step slider, view and phase (radio groups), copy link.

import { h } from "./dom.js";
import { Panel } from "./panel.js";
import { PHASES, VIEWS } from "./place.js";

export class ControlsPanel extends Panel {
  // once per bundle
  build() {
    const c = this.el;
    c.replaceChildren();
    const btn = (act, label, extra = {}) =>
      h("button", { type: "button", class: "mpv-btn", dataset: { act }, "aria-label": label, ...extra }, label);
    this.prevBtn = btn("prev", this.w.ts("controls.prev"), { onclick: () => this.emit("move", -1) });
    this.nextBtn = btn("next", this.w.ts("controls.next"), { onclick: () => this.emit("move", 1) });
    this.playBtn = btn("play", this.w.ts("controls.play"), {
      onclick: () => this.emit("play"),
      "aria-pressed": "false",
    });
    this.slider = h("input", {
      type: "range",
      class: "mpv-slider",
      min: 0,
      step: 1,
      dataset: { act: "slider" },
      "aria-label": this.w.ts("controls.step_label"),
      oninput: () => this.emit("go", Number(this.slider.value)),
    });
    this.posLabel = h("span", { class: "mpv-pos", "aria-hidden": "true" });
    const seg = (name, options, labelPath) => {
      // a radio group: Tab reaches the chosen one, arrows move the choice
      const group = h("div", { class: "mpv-seg", role: "radiogroup", "aria-label": this.w.ts(labelPath) });
      const pick = (o) =>
        this.emit("view", name === "view" ? o : this.place.view, name === "phase" ? o : this.place.phase);
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
                // a click (not Enter or Space: detail 0) leaves the keyboard with the stepper, where ←/→ step,
                // rather than on this radio, where they would change the view back
                if (e.detail > 0) this.emit("keys");
              },
            },
            this.w.ts(`${name}s.${o}`),
          ),
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
        h("span", { class: "mpv-hint" }, this.w.t("controls.keys_hint")),
      ),
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
      this.w.t("controls.position", { n: this.place.pos + 1, total: l.length, index: e.i }),
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
}
