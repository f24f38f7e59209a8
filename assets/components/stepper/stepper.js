// The attention lesson in the browser: steps through a lesson bundle (mpviz.bundle, schema.js) without asking the
// server. The entry point; esbuild bundles it and its imports into dist/stepper.js, the one ES module the Streamlit
// component runs (view/stepper.py).
// Payload (component.data): UTF-8 JSON bytes {"bundle": <bundle>, "text": {"ui", "glossary"}, "style": {...},
// "meta": {"key", "locale", "scale", "publish"}}. All words come from "text"; everything else from the bundle.
// meta.embedded: the stepper is one output among others on a page it does not own (a notebook, view/notebook.py):
// it neither reads nor writes the page's URL, adds no skip link to the page, and takes keys only while focus is in
// it. meta.scale sizes the whole component (presenter mode); with meta.publish the stepper sends its place to Python
// (state "view": a presenter's room publishes it to followers) and is laid out for a projector (STAGE_MIN_EM). Python
// moves the stepper through the "go to" channel (assets/components/goto/goto.js): a window event, or a pending
// target picked up on load.
// Nothing here builds HTML from strings: text goes in with textContent, nodes with createElement. No network, no eval.
// This file: mounting, loading data, the place and every move of it (panels ask through `emit`), the go-to
// channel, publishing, keys, the URL and sessionStorage, tooltips, resizes.

import { BannersPanel } from "./banners.js";
import { BundleReader } from "./bundle.js";
import { sameBytes } from "./bytes.js";
import { CardPanel } from "./card.js";
import { ControlsPanel } from "./controls.js";
import { h } from "./dom.js";
import { ElementPanel } from "./element.js";
import { ErrorsPanel } from "./errors.js";
import { GraphPanel } from "./graph.js";
import { HeatPanel } from "./heat.js";
import { HistoryAdapter } from "./history.js";
import { mergePlace, PHASES, restorePlace, savedPlace, sharedLink, VIEWS } from "./place.js";
import { SkipLink } from "./skiplink.js";
import { TreePanel } from "./treepanel.js";
import { ValuesPanel } from "./values.js";
import { Words } from "./words.js";

// Shared through `window`, not module scope: Streamlit may evaluate this module again for a remount.
const REGISTRY = (window[Symbol.for("mpviz.stepper")] ??= { apps: new WeakMap(), loaded: false });
const APPS = REGISTRY.apps; // shadow root → its Stepper (kept across Streamlit reruns)
// the kind of the page's last input ("pointer" or a key's name): whether a sidebar change was a click or a key
if (!REGISTRY.lastInput) {
  REGISTRY.lastInput = "none";
  window.addEventListener("pointerdown", () => (REGISTRY.lastInput = "pointer"), { capture: true });
  window.addEventListener("keydown", (e) => (REGISTRY.lastInput = e.key), { capture: true });
}
const GOTO = (window[Symbol.for("mpviz.goto")] ??= { last: null, pending: null, consumed: null }); // goto.js
// ←/→ step the lesson unless focus is somewhere those keys already mean something
const FIELD_TAGS = new Set(["INPUT", "TEXTAREA", "SELECT", "CANVAS"]);
const ARROW_ROLES = new Set([
  "slider",
  "spinbutton",
  "textbox",
  "combobox",
  "listbox",
  "option",
  "menu",
  "menuitem",
  "tab",
  "radio",
  "grid",
  "gridcell",
  "tree",
  "treeitem",
]);
const PLAY_MS = 1400; // one step per 1.4 s: time to read the card
const URL_WRITE_MS = 150; // coalesce URL writes while a key is held down
// Presenter mode on a screen at least STAGE_MIN_EM wide is laid out for a projector ("mpv-stage", stepper.css): the
// graph in a column of its own beside the card, each on the first screen. The card's column keeps STAGE_CARD_EM.
const STAGE_MIN_EM = 40;
const STAGE_CARD_EM = 27.8; // 27em of card and the 0.8em gap between the columns

