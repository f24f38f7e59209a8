// The attention lesson in the browser: steps through a lesson bundle (mpviz.bundle) without asking the server.
// Payload (component.data): UTF-8 JSON bytes {"bundle": <bundle>, "text": {"ui", "glossary"}, "style": {...},
// "meta": {"key", "locale", "scale", "publish"}}. All words come from "text"; everything else from the bundle.
// meta.scale sizes the whole component (presenter mode); with meta.publish the stepper sends its place to Python
// (state "view": a presenter's room publishes it to followers). Python moves the stepper through the "go to"
// channel (assets/components/goto/goto.js): a window event, or a pending target picked up on load.
// Nothing here builds HTML from strings: text goes in with textContent, nodes with createElement. No network, no eval.
// One ES module assembled by view/stepper.py from the folder's plain scripts (SCRIPTS: helpers and the Stepper's
// mixins first, this file last); no imports, no build step. This file: mounting, loading data, the go-to channel,
// building once per bundle, rendering per step, listeners.

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
const VIEWS = ["story", "full"];
const PHASES = ["all", "forward", "backward"];

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

// ── the app ───────────────────────────────────────────────────────────────────────────────────────────────
// Each panel's methods live in their own file as a mixin; all of them share this one object's state.
class Stepper extends Navigation(ElementView(HeatmapView(ValuesView(GraphView(Words(BundleView(Object))))))) {
  constructor(root) {
    super();
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
    const fn = this.meta.conceal ? null : this.b.first_nonfinite;  // a "think first" stop hides its answer
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
