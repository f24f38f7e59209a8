// The base of every panel: its element and the context the stepper hands it. A panel reads the bundle, the place
// and the words from the context and asks for every change through `emit`; it never reaches into another panel.

/**
 * @typedef {object} Geometry sizes the panels draw to, read once per build or resize (never mid-step)
 * @property {number} font the component's font size, px
 * @property {string} family its font family
 * @property {number} graph the graph figure's width, px
 * @property {number} values the values panel's width, px
 * @property {number} heat the heatmap panel's width, px
 * @property {(text: string, px: number, weight?: number) => number} measureText a label's width, px (cached)
 */

/**
 * @typedef {object} Place where the reader is; the stepper owns it, panels only read it
 * @property {"story" | "full"} view
 * @property {"all" | "forward" | "backward"} phase
 * @property {number} pos position in the list of (view, phase)
 * @property {number} head the heatmap's head
 * @property {number[]} el the chosen element [matrix, row, col]
 * @property {{value: number} | null} explore while ±ulp / a flipped bit explores away from the element's own value
 */

/**
 * @typedef {object} Context
 * @property {import("./bundle.js").BundleReader} bundle
 * @property {Place} place
 * @property {import("./words.js").Words} words
 * @property {(type: string, ...args: any[]) => void} emit an action for the stepper (see Stepper.actions)
 * @property {Geometry} geom
 */

import { h } from "./dom.js";

export class Panel {
  /**
   * @param {Context} ctx
   * @param {HTMLElement} el the panel's own element (it replaces only its children)
   */
  constructor(ctx, el) {
    this.ctx = ctx;
    this.el = el;
  }

  get b() {
    return this.ctx.bundle.b;
  }

  get bundle() {
    return this.ctx.bundle;
  }

  get w() {
    return this.ctx.words;
  }

  get place() {
    return this.ctx.place;
  }

  get geom() {
    return this.ctx.geom;
  }

  emit(type, ...args) {
    this.ctx.emit(type, ...args);
  }

  // the event the place shows
  event() {
    return this.ctx.bundle.eventAt(this.ctx.place);
  }

  // a step whose event has not arrived yet (a streamed run): `note` (words, or null) instead of the panel's drawing
  pending(note) {
    this.el.replaceChildren(...(note ? [h("p", { class: "mpv-muted mpv-pending", role: "status" }, note)] : []));
  }
}