export default function mountStepper(component) {
  const root = component.parentElement;
  let app = APPS.get(root);
  if (!app) {
    app = new Stepper(root);
    APPS.set(root, app);
  }
  app.publishTo = component.setStateValue;
  app.load(component.data);
  return () => app.detach();
}

class Stepper {
  constructor(root) {
    this.root = root;
    this.app = root.querySelector("[data-role=app]");
    this.$ = (role) => this.app.querySelector(`[data-role=${role}]`);
    this.history = new HistoryAdapter(REGISTRY, history);
    this.skip = new SkipLink(document);
    this.onSkip = () => {
      this.app.scrollIntoView({ block: "start" });
      this.app.focus({ preventScroll: true });
    };
    this.raw = null;
    this.reader = null; // the bundle's BundleReader
    this.place = null; // the stepper's one Place (panel.js); panels read it, only this class moves it
    this.panels = null;
    this.listening = false;
    this.playTimer = null;
    this.urlTimer = null;
    this.measured = new Map();
    this.geom = null;
    this.onKey = (e) => this.handleKey(e);
    this.onGoto = (e) => this.goTo(e.detail);
    this.resize = new ResizeObserver(() => this.scheduleLayout());
    this.shifted = new IntersectionObserver(() => this.measureTop(), { threshold: [0, 1] });
    this.publishTo = null; // the component's setStateValue (see mountStepper)
    this.published = null; // JSON of the place last sent to Python
    // what a panel may ask for; nothing else moves the place
    this.actions = {
      jump: (i, prefer) => this.jumpTo(i, prefer),
      move: (d) => this.go(this.place.pos + d),
      go: (pos) => this.go(pos),
      view: (view, phase) => this.setView(view, phase),
      play: () => this.togglePlay(),
      keys: () => this.takeKeys(),
      copy: () => this.copyLink(),
      head: (k) => {
        this.place.head = k;
        this.panels.heat.render();
        this.saveState();
      },
      element: (el) => {
        this.place.el = el;
        this.place.explore = null;
        this.panels.element.render();
        if (this.event().i === this.reader.probsEvent) this.panels.heat.render();
        this.saveState();
      },
      explore: (value) => {
        this.place.explore = value;
        this.panels.element.render();
      },
      inspect: (el) => {
        this.place.el = el;
        this.place.explore = null;
        this.jumpTo(this.reader.probsEvent);
      },
    };
  }

  emit(type, ...args) {
    this.actions[type](...args);
  }

  event() {
    return this.reader.eventAt(this.place);
  }

  list() {
    return this.reader.list(this.place.view, this.place.phase);
  }

  positionOf(i) {
    return this.reader.positionOf(i, this.place.view, this.place.phase);
  }

  // ── data ──
  load(data) {
    if (data === this.raw || sameBytes(data, this.raw)) {
      // a rerun that sent the same run
      this.attach();
      return this.takePendingGoto();
    }
    this.raw = data;
    const payload =
      typeof data === "string"
        ? JSON.parse(data)
        : data instanceof Uint8Array || data instanceof ArrayBuffer
          ? JSON.parse(new TextDecoder().decode(data))
          : data;
    const before = this.reader ? { key: this.event().key, i: this.event().i, phase: this.event().phase } : null;
    const text = payload.text || { ui: {}, glossary: {} };
    this.meta = payload.meta || {};
    const b = payload.bundle;
    this.words = new Words(text, payload.style || {}, b.formats, this.meta.locale || "en", (...a) => this.emit(...a));
    this.reader = new BundleReader(b, Object.keys(text.ui.graph?.param_short ?? {}), { conceal: !!this.meta.conceal });
    if (before)
      this.place.pos = this.positionOf(this.reader.matchEvent(before)); // a new run: keep the same tensor
    else this.place = this.restoreState();
    this.place.explore = null;
    const heads = this.reader.probs()?.shape[0];
    if (heads) this.place.head = Math.max(0, Math.min(this.place.head, heads - 1));
    this.app.style.setProperty("--mpv-scale", String(Number(this.meta.scale) > 0 ? Number(this.meta.scale) : 1));
    this.app.classList.toggle("mpv-embedded", Boolean(this.meta.embedded));
    this.build();
    this.attach();
    if (before) this.takeKeysFromSidebar();
    this.takePendingGoto();
    this.publish();
  }

