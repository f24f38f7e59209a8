import assert from "node:assert/strict";
import { test } from "node:test";
import { BundleReader } from "../bundle.js";
import { HistoryAdapter, sameUrl } from "../history.js";
import { mergePlace, restorePlace, savedPlace, sharedLink } from "../place.js";
import { BUNDLE } from "./fixture.js";

const r = new BundleReader(BUNDLE);

test("a shared link's keys win over the saved place; bad values fall back", () => {
  const q = new URLSearchParams("step=3&view=full&phase=bogus&head=1&el=0.2.5");
  const p = restorePlace(q, { view: "story", step: 9 }, r, false);
  assert.deepEqual([p.view, p.phase, p.pos, p.head, p.el], ["full", "all", 3, 1, [0, 2, 5]]);
  const legacy = restorePlace(new URLSearchParams("em=1&er=2&ec=3"), null, r, false);
  assert.deepEqual(legacy.el, [1, 2, 3]);
});

test("a later stepper facing another run's URL keeps the saved tensor", () => {
  const e = BUNDLE.events[BUNDLE.landmarks.probs];
  const saved = { ...savedPlace({ view: "full", phase: "all", pos: 2, head: 0, el: [0, 0, 0] }, e, "another run") };
  const p = restorePlace(new URLSearchParams("step=2&view=full&phase=all"), saved, r, true);
  assert.equal(r.eventAt(p).i, e.i);
});

test("merging a place into a URL keeps the page's own keys and drops the legacy ones", () => {
  const place = { view: "story", phase: "backward", pos: 4, head: 1, el: [1, 2, 3] };
  const u = new URL(mergePlace("/attention?lang=zh&em=1", "http://h/", place, false));
  assert.deepEqual(Object.fromEntries(u.searchParams), {
    lang: "zh",
    step: "4",
    view: "story",
    phase: "backward",
    el: "1.2.3",
  });
  assert.equal(new URL(mergePlace("/a", "http://h/", place, true)).searchParams.get("head"), "1");
});

test("the history adapter wraps once, merges the active owner's keys, and lets go", () => {
  const written = [];
  const fake = {
    state: null,
    pushState: (s, u, url) => written.push(url),
    replaceState: (s, u, url) => written.push(url),
  };
  const registry = {};
  const a = new HistoryAdapter(registry, fake);
  const wrapped = fake.pushState;
  new HistoryAdapter(registry, fake); // the module evaluated again: no second wrapping
  assert.equal(fake.pushState, wrapped);
  const owner = { mergeUrl: (url) => `${url}&step=7` };
  a.claim(owner);
  fake.pushState(null, "", "/p?x=1");
  a.replace("/p?mine"); // the stepper's own writes go through unmerged
  a.release(owner);
  fake.replaceState(null, "", "/p?y=2");
  a.claim({
    mergeUrl: () => {
      throw new Error("broken");
    },
  });
  fake.pushState(null, "", "/p?z=3"); // a failing owner never breaks navigation
  assert.deepEqual(written, ["/p?x=1&step=7", "/p?mine", "/p?y=2", "/p?z=3"]);
});

test("a copied link drops this browser's role in a class and keeps the language", () => {
  const link = new URL(sharedLink("http://h/attention?present=1&room=K&follow=K&handover=T&step=3&dtype=fp16", "en"));
  for (const k of ["present", "room", "follow", "handover"]) assert.equal(link.searchParams.has(k), false, k);
  assert.equal(link.searchParams.get("step"), "3");
  assert.equal(link.searchParams.get("lang"), "en");
  assert.equal(new URL(sharedLink("http://h/?lang=zh&step=1", "zh")).searchParams.get("lang"), "zh");
});

test("a push of the URL already shown replaces it: Back never lands on the same view twice", () => {
  const written = [];
  const fake = {
    state: null,
    pushState: (s, u, url) => written.push(["push", url]),
    replaceState: (s, u, url) => written.push(["replace", url]),
  };
  const here = { href: "http://h/?step=1&view=story&dtype=fp16" };
  const a = new HistoryAdapter({}, fake, here);
  a.claim({ mergeUrl: (url) => (new URL(url, here.href).pathname === "/" ? `${url}&view=story&step=1` : url) });
  fake.pushState(null, "", "/?dtype=fp16"); // Streamlit's own URL for the page shown: the same keys once merged
  fake.pushState(null, "", "/?dtype=bf16"); // a changed run: a place to come back to
  fake.pushState(null, "", "/policy?dtype=fp16"); // another page
  a.release(a.registry.active); // leaving the lesson: the stepper has let go before Streamlit pushes its URL
  fake.pushState(null, "", "/?dtype=fp16");
  assert.deepEqual(written, [
    ["replace", here.href],
    ["push", "/?dtype=bf16&view=story&step=1"],
    ["push", "/policy?dtype=fp16"],
    ["replace", here.href], // the entry keeps the stepper's place
  ]);
  here.href = "http://h/policy"; // the next page, opened: its bare path first
  fake.pushState(null, "", "/policy?dtype=fp16"); // a slow server: its query pushed on its own
  fake.pushState(null, "", "/other?a=1");
  assert.deepEqual(written.slice(4), [
    ["replace", "/policy?dtype=fp16"], // the same view: one entry, so one Back leaves it
    ["push", "/other?a=1"],
  ]);
  assert.ok(sameUrl("/?b=2&a=1#x", "http://h/?a=1&b=2#x"));
  assert.ok(!sameUrl("/?a=1", "http://h/?a=1&b=2"));
  assert.ok(!sameUrl(null, "http://h/"));
  assert.ok(sameUrl("/?a=1", "http://h/?step=3&a=1", ["step"]));
});
