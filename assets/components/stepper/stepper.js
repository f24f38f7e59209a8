// The attention lesson in the browser: steps through a lesson bundle (mpviz.bundle) without asking the server.
// Payload (component.data): UTF-8 JSON bytes {"bundle": <bundle>, "text": {"ui", "glossary"}, "style": {...},
// "meta": {"key", "locale", "scale", "publish"}}. All words come from "text"; everything else from the bundle.
// meta.scale sizes the whole component (presenter mode); with meta.publish the stepper sends its place to Python
// (state "view": a presenter's room publishes it to followers). Python moves the stepper through the "go to"
// channel (assets/components/goto/goto.js): a window event, or a pending target picked up on load.
// Nothing here builds HTML from strings: text goes in with textContent, nodes with createElement. No network, no eval.
// Runs after floatbits.js and graphlayout.js (concatenated into one module by view/stepper.py).

const SVGNS = "http://www.w3.org/2000/svg";
// Shared through `window`, not module scope: Streamlit may evaluate this module again for a remount.
const REGISTRY = (window[Symbol.for("mpviz.stepper")] ??= { apps: new WeakMap(), loaded: false });
const APPS = REGISTRY.apps;  // shadow root → its Stepper (kept across Streamlit reruns)
// Streamlit rewrites the whole query string from the server's copy after a rerun (e.g. the sidebar changed the
// device), and the server never hears of the step we keep in the URL without a rerun. So, once per page, wrap the
// history API: a URL written for the page the active stepper lives on gets the stepper's own keys merged back in.
if (!REGISTRY.history) {
  REGISTRY.history = { push: history.pushState.bind(history), replace: history.replaceState.bind(history) };
  for (const [name, original] of [["pushState", REGISTRY.history.push], ["replaceState", REGISTRY.history.replace]]) {
    history[name] = (state, unused, url) => {
      let merged = url;
      try { merged = REGISTRY.active?.mergeUrl(url) ?? url; } catch { merged = url; }  // never break navigation
      return original(state, unused, merged);
    };
  }
}
const GOTO = (window[Symbol.for("mpviz.goto")] ??= { last: null, pending: null, consumed: null });  // goto.js
const PARAMS = ["step", "view", "phase", "head", "el"];
const LEGACY_EL = ["em", "er", "ec"];
const PERSONAL = ["present", "follow"];  // this browser's role in a class (view/page.py): never in a copied link
const VIEWS = ["story", "full"];
// ←/→ step the lesson unless focus is somewhere those keys already mean something
const FIELD_TAGS = new Set(["INPUT", "TEXTAREA", "SELECT", "CANVAS"]);
const ARROW_ROLES = new Set(["slider", "spinbutton", "textbox", "combobox", "listbox", "option", "menu", "menuitem",
  "tab", "radio", "grid", "gridcell", "tree", "treeitem"]);
const PHASES = ["all", "forward", "backward"];
const PLAY_MS = 1400;  // one step per 1.4 s: time to read the card
const URL_WRITE_MS = 150;  // coalesce URL writes while a key is held down
const HEAT_MAX_PX = 460;
const CAST_COLOR = "#f5b400";
const PRIMARY = "#3b5bdb";
const SPECIAL_RGB = { nan: [212, 0, 106], posinf: [255, 127, 14], neginf: [23, 190, 207] };  // heatmap specials
const SPECIAL_MARK = { nan: "×", posinf: "+", neginf: "−" };

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

// ── small DOM helpers ─────────────────────────────────────────────────────────────────────────────────────
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false) el.append(k);
  return el;
}

function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVGNS, tag);
  setAttrs(el, attrs);
  for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false) el.append(k);
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
}

// ── numbers ───────────────────────────────────────────────────────────────────────────────────────────────
function num(x) {  // bundle numbers: finite floats, or "inf" / "-inf" / "nan"
  if (typeof x === "number") return x;
  if (x === "inf") return Infinity;
  if (x === "-inf") return -Infinity;
  if (x === "nan") return NaN;
  return x === null || x === undefined ? null : Number(x);
}

function fmtSig(x, digits = 4) {
  x = num(x);
  if (x === null) return "—";
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "+inf";
  if (x === -Infinity) return "−inf";
  if (x === 0) return Object.is(x, -0) ? "−0" : "0";
  const a = Math.abs(x);
  const t = a >= 1e5 || a < 1e-3 ? x.toExponential(digits - 1).replace(/\.?0+e/, "e") : String(+x.toPrecision(digits));
  return t.replace("-", "−");
}

function fmtExact(x) {  // the shortest decimal that is exactly this double (fp16/bf16/fp8 values are exact)
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "+inf";
  if (x === -Infinity) return "−inf";
  if (Object.is(x, -0)) return "−0";
  return String(x).replace("-", "−");
}

function pow2Text(k) {
  return `2^${k}`.replace("-", "−");
}

// ── the app ───────────────────────────────────────────────────────────────────────────────────────────────
class Stepper {
  constructor(root) {
    this.root = root;
    this.app = root.querySelector("[data-role=app]");
    this.$ = (role) => this.app.querySelector(`[data-role=${role}]`);
    this.raw = null;
    this.listening = false;
    this.playTimer = null;
    this.urlTimer = null;
    this.onKey = (e) => this.handleKey(e);
    this.resize = new ResizeObserver(() => this.scheduleLayout());
    this.explore = null;  // {value} while the ±ulp / bit buttons explore away from the element's own value
    this.onGoto = (e) => this.goTo(e.detail);
    this.publishTo = null;  // the component's setStateValue (see mountStepper)
    this.published = null;  // JSON of the place last sent to Python
  }

  // ── data ──
  load(data) {
    if (data === this.raw || sameBytes(data, this.raw)) {  // a rerun that sent the same run
      this.attach();
      return this.takePendingGoto();
    }
    this.raw = data;
    const payload = typeof data === "string" ? JSON.parse(data)
      : data instanceof Uint8Array || data instanceof ArrayBuffer ? JSON.parse(new TextDecoder().decode(data))
      : data;
    const before = this.b ? { key: this.event().key, i: this.event().i, phase: this.event().phase } : null;
    this.text = payload.text || { ui: {}, glossary: {} };
    this.style = payload.style || {};
    this.meta = payload.meta || {};
    this.locale = this.meta.locale || "en";
    this.listFormat = this.intFormat = null;
    this.setBundle(payload.bundle);
    if (before) this.st.pos = this.positionOf(this.matchEvent(before));  // a new run: keep the same tensor
    else this.st = this.restoreState();
    this.explore = null;
    this.app.style.setProperty("--mpv-scale", String(Number(this.meta.scale) > 0 ? Number(this.meta.scale) : 1));
    this.build();
    this.attach();
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
    if (!d || !t || d.id === GOTO.consumed || !this.b) return;
    if (!["landmark", "key", "step", "nonfinite"].some((k) => k in t)) return;  // not the stepper's (a heading)
    const i = typeof t.key === "string" && this.keyIndex.has(t.key) ? this.keyIndex.get(t.key)
      : typeof t.landmark === "string" && Object.hasOwn(this.b.landmarks, t.landmark) ? this.b.landmarks[t.landmark]
      : t.nonfinite && this.b.first_nonfinite ? this.b.first_nonfinite.event  // the op the red banner names
      : null;
    // A place this run lacks may belong to the run the same Python run is sending: wait for the next bundle, once.
    if (i === null && !("step" in t) && !d.waited) {
      d.waited = true;
      return;
    }
    GOTO.consumed = d.id;
    this.stopPlay();
    if (VIEWS.includes(t.view)) this.st.view = t.view;
    if (PHASES.includes(t.phase)) this.st.phase = t.phase;
    if (t.head !== undefined) this.st.head = Math.max(0, parseInt(t.head, 10) || 0);
    if (t.el !== undefined) {
      const el = String(t.el).split(".");
      this.st.el = [0, 1, 2].map((k) => Math.max(0, parseInt(el[k], 10) || 0));
    }
    if (i !== null) {
      if (this.st.phase !== "all" && this.b.events[i].phase !== this.st.phase) this.st.phase = "all";
      this.st.pos = this.positionOf(i);
    } else {
      this.st.pos = Math.max(0, Math.min(this.list().length - 1, parseInt(t.step, 10) || 0));
    }
    if (this.heat) {
      const heads = this.sample(this.probsEvent).shape[0];
      this.st.head = Math.min(this.st.head, heads - 1);
    }
    this.explore = null;
    this.render();
  }

  // presenter mode: send this place to Python (one rerun there; its room tells the followers)
  publish() {
    if (!this.meta.publish || !this.publishTo || !this.b) return;
    const e = this.event();
    const place = { step: this.st.pos, view: this.st.view, phase: this.st.phase, head: this.st.head,
      el: this.st.el.join("."), key: e.key };
    const json = JSON.stringify(place);
    if (json === this.published) return;
    this.published = json;
    this.publishTo("view", place);
  }

  setBundle(b) {
    this.b = b;
    this.sig = JSON.stringify([b.run.config, b.run.device, b.run.autocast_dtype]);
    this.samples = new Map();
    this.specs = new Map();
    this.storyOf = new Map(b.story.map((st, k) => [st.event, k]));
    this.landmarkEvents = new Set(Object.values(b.landmarks));
    this.keyIndex = new Map(b.events.map((e) => [e.key, e.i]));
    this.castCache = new Map();
    const params = Object.keys(this.text.ui.graph?.param_short ?? {});  // weight, bias: in the text table's order
    this.model = glModel(b.graph, (id) => {
      const k = params.indexOf(id.split(".").pop());
      return k < 0 ? params.length : k;
    });
    this.lists = new Map();
    if (!this.st) this.st = { view: "story", phase: "all", pos: 0, head: 0, el: [0, 0, 0] };
  }

  // the steps of (view, phase): event indices in execution order; an empty filter falls back to every phase
  list(view = this.st.view, phase = this.st.phase) {
    const k = view + "/" + phase;
    if (!this.lists.has(k)) {
      const all = view === "story" ? this.b.story.map((x) => x.event) : this.b.events.map((e) => e.i);
      const some = phase === "all" ? all : all.filter((i) => this.b.events[i].phase === phase);
      this.lists.set(k, some.length ? some : all);
    }
    return this.lists.get(k);
  }