  // ── the go-to channel and publishing (presenter mode) ──
  takePendingGoto() {
    if (GOTO.pending && GOTO.pending.id !== GOTO.consumed) this.goTo(GOTO.pending);
  }

  // move to a place named by Python: {id, target: {landmark | key | nonfinite | step, view, phase, head, el}};
  // each id once (GOTO.consumed), whichever stepper takes it
  goTo(d) {
    const t = d?.target;
    const b = this.reader?.b;
    if (!d || !t || d.id === GOTO.consumed || !b) return;
    if (!["landmark", "key", "step", "nonfinite"].some((k) => k in t)) return; // not the stepper's (a heading)
    const i =
      typeof t.key === "string" && this.reader.keyIndex.has(t.key)
        ? this.reader.keyIndex.get(t.key)
        : typeof t.landmark === "string" && Object.hasOwn(b.landmarks, t.landmark)
          ? b.landmarks[t.landmark]
          : t.nonfinite && b.first_nonfinite
            ? b.first_nonfinite.event // the op the red banner names
            : null;
    // A place this run lacks may belong to the run the same Python run is sending: wait for the next bundle, once.
    if (i === null && !("step" in t) && !d.waited) {
      d.waited = true;
      return;
    }
    GOTO.consumed = d.id;
    this.stopPlay();
    const place = this.place;
    if (VIEWS.includes(t.view)) place.view = t.view;
    if (PHASES.includes(t.phase)) place.phase = t.phase;
    if (t.head !== undefined) place.head = Math.max(0, parseInt(t.head, 10) || 0);
    if (t.el !== undefined) {
      const el = String(t.el).split(".");
      place.el = [0, 1, 2].map((k) => Math.max(0, parseInt(el[k], 10) || 0));
    }
    if (i !== null) {
      if (place.phase !== "all" && b.events[i].phase !== place.phase) place.phase = "all";
      place.pos = this.positionOf(i);
    } else {
      place.pos = Math.max(0, Math.min(this.list().length - 1, parseInt(t.step, 10) || 0));
    }
    const heads = this.reader.probs()?.shape[0];
    if (heads) place.head = Math.min(place.head, heads - 1);
    place.explore = null;
    this.render();
  }

  // presenter mode: send this place to Python (one rerun there; its room tells the followers)
  publish() {
    if (!this.meta.publish || !this.publishTo || !this.reader) return;
    const e = this.event();
    const p = this.place;
    const place = { step: p.pos, view: p.view, phase: p.phase, head: p.head, el: p.el.join("."), key: e.key };
    const json = JSON.stringify(place);
    if (json === this.published) return;
    this.published = json;
    this.publishTo("view", place);
  }

  // ── building (once per bundle) ──
  build() {
    this.measureGeom();
    this.app.setAttribute("aria-label", this.words.ts("controls.region"));
    if (this.listening && !this.meta.embedded)
      this.skip.attach(this.words.ts("controls.skip_link"), this.root.host, this.onSkip); // new words, same link
    const ctx = {
      bundle: this.reader,
      place: this.place,
      words: this.words,
      emit: (...a) => this.emit(...a),
      geom: this.geom,
    };
    this.ctx = ctx;
    const panel = (Kind, role) => new Kind(ctx, this.$(role));
    this.panels = {
      banners: panel(BannersPanel, "banners"),
      controls: panel(ControlsPanel, "controls"),
      // the attention lesson's landmark graph; any other model's bundle (mpviz.show) has none: its module tree
      graph: panel(this.reader.b.graph.nodes.length ? GraphPanel : TreePanel, "graph"),
      errors: panel(ErrorsPanel, "errors"),
      heat: panel(HeatPanel, "heat"),
      card: panel(CardPanel, "card"),
      values: panel(ValuesPanel, "values"),
      element: panel(ElementPanel, "element"),
    };
    for (const p of ["banners", "controls", "graph", "errors", "heat"]) this.panels[p].build();
    this.render();
  }

