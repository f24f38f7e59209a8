// Reading the lesson bundle (mpviz/contracts/bundle.schema.json): the steps of a view and phase, where an event sits, its formats, samples
// and the casts autocast inserted before it. One reader per bundle; everything derived is cached here, so a step
// costs map lookups. No DOM: unit-tested under node.

import { b64 } from "./bytes.js";
import { fbSpec } from "./floatbits.js";
import { glModel } from "./graphlayout.js";

// the element shown for a sample: the chosen one (place.el, kept while stepping through smaller tensors), clamped
export function shownElement(el, smp) {
  return el.map((v, k) => Math.max(0, Math.min(smp.shape[k] - 1, v | 0)));
}

// chunks of a streamed run's events kept whole at once (the most recently used); the others go back to thin events
export const KEEP_CHUNKS = 32;

// an event with only the fields stepping through the whole run reads (mpviz/event_chunks.py thin_event)
export function thinEvent(e) {
  return { ...e, out: e.out.map((o) => ({ dtype: o.dtype, shape: o.shape })) };
}

export class BundleReader {
  /**
   * @param {object} b the lesson bundle (bundle.schema.json, Bundle)
   * @param {string[]} paramOrder parameter names (weight, bias) in the order their gradient chips are drawn
   * @param {{stream?: {events: number, chunk: number} | null}} [options] `stream` (meta.stream): `b` is a streamed
   *   run's head, its events thin but the first chunk's; `fill` makes a chunk whole when it arrives
   */
  constructor(b, paramOrder = [], { stream = null } = {}) {
    this.b = b;
    this.stream = stream;
    this.whole = new Set(stream ? [0] : []); // a streamed run's chunks held whole, least recently used first
    this.firstNonfinite = b.first_nonfinite;
    this.sig = JSON.stringify([b.run.config, b.run.device, b.run.autocast_dtype]);
    this.samples = new Map();
    this.specs = new Map();
    this.storyOf = new Map(b.story.map((st, k) => [st.event, k]));
    this.landmarkEvents = new Set(Object.values(b.landmarks));
    this.keyIndex = new Map(b.events.map((e) => [e.key, e.i]));
    this.castCache = new Map();
    this.lists = new Map();
    this.model = glModel(b.graph, (id) => {
      const k = paramOrder.indexOf(id.split(".").pop());
      return k < 0 ? paramOrder.length : k;
    });
    this.probsEvent = b.landmarks.probs; // the attention probabilities: the heatmap's tensor, if this run has one
  }

  /** The sample of the attention probabilities, or null (no heatmap). */
  probs() {
    return this.probsEvent === undefined ? null : this.sample(this.probsEvent);
  }

  // the steps of (view, phase): event indices in execution order; an empty filter falls back to every phase
  list(view, phase) {
    const k = view + "/" + phase;
    if (!this.lists.has(k)) {
      const all = view === "story" ? this.b.story.map((x) => x.event) : this.b.events.map((e) => e.i);
      const some = phase === "all" ? all : all.filter((i) => this.b.events[i].phase === phase);
      this.lists.set(k, some.length ? some : all);
    }
    return this.lists.get(k);
  }

  // the event a place {view, phase, pos} shows: of a streamed run, thin until its chunk arrives (see `ready`)
  eventAt(place) {
    const l = this.list(place.view, place.phase);
    return this.b.events[l[Math.min(place.pos, l.length - 1)]];
  }

  // the chunk of a streamed run that holds event i
  chunkOf(i) {
    return Math.floor(i / this.stream.chunk);
  }

  // is event i whole (its outputs' statistics and sample here)? Always, unless the run is streamed
  ready(i) {
    if (!this.stream) return true;
    const k = this.chunkOf(i);
    if (!this.whole.has(k)) return false;
    this.whole.delete(k); // used: now the most recent
    this.whole.add(k);
    return true;
  }

  // chunk k of a streamed run arrived (its events whole, in order): they replace the thin ones; past KEEP_CHUNKS
  // the least recently used chunk goes back to thin events. False (and nothing changed) for a chunk that does not
  // fit this run.
  fill(k, events) {
    const first = k * this.stream.chunk;
    const count = Math.min(this.stream.chunk, this.b.events.length - first);
    if (!Array.isArray(events) || count <= 0 || events.length !== count) return false;
    if (events.some((e, j) => e?.i !== first + j || !Array.isArray(e.out))) return false;
    events.forEach((e, j) => this.swap(first + j, e));
    this.whole.delete(k);
    this.whole.add(k);
    while (this.whole.size > KEEP_CHUNKS) {
      const old = this.whole.values().next().value;
      this.whole.delete(old);
      const from = old * this.stream.chunk;
      const end = Math.min(from + this.stream.chunk, this.b.events.length);
      for (let i = from; i < end; i++) this.swap(i, thinEvent(this.b.events[i]));
    }
    return true;
  }

  swap(i, e) {
    this.b.events[i] = e;
    this.samples.delete(i);
    this.castCache.clear();
  }

  // position in the current list of event i: itself, else the story step it is part of (the next one in its phase)
  positionOf(i, view, listPhase) {
    const l = this.list(view, listPhase);
    const at = l.indexOf(i);
    if (at >= 0) return at;
    const phase = this.b.events[i]?.phase;
    const next = l.findIndex((j) => j >= i && this.b.events[j].phase === phase);
    if (next >= 0) return next;
    let best = 0;
    l.forEach((j, k) => {
      if (j <= i) best = k;
    });
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
    if (!this.ready(i)) return null; // not yet: asked again once its chunk is here
    const e = this.b.events[i];
    const shown = e ? this.shownOutput(e) : -1;
    const k = shown >= 0 && e.out[shown].sample ? shown : e ? e.out.findIndex((o) => o.sample) : -1;
    let got = null;
    if (k >= 0) {
      const smp = e.out[k].sample;
      const bytes = typeof Uint8Array.fromBase64 === "function" ? Uint8Array.fromBase64(smp.values) : b64(smp.values);
      got = {
        shape: smp.shape,
        of: smp.of,
        values: new Float32Array(bytes.buffer, 0, bytes.length >> 2),
        out: e.out[k],
      };
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

  // does event i's first measured output hold inf or NaN made by an overflow? (A causal mask's -inf is an input, not
  // an accident: nothing before the first op that created inf/NaN is marked.)
  nonfinite(i) {
    const first = this.firstNonfinite;
    if (!first || i < first.event) return false;
    const st = this.b.events[i]?.out.find((o) => o.stats)?.stats;
    return Boolean(st && (st.nan || st.posinf || st.neginf));
  }
}
