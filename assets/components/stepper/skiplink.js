// A skip link to the stepper (WCAG 2.4.1, bypass blocks). The stepper sits in a shadow root after the sidebar and
// the lesson's text, dozens of Tab presses into the page; a skip link only helps as the first thing Tab reaches, so
// this keeps one link at the start of the page's <body>, outside the component: off-screen until focused, then a
// high-contrast pill in the corner. Activating it moves focus to the stepper. One link per page, whichever stepper
// attached last; a stepper that detaches takes its link with it.

const HIDDEN = "position:absolute;left:-10000px;top:0;width:1px;height:1px;overflow:hidden";
const SHOWN = [
  "position:fixed;left:12px;top:12px;z-index:2147483647;padding:10px 16px;border-radius:6px",
  "background:#1f2329;color:#ffffff;font:600 16px/1.2 sans-serif;text-decoration:underline",
  "outline:3px solid #3b5bdb;outline-offset:2px",
].join(";");

export class SkipLink {
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
      a.addEventListener("focus", () => (a.style.cssText = SHOWN));
      a.addEventListener("blur", () => (a.style.cssText = HIDDEN));
      a.addEventListener("click", (e) => {
        e.preventDefault();
        a.mpvActivate?.();
      });
    }
    if (doc.body.firstChild !== a) doc.body.prepend(a); // first again, whatever the page added since
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
}
