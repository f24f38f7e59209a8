// The attention lesson in the browser: steps through a lesson bundle (mpviz.bundle; its schema is
// mpviz/contracts/bundle.schema.json) without asking the server. The entry point; esbuild bundles it and its imports
// into mpviz/presentation/static/stepper.js, the one ES module both Streamlit components run: the stepper (mpviz/app/stepper.py) and the "go
// to" channel (mpviz/app/goto.py, goto.js). Streamlit imports a component's code once per page by its text, so the two
// share one evaluation of these modules and talk through goto.js's exports.
// Payload (component.data): UTF-8 JSON bytes {"bundle": <bundle>, "text": {"ui", "glossary"}, "style": {...},
// "meta": <meta.js>}. All words come from "text"; everything else from the bundle. A streamed run's bundle (meta.stream,
// a notebook's model past the caps) is its head: the other events come through `component.events` (stream.js).
// Nothing here builds HTML from strings: text goes in with textContent, nodes with createElement. No network, no eval.
// This file: mounting, loading a payload, building and drawing the panels (panels.js), and the coordination of the
// place's store (store.js) with what follows a move: the URL and sessionStorage (urlsync.js), keys (keys.js),
// playback (playback.js), sizes (layout.js), tooltips (tips.js), go-to targets (goto.js) and publishing.

import { BundleReader } from "./bundle.js";
import { sameBytes } from "./bytes.js";
import * as goto from "./goto.js";
import { Keys } from "./keys.js";
import { Layout } from "./layout.js";
import { readMeta } from "./meta.js";
import { drawPending, drawStep, makePanels } from "./panels.js";
import { Playback } from "./playback.js";
import { SkipLink } from "./skiplink.js";
import { goTo, publish, takePendingGoto } from "./presenting.js";
import { PlaceStore } from "./store.js";
import { EventFetcher, pendingNote } from "./stream.js";
import { Tips } from "./tips.js";
import { UrlSync } from "./urlsync.js";
import { Words } from "./words.js";

const APPS = new WeakMap(); // shadow root → its Stepper (kept across Streamlit reruns)

/** Both components' code: the go-to channel's mount, or the stepper's. */
export default function mount(component) {
  if (String(component.name ?? "").endsWith("mpviz_goto")) return goto.deliver(component);
  return mountStepper(component);
}

export function mountStepper(component) {
  const root = component.parentElement;
  let app = APPS.get(root);
  if (!app) {
    app = new Stepper(root);
    APPS.set(root, app);
  }
  app.publishTo = component.setStateValue;
  app.channel = component.events ?? null; // a streamed run's way to the kernel (notebook.js), else none
  app.load(component.data);
  return () => app.detach();
}

class Stepper {
  constructor(root) {
    this.root = root;
    this.app = root.querySelector("[data-role=app]");
    this.$ = (role) => this.app.querySelector(`[data-role=${role}]`);
    this.skip = new SkipLink(document);
    this.onSkip = () => {
      this.app.scrollIntoView({ block: "start" });
      this.app.focus({ preventScroll: true });
    };
    this.raw = null;
    this.store = null; // the place and the run (store.js); panels read its place, only `move` changes it
    this.panels = null;
    this.listening = false;
    this.meta = readMeta(null);
    this.url = new UrlSync(this.meta, () => this.store, this.app, { onWrite: () => publish(this) });
    this.keys = new Keys(
      this.app,
      () => this.meta.embedded,
      (m) => this.move(m),
      () => this.store.list().length - 1,
    );
    this.publishTo = null; // the component's setStateValue (see mountStepper)
    this.channel = null; // the host's EventChannel (stream.js), for a streamed run
    this.fetcher = null; // a streamed run's EventFetcher
    this.published = null; // JSON of the place last sent to Python
    this.layout = new Layout(this.app, root.host, (changed) => this.relayout(changed));
    this.tips = new Tips(this.app, () => this.words);
    this.playback = new Playback({
      atEnd: () => this.store.place.pos >= this.store.list().length - 1,
      step: () => this.move({ by: 1 }),
      restart: () => this.move({ pos: 0 }),
      shown: (playing) => this.panels?.controls.setPlaying(playing),
    });
    // what a panel may ask for; nothing else moves the place
    this.actions = {
      jump: (i, prefer) => this.jump(i, prefer),
      move: (d) => this.move({ by: d }),
      go: (pos) => this.move({ pos }),
      view: (view, phase) => this.move({ view, phase }),
      play: () => this.playback.toggle(),
      keys: () => this.keys.take(),
      copy: () => this.copyLink(),
      head: (k) => this.move({ head: k }),
      element: (el) => this.move({ el }),
      explore: (value) => this.move({ explore: value }),
      inspect: (el) => this.jump(this.store.reader.probsEvent, undefined, { el }),
    };
  }

  emit(type, ...args) {
    this.actions[type](...args);
  }

