// A browser for the panels under node: jsdom, plus the few things it lacks (canvas 2D, ResizeObserver,
// IntersectionObserver, ImageData, scrollIntoView).
// Text is measured as 0.6 em per character, which is all the layout needs to be deterministic.
// Import this before any stepper module: stepper.js reads `window` when it is evaluated.

import { readFileSync } from "node:fs";
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!doctype html><html><body><div id=host></div></body></html>", {
  url: "http://localhost/attention",
  pretendToBeVisual: true,
});
const { window } = dom;

const context2d = {
  measureText: (text) => ({ width: String(text).length * 0.6 * (parseFloat(context2d.font.split(" ")[1]) || 16) }),
  font: "400 16px sans-serif",
  setTransform() {},
  drawImage() {},
  putImageData() {},
  fillText() {},
  strokeRect() {},
};
window.HTMLCanvasElement.prototype.getContext = () => context2d;
window.HTMLElement.prototype.scrollIntoView = () => {}; // jsdom lays nothing out
window.ResizeObserver = window.IntersectionObserver = class {
  observe() {}
  disconnect() {}
};
window.ImageData = class {
  constructor(w, h) {
    this.width = w;
    this.height = h;
    this.data = new Uint8ClampedArray(4 * w * h);
  }
};
for (const name of [
  "window",
  "document",
  "history",
  "location",
  "sessionStorage",
  "navigator",
  "Node",
  "ResizeObserver",
  "IntersectionObserver",
  "ImageData",
  "getComputedStyle",
  "requestAnimationFrame",
  "KeyboardEvent",
  "HTMLElement",
]) {
  Object.defineProperty(globalThis, name, { value: window[name], configurable: true, writable: true });
}

const HTML = readFileSync(new URL("../stepper.html", import.meta.url), "utf8");

/** A fresh component host: a shadow root holding stepper.html, as Streamlit mounts it. */
export function host() {
  const el = window.document.createElement("div");
  window.document.body.append(el);
  const root = el.attachShadow({ mode: "open" });
  const tpl = window.document.createElement("template");
  tpl.innerHTML = HTML; // the component's own static markup, as Streamlit mounts it
  root.append(tpl.content);
  return root;
}

export { window };
