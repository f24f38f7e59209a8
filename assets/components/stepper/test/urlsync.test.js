// The place in the URL and in sessionStorage: restored from a shared link, saved, merged into the page's own URL
// writes while attached, never touched when embedded.
import assert from "node:assert/strict";
import { test } from "node:test";
import { window } from "./dom-env.js";

const { BundleReader } = await import("../bundle.js");
const { readMeta } = await import("../meta.js");
const { PlaceStore } = await import("../store.js");
const { UrlSync } = await import("../urlsync.js");
const { BUNDLE } = await import("./fixture.js");

// a page of its own: location, history and storage that record what is written
function fakeWindow(href) {
  const location = new URL(href);
  const written = [];
  const write = (kind) => (state, _u, url) => {
    written.push([kind, String(url)]);
    const next = new URL(url, location.href);
    location.href = next.href;
  };
  const store = new Map();
  return {
    location,
    written,
    history: { state: null, pushState: write("push"), replaceState: write("replace") },
    sessionStorage: { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) },
  };
}

function synced(href, meta = {}) {
  const win = fakeWindow(href);
  const app = window.document.createElement("div");
  window.document.body.append(app);
  let store = null;
  const sync = new UrlSync(readMeta({ key: "k", locale: "en", ...meta }), () => store, app, {
    page: { history: null, active: null, loaded: false },
    win,
  });
  const reader = new BundleReader(BUNDLE);
  store = new PlaceStore(reader, sync.restore(reader));
  return { win, sync, store: () => store };
}

test("a shared link's place is restored; a write merges the place and keeps the page's own keys", () => {
  const { win, sync, store } = synced("http://h/attention?dtype=fp16&step=3&view=full&phase=all&el=0.1.2");
  assert.deepEqual([store().place.pos, store().place.view, store().place.el], [3, "full", [0, 1, 2]]);
  sync.attach();
  store().move({ by: 1 });
  sync.write();
  const q = new URL(win.location.href).searchParams;
  assert.deepEqual([q.get("dtype"), q.get("step"), q.get("view")], ["fp16", "4", "full"]);
  assert.deepEqual(
    win.written.map(([kind]) => kind),
    ["replace"],
  ); // no history entry per step
  win.history.pushState(null, "", "/attention?dtype=bf16"); // the page writes its own URL (a rerun)
  assert.equal(new URL(win.location.href).searchParams.get("step"), "4");
  sync.detach();
  win.history.pushState(null, "", "/attention?dtype=fp32");
  assert.equal(new URL(win.location.href).searchParams.get("step"), null); // let go
});

test("a URL opening another stop of the tour gets none of this stop's place; the same stop's URLs keep it", () => {
  const { win, sync, store } = synced("http://h/attention?tour=3&dtype=bf16");
  sync.attach();
  store().move({ pos: 5 });
  sync.write();
  assert.equal(new URL(win.location.href).searchParams.get("step"), "5");
  win.history.pushState(null, "", "/attention?tour=3&dtype=fp16"); // the sidebar, within the stop
  assert.equal(new URL(win.location.href).searchParams.get("step"), "5");
  win.history.pushState(null, "", "/attention?tour=4&dtype=fp16"); // Next: a think-first stop that asks first
  assert.equal(new URL(win.location.href).searchParams.get("step"), null);
  sync.write(); // the stepper, still in the page until the run ends, writes nothing into it either
  assert.equal(new URL(win.location.href).searchParams.get("step"), null);
  sync.claimStop(); // drawn again for stop 4 (revealed): its place is this stop's now
  sync.write();
  assert.equal(new URL(win.location.href).searchParams.get("step"), "5");
  sync.detach();
});

test("the saved place comes back in the same tab; Copy link drops this browser's role in a class", () => {
  const first = synced("http://h/attention?present=1");
  first.sync.attach();
  first.store().move({ pos: 2 });
  first.sync.save();
  const link = new URL(first.sync.link());
  assert.deepEqual([link.searchParams.get("step"), link.searchParams.get("lang")], ["2", "en"]);
  assert.equal(link.searchParams.has("present"), false);
  first.sync.detach();
});

test("embedded: the URL is neither read nor written", () => {
  const { win, sync, store } = synced("http://h/notebook?step=5", { embedded: 1 });
  assert.equal(store().place.pos, 0);
  sync.attach();
  store().move({ by: 1 });
  sync.write();
  sync.detach();
  assert.deepEqual(win.written, []);
});

test("coming Back to the lesson after the page dropped the stepper's keys, the saved place is in the URL again", () => {
  const shared = { history: null, active: null, loaded: false };
  const win = fakeWindow("http://h/?dtype=fp16");
  const app = window.document.createElement("div");
  window.document.body.append(app);
  const reader = new BundleReader(BUNDLE);
  const open = () => {
    let store = null;
    const sync = new UrlSync(readMeta({ key: "k", locale: "en" }), () => store, app, { page: shared, win });
    store = new PlaceStore(reader, sync.restore(reader));
    sync.attach();
    sync.showRestored();
    return { sync, store: () => store };
  };
  const first = open();
  first.store().move({ pos: 1 });
  first.sync.save();
  first.sync.detach(); // another page
  win.history.replaceState(null, "", "/?dtype=fp16"); // Back: Streamlit writes the lesson's URL before it is drawn
  const again = open();
  assert.equal(again.store().place.pos, 1);
  assert.equal(new URL(win.location.href).searchParams.get("step"), "1");
  again.sync.detach();
});