  // ── data ──
  load(data) {
    this.url.claimStop(); // each run the stepper is drawn in: its place belongs to the view shown now
    if (data === this.raw || sameBytes(data, this.raw)) {
      // a rerun that sent the same run
      this.attach();
      return takePendingGoto(this);
    }
    this.raw = data;
    const payload =
      typeof data === "string"
        ? JSON.parse(data)
        : data instanceof Uint8Array || data instanceof ArrayBuffer
          ? JSON.parse(new TextDecoder().decode(data))
          : data;
    const text = payload.text || { ui: {}, glossary: {} };
    Object.assign(this.meta, readMeta(payload.meta)); // the one object UrlSync and Keys read
    const b = payload.bundle;
    this.words = new Words(text, payload.style || {}, b.formats, this.meta.locale, (...a) => this.emit(...a));
    const reader = new BundleReader(b, Object.keys(text.ui.graph?.param_short ?? {}), { stream: this.meta.stream });
    this.fetcher?.close();
    this.fetcher = reader.stream ? new EventFetcher(reader, this.channel, (k) => this.arrived(reader, k)) : null;
    const rerun = this.store !== null;
    if (rerun)
      this.store.rerun(reader); // a new run: keep the same tensor
    else this.store = new PlaceStore(reader, this.url.restore(reader));
    this.app.style.setProperty("--mpv-scale", String(this.meta.scale));
    this.app.classList.toggle("mpv-embedded", this.meta.embedded);
    this.build();
    this.attach();
    if (!rerun) this.url.showRestored();
    if (rerun) this.keys.takeFromSidebar();
    takePendingGoto(this);
    publish(this);
  }

  // ── moving: every change of the place goes through the store's one `move`; then what it changed is drawn ──
  move(change) {
    const moved = this.store.move(change);
    const drawn = this.store.reader.ready(this.store.event().i); // else the step shows as pending
    if (moved === "step") this.render();
    else if (!drawn) {
      // the element, head or exploration is drawn when the event arrives
    } else if (moved === "element") {
      this.panels.element.render();
      if (this.store.event().i === this.store.reader.probsEvent) this.panels.heat.render();
    } else if (moved === "head") this.panels.heat.render();
    else if (moved === "explore") this.panels.element.render();
    if (moved && moved !== "explore") this.url.save();
    return moved;
  }

  // show event i (in `prefer`, else the Story view when it is a story step), and its graph node
  jump(i, prefer, extra = {}) {
    this.move({ ...extra, event: i, prefer });
    this.panels.graph.focusNode(this.store.reader.b.events[i].landmarks?.[0]);
  }

  // ── building (once per bundle) and drawing ──
  build() {
    const geom = this.layout.measure(this.meta.publish);
    this.app.setAttribute("aria-label", this.words.ts("controls.region"));
    if (this.listening && !this.meta.embedded)
      this.skip.attach(this.words.ts("controls.skip_link"), this.root.host, this.onSkip); // new words, same link
    const ctx = {
      bundle: this.store.reader,
      place: this.store.place,
      words: this.words,
      emit: (...a) => this.emit(...a),
      geom,
    };
    this.panels = makePanels(ctx, this.$);
    this.render();
  }

  render() {
    const e = this.store.event();
    const ready = !this.fetcher || this.fetcher.want(e.i);
    let spoken;
    if (ready) {
      spoken = drawStep(this.panels);
      this.fetcher?.askAhead(e.i);
    } else {
      const note = pendingNote(this.fetcher, this.words, this.store.place.pos + 1, e.i);
      spoken = `${drawPending(this.panels, note)} ${note}`;
    }
    this.$("live").textContent = spoken;
    this.url.save();
    this.app.dataset.step = String(this.store.place.pos);
    this.app.dataset.event = String(e.i);
    if (ready) delete this.app.dataset.pending;
    else this.app.dataset.pending = this.fetcher.failure(e.i) ? "failed" : "loading";
  }

  // a chunk of a streamed run arrived (or was refused): the step waiting for it is drawn
  arrived(reader, k) {
    if (this.store?.reader !== reader || !this.panels) return; // an earlier run's answer
    if (reader.chunkOf(this.store.event().i) === k) this.render();
  }

  // after a resize (layout.js): what the new sizes need drawn again
  relayout({ graph, sizes }) {
    if (!this.panels) return;
    if (graph) this.panels.graph.layout();
    if (sizes) {
      this.panels.values.render();
      this.panels.heat.render();
    }
  }

  async copyLink() {
    const url = this.url.link();
    try {
      await navigator.clipboard.writeText(url);
      this.panels.controls.flashCopy("controls.copied");
    } catch {
      this.panels.controls.flashCopy("controls.copy_failed");
      window.prompt?.(this.words.ts("controls.copy_link"), url);
    }
  }

  // ── listeners ──
  attach() {
    if (this.listening) return;
    this.listening = true;
    this.url.attach();
    if (!this.meta.embedded) this.skip.attach(this.words.ts("controls.skip_link"), this.root.host, this.onSkip);
    this.keys.attach();
    this.stopListening = goto.listen((d) => goTo(this, d));
    this.layout.observe();
    this.tips.attach();
  }

  detach() {
    if (!this.listening) return;
    this.listening = false;
    this.playback.stop();
    this.url.detach();
    this.skip.detach(this.onSkip);
    this.keys.detach();
    this.stopListening();
    this.layout.disconnect();
    this.tips.detach();
  }
}