  // ── per step ──
  render() {
    const l = this.list();
    this.place.pos = Math.max(0, Math.min(this.place.pos, l.length - 1));
    const e = this.event();
    const { controls, graph, card, values, errors, heat, element } = this.panels;
    const spoken = controls.render();
    graph.render();
    card.render();
    values.render();
    errors.render();
    heat.render();
    element.render();
    this.$("live").textContent = spoken;
    this.saveState();
    this.app.dataset.step = String(this.place.pos);
    this.app.dataset.event = String(e.i);
  }

  // ── moving ──
  go(pos) {
    const next = Math.max(0, Math.min(this.list().length - 1, pos));
    if (next === this.place.pos) return;
    this.place.pos = next;
    this.place.explore = null;
    this.render();
  }

  // show event i: in the Story view when it is a story step (else in `prefer`), widening the phase if needed
  jumpTo(i, prefer) {
    const place = this.place;
    let view = prefer || place.view;
    if (!prefer && view === "story" && !this.reader.storyOf.has(i)) view = "full";
    if (place.phase !== "all" && this.reader.b.events[i].phase !== place.phase) place.phase = "all";
    place.view = view;
    place.pos = this.positionOf(i);
    place.explore = null;
    this.render();
    this.panels.graph.focusNode(this.reader.b.events[i].landmarks?.[0]);
  }

  setView(view, phase) {
    const i = this.event().i;
    this.place.view = view;
    this.place.phase = phase;
    this.place.pos = this.positionOf(i);
    this.render();
  }

  togglePlay() {
    if (this.playTimer) return this.stopPlay();
    if (this.place.pos >= this.list().length - 1) this.go(0);
    this.playTimer = setInterval(() => {
      if (this.place.pos >= this.list().length - 1) return this.stopPlay();
      this.go(this.place.pos + 1);
    }, PLAY_MS);
    this.panels.controls.setPlaying(true);
  }

  stopPlay() {
    clearInterval(this.playTimer);
    this.playTimer = null;
    this.panels?.controls.setPlaying(false);
  }

  // the keyboard to the stepper's region, where ←/→ step (it has tabindex -1: focusable, not a Tab stop)
  takeKeys() {
    this.app.focus({ preventScroll: true });
  }

  // A new run arrived from a change in the page's sidebar: focus still sits on that widget, where ←/→ would move a
  // caret or change a choice (a segmented control is a radio group), so the next → would not step. After a click
  // or Enter the reader is done there: the keyboard comes back to the stepper. A choice moved with arrows, Space
  // or Tab keeps its focus (a keyboard user may be going through the choices).
  takeKeysFromSidebar() {
    if (this.meta.embedded || !["pointer", "Enter"].includes(REGISTRY.lastInput)) return;
    if (document.activeElement?.closest?.("[data-testid=stSidebar]")) this.takeKeys();
  }

  handleKey(e) {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const target = e.composedPath()[0];
    if (
      target &&
      (FIELD_TAGS.has(target.tagName) ||
        target.isContentEditable ||
        ARROW_ROLES.has(target.getAttribute?.("role")) ||
        target.closest?.("[role=grid], [role=menu]"))
    )
      return;
    const inside = e.composedPath().includes(this.app);
    if (this.meta.embedded && ["ArrowRight", "ArrowLeft", "Home", "End"].includes(e.key)) e.stopPropagation();
    if (e.key === "ArrowRight") {
      e.preventDefault();
      this.go(this.place.pos + 1);
    } else if (e.key === "ArrowLeft") {
      e.preventDefault();
      this.go(this.place.pos - 1);
    } else if (inside && e.key === "Home") {
      e.preventDefault();
      this.go(0);
    } else if (inside && e.key === "End") {
      e.preventDefault();
      this.go(this.list().length - 1);
    }
  }

