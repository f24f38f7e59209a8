// The node tests' data: fixtures/payload.json, the exact payload mpviz/app/stepper.py sends for a small CPU bf16 run
// (rewrite it with `python -m tests.test_stepper`; tests/test_stepper.py checks it against the schema).

import { readFileSync } from "node:fs";

export const PAYLOAD_BYTES = readFileSync(new URL("./fixtures/payload.json", import.meta.url));
export const PAYLOAD = JSON.parse(PAYLOAD_BYTES.toString("utf8"));
export const BUNDLE = PAYLOAD.bundle;
