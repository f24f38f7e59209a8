// Sizes the panels draw to (panel.js `Geometry`), read once per build or resize, never mid-step (that would force
// a layout of what the step changed). Presenter mode on a screen at least STAGE_MIN_EM wide is laid out for a
// projector ("mpv-stage", stepper.css): the graph in a column of its own beside the card, each on the first screen.

const STAGE_MIN_EM = 40;
const STAGE_CARD_EM = 27.8; // the card's column: 27em of card and the 0.8em gap between the columns

export class Layout {
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
    this.geom = {}; // the same object every panel's context holds
    this.measured = new Map();
    this.stage = false; // presenter mode: laid out for a projector where wide enough
    this.pending = false;
    this.resize = new ResizeObserver(() => this.schedule());
    this.shifted = new IntersectionObserver(() => this.measureTop(), { threshold: [0, 1] });
  }

  /** Read the sizes again (the texts measured so far are forgotten). */
  measure(publish) {
    this.stage = Boolean(publish);
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
      measureText: (text, px, weight = 400) => this.measureText(text, px, weight),
    });
    this.measured = new Map();
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
      const ctx = (this.canvas ??= document.createElement("canvas").getContext("2d"));
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
        sizes: g.values !== before.values || g.heat !== before.heat || g.font !== before.font,
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
}
