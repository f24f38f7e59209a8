// Tooltips: a glossary term (.mpv-term) under the pointer or focus shows its definition below it, inside the
// stepper's box. Text only (textContent), from the words' glossary.
import { h } from "./dom.js";

export class Tips {
  /**
   * @param {HTMLElement} app the stepper's element (holds the [data-role=tip] element)
   * @param {() => import("./words.js").Words} words the current words
   */
  constructor(app, words) {
    this.app = app;
    this.words = words;
    this.tip = app.querySelector("[data-role=tip]");
    this.show = (e) => this.showFor(e.target);
    this.hide = () => (this.tip.hidden = true);
  }

  showFor(target) {
    const el = target.closest?.(".mpv-term");
    if (!el) return;
    const w = this.words();
    const g = w.text.glossary?.[el.dataset.term];
    if (!g) return;
    this.tip.replaceChildren(
      h("strong", {}, g.term ?? el.dataset.term),
      h("span", {}, w.t(`${el.dataset.term}.text`, {}, w.text.glossary)),
    );
    this.tip.hidden = false;
    const r = el.getBoundingClientRect(),
      box = this.app.getBoundingClientRect();
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
      ["focusout", this.hide],
    ];
  }

  attach() {
    for (const [type, fn] of this.listeners()) this.app.addEventListener(type, fn);
  }

  detach() {
    for (const [type, fn] of this.listeners()) this.app.removeEventListener(type, fn);
  }
}
