import assert from "node:assert/strict";
import { test } from "node:test";
import { b64, sameBytes } from "../bytes.js";
import { fmtExact, fmtSig, num, pow2Text } from "../numbers.js";

test("bundle numbers: strings for the non-finite", () => {
  assert.equal(num("inf"), Infinity);
  assert.equal(num("-inf"), -Infinity);
  assert.ok(Number.isNaN(num("nan")));
  assert.equal(num(null), null);
  assert.equal(num(2.5), 2.5);
});

test("text: significant digits, exact values, typographic minus", () => {
  assert.equal(fmtSig(0.000123456), "1.235e−4");
  assert.equal(fmtSig(3.14159), "3.142");
  assert.equal(fmtSig("-inf"), "−inf");
  assert.equal(fmtSig(-0), "−0");
  assert.equal(fmtSig(null), "—");
  assert.equal(fmtExact(-0.1), "−0.1");
  assert.equal(fmtExact(NaN), "NaN");
  assert.equal(pow2Text(-7), "2^−7");
});

test("bytes", () => {
  assert.deepEqual([...b64("AQID")], [1, 2, 3]);
  assert.ok(sameBytes(new Uint8Array([1, 2]), new Uint8Array([1, 2])));
  assert.ok(!sameBytes(new Uint8Array([1, 2]), new Uint8Array([1, 3])));
  assert.ok(!sameBytes("a", "a"));
});
