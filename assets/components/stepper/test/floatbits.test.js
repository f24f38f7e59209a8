import assert from "node:assert/strict";
import { test } from "node:test";
import { fbDescribe, fbEncode, fbSpec, fbValue } from "../floatbits.js";
import { BUNDLE } from "./fixture.js";

const bf16 = fbSpec(BUNDLE.formats.bfloat16);
const fp16 = fbSpec(BUNDLE.formats.float16);
const e4m3 = fbSpec(BUNDLE.formats.float8_e4m3fn);

test("1.0 and its neighbours in bf16 and fp16", () => {
  const d = fbDescribe(1, bf16);
  assert.equal(d.bits, "0011111110000000");
  assert.equal(d.cls, "normal");
  assert.equal(d.exponentUnbiased, 0);
  assert.equal(d.nextUp, 1 + 2 ** -7);
  assert.equal(d.nextDown, 1 - 2 ** -8);
  assert.equal(d.ulp, 2 ** -7);
  assert.equal(fbDescribe(1, fp16).bits, "0011110000000000");
});

test("round to nearest, ties to even", () => {
  assert.equal(fbValue(bf16, fbEncode(1 + 2 ** -8, bf16)), 1); // a tie: down to the even 1.0
  assert.equal(fbValue(bf16, fbEncode(1 + 3 * 2 ** -8, bf16)), 1 + 2 ** -6); // a tie: up to the even one
});

test("overflow follows the format: fp16 to inf, e4m3fn to NaN", () => {
  assert.equal(fbDescribe(65504, fp16).cls, "normal");
  assert.equal(fbDescribe(70000, fp16).cls, "inf");
  assert.equal(fbDescribe(448, e4m3).value, 448);
  assert.equal(fbDescribe(1000, e4m3).cls, "nan");
  assert.equal(fbDescribe(Infinity, e4m3).cls, "nan"); // no inf in e4m3fn
});

test("subnormals, signed zero and NaN", () => {
  const sub = fbDescribe(2 ** -24, fp16);
  assert.equal(sub.cls, "subnormal");
  assert.equal(sub.bits, "0000000000000001");
  assert.equal(sub.nextDown, 0);
  const negZero = fbDescribe(-0, bf16);
  assert.equal(negZero.bits, "1000000000000000");
  assert.ok(Object.is(negZero.value, -0));
  const nan = fbDescribe(NaN, bf16);
  assert.equal(nan.cls, "nan");
  assert.equal(nan.nextUp, null);
});