  async copyLink() {
    this.writeUrl();
    const url = sharedLink(location.href, this.meta.locale);
    try {
      await navigator.clipboard.writeText(url);
      this.panels.controls.flashCopy("controls.copied");
    } catch {
      this.panels.controls.flashCopy("controls.copy_failed");
      window.prompt?.(this.words.ts("controls.copy_link"), url);
    }
  }

  // ── the place in the URL and in sessionStorage ──
  storeKey() {
    return `mpviz.stepper.${this.meta.key || "stepper"}`;
  }

  restoreState() {
    let saved;
    try {
      saved = JSON.parse(sessionStorage.getItem(this.storeKey()) || "null");
    } catch {
      saved = null;
    }
    const later = REGISTRY.loaded; // the first stepper of a page load trusts its URL (a shared link)
    REGISTRY.loaded = true;
    const query = this.meta.embedded ? new URLSearchParams() : new URLSearchParams(location.search);
    return restorePlace(query, saved, this.reader, later);
  }

  saveState() {
    const state = savedPlace(this.place, this.event(), this.reader.sig);
    try {
      sessionStorage.setItem(this.storeKey(), JSON.stringify(state));
    } catch {
      /* storage off: URL only */
    }
    clearTimeout(this.urlTimer);
    this.urlTimer = setTimeout(() => this.writeUrl(), URL_WRITE_MS);
  }

  writeUrl() {
    clearTimeout(this.urlTimer);
    if (this.meta.embedded) return; // one output among others on a page that is not ours (a notebook)
    const next = this.mergeUrl(location.href);
    if (next !== location.href) this.history.replace(next);
    this.publish();
  }

  // `url` with this stepper's keys set to its current place, if it is a URL of the page this stepper lives on; any
  // other URL unchanged (the history adapter calls this for every URL the page writes)
  mergeUrl(url) {
    if (url == null || !this.place || !this.app.isConnected) return url;
    if (new URL(url, location.href).pathname !== this.path) return url;
    return mergePlace(url, location.href, this.place, Boolean(this.reader.probs()));
  }

  // ── sizes: read once per build or resize (never mid-step: that would force a layout of what the step changed) ──
  measureGeom() {
    const cs = getComputedStyle(this.app);
    const geom = this.geom ?? {};
    const font = parseFloat(cs.fontSize) || 16;
    const stage = Boolean(this.meta.publish) && this.app.clientWidth >= STAGE_MIN_EM * font;
    this.app.classList.toggle("mpv-stage", stage);
    if (stage) {
      this.measureTop();
      this.app.style.setProperty("--mpv-controls-h", `${this.$("controls").offsetHeight}px`);
    }
    Object.assign(geom, {
      font,
      family: cs.fontFamily || "sans-serif",
      stage,
      // on a stage the graph's column is as wide as its arrangement needs, up to what the card leaves it
      graph: stage ? this.app.clientWidth - STAGE_CARD_EM * font : this.$("graph").clientWidth,
      values: this.$("values").clientWidth,
      heat: this.$("heat").clientWidth,
      measureText: (text, px, weight = 400) => this.measureText(text, px, weight),
    });
    this.geom = geom; // the same object every panel's context holds
    this.measured = new Map();
  }

  // on a stage: where the graph's column starts in the page scrolled to its start (the card's top: the graph itself
  // is sticky), so that the column ends at the first screen's bottom. Again whenever the graph's visible part changes
  // (this.shifted): what Streamlit shows above the stepper may grow after it mounted.
  measureTop() {
    if (!this.app.classList.contains("mpv-stage")) return;
    let scrolled = window.scrollY;
    for (let n = this.root.host; n; n = n.parentElement) scrolled += n.scrollTop;
    const top = `${Math.round(this.$("card").getBoundingClientRect().top + scrolled)}px`;
    if (this.app.style.getPropertyValue("--mpv-graph-top") !== top) this.app.style.setProperty("--mpv-graph-top", top);
  }