  event() {
    const l = this.list();
    return this.b.events[l[Math.min(this.st.pos, l.length - 1)]];
  }

  // position in the current list of event i: itself, else the story step it is part of (the next one in its phase)
  positionOf(i) {
    const l = this.list();
    const at = l.indexOf(i);
    if (at >= 0) return at;
    const phase = this.b.events[i]?.phase;
    const next = l.findIndex((j) => j >= i && this.b.events[j].phase === phase);
    if (next >= 0) return next;
    let best = 0;
    l.forEach((j, k) => { if (j <= i) best = k; });
    return best;
  }

  // the event of a new bundle that shows the same tensor: same key, else nearest by position within its phase
  matchEvent({ key, i, phase }) {
    if (key && this.keyIndex.has(key)) return this.keyIndex.get(key);
    const same = this.b.events.filter((e) => e.phase === phase);
    if (!same.length) return Math.min(i ?? 0, this.b.events.length - 1);
    return same.reduce((a, e) => (Math.abs(e.i - i) < Math.abs(a.i - i) ? e : a)).i;
  }

  spec(dtype) {
    if (!this.specs.has(dtype)) {
      const f = this.b.formats[dtype];
      this.specs.set(dtype, f ? fbSpec(f) : null);
    }
    return this.specs.get(dtype);
  }

  // which output of event e a step shows: the landmark's own output (LayerNorm's backward makes three tensors, two
  // of them landmarks), else the first one that was measured
  shownOutput(e) {
    const named = e.landmarks?.length ? this.b.landmark_outputs?.[e.landmarks[0]] : undefined;
    if (named !== undefined && e.out[named]?.stats) return named;
    return e.out.findIndex((o) => o.stats);
  }

  // the shown output of event i (see shownOutput), its sample decoded once: {shape [m, r, c], of, values, out}
  sample(i) {
    if (this.samples.has(i)) return this.samples.get(i);
    const e = this.b.events[i];
    const shown = e ? this.shownOutput(e) : -1;
    const k = shown >= 0 && e.out[shown].sample ? shown : e ? e.out.findIndex((o) => o.sample) : -1;
    let got = null;
    if (k >= 0) {
      const smp = e.out[k].sample;
      const bytes = typeof Uint8Array.fromBase64 === "function" ? Uint8Array.fromBase64(smp.values) : b64(smp.values);
      got = { shape: smp.shape, of: smp.of, values: new Float32Array(bytes.buffer, 0, bytes.length >> 2), out: e.out[k] };
    }
    this.samples.set(i, got);
    return got;
  }

  // autocast's casts of the story step ending at event i (and i itself when it is the gradient of a cast),
  // each with where its input came from: {event, from, to, landmark | param}
  casts(i) {
    if (this.castCache.has(i)) return this.castCache.get(i);
    const k = this.storyOf.get(i);
    const ids = k === undefined ? [] : [...this.b.story[k].casts];
    if (this.b.events[i]?.cast && !ids.includes(i)) ids.push(i);
    const out = ids.map((c) => {
      const e = this.b.events[c];
      return { event: c, from: e.in[0]?.dtype, to: e.out[0]?.dtype, ...this.castSource(c) };
    });
    this.castCache.set(i, out);
    return out;
  }

  castSource(c) {
    const e = this.b.events[c];
    let src = e.src?.[0];
    for (let hops = 0; hops < 64; hops++) {
      if (typeof src === "string") return { param: src.replace(/^param:/, "") };
      if (typeof src !== "number") return {};
      const p = this.b.events[src];
      if (!p || p.phase !== e.phase) return {};
      if (p.landmarks?.length) return { landmark: p.landmarks[0] };
      src = p.src?.find((x) => typeof x === "number") ?? p.src?.[0];
    }
    return {};
  }

  // the landmark step an event belongs to (for the graph highlight in the Every-op view)
  stepEvent(i) {
    const phase = this.b.events[i].phase;
    const st = this.b.story.find((x) => x.event >= i && this.b.events[x.event].phase === phase);
    return st ? st.event : null;
  }

  // ── text ──
  lookup(path, table = this.text.ui) {
    let v = table;
    for (const p of path.split(".")) v = v && typeof v === "object" ? v[p] : undefined;
    return typeof v === "string" ? v : null;
  }

  has(path) {
    return this.lookup(path) !== null;
  }

