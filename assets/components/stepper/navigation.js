// Moving through the lesson: step, jump, view and phase, play, keys, the copied link, and the place kept in the URL
// and in sessionStorage.
// A mixin of the Stepper class (stepper.js): methods only, on the one Stepper's `this` (its bundle `b`, text,
// place `st`, elements). Plain script: view/stepper.py concatenates it, in SCRIPTS order, before stepper.js.

const PARAMS = ["step", "view", "phase", "head", "el"];
const LEGACY_EL = ["em", "er", "ec"];
const PERSONAL = ["present", "follow"];  // this browser's role in a class (view/page.py): never in a copied link
// ←/→ step the lesson unless focus is somewhere those keys already mean something
const FIELD_TAGS = new Set(["INPUT", "TEXTAREA", "SELECT", "CANVAS"]);
const ARROW_ROLES = new Set(["slider", "spinbutton", "textbox", "combobox", "listbox", "option", "menu", "menuitem",
  "tab", "radio", "grid", "gridcell", "tree", "treeitem"]);
const PLAY_MS = 1400;  // one step per 1.4 s: time to read the card
const URL_WRITE_MS = 150;  // coalesce URL writes while a key is held down

const Navigation = (Base) => class extends Base {
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
};