  measureText(text, px, weight = 400) {
    // cached per build: labels repeat from step to step
    const k = `${weight}|${px}|${text}`;
    if (!this.measured.has(k)) {
      const ctx = (this.measureCtx ??= document.createElement("canvas").getContext("2d"));
      ctx.font = `${weight} ${px}px ${this.geom.family}`;
      this.measured.set(k, ctx.measureText(text).width);
    }
    return this.measured.get(k);
  }

  scheduleLayout() {
    if (this.layoutPending || !this.panels) return;
    this.layoutPending = true;
    requestAnimationFrame(() => {
      this.layoutPending = false;
      const before = { ...this.geom };
      this.measureGeom();
      const g = this.geom;
      if (Math.abs(g.graph - before.graph) > 4 || g.font !== before.font || g.stage !== before.stage)
        this.panels.graph.layout();
      if (g.values !== before.values || g.heat !== before.heat || g.font !== before.font) {
        this.panels.values.render();
        this.panels.heat.render();
      }
    });
  }

  // ── listeners and tooltips ──
  attach() {
    if (this.listening) return;
    this.listening = true;
    this.path = location.pathname;
    if (!this.meta.embedded) {
      this.history.claim(this);
      this.skip.attach(this.words.ts("controls.skip_link"), this.root.host, this.onSkip);
    }
    // embedded, keys step the stepper only while focus is in it, and go no further: the page's own keys (a
    // notebook's) act everywhere else, and its handlers (which may swallow keys bubbling through the output) come after
    this.keyTarget = this.meta.embedded ? this.app : window;
    this.keyTarget.addEventListener("keydown", this.onKey);
    window.addEventListener("mpviz:goto", this.onGoto);
    this.resize.observe(this.app);
    this.shifted.observe(this.$("graph"));
    this.tipOver = (e) => this.showTip(e);
    this.tipOut = () => this.hideTip();
    this.app.addEventListener("mouseover", this.tipOver);
    this.app.addEventListener("focusin", this.tipOver);
    this.app.addEventListener("mouseout", this.tipOut);
    this.app.addEventListener("focusout", this.tipOut);
  }

  detach() {
    if (!this.listening) return;
    this.listening = false;
    this.stopPlay();
    this.writeUrl();
    this.history.release(this);
    this.skip.detach(this.onSkip);
    this.keyTarget.removeEventListener("keydown", this.onKey);
    window.removeEventListener("mpviz:goto", this.onGoto);
    this.resize.disconnect();
    this.shifted.disconnect();
    this.app.removeEventListener("mouseover", this.tipOver);
    this.app.removeEventListener("focusin", this.tipOver);
    this.app.removeEventListener("mouseout", this.tipOut);
    this.app.removeEventListener("focusout", this.tipOut);
  }

  showTip(e) {
    const el = e.target.closest?.(".mpv-term");
    if (!el) return;
    const g = this.words.text.glossary?.[el.dataset.term];
    if (!g) return;
    const tip = this.$("tip");
    tip.replaceChildren(
      h("strong", {}, g.term ?? el.dataset.term),
      h("span", {}, this.words.t(`${el.dataset.term}.text`, {}, this.words.text.glossary)),
    );
    tip.hidden = false;
    const r = el.getBoundingClientRect(),
      box = this.app.getBoundingClientRect();
    const w = Math.min(360, box.width - 16);
    tip.style.maxWidth = `${w}px`;
    const left = Math.max(8, Math.min(r.left - box.left, box.width - w - 8));
    tip.style.left = `${left}px`;
    tip.style.top = `${r.bottom - box.top + 6}px`;
  }

  hideTip() {
    this.$("tip").hidden = true;
  }
}
