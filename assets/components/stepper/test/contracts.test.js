// The Python↔JS contracts (mpviz/contracts/, read by Python too: tests/test_stepper.py): the stepper takes its URL
// keys, personal keys, meta fields and bundle schema from those files and nowhere else, and the payload Python sent
// (the fixture) keeps to them.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import PERSONAL from "../../../../mpviz/contracts/personal_keys.json" with { type: "json" };
import KEYS from "../../../../mpviz/contracts/stepper_keys.json" with { type: "json" };
import META from "../../../../mpviz/contracts/stepper_meta.schema.json" with { type: "json" };
import { META_FIELDS } from "../meta.js";
import { LEGACY_EL, PARAMS, PERSONAL as PERSONAL_JS, PHASES, VIEWS } from "../place.js";
import { PAYLOAD } from "./fixture.js";
import { readSchema } from "./recorder.js";

const here = (name) => readFileSync(new URL(`../${name}`, import.meta.url), "utf8");

test("the URL keys, views and phases are the contract's lists, not copies", () => {
  assert.equal(PARAMS, KEYS.place);
  assert.equal(LEGACY_EL, KEYS.legacy_element);
  assert.equal(VIEWS, KEYS.views);
  assert.equal(PHASES, KEYS.phases);
  assert.equal(PERSONAL_JS, PERSONAL);
  for (const name of ["place.js", "history.js", "urlsync.js", "store.js"])
    assert.doesNotMatch(
      here(name),
      /\[\s*"(step|present)"|\[\s*"story",\s*"full"|\[\s*"all",\s*"forward"/,
      `${name} lists keys of its own`,
    );
});

test("the payload's meta keeps to its schema, and the stepper reads exactly the schema's fields", () => {
  assert.deepEqual(META_FIELDS, Object.keys(META.properties));
  const meta = PAYLOAD.meta;
  for (const k of META.required) assert.ok(k in meta, k);
  for (const k of Object.keys(meta)) assert.ok(k in META.properties, `meta.${k} is not in the contract`);
  assert.deepEqual(Object.keys(PAYLOAD).sort(), ["bundle", "meta", "style", "text"]);
});

test("the bundle schema defines every type it refers to, and the fixture's bundle has its required fields", () => {
  const defs = readSchema();
  const refs = JSON.stringify(
    Object.fromEntries(
      [...defs].map(([k, v]) => [k, v]),
      (_k, v) => (v instanceof Map ? Object.fromEntries(v) : v),
    ),
  );
  for (const [, name] of refs.matchAll(/"name":"(\w+)"/g)) assert.ok(defs.has(name), name);
  for (const [k] of defs.get("Bundle").props) assert.ok(k in PAYLOAD.bundle, k);
});
