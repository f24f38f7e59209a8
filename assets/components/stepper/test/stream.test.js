// A streamed run (mpviz.show past the caps): the reader's chunks made whole as they arrive and thin again past
// KEEP_CHUNKS, the fetcher asking the kernel once per chunk and keeping its refusals, and the mounted stepper
// drawing a step whose chunk is on its way as pending, in words, while the controls keep stepping.
// The run is the node fixture's model (fixtures/model_payload.json) cut into small chunks.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { host, window } from "./dom-env.js";

const { BundleReader, KEEP_CHUNKS, thinEvent } = await import("../bundle.js");
const { EventFetcher } = await import("../stream.js");
const { default: mountStepper } = await import("../stepper.js");

const PAYLOAD = JSON.parse(readFileSync(new URL("./fixtures/model_payload.json", import.meta.url), "utf8"));
const EVENTS = PAYLOAD.bundle.events;
const CHUNK = 4;

// the head mpviz.model_bundle.model_stream would send: every event thin but the first chunk's
function head() {
  const b = structuredClone(PAYLOAD.bundle);
  b.events = b.events.map((e) => (e.i < CHUNK ? e : thinEvent(e)));
  return b;
}

const chunkBytes = (k) => new TextEncoder().encode(JSON.stringify(EVENTS.slice(k * CHUNK, (k + 1) * CHUNK)));

// the kernel's side of the protocol, answering only when told to (answers arrive later, as over a comm)
function fakeKernel() {
  const kernel = { asked: [], listeners: new Set() };
  kernel.channel = {
    request: (chunk) => kernel.asked.push(chunk),
    listen(on) {
      kernel.listeners.add(on);
      return () => kernel.listeners.delete(on);
    },
  };
  kernel.answer = (chunk, error) => {
    const msg = error ? { type: "events", chunk, error } : { type: "events", chunk };
    const buffers = error ? [] : [new DataView(chunkBytes(chunk).buffer)];
    for (const on of kernel.listeners) on(msg, buffers);
  };
  return kernel;
}

const streamed = () => new BundleReader(head(), [], { stream: { events: EVENTS.length, chunk: CHUNK } });

test("a chunk is asked for once, made whole when it arrives, and equals the kernel's events", () => {
  const reader = streamed();
  const kernel = fakeKernel();
  const arrived = [];
  const f = new EventFetcher(reader, kernel.channel, (k) => arrived.push(k));
  assert.equal(f.want(1), true); // the first chunk came with the head
  assert.equal(reader.sample(9), null); // thin: no sample yet, and none cached
  assert.equal(f.want(9), false);
  assert.equal(f.want(10), false);
  assert.deepEqual(kernel.asked, [2]);
  f.receive({ type: "other" }, []); // not ours: ignored
  kernel.answer(2);
  assert.deepEqual(arrived, [2]);
  assert.equal(f.want(9), true);
  assert.deepEqual(reader.b.events.slice(8, 12), EVENTS.slice(8, 12));
  const shown = EVENTS[9].out.findIndex((o) => o.sample);
  if (shown >= 0) assert.ok(reader.sample(9));
  f.askAhead(9);
  assert.deepEqual(kernel.asked, [2, 3]);
  f.close();
  assert.equal(kernel.listeners.size, 0);
});

test("a refusal, a chunk that does not fit and a missing channel are kept as failures, never asked again", () => {
  const reader = streamed();
  const kernel = fakeKernel();
  const f = new EventFetcher(reader, kernel.channel, () => {});
  f.want(12);
  kernel.answer(3, "released");
  assert.equal(f.failure(12), "released");
  assert.equal(f.want(12), false);
  assert.deepEqual(kernel.asked, [3]);
  f.want(20); // chunk 5, answered with chunk 6's events
  f.receive({ type: "events", chunk: 5 }, [chunkBytes(6)]);
  assert.equal(f.failure(20), "bad_chunk");
  f.want(24);
  f.receive({ type: "events", chunk: 6 }, [new TextEncoder().encode("not json")]);
  assert.equal(f.failure(24), "bad_chunk");
  assert.equal(reader.ready(20), false);
  const alone = new EventFetcher(streamed(), null, () => {});
  assert.equal(alone.want(12), false);
  assert.equal(alone.failure(12), "no_channel");
});

test("past KEEP_CHUNKS whole chunks the least recently used goes back to thin events", () => {
  const reader = streamed();
  const chunks = Math.ceil(EVENTS.length / CHUNK);
  assert.ok(chunks > KEEP_CHUNKS + 1, "the fixture has enough chunks");
  for (let k = 1; k <= KEEP_CHUNKS; k++) assert.ok(reader.fill(k, EVENTS.slice(k * CHUNK, (k + 1) * CHUNK)));
  assert.equal(reader.ready(0), false); // chunk 0, the oldest, went thin
  assert.ok(reader.ready(CHUNK)); // chunk 1 used: now the most recent
  reader.fill(KEEP_CHUNKS + 1, EVENTS.slice((KEEP_CHUNKS + 1) * CHUNK, (KEEP_CHUNKS + 2) * CHUNK));
  assert.ok(reader.ready(CHUNK));
  assert.equal(reader.ready(2 * CHUNK), false);
  assert.deepEqual(reader.b.events[2 * CHUNK], thinEvent(EVENTS[2 * CHUNK]));
  assert.equal(reader.fill(chunks + 3, []), false);
});

test("mounted: a step past the first chunk is pending in words, the controls keep stepping, the answer draws it", () => {
  window.sessionStorage.clear();
  const kernel = fakeKernel();
  const root = host();
  const payload = {
    ...PAYLOAD,
    bundle: head(),
    meta: { ...PAYLOAD.meta, stream: { events: EVENTS.length, chunk: CHUNK } },
  };
  const detach = mountStepper({ parentElement: root, data: payload, events: kernel.channel, setStateValue() {} });
  const app = root.querySelector("[data-role=app]");
  root.querySelector("[data-view=full]").click();
  assert.equal(app.dataset.pending, undefined);
  const slider = root.querySelector("[data-act=slider]");
  slider.value = "9";
  slider.dispatchEvent(new window.Event("input"));
  assert.equal(app.dataset.event, "9");
  assert.equal(app.dataset.pending, "loading");
  const values = root.querySelector("[data-role=values]").textContent;
  assert.ok(values.includes(PAYLOAD.text.ui.stream.loading.replace("{n}", "10")), values);
  assert.ok(root.querySelector("[data-role=live]").textContent.includes("10"));
  root.querySelector("[data-act=next]").click(); // still steps while the chunk is on its way
  assert.equal(app.dataset.event, "10");
  assert.deepEqual(kernel.asked, [1, 2]); // chunk 1 asked ahead from the first step, chunk 2 once
  kernel.answer(2);
  assert.equal(app.dataset.pending, undefined);
  assert.ok(!root.querySelector(".mpv-pending"));
  assert.deepEqual(kernel.asked, [1, 2, 3]); // the next chunk, asked ahead
  root.querySelector("[data-act=next]").click();
  root.querySelector("[data-act=next]").click(); // event 12: chunk 3, still on its way
  kernel.answer(3, "released");
  assert.equal(app.dataset.pending, "failed");
  assert.ok(root.querySelector("[data-role=values]").textContent.includes(PAYLOAD.text.ui.stream.released));
  detach();
});
