// The payload's meta read by the contract's fields only, with its defaults.
import assert from "node:assert/strict";
import { test } from "node:test";
import { META_FIELDS, readMeta } from "../meta.js";

test("defaults, flags and scale; fields the contract does not declare are never read", () => {
  assert.deepEqual(readMeta(undefined), {
    key: "stepper",
    locale: "en",
    scale: 1,
    publish: false,
    stream: null,
    embedded: false,
  });
  const read = new Set();
  const raw = new Proxy(
    { key: "k", locale: "zh", scale: 1.25, publish: 1, stream: { events: 600, chunk: 256 }, embedded: 1, stray: 1 },
    { get: (t, p) => (read.add(p), t[p]) },
  );
  assert.deepEqual(readMeta(raw), {
    key: "k",
    locale: "zh",
    scale: 1.25,
    publish: true,
    stream: { events: 600, chunk: 256 },
    embedded: true,
  });
  assert.deepEqual([...read].sort(), [...META_FIELDS].sort());
  assert.equal(readMeta({ key: "k", locale: "en", scale: -2 }).scale, 1);
  assert.equal(readMeta({ stream: { events: 0, chunk: 256 } }).stream, null);
  assert.equal(readMeta({ stream: { events: "600", chunk: 2.5 } }).stream, null);
});