  // template → DocumentFragment: {name} filled (Nodes as they are, the rest as text), `code` and **bold** markup
  t(path, vals = {}, table = this.text.ui) {
    const tpl = this.lookup(path, table) ?? path;
    const frag = document.createDocumentFragment();
    const re = /`([^`]+)`|\*\*(.+?)\*\*/g;
    let last = 0, m;
    while ((m = re.exec(tpl))) {
      this.fill(frag, tpl.slice(last, m.index), vals);
      const el = document.createElement(m[1] !== undefined ? "code" : "strong");
      this.fill(el, m[1] ?? m[2], vals);
      frag.append(el);
      last = re.lastIndex;
    }
    this.fill(frag, tpl.slice(last), vals);
    return frag;
  }

  fill(parent, text, vals) {
    const parts = text.split(/(\{\{|\}\}|\{\w+\})/);
    for (const p of parts) {
      if (!p) continue;
      if (p === "{{" || p === "}}") parent.append(p[0]);
      else if (/^\{\w+\}$/.test(p)) {
        const name = p.slice(1, -1);
        const v = name.startsWith("gl_") && !(name in vals) ? this.term(name.slice(3)) : vals[name];
        if (v instanceof Node) parent.append(v.parentNode ? v.cloneNode(true) : v);
        else parent.append(v === undefined || v === null ? p : String(v));
      } else parent.append(p);
    }
  }

  // plain string (for aria-label, title): markup dropped
  ts(path, vals = {}) {
    return this.t(path, vals).textContent;
  }

  // a term of art with its glossary definition on hover and keyboard focus
  term(key, shown) {
    const g = this.text.glossary?.[key];
    const el = h("span", { class: "mpv-term", tabindex: 0, dataset: { term: key } }, shown ?? g?.term ?? key);
    if (g) el.setAttribute("aria-describedby", "mpv-tip");
    return el;
  }

  listOf(items) {  // locale-aware "a, b and c" with nodes
    const frag = document.createDocumentFragment();
    if (!items.length) return frag;
    const marks = items.map((_, k) => `\u0001${k}\u0002`);
    const parts = (this.listFormat ??= new Intl.ListFormat(this.locale, { type: "conjunction" })).formatToParts(marks);
    for (const p of parts) {
      if (p.type === "element") {
        const k = Number(p.value.slice(1, -1));
        const v = items[k];
        frag.append(v instanceof Node ? v : String(v));
      } else frag.append(p.value);
    }
    return frag;
  }

  // ── little visual atoms ──
  color(dtype) {
    return this.style.dtype_colors?.[dtype] ?? "#999999";
  }

  short(dtype) {
    return this.b.formats[dtype]?.short ?? dtype ?? "—";
  }

  ink(bg) {  // black or white text, whichever contrasts more with bg
    const c = [1, 3, 5].map((k) => parseInt(bg.slice(k, k + 2), 16) / 255).map((v) =>
      v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    const L = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    return (L + 0.05) / 0.05 >= 1.05 / (L + 0.05) ? "#111111" : "#ffffff";
  }

  dtypeBadge(dtype, shape) {
    const bg = this.color(dtype);
    return h("span", { class: "mpv-dtype", style: `background:${bg};color:${this.ink(bg)}`, title: dtype },
      this.short(dtype), shape ? h("span", { class: "mpv-shape" }, this.shapeText(shape)) : null);
  }

  shapeText(shape) {
    return shape.length ? shape.join("×") : this.ts("card.scalar");
  }

  opLink(i) {
    return h("button", {
      type: "button", class: "mpv-link", dataset: { op: i },
      onclick: () => this.jumpTo(i, "full"),
    }, this.ts("card.op_ref", { index: i }));
  }

  deviceName(d) {
    return this.has(`devices.${d}`) ? this.ts(`devices.${d}`) : d;
  }

  policyName(p) {
    return this.has(`policies.${p}`) ? this.ts(`policies.${p}`) : p;
  }

  // ── building (once per bundle) ──
  build() {
    this.measureGeom();
    this.buildBanners();
    this.buildControls();
    this.buildGraph();
    this.buildErrors();
    this.buildHeat();
    this.render();
  }

  buildBanners() {
    const box = this.$("banners");
    box.replaceChildren();
    const fn = this.b.first_nonfinite;
    if (fn) {
      const e = this.b.events[fn.event];
      const o = e.out.find((x) => x.stats && (x.stats.nan || x.stats.posinf || x.stats.neginf));
      const msg = h("p", {}, this.t("banner.nonfinite", {
        op_link: this.opLink(e.i), op: e.op, module: e.module || this.ts("card.model"),
        phase: this.ts(`phases.${e.phase}`), what: this.whatNonfinite(o?.stats),
      }));
      if ("counterpart_event" in fn && this.b.run.counterpart_device) {
        const device = this.deviceName(this.b.run.counterpart_device);
        msg.append(" ", fn.counterpart_event === null
          ? this.t("banner.other_finite", { device })
          : this.t("banner.other_nonfinite", { device, index: fn.counterpart_event }));
      }
      const jump = h("button", { type: "button", class: "mpv-btn", dataset: { act: "jump-nonfinite" },
        onclick: () => this.jumpTo(e.i, "full") }, this.ts("banner.jump", { index: e.i }));
      box.append(h("div", { class: "mpv-banner mpv-alarm", role: "alert" }, msg, jump));
    }
    const limits = this.b.run.emulation_limits || [];
    if (limits.length) {
      const note = h("p", {}, this.t("banner.emulated"));
      for (const code of limits) {
        if (code === "backward_emulated") continue;  // said on each backward step's card instead
        note.append(" ", this.has(`limits.${code}`) ? this.t(`limits.${code}`) : code);
      }
      box.append(h("div", { class: "mpv-banner mpv-note" }, note));
    }
  }

  whatNonfinite(st) {
    if (!st) return "";
    const items = [];
    if (st.nan) items.push(this.ts("notice.what_nan", { n: this.int(st.nan) }));
    if (st.posinf) items.push(this.ts("notice.what_posinf", { n: this.int(st.posinf) }));
    if (st.neginf) items.push(this.ts("notice.what_neginf", { n: this.int(st.neginf) }));
    return this.listOf(items);
  }

  int(n) {
    return (this.intFormat ??= new Intl.NumberFormat(this.locale)).format(n);
  }

  buildControls() {
    const c = this.$("controls");
    c.replaceChildren();
    const btn = (act, label, extra = {}) => h("button", { type: "button", class: "mpv-btn", dataset: { act },
      "aria-label": label, ...extra }, label);
    this.prevBtn = btn("prev", this.ts("controls.prev"), { onclick: () => this.move(-1) });
    this.nextBtn = btn("next", this.ts("controls.next"), { onclick: () => this.move(1) });
    this.playBtn = btn("play", this.ts("controls.play"), { onclick: () => this.togglePlay(), "aria-pressed": "false" });
    this.slider = h("input", { type: "range", class: "mpv-slider", min: 0, step: 1, dataset: { act: "slider" },
      "aria-label": this.ts("controls.step_label"), oninput: () => this.go(Number(this.slider.value)) });
    this.posLabel = h("span", { class: "mpv-pos", "aria-hidden": "true" });
    const seg = (name, options, labelPath) => {  // a radio group: Tab reaches the chosen one, arrows move the choice
      const group = h("div", { class: "mpv-seg", role: "radiogroup", "aria-label": this.ts(labelPath) });
      const pick = (o) => this.setView(name === "view" ? o : this.st.view, name === "phase" ? o : this.st.phase);
      for (const o of options) {
        group.append(h("button", { type: "button", role: "radio", dataset: { [name]: o }, onclick: () => pick(o) },
          this.ts(`${name}s.${o}`)));
      }
      group.addEventListener("keydown", (e) => {
        const d = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
        if (!d) return;
        e.preventDefault();
        const now = options.indexOf(name === "view" ? this.st.view : this.st.phase);
        const next = options[(now + d + options.length) % options.length];
        pick(next);
        group.querySelector(`[data-${name}="${next}"]`).focus();
      });
      return h("div", { class: "mpv-field" }, h("span", { class: "mpv-field-label" }, this.ts(labelPath)), group);
    };
    this.copyBtn = btn("copy", this.ts("controls.copy_link"), { onclick: () => this.copyLink() });
    c.append(
      h("div", { class: "mpv-steprow" }, this.prevBtn, this.playBtn, this.nextBtn, this.slider, this.posLabel),
      h("div", { class: "mpv-viewrow" }, seg("view", VIEWS, "controls.view"), seg("phase", PHASES, "controls.phase"),
        this.copyBtn, h("span", { class: "mpv-hint" }, this.t("controls.keys_hint"))),
    );
  }

  // ── the graph ──
  buildGraph() {
    const fig = this.$("graph");
    fig.replaceChildren();
    this.graphTitle = h("figcaption", { class: "mpv-title" }, this.t("graph.title"));
    this.graphBox = h("div", { class: "mpv-graph-box" });
    fig.append(this.graphTitle, this.graphBox, this.graphLegend());
    this.layoutGraph();
  }

  graphLegend() {
    const dtypes = [...new Set(this.b.graph.nodes.flatMap((n) => [n.dtype, n.other_dtype]).filter(Boolean))];
    const leg = h("div", { class: "mpv-legend" });
    for (const d of dtypes) leg.append(h("span", { class: "mpv-legend-item" }, this.dtypeBadge(d), " ", d));
    if (this.b.graph.nodes.some((n) => n.other_dtype)) {
      leg.append(h("span", { class: "mpv-legend-item" }, h("span", { class: "mpv-stripe-key" }),
        this.t("graph.legend_other", { device: this.deviceName(this.b.run.counterpart_device) })));
    }
    if (this.b.counts.casts) {
      leg.append(h("span", { class: "mpv-legend-item" }, h("span", { class: "mpv-cast-key" }),
        this.t("graph.legend_cast")));
    }
    if (this.b.graph.nodes.some((n) => this.nonfinite(n.event))) {
      leg.append(h("span", { class: "mpv-legend-item" }, h("span", { class: "mpv-bad-key" }, "!"),
        this.t("graph.legend_bad")));
    }
    leg.append(h("span", { class: "mpv-legend-item" }, this.t("graph.legend_grad")));
    return leg;
  }

  nodeLabel(id) {
    const f = this.model.mate.get(id);
    return f ? this.ts("graph.grad_prefix") + f : id;
  }

  chipLabel(id) {
    const name = id.replace(/^grad_/, "");
    const last = name.split(".").pop();
    const short = this.lookup(`graph.param_short.${last}`) ?? last;
    return this.ts("graph.grad_prefix") + short;
  }

  castLabel(casts) {  // {badge: "⚑3", pair: "fp32→bf16" when every cast goes the same way}
    if (!casts.length) return null;
    const pairs = new Set(casts.map((c) => `${c.from}>${c.to}`));
    return {
      badge: this.ts("graph.cast_badge", { n: casts.length }),
      pair: pairs.size === 1 ? this.ts("graph.cast_pair", { from: this.short(casts[0].from), to: this.short(casts[0].to) })
        : null,
    };
  }

  layoutGraph() {
    const fontPx = this.geom.font;
    const avail = Math.max(260, (this.geom.graph || 800) - 2 * fontPx - 2);  // the figure's padding and border
    const measure = (text, px, weight = 400) => this.measureText(text, px, weight);
    const f = fontPx, small = Math.round(f * 0.8);
    const padX = f * 0.6, nh = f * 2.75, chipH = f * 1.55, chipGap = f * 0.3;
    const chipW = (c) => Math.max(f * 2.2, measure(this.chipLabel(c), small, 700) + f * 0.9);
    const sizes = new Map();
    // a node's box: the node, and its parameter-gradient chips in a row below ("h") or a column to its right
    const size = (id, mode) => {
      const k = id + "/" + mode;
      if (sizes.has(k)) return sizes.get(k);
      const n = this.model.byId.get(id);
      const nw = Math.max(f * 3.2, measure(this.nodeLabel(id), f, 700) + 2 * padX + (n.other_dtype ? f * 0.5 : 0),
        measure(this.short(n.dtype), small) + 2 * padX);
      const chips = this.model.chipsOf.get(id) || [];
      let w = nw, hh = nh;
      if (chips.length && mode === "h") {
        w = Math.max(nw, chips.reduce((t, c) => t + chipW(c), 0) + chipGap * (chips.length - 1));
        hh = nh + chipGap * 2 + chipH;
      } else if (chips.length) {
        w = nw + chipGap * 2 + Math.max(...chips.map(chipW));
        hh = Math.max(nh, chips.length * chipH + (chips.length - 1) * chipGap);
      }
      const out = { w, h: hh, nw, nh };
      sizes.set(k, out);
      return out;
    };
    const tag = (id) => {  // the two-line cast tag of a node: its lines and size, or null
      const lab = this.castLabel(this.casts(this.model.byId.get(id).event));
      if (!lab?.pair) return null;
      const lines = [lab.badge, lab.pair];
      return { lines, w: Math.max(...lines.map((t) => measure(t, small, 700))) + f * 0.7, h: small * 2.9 };
    };
    const m = { pad: f * 0.75, colGap: f * 1.6, maxColGap: f * 8, rowGap: f * 0.9, layerGap: f * 1.9, bandGap: f * 1.6,
      bandLabel: f * 1.5, lanePad: f * 0.7, laneGap: f * 0.6 };
    const a = glChoose(this.model, size, m, avail, (id) => (tag(id) ? (tag(id).w + 11) / 0.7 + 4 : 0));
    this.arr = a;
    this.drawGraph(a, size, { f, small, chipH, chipGap, chipW, measure, tag });
  }

  drawGraph(a, size, { f, small, chipH, chipGap, chipW, measure, tag }) {
    const svg = s("svg", {
      class: `mpv-svg mpv-${a.mode}`, viewBox: `0 0 ${a.width} ${a.height}`, width: a.width * a.scale,
      height: a.height * a.scale, role: "group", "aria-label": this.ts("graph.title"),
      dataset: { mode: a.mode },
    });
    svg.append(s("defs", {}, s("marker", { id: "mpv-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9,
      markerHeight: 9, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" },
    s("path", { d: "M0,1 L10,5 L0,9 z", class: "mpv-arrowhead" }))));
    for (const l of a.labels) {
      svg.append(s("text", { x: l.x, y: l.y + f * 1.05, class: "mpv-band-label" }, this.ts(`graph.band.${l.band}_${l.dir}`)));
    }
    const edgeLayer = s("g", { class: "mpv-edges" });
    const nodeLayer = s("g", { class: "mpv-nodes" });
    const labelLayer = s("g", { class: "mpv-cast-labels" });
    svg.append(edgeLayer, nodeLayer, labelLayer);
    this.nodeEls = new Map();
    // the turn from the loss into the backward pass
    const last = this.model.fwd[this.model.fwd.length - 1];
    for (const start of this.model.starts) {
      const p = a.pos.get(last), q = a.pos.get(start);
      if (!p || !q) continue;
      let d;
      if (a.mode === "h") {
        const x1 = p.nx + p.nw / 2, y1 = p.ny + p.nh, x2 = q.nx + q.nw, y2 = q.ny + q.nh / 2;
        d = `M${x1},${y1} C${x1},${y2} ${x1},${y2} ${x2},${y2}`;
      } else if (a.mode === "v") {
        const x1 = p.nx + p.nw, y1 = p.ny + p.nh / 2, x2 = q.nx, y2 = q.ny + q.nh / 2;
        d = `M${x1},${y1} C${(x1 + x2) / 2},${y1} ${(x1 + x2) / 2},${y2} ${x2},${y2}`;
      } else {
        const x1 = p.nx + p.nw / 2, y1 = p.ny + p.nh, x2 = q.nx + q.nw / 2, y2 = q.ny;
        d = `M${x1},${y1} C${x1},${(y1 + y2) / 2} ${x2},${(y1 + y2) / 2} ${x2},${y2}`;
      }
      edgeLayer.append(s("path", { d, class: "mpv-edge mpv-turn", "marker-end": "url(#mpv-arrow)" }));
    }
    for (const e of this.model.edges) {
      const to = this.model.byId.get(e.to);
      const cast = this.casts(to.event).some((c) => c.landmark === e.from);
      edgeLayer.append(s("path", { d: glEdgePath(a, e.from, e.to), class: `mpv-edge${cast ? " mpv-edge-cast" : ""}`,
        "marker-end": "url(#mpv-arrow)", dataset: { from: e.from, to: e.to } }));
    }
    const ids = [...this.model.fwd, ...this.model.main];
    for (const id of ids) {
      const p = a.pos.get(id);
      const n = this.model.byId.get(id);
      const g = this.nodeGroup(id, n, p.nx, p.ny, p.nw, p.nh, f, small);
      nodeLayer.append(g);
      const chips = this.model.chipsOf.get(id) || [];
      const row = a.mode === "h";
      let cx = row ? p.x + (p.w - (chips.reduce((t, c) => t + chipW(c), 0) + chipGap * (chips.length - 1))) / 2
        : p.nx + p.nw + chipGap * 2;
      let cy = row ? p.ny + p.nh + chipGap * 2 : p.y + (p.h - (chips.length * chipH + (chips.length - 1) * chipGap)) / 2;
      for (const c of chips) {
        const w = chipW(c);
        nodeLayer.append(this.chipGroup(c, this.model.byId.get(c), cx, cy, row ? w : Math.max(...chips.map(chipW)),
          chipH, small));
        if (row) cx += w + chipGap;
        else cy += chipH + chipGap;
      }
      // autocast's casts on the way into this node: a two-line tag in the gap before it when that gap has room
      // ("h"), else a corner badge on the node
      const lab = this.castLabel(this.casts(n.event));
      if (!lab) continue;
      const t = tag(id);
      if (a.mode === "h" && t && t.w + 11 <= p.gapIn * 0.7) {
        const x = a.flow[p.band] < 0 ? p.nx + p.nw + 11 : p.nx - 11 - t.w;  // on the wire, clear of the arrowhead
        labelLayer.append(this.castTag(t.lines, x, p.ny + (p.nh - t.h) / 2, t.w, t.h, small, n.event));
      } else {
        const bw = measure(lab.badge, small, 700) + f * 0.6, bh = small * 1.45;
        labelLayer.append(this.castTag([lab.badge], p.nx + p.nw - bw * 0.75, p.ny - bh / 2, bw, bh, small, n.event));
      }
    }
    this.graphBox.replaceChildren(svg);
    this.svg = svg;
    this.highlightGraph();
  }

  castTag(lines, x, y, w, hh, px, event) {
    const g = s("g", { class: "mpv-cast-tag", dataset: { castsFor: event } });
    g.append(s("rect", { x, y, width: w, height: hh, rx: Math.min(hh / 2, px * 0.7), fill: CAST_COLOR }));
    const top = y + (hh - lines.length * px * 1.2) / 2;
    lines.forEach((text, k) => g.append(s("text", { x: x + w / 2, y: top + px * (1.2 * k + 0.95), "text-anchor": "middle",
      class: "mpv-cast-text" }, text)));
    g.append(s("title", {}, this.castTooltipText(event)));
    return g;
  }

  castTooltipText(event) {
    return this.casts(event).map((c) => this.ts("graph.cast_item", {
      source: c.landmark ?? (c.param ? this.ts("notice.input_param", { name: c.param }) : "?"),
      from: c.from, to: c.to, index: c.event,
    })).join("\n");
  }

  nodeGroup(id, n, x, y, w, hh, f, small) {
    const bg = this.color(n.dtype);
    const ink = this.ink(bg);
    const g = s("g", { class: "mpv-node", tabindex: 0, role: "button", dataset: { node: id, event: n.event },
      "aria-label": this.ts("graph.node_aria", { name: id, dtype: n.dtype, index: n.event }) });
    g.append(s("rect", { x: x - 3, y: y - 3, width: w + 6, height: hh + 6, rx: 10, class: "mpv-node-ring" }));
    g.append(s("rect", { x, y, width: w, height: hh, rx: 7, fill: bg, class: "mpv-node-body" }));
    if (n.other_dtype) {
      const sw = f * 0.5;
      g.append(s("path", { d: `M${x + w - sw},${y} h${sw - 7} a7,7 0 0 1 7,7 v${hh - 14} a7,7 0 0 1 -7,7 h${7 - sw} z`,
        fill: this.color(n.other_dtype), class: "mpv-node-stripe" }));
    }
    const cx = x + (w - (n.other_dtype ? f * 0.5 : 0)) / 2;
    g.append(s("text", { x: cx, y: y + hh * 0.45, "text-anchor": "middle", class: "mpv-node-name", fill: ink },
      this.nodeLabel(id)));
    g.append(s("text", { x: cx, y: y + hh * 0.8, "text-anchor": "middle", class: "mpv-node-dtype", fill: ink },
      this.short(n.dtype)));
    if (this.nonfinite(n.event)) g.append(this.badMark(x, y + hh, f * 0.45));
    g.append(s("title", {}, this.nodeTitle(id, n)));
    this.wireNode(g, n.event);
    this.nodeEls.set(id, g);
    return g;
  }

  badMark(cx, cy, r) {  // "this tensor holds inf/NaN": a dark red disc with "!", on the node's bottom-left corner
    return s("g", { class: "mpv-bad" }, s("circle", { cx, cy, r }), s("text", { x: cx, y: cy + r * 0.55,
      "text-anchor": "middle", "font-size": r * 1.6 }, "!"));
  }

  chipGroup(id, n, x, y, w, hh, px) {
    const bg = this.color(n.dtype);
    const g = s("g", { class: "mpv-node mpv-chip", tabindex: 0, role: "button", dataset: { node: id, event: n.event },
      "aria-label": this.ts("graph.node_aria", { name: id, dtype: n.dtype, index: n.event }) });
    g.append(s("rect", { x: x - 3, y: y - 3, width: w + 6, height: hh + 6, rx: 8, class: "mpv-node-ring" }));
    g.append(s("rect", { x, y, width: w, height: hh, rx: 5, fill: bg, class: "mpv-node-body" }));
    if (this.nonfinite(n.event)) g.append(this.badMark(x, y + hh, px * 0.4));
    if (this.b.events[n.event]?.cast) {
      g.append(s("circle", { cx: x + w - 1, cy: y + 1, r: px * 0.32, fill: CAST_COLOR, class: "mpv-chip-cast" }));
    }
    g.append(s("text", { x: x + w / 2, y: y + hh * 0.7, "text-anchor": "middle", class: "mpv-chip-name",
      fill: this.ink(bg) }, this.chipLabel(id)));
    g.append(s("title", {}, this.nodeTitle(id, n)));
    this.wireNode(g, n.event);
    this.nodeEls.set(id, g);
    return g;
  }

  // does event i's first measured output hold inf or NaN made by an overflow? (A causal mask's -inf is an input, not
  // an accident: nothing before the first op that created inf/NaN is marked.)
  nonfinite(i) {
    const first = this.b.first_nonfinite;
    if (!first || i < first.event) return false;
    const st = this.b.events[i]?.out.find((o) => o.stats)?.stats;
    return Boolean(st && (st.nan || st.posinf || st.neginf));
  }

  nodeTitle(id, n) {
    const lines = [this.ts("graph.node_title", { name: id, dtype: n.dtype, shape: this.shapeText(n.shape || []),
      index: n.event })];
    if (n.other_dtype) {
      lines.push(this.ts("graph.node_other", { device: this.deviceName(this.b.run.counterpart_device),
        dtype: n.other_dtype }));
    }
    const casts = this.castTooltipText(n.event);
    if (casts) lines.push(casts);
    return lines.join("\n");
  }

  wireNode(g, event) {
    g.addEventListener("click", () => this.jumpTo(event));
    g.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        this.jumpTo(event);
      }
    });
  }

  highlightGraph() {
    if (!this.nodeEls) return;
    const e = this.event();
    const exact = this.landmarkEvents.has(e.i);
    const target = exact ? e.i : this.stepEvent(e.i);
    for (const [, g] of this.nodeEls) {
      const ev = Number(g.dataset.event);
      g.classList.toggle("mpv-current", ev === target && exact);
      g.classList.toggle("mpv-pending", ev === target && !exact);
      if (ev === target) g.setAttribute("aria-current", "step");
      else g.removeAttribute("aria-current");
    }
  }

  // sizes the panels draw to, read once per build or resize (never in the middle of a step: that would force a
  // layout of everything the step just changed)
  measureGeom() {
    const cs = getComputedStyle(this.app);
    this.geom = {
      font: parseFloat(cs.fontSize) || 16,
      family: cs.fontFamily || "sans-serif",
      graph: this.$("graph").clientWidth,
      values: this.$("values").clientWidth,
      heat: this.$("heat").clientWidth,
    };
    this.measured = new Map();
  }

  scheduleLayout() {
    if (this.layoutPending) return;
    this.layoutPending = true;
    requestAnimationFrame(() => {
      this.layoutPending = false;
      const before = this.geom;
      this.measureGeom();
      if (Math.abs(this.geom.graph - before.graph) > 4 || this.geom.font !== before.font) this.layoutGraph();
      if (this.geom.values !== before.values || this.geom.heat !== before.heat || this.geom.font !== before.font) {
        this.renderValues();
        this.renderHeat();
      }
    });
  }

  // ── per step ──
  render() {
    const l = this.list();
    this.st.pos = Math.max(0, Math.min(this.st.pos, l.length - 1));
    const e = this.event();
    this.slider.max = String(l.length - 1);
    this.slider.value = String(this.st.pos);
    const name = e.landmarks.length ? e.landmarks.join(", ") : e.op;
    this.slider.setAttribute("aria-valuetext", this.ts("controls.position_aria", {
      n: this.st.pos + 1, total: l.length, index: e.i, name }));
    this.posLabel.replaceChildren(this.t("controls.position", { n: this.st.pos + 1, total: l.length, index: e.i }));
    this.prevBtn.disabled = this.st.pos === 0;
    this.nextBtn.disabled = this.st.pos >= l.length - 1;
    for (const b of this.$("controls").querySelectorAll("[role=radio]")) {
      const on = b.dataset.view ? b.dataset.view === this.st.view : b.dataset.phase === this.st.phase;
      b.setAttribute("aria-checked", String(on));
      b.tabIndex = on ? 0 : -1;
    }
    this.highlightGraph();
    this.renderCard();
    this.renderValues();
    this.renderErrorsHighlight();
    this.renderHeat();
    this.renderElement();
    this.$("live").textContent = this.ts("controls.position_aria", { n: this.st.pos + 1, total: l.length,
      index: e.i, name });
    this.saveState();
    this.app.dataset.step = String(this.st.pos);
    this.app.dataset.event = String(e.i);
  }

  renderCard() {
    const e = this.event();
    const card = this.$("card");
    const head = h("h3", { class: "mpv-op-title" }, this.t("card.title", { index: e.i, op: e.op }));
    for (const lm of e.landmarks) head.append(" ", h("span", { class: "mpv-lm" }, this.t("card.landmark", { name: lm })));
    const meta = h("p", { class: "mpv-meta" }, this.t("card.module", {
      module: e.module || this.ts("card.model"), phase: this.ts(`phases.${e.phase}`) }));
    if (e.node) {
      meta.append(" · ", this.t("card.node", { node: e.node }));
      if (e.fwd !== null && e.fwd !== undefined) meta.append(" ", this.t("card.node_fwd", { op_link: this.opLink(e.fwd) }));
    }
    const ins = h("span", { class: "mpv-dtypes" }, ...(e.in.length ? e.in.map((x) => this.dtypeBadge(x.dtype, x.shape))
      : [this.ts("card.none")]));
    const outs = h("span", { class: "mpv-dtypes" }, ...(e.out.length
      ? e.out.map((x) => this.dtypeBadge(x.dtype, x.shape)) : [this.ts("card.none")]));
    const flow = h("p", { class: "mpv-flow" }, h("span", { class: "mpv-flow-label" }, this.ts("card.inputs")), ins,
      h("span", { class: "mpv-arrow", "aria-hidden": "true" }, "→"),
      h("span", { class: "mpv-flow-label" }, this.ts("card.outputs")), outs);
    if (e.cast) {
      flow.append(h("span", { class: "mpv-cast-badge" }, e.phase === "forward"
        ? this.t("card.cast_badge", { op: e.cast_for || "?" }) : this.t("card.cast_badge_bwd")));
    }
    const parts = [head, meta, flow];
    const srcs = (e.src || []).map((x) => (typeof x === "number" ? this.opLink(x)
      : typeof x === "string" ? h("code", {}, x.replace(/^param:/, "")) : null)).filter(Boolean);
    if (srcs.length) parts.push(h("p", { class: "mpv-src" }, this.t("card.sources", { list: this.listOf(srcs) })));
    if (e.other_dtype && this.b.run.counterpart_device) {
      parts.push(h("p", { class: "mpv-other" }, this.t("card.other_device", {
        a: this.deviceName(this.b.run.device), b: this.deviceName(this.b.run.counterpart_device),
        da: this.dtypeBadge(e.out[0]?.dtype), db: this.dtypeBadge(e.other_dtype) })));
    }
    if (e.creates_nonfinite) {
      const o = e.out.find((x) => x.stats && (x.stats.nan || x.stats.posinf || x.stats.neginf));
      parts.push(h("p", { class: "mpv-alarm-line" }, this.t("card.creates_nonfinite", { what: this.whatNonfinite(o?.stats) })));
    }
    if (e.phase === "backward" && (this.b.run.emulation_limits || []).includes("backward_emulated")) {
      parts.push(h("p", { class: "mpv-small" }, this.t("limits.backward_emulated")));
    }
    const k = this.storyOf.get(e.i);
    if (k !== undefined && this.b.story[k].notices?.length) {
      const ul = h("ul", { class: "mpv-notices" });
      for (const n of this.b.story[k].notices) ul.append(h("li", { dataset: { kind: n.kind } }, this.notice(n, e)));
      parts.push(h("h4", {}, this.ts("card.notice_title")), ul);
    }
    card.replaceChildren(...parts);
  }

  // one "what to notice" fact → a sentence from its template
  notice(n, e) {
    const dt = (d) => this.dtypeBadge(d);
    const cat = (c) => (c ? this.term(c, c) : this.ts("notice.no_category"));
    const code = (x) => h("code", {}, x);
    switch (n.kind) {
      case "cast_for_policy": {
        const items = (n.casts || []).map((c) => this.t("notice.cast_item", {
          input: c.input === null || c.input === undefined
            ? (c.input_event !== null && c.input_event !== undefined
              ? this.t("notice.input_event", { op_link: this.opLink(c.input_event) }) : this.ts("notice.input_unknown"))
            : c.input.startsWith("param:") ? this.t("notice.input_param", { name: c.input.slice(6) }) : code(c.input),
          from: dt(c.from), to: dt(c.to), op_link: this.opLink(c.event),
        }));
        return this.t("notice.cast_for_policy", { op: n.op, policy: this.policyName(n.policy),
          category: cat(n.category), casts: this.listOf(items) });
      }
      case "runs_in_arriving_dtype": {
        const frag = this.t("notice.runs_in_arriving_dtype", { op: n.op, dtype: dt(n.dtype),
          policy: this.policyName(n.policy) });
        if (n.other) {
          frag.append(" ", this.t("notice.runs_other", { policy: this.policyName(n.other.policy), op: n.other.op,
            category: cat(n.other.category), dtype: dt(n.other.dtype) }));
        }
        return frag;
      }
      case "type_promotion":
        return this.t("notice.type_promotion", { op: n.op, inputs: this.listOf((n.inputs || []).map(dt)),
          output: dt(n.output) });
      case "grad_follows_forward": {
        const same = n.dtype === n.forward_dtype;
        const frag = this.t(same ? "notice.grad_follows_forward" : "notice.grad_differs", { forward: n.forward,
          dtype: dt(n.dtype), forward_dtype: dt(n.forward_dtype) });
        if (n.casts?.length) {
          frag.append(" ", this.t("notice.grad_casts", { links: this.listOf(n.casts.map((c) => this.opLink(c))) }));
        }
        return frag;
      }
      case "param_grad_direct":
        return this.t("notice.param_grad_direct", { param: n.param, dtype: dt(n.dtype) });
      case "param_grad_upcast":
        return this.t("notice.param_grad_upcast", { param: n.param, node: n.node, op_link: this.opLink(n.event),
          from: dt(n.from), to: dt(n.to) });
      case "nonfinite_created":
        return this.t("notice.nonfinite_created", { op_link: this.opLink(n.event), op: n.op,
          what: this.whatNonfinite(n) });
      case "other_device_dtype":
        return this.t("notice.other_device_dtype", { policy: this.policyName(n.policy), dtype: dt(n.dtype),
          here: dt(n.here) });
      default:
        return this.has(`notice.${n.kind}`) ? this.t(`notice.${n.kind}`, n) : document.createTextNode(n.kind);
    }
  }

  // ── values: stats, per-format outcomes, exponent histogram ──
  renderValues() {
    const e = this.event();
    const box = this.$("values");
    const out = e.out[this.shownOutput(e)];
    if (!out) {
      box.replaceChildren(h("h3", {}, this.ts("values.title")), h("p", { class: "mpv-muted" }, this.ts("values.no_float")));
      return;
    }
    const st = out.stats;
    const cell = (label, value, cls) => h("div", { class: `mpv-stat ${cls || ""}` },
      h("span", { class: "mpv-stat-label" }, label), h("span", { class: "mpv-stat-value" }, value));
    const stats = h("div", { class: "mpv-stats" },
      ...["min", "max", "abs_max", "mean", "std"].map((k) => cell(this.t(`values.${k}`), fmtSig(st[k]))),
      ...["nan", "posinf", "neginf", "zero"].map((k) => cell(this.t(`values.${k}`), this.int(st[k] ?? 0),
        k !== "zero" && st[k] ? "mpv-bad" : "")),
      cell(this.t("values.subnormal"), this.int(st.subnormal ?? 0)),
      cell(this.t("values.numel"), this.int(st.numel ?? 0)));
    const fmts = this.b.range_formats.filter((f) => this.b.formats[f]);
    const table = h("table", { class: "mpv-fmt-table" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, this.ts("values.if_stored")),
        ...fmts.map((f) => h("th", { scope: "col" }, this.dtypeBadge(f))))),
      h("tbody", {},
        h("tr", {}, h("th", { scope: "row" }, this.t("values.overflow")),
          ...fmts.map((f) => h("td", {}, this.pct(st.overflow?.[f]), " ", h("span", { class: "mpv-muted" },
            this.t(`values.overflow_to.${this.b.formats[f].overflow}`))))),
        h("tr", {}, h("th", { scope: "row" }, this.t("values.underflow")),
          ...fmts.map((f) => h("td", {}, this.pct(st.underflow?.[f]))))));
    const parts = [h("h3", {}, this.t("values.title_of", { dtype: this.dtypeBadge(out.dtype) })), stats, table];
    parts.push(h("h4", {}, this.t("values.hist_title")), this.histogram(st, out.dtype, fmts));
    const err = e.landmarks.length ? this.b.errors?.[e.landmarks[0]] : null;
    if (err) parts.push(h("p", { class: "mpv-err-line" }, this.errorLine(err)));
    const fp16 = st.underflow?.float16;
    if (e.phase === "backward" && fp16 > 0) {
      parts.push(h("p", { class: "mpv-small" }, this.t("values.loss_scale_hint", { pct: this.pct(fp16) })));
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
    if (err.nonfinite) return this.t("errors.line_nonfinite");
    if (err.rel === null || err.rel === undefined) return this.t("errors.line_abs", { abs: fmtSig(err.abs_rms, 3) });
    return this.t("errors.line_rel", { rel: fmtSig(err.rel, 3), abs: fmtSig(err.max_abs, 3) });
  }

  zones(f) {  // exponent (log2) boundaries of a format's zones, from its layout
    const sp = this.b.formats[f];
    const emax = Math.floor(Math.log2(sp.max));
    const ulpMax = 2 ** (emax - sp.mantissa_bits);
    return { under: Math.log2(sp.smallest_subnormal / 2), normal: Math.log2(sp.smallest_normal),
      over: Math.log2(sp.max + ulpMax / 2), overflow: sp.overflow };
  }

  histogram(st, dtype, fmts) {
    const hist = st.log2_hist || [];
    const f = this.geom.font;
    const width = Math.max(260, (this.geom.values || 480) - 2 * f - 2);
    const small = Math.round(f * 0.75);
    const exps = hist.map((x) => x[0]);
    const bounds = fmts.flatMap((k) => Object.values(this.zones(k)).filter((v) => typeof v === "number"))
      .filter((v) => Math.abs(v) <= 40);
    const lo = Math.floor(Math.min(...exps, ...bounds)) - 2, hi = Math.ceil(Math.max(...exps, ...bounds)) + 2;
    const left = f * 3.2, right = f * 0.6, top = f * 0.4, barH = f * 7, stripH = f * 1.3, gap = f * 0.3;
    const height = top + barH + f * 1.7 + fmts.length * (stripH + gap) + f * 0.4;
    const X = (v) => left + ((v - lo) / (hi - lo)) * (width - left - right);
    const maxC = Math.max(1, ...hist.map((x) => x[1]));
    const svg = s("svg", { class: "mpv-hist", width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
      "aria-label": this.ts("values.hist_aria") });
    svg.append(s("line", { x1: left, x2: width - right, y1: top + barH, y2: top + barH, class: "mpv-axis" }));
    const color = this.color(dtype);
    for (const [ex, c] of hist) {
      const hh = Math.max(1, (Math.log10(c + 1) / Math.log10(maxC + 1)) * barH);
      svg.append(s("rect", { x: X(ex) + 0.5, y: top + barH - hh, width: Math.max(1, X(ex + 1) - X(ex) - 1),
        height: hh, fill: color, class: "mpv-hist-bar" }, s("title", {}, `${pow2Text(ex)}: ${c}`)));
    }
    const step = Math.max(1, Math.ceil((hi - lo) / ((width - left) / (f * 3))));
    for (let ex = Math.ceil(lo / step) * step; ex <= hi; ex += step) {
      svg.append(s("text", { x: X(ex), y: top + barH + f * 1.1, "text-anchor": "middle", class: "mpv-tick",
        "font-size": small }, String(ex).replace("-", "−")));
    }
    svg.append(s("text", { x: left - 4, y: top + f * 0.8, "text-anchor": "end", class: "mpv-tick",
      "font-size": small }, this.int(maxC)));
    let y = top + barH + f * 1.7;
    const zoneClass = ["mpv-z-flush", "mpv-z-sub", "mpv-z-normal", "mpv-z-over"];
    for (const k of fmts) {
      const z = this.zones(k);
      const edges = [lo, z.under, z.normal, z.over, hi].map((v) => Math.max(lo, Math.min(hi, v)));
      svg.append(s("text", { x: left - 4, y: y + stripH * 0.75, "text-anchor": "end", class: "mpv-strip-label",
        "font-size": small }, this.short(k)));
      const names = ["flush", "subnormal", "normal", `over_${z.overflow}`];
      for (let j = 0; j < 4; j++) {
        const x0 = X(edges[j]), x1 = X(edges[j + 1]);
        if (x1 - x0 <= 0) continue;
        const label = this.ts(`values.zone.${names[j]}`);
        const g = s("g", {}, s("rect", { x: x0, y, width: x1 - x0, height: stripH, class: zoneClass[j] }),
          s("title", {}, `${this.short(k)}: ${label}`));
        if (this.measureText(label, small) + 6 < x1 - x0) {
          g.append(s("text", { x: (x0 + x1) / 2, y: y + stripH * 0.72, "text-anchor": "middle", class: "mpv-zone-text",
            "font-size": small }, label));
        }
        svg.append(g);
      }
      y += stripH + gap;
    }
    return h("div", { class: "mpv-hist-box" }, svg,
      h("p", { class: "mpv-caption" }, this.t("values.hist_caption")));
  }

  measureText(text, px, weight = 400) {  // cached per build: labels repeat from step to step
    const k = `${weight}|${px}|${text}`;
    if (!this.measured.has(k)) {
      const ctx = (this.measureCtx ??= document.createElement("canvas").getContext("2d"));
      ctx.font = `${weight} ${px}px ${this.geom.family}`;
      this.measured.set(k, ctx.measureText(text).width);
    }
    return this.measured.get(k);
  }

  // ── errors against float64, one bar per landmark ──
  buildErrors() {
    const box = this.$("errors");
    const names = Object.keys(this.b.landmarks).filter((n) => this.b.errors?.[n]);
    if (!names.length) { box.replaceChildren(); this.errRows = new Map(); return; }
    const vals = names.flatMap((n) => {
      const e = this.b.errors[n];
      const v = num(e.rel ?? e.abs_rms);
      return v > 0 && Number.isFinite(v) ? [v] : [];
    });
    const lo = Math.floor(Math.log10(Math.min(1e-8, ...vals))), hi = Math.max(0, Math.ceil(Math.log10(Math.max(...vals, 1e-8))));
    const cols = h("div", { class: "mpv-err-cols" });
    this.errRows = new Map();
    for (const phase of ["forward", "backward"]) {
      const col = h("div", { class: "mpv-err-col" }, h("h4", {}, this.ts(`phases.${phase}`)));
      for (const n of names) {
        const ev = this.b.landmarks[n];
        if (this.b.events[ev].phase !== phase) continue;
        const err = this.b.errors[n];
        const row = h("button", { type: "button", class: "mpv-err-row", dataset: { landmark: n },
          onclick: () => this.jumpTo(ev) });
        const track = h("span", { class: "mpv-err-track" });
        let label;
        if (err.nonfinite) {
          track.append(h("span", { class: "mpv-err-bar mpv-err-nonfinite", style: "width:100%" }));
          label = this.ts("errors.nonfinite");
        } else {
          const isAbs = err.rel === null || err.rel === undefined;
          const v = num(isAbs ? err.abs_rms : err.rel);
          if (v > 0) {
            const w = Math.max(1.5, Math.min(100, ((Math.log10(v) - lo) / (hi - lo)) * 100));
            track.append(h("span", { class: `mpv-err-bar${isAbs ? " mpv-err-abs" : ""}`, style: `width:${w}%` }));
            label = (isAbs ? this.ts("errors.abs_mark") + " " : "") + fmtSig(v, 2);
          } else {
            track.append(h("span", { class: "mpv-err-zero" }));
            label = this.ts("errors.exact");
          }
        }
        row.append(h("span", { class: "mpv-err-name", title: n }, n), track, h("span", { class: "mpv-err-val" }, label));
        col.append(row);
        this.errRows.set(n, row);
      }
      cols.append(col);
    }
    const axis = h("p", { class: "mpv-caption" }, this.t("errors.axis", { lo: `1e${lo}`, hi: `1e${hi}` }));
    box.replaceChildren(h("h3", {}, this.t("errors.title")), h("p", { class: "mpv-caption" }, this.t("errors.caption",
      { floor: fmtSig(this.b.error_floor, 1) })), cols, axis);
  }

  renderErrorsHighlight() {
    if (!this.errRows) return;
    const e = this.event();
    const ev = this.landmarkEvents.has(e.i) ? e.i : this.stepEvent(e.i);
    for (const [n, row] of this.errRows) {
      const on = this.b.landmarks[n] === ev;
      row.classList.toggle("mpv-current", on);
      if (on) row.setAttribute("aria-current", "step");
      else row.removeAttribute("aria-current");
    }
  }

  // ── attention heatmap ──
  buildHeat() {
    const box = this.$("heat");
    this.probsEvent = this.b.landmarks.probs;
    if (this.probsEvent === undefined || !this.sample(this.probsEvent)) {
      box.replaceChildren(h("h3", {}, this.ts("heat.title_none")), h("p", { class: "mpv-muted" }, this.t("heat.no_probs")));
      this.heat = null;
      return;
    }
    const smp = this.sample(this.probsEvent);
    const heads = smp.shape[0];
    this.st.head = Math.max(0, Math.min(this.st.head, heads - 1));
    const sel = h("select", { class: "mpv-select", dataset: { act: "head" }, "aria-label": this.ts("heat.head"),
      onchange: () => { this.st.head = Number(sel.value); this.renderHeat(); this.saveState(); } });
    for (let k = 0; k < heads; k++) sel.append(h("option", { value: k }, String(k)));
    const canvas = h("canvas", { class: "mpv-heat-canvas", tabindex: 0, role: "img", dataset: { act: "heatmap" } });
    const readout = h("p", { class: "mpv-readout", "aria-live": "polite" });
    const legend = h("div", { class: "mpv-heat-legend" });
    this.heat = { canvas, sel, readout, legend, cursor: null, title: h("h3", {}) };
    canvas.addEventListener("click", (ev) => {
      const cell = this.cellAt(ev);
      if (cell) this.inspectCell(cell[0], cell[1]);
    });
    canvas.addEventListener("mousemove", (ev) => { this.heat.cursor = this.cellAt(ev); this.heatReadout(); });
    canvas.addEventListener("mouseleave", () => { this.heat.cursor = null; this.heatReadout(); });
    canvas.addEventListener("keydown", (ev) => this.heatKey(ev));
    canvas.addEventListener("focus", () => { this.heat.focused = true; this.renderHeat(); });
    canvas.addEventListener("blur", () => { this.heat.focused = false; this.renderHeat(); });
    const head = h("div", { class: "mpv-heat-head" }, h("label", { class: "mpv-field-label" }, this.ts("heat.head"), " ", sel));
    const note = smp.of && (smp.of[smp.of.length - 1] > smp.shape[2] || smp.of[0] > smp.shape[0])
      ? h("p", { class: "mpv-small" }, this.t("heat.sampled", { m: smp.shape[0], r: smp.shape[1], c: smp.shape[2] })) : null;
    box.replaceChildren(this.heat.title, head, h("div", { class: "mpv-heat-wrap" },
      h("span", { class: "mpv-axis-y" }, this.ts("heat.rows")), canvas),
      h("p", { class: "mpv-axis-x" }, this.ts("heat.cols")), readout, legend, ...(note ? [note] : []));
  }

  heatGeometry() {
    const smp = this.sample(this.probsEvent);
    const [, R, C] = smp.shape;
    const avail = Math.max(160, Math.min(HEAT_MAX_PX, (this.geom.heat || 400) - 4 * this.geom.font));
    const cell = Math.max(2, Math.floor(avail / Math.max(R, C)));
    return { smp, R, C, cell, w: cell * C, hgt: cell * R };
  }

  renderHeat() {
    if (!this.heat) return;
    const { smp, R, C, cell, w, hgt } = this.heatGeometry();
    const { canvas, sel } = this.heat;
    const head = this.st.head;
    const e = this.event();
    const picked = e.i === this.probsEvent && this.shownElement(smp)[0] === head ? this.shownElement(smp) : null;
    const cursor = this.heat.focused ? this.heat.cursor : null;
    const key = JSON.stringify([head, cell, picked, cursor]);
    if (key === this.heat.drawn) return;  // most steps change nothing here
    this.heat.drawn = key;
    sel.value = String(head);
    this.heat.title.replaceChildren(this.t("heat.title", { head }));
    canvas.setAttribute("aria-label", this.ts("heat.aria", { head, rows: R, cols: C }));
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(hgt * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(hgt * dpr);
      canvas.style.width = `${w}px`;
      canvas.style.height = `${hgt}px`;
    }
    // one pixel per element into an image, scaled up without smoothing: cheap even for 64×64
    const base = head * R * C;
    let lo = Infinity, hi = -Infinity;
    for (let k = 0; k < R * C; k++) {
      const v = smp.values[base + k];
      if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    }
    if (!(hi > lo)) hi = lo + 1;
    this.heat.range = [lo, hi];
    const img = new ImageData(C, R);
    const specials = [];
    for (let k = 0; k < R * C; k++) {
      const v = smp.values[base + k];
      let rgb;
      if (Number.isFinite(v)) rgb = cividisRGB((v - lo) / (hi - lo));
      else {
        const kind = Number.isNaN(v) ? "nan" : v > 0 ? "posinf" : "neginf";
        rgb = SPECIAL_RGB[kind];
        specials.push([k, kind]);
      }
      img.data.set([rgb[0], rgb[1], rgb[2], 255], 4 * k);
    }
    const pixels = (this.heat.pixels ??= document.createElement("canvas"));
    pixels.width = C;
    pixels.height = R;
    pixels.getContext("2d").putImageData(img, 0, 0);
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(pixels, 0, 0, C * cell, R * cell);
    if (cell >= 10 && specials.length) {  // NaN / ±inf get a glyph too, not only a colour
      ctx.font = `bold ${Math.round(cell * 0.7)}px sans-serif`;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.fillStyle = "#ffffff";
      for (const [k, kind] of specials) {
        ctx.fillText(SPECIAL_MARK[kind], (k % C) * cell + cell / 2, Math.floor(k / C) * cell + cell / 2 + 1);
      }
    }
    if (picked) {  // the inspected element, outlined
      const [, r, c] = picked;
      ctx.lineWidth = Math.max(2, cell / 6);
      ctx.strokeStyle = "#ffffff";
      ctx.strokeRect(c * cell + 1, r * cell + 1, cell - 2, cell - 2);
      ctx.strokeStyle = "#000000";
      ctx.lineWidth = 1.5;
      ctx.strokeRect(c * cell - 0.5, r * cell - 0.5, cell + 1, cell + 1);
    }
    if (cursor) {
      const [r, c] = cursor;
      ctx.strokeStyle = PRIMARY;
      ctx.lineWidth = 2;
      ctx.strokeRect(c * cell + 1, r * cell + 1, cell - 2, cell - 2);
    }
    this.heat.geom = { R, C, cell };
    this.heatLegend();
    this.heatReadout();
  }

  heatLegend() {
    const [lo, hi] = this.heat.range;
    const grad = h("span", { class: "mpv-ramp", style: `background:linear-gradient(90deg,${
      [0, 0.25, 0.5, 0.75, 1].map((t) => cividis(t)).join(",")})` });
    const sw = (k) => h("span", { class: "mpv-legend-item" }, h("span", { class: "mpv-swatch",
      style: `background:rgb(${SPECIAL_RGB[k].join(",")})` }, SPECIAL_MARK[k]), this.ts(`heat.${k}`));
    this.heat.legend.replaceChildren(h("span", { class: "mpv-legend-item" }, fmtSig(lo, 3), grad, fmtSig(hi, 3)),
      sw("nan"), sw("posinf"), sw("neginf"));
  }

  heatReadout() {
    const cur = this.heat.cursor;
    if (!cur) { this.heat.readout.replaceChildren(this.t("heat.hint")); return; }
    const smp = this.sample(this.probsEvent);
    const [, R, C] = smp.shape;
    const v = smp.values[this.st.head * R * C + cur[0] * C + cur[1]];
    this.heat.readout.replaceChildren(this.t("heat.readout", { row: cur[0], col: cur[1], value: fmtSig(v, 4) }));
  }

  cellAt(ev) {
    const g = this.heat.geom;
    const rect = this.heat.canvas.getBoundingClientRect();
    const c = Math.floor((ev.clientX - rect.left) / g.cell), r = Math.floor((ev.clientY - rect.top) / g.cell);
    return r >= 0 && r < g.R && c >= 0 && c < g.C ? [r, c] : null;
  }

  heatKey(ev) {
    const g = this.heat.geom;
    const cur = this.heat.cursor ?? (this.event().i === this.probsEvent && this.st.el[0] === this.st.head
      ? [this.st.el[1], this.st.el[2]] : [0, 0]);
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    if (moves[ev.key]) {
      ev.preventDefault();
      ev.stopPropagation();
      const [dr, dc] = moves[ev.key];
      this.heat.cursor = [Math.max(0, Math.min(g.R - 1, cur[0] + dr)), Math.max(0, Math.min(g.C - 1, cur[1] + dc))];
      this.renderHeat();
    } else if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      ev.stopPropagation();
      this.inspectCell(cur[0], cur[1]);
    }
  }

  inspectCell(r, c) {
    this.st.el = [this.st.head, r, c];
    this.explore = null;
    this.jumpTo(this.probsEvent);
  }

  // ── one element: picker, bits, arithmetic, ±1 ulp ──
  // the element shown for a sample: the chosen one (st.el, kept while stepping through smaller tensors), clamped
  shownElement(smp) {
    return this.st.el.map((v, k) => Math.max(0, Math.min(smp.shape[k] - 1, v | 0)));
  }

  renderElement() {
    const e = this.event();
    const box = this.$("element");
    const smp = this.sample(e.i);
    const sp = smp ? this.spec(smp.out.dtype) : null;
    if (!smp || !sp) {
      box.replaceChildren(h("h3", {}, this.ts("element.title")), h("p", { class: "mpv-muted" }, this.ts("element.none")));
      return;
    }
    const [m, r, c] = this.shownElement(smp);
    const [M, R, C] = smp.shape;
    const own = smp.values[(m * R + r) * C + c];
    const value = this.explore ? this.explore.value : own;
    const d = fbDescribe(value, sp);
    const picker = h("div", { class: "mpv-picker" });
    const field = (k, label, max) => {
      const inp = h("input", { type: "number", min: 0, max, step: 1, value: [m, r, c][k], class: "mpv-num",
        dataset: { act: `el-${k}` }, "aria-label": label });
      inp.addEventListener("change", () => {
        const v = Math.max(0, Math.min(max, Math.round(Number(inp.value)) || 0));
        this.st.el = [m, r, c];
        this.st.el[k] = v;
        this.explore = null;
        this.renderElement();
        if (e.i === this.probsEvent) this.renderHeat();
        this.saveState();
      });
      return h("label", { class: "mpv-field-label" }, label, " ", inp);
    };
    picker.append(field(0, this.ts("element.mat"), M - 1), field(1, this.ts("element.row"), R - 1),
      field(2, this.ts("element.col"), C - 1));
    const title = h("h3", {}, this.t("element.title_of", { name: e.landmarks[0] ?? e.op, dtype: this.dtypeBadge(sp.name) }));
    const valueLine = h("p", { class: "mpv-value-line" }, this.t(this.explore ? "element.exploring" : "element.value", {
      m, r, c, value: h("code", { class: "mpv-value", dataset: { value: String(d.value) } }, fmtExact(d.value)),
      dtype: sp.name }));
    const bits = h("div", { class: `mpv-bits${sp.bits > 16 ? " mpv-bits-wide" : ""}`, role: "group",
      "aria-label": this.ts("element.bits_aria") });
    const field_ = (cls, from, to, label) => {
      const grp = h("div", { class: `mpv-bitfield ${cls}` }, h("span", { class: "mpv-bitfield-label" }, label));
      const row = h("div", { class: "mpv-bitrow" });
      for (let k = from; k < to; k++) {
        const bit = d.bits[k];
        row.append(h("button", { type: "button", class: "mpv-bit", dataset: { bit: sp.bits - 1 - k },
          "aria-label": this.ts("element.bit_aria", { k: sp.bits - 1 - k, v: bit }),
          onclick: () => this.flipBit(sp, d.code, sp.bits - 1 - k) }, bit));
      }
      grp.append(row);
      return grp;
    };
    if (sp.S) bits.append(field_("mpv-sign", 0, 1, this.ts("element.sign")));
    bits.append(field_("mpv-exp", sp.S, sp.S + sp.E, this.ts("element.exponent")));
    if (sp.M) bits.append(field_("mpv-man", sp.S + sp.E, sp.bits, this.ts("element.mantissa")));
    const parts = [title, picker, valueLine, bits, h("p", { class: "mpv-arith" }, this.arithmetic(d, sp))];
    const step = (dir) => {
      const v = dir > 0 ? d.nextUp : d.nextDown;
      return h("button", { type: "button", class: "mpv-btn", dataset: { act: dir > 0 ? "ulp-up" : "ulp-down" },
        disabled: v === null, onclick: () => { this.explore = { value: v }; this.renderElement(); } },
      this.ts(dir > 0 ? "element.ulp_up" : "element.ulp_down", { value: v === null ? "—" : fmtExact(v) }));
    };
    const nav = h("div", { class: "mpv-ulp" }, step(-1), step(1));
    if (this.explore) {
      nav.append(h("button", { type: "button", class: "mpv-btn mpv-btn-quiet", dataset: { act: "ulp-reset" },
        onclick: () => { this.explore = null; this.renderElement(); } }, this.ts("element.back", { value: fmtExact(own) })));
    }
    parts.push(nav);
    if (Number.isFinite(d.ulp)) {
      parts.push(h("p", { class: "mpv-small" }, this.t("element.ulp_line", {
        ulp: `${pow2Text(Math.round(Math.log2(d.ulp)))} = ${fmtExact(d.ulp)}`, gl_ulp: this.term("ulp"),
        binade: d.cls === "normal" ? `[${pow2Text(d.exponentUnbiased)}, ${pow2Text(d.exponentUnbiased + 1)})` : "—",
      })));
    }
    if (smp.of && smp.of.reduce((a, b) => a * b, 1) > M * R * C) {
      parts.push(h("p", { class: "mpv-small" }, this.t("element.sampled", { m: M, r: R, c: C })));
    }
    box.replaceChildren(...parts);
  }

  flipBit(sp, code, k) {
    const flipped = code ^ (1n << BigInt(k));
    this.explore = { value: fbValue(sp, flipped) };
    this.renderElement();
  }

  arithmetic(d, sp) {
    const sign = d.sign ? "−1" : "+1";
    if (d.cls === "nan") return this.t("element.arith_nan");
    if (d.cls === "inf") return this.t("element.arith_inf", { sign: d.sign ? "−" : "+" });
    if (d.cls === "zero") return this.t("element.arith_zero", { sign: d.sign ? "−" : "+" });
    const man = d.mantissaBits;
    const frac = sp.M ? Number(d.mantissa) / 2 ** sp.M : 0;
    if (d.cls === "subnormal") {
      return this.t("element.arith_sub", { sign, bias: sp.bias, e: 1 - sp.bias, m: man,
        mval: fmtExact(frac), value: fmtExact(d.value), gl_subnormal: this.term("subnormal") });
    }
    return this.t("element.arith_normal", { sign, raw: d.exponentRaw, bias: sp.bias, e: d.exponentUnbiased, m: man || "0",
      mval: fmtExact(1 + frac), value: fmtExact(d.value) });
  }

  // ── navigation ──
  go(pos) {
    const l = this.list();
    const next = Math.max(0, Math.min(l.length - 1, pos));
    if (next === this.st.pos) return;
    this.st.pos = next;
    this.explore = null;
    this.render();
  }

  move(d) {
    this.go(this.st.pos + d);
  }

  // show event i: in the Story view when it is a story step (else in `prefer`), widening the phase if needed
  jumpTo(i, prefer) {
    let view = prefer || this.st.view;
    if (!prefer && view === "story" && !this.storyOf.has(i)) view = "full";
    let phase = this.st.phase;
    if (phase !== "all" && this.b.events[i].phase !== phase) phase = "all";
    this.st.view = view;
    this.st.phase = phase;
    this.st.pos = this.positionOf(i);
    this.explore = null;
    this.render();
    const node = this.nodeEls?.get(this.b.events[i].landmarks?.[0]);
    if (node && this.root.activeElement?.closest?.(".mpv-node")) node.focus?.();
  }

  setView(view, phase) {
    const i = this.event().i;
    this.st.view = view;
    this.st.phase = phase;
    this.st.pos = this.positionOf(i);
    this.render();
  }

  togglePlay() {
    if (this.playTimer) return this.stopPlay();
    if (this.st.pos >= this.list().length - 1) this.go(0);
    this.playTimer = setInterval(() => {
      if (this.st.pos >= this.list().length - 1) return this.stopPlay();
      this.move(1);
    }, PLAY_MS);
    this.playBtn.textContent = this.ts("controls.pause");
    this.playBtn.setAttribute("aria-pressed", "true");
  }

  stopPlay() {
    clearInterval(this.playTimer);
    this.playTimer = null;
    if (this.playBtn) {
      this.playBtn.textContent = this.ts("controls.play");
      this.playBtn.setAttribute("aria-pressed", "false");
    }
  }

  handleKey(e) {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const target = e.composedPath()[0];
    if (target && (FIELD_TAGS.has(target.tagName) || target.isContentEditable
      || ARROW_ROLES.has(target.getAttribute?.("role")) || target.closest?.("[role=grid], [role=menu]"))) return;
    const inside = e.composedPath().includes(this.app);
    if (e.key === "ArrowRight") { e.preventDefault(); this.move(1); }
    else if (e.key === "ArrowLeft") { e.preventDefault(); this.move(-1); }
    else if (inside && e.key === "Home") { e.preventDefault(); this.go(0); }
    else if (inside && e.key === "End") { e.preventDefault(); this.go(this.list().length - 1); }
  }

  async copyLink() {
    this.writeUrl();
    const link = new URL(location.href);
    for (const k of PERSONAL) link.searchParams.delete(k);
    const url = link.toString();
    try {
      await navigator.clipboard.writeText(url);
      this.copyBtn.textContent = this.ts("controls.copied");
    } catch {
      this.copyBtn.textContent = this.ts("controls.copy_failed");
      window.prompt?.(this.ts("controls.copy_link"), url);
    }
    setTimeout(() => { this.copyBtn.textContent = this.ts("controls.copy_link"); }, 1800);
  }

  // ── state in the URL and in sessionStorage ──
  storeKey() {
    return `mpviz.stepper.${this.meta.key || "stepper"}`;
  }

  restoreState() {
    const q = new URLSearchParams(location.search);
    let saved = null;
    try { saved = JSON.parse(sessionStorage.getItem(this.storeKey()) || "null"); } catch { saved = null; }
    const fromUrl = PARAMS.some((k) => q.has(k)) || LEGACY_EL.some((k) => q.has(k));
    const st = { view: "story", phase: "all", pos: 0, head: 0, el: [0, 0, 0] };
    const src = fromUrl ? Object.fromEntries(q) : saved || {};
    if (VIEWS.includes(src.view)) st.view = src.view;
    if (PHASES.includes(src.phase)) st.phase = src.phase;
    st.head = Math.max(0, parseInt(src.head, 10) || 0);
    const el = typeof src.el === "string" ? src.el.split(".") : LEGACY_EL.map((k) => src[k]);
    st.el = [0, 1, 2].map((k) => Math.max(0, parseInt(el[k], 10) || 0));
    this.st = st;
    const step = Math.max(0, parseInt(src.step, 10) || 0);
    // The first stepper of a page load trusts its URL (a shared link). A later one in the same page (a remount, or
    // coming back to this page) may see a URL written for another run; then the saved tensor wins.
    const later = REGISTRY.loaded;
    REGISTRY.loaded = true;
    const stale = later && saved && saved.sig !== this.sig && saved.view === st.view && saved.phase === st.phase
      && String(saved.step) === String(src.step ?? "");
    st.pos = stale ? this.positionOf(this.matchEvent({ key: saved.key, i: saved.i, phase: saved.eventPhase }))
      : Math.min(step, this.list(st.view, st.phase).length - 1);
    return st;
  }

  saveState() {
    const e = this.event();
    const state = { view: this.st.view, phase: this.st.phase, step: this.st.pos, head: this.st.head,
      el: this.st.el.join("."), key: e.key, i: e.i, eventPhase: e.phase, sig: this.sig };
    try { sessionStorage.setItem(this.storeKey(), JSON.stringify(state)); } catch { /* storage off: URL only */ }
    clearTimeout(this.urlTimer);
    this.urlTimer = setTimeout(() => this.writeUrl(), URL_WRITE_MS);
  }

  writeUrl() {
    clearTimeout(this.urlTimer);
    const next = this.mergeUrl(location.href);
    if (next !== location.href) REGISTRY.history.replace(history.state, "", next);
    this.publish();
  }

  // `url` with this stepper's keys set to its current state (and old element keys gone), if it is a URL of the page
  // this stepper lives on; any other URL unchanged.
  mergeUrl(url) {
    if (url == null || !this.st || !this.app.isConnected) return url;
    const u = new URL(url, location.href);
    if (u.pathname !== this.path) return url;
    const q = u.searchParams;
    q.set("step", String(this.st.pos));
    q.set("view", this.st.view);
    q.set("phase", this.st.phase);
    if (this.heat) q.set("head", String(this.st.head));
    else q.delete("head");
    q.set("el", this.st.el.join("."));
    for (const k of LEGACY_EL) q.delete(k);
    return u.toString();
  }

  // ── listeners and tooltips ──
  attach() {
    if (this.listening) return;
    this.listening = true;
    this.path = location.pathname;
    REGISTRY.active = this;
    window.addEventListener("keydown", this.onKey);
    window.addEventListener("mpviz:goto", this.onGoto);
    this.resize.observe(this.app);
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
    if (REGISTRY.active === this) REGISTRY.active = null;
    window.removeEventListener("keydown", this.onKey);
    window.removeEventListener("mpviz:goto", this.onGoto);
    this.resize.disconnect();
    this.app.removeEventListener("mouseover", this.tipOver);
    this.app.removeEventListener("focusin", this.tipOver);
    this.app.removeEventListener("mouseout", this.tipOut);
    this.app.removeEventListener("focusout", this.tipOut);
  }

  showTip(e) {
    const el = e.target.closest?.(".mpv-term");
    if (!el) return;
    const g = this.text.glossary?.[el.dataset.term];
    if (!g) return;
    const tip = this.$("tip");
    tip.replaceChildren(h("strong", {}, g.term ?? el.dataset.term), h("span", {}, this.t(`${el.dataset.term}.text`,
      {}, this.text.glossary)));
    tip.hidden = false;
    const r = el.getBoundingClientRect(), box = this.app.getBoundingClientRect();
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

function sameBytes(a, b) {
  if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

function b64(text) {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let k = 0; k < bin.length; k++) out[k] = bin.charCodeAt(k);
  return out;
}

// cividis (colour-blind-safe, perceptually uniform): a few stops, linearly interpolated
const CIVIDIS = [[0, 34, 78], [38, 65, 108], [87, 92, 109], [125, 124, 120], [165, 157, 116], [208, 192, 96], [253, 234, 69]];
function cividisRGB(t) {
  t = Math.max(0, Math.min(1, Number.isFinite(t) ? t : 0)) * (CIVIDIS.length - 1);
  const k = Math.min(CIVIDIS.length - 2, Math.floor(t)), f = t - k;
  return CIVIDIS[k].map((v, j) => Math.round(v + (CIVIDIS[k + 1][j] - v) * f));
}

function cividis(t) {
  return `rgb(${cividisRGB(t).join(",")})`;
}
