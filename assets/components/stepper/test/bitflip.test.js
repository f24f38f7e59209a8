// The formats page's bit flipper (assets/components/bitflip/bitflip.js): drawn from data with text only, one button
// per bit reporting a flip, and the keyboard kept on the flipped bit when the rerun draws the new pattern.
import assert from "node:assert/strict";
import { test } from "node:test";
import { window } from "./dom-env.js";

globalThis.CSS ??= window.CSS ?? { escape: (s) => String(s).replace(/["\\]/g, "\\$&") };
const { default: bitFlipper, inline } = await import("../../bitflip/bitflip.js");
const doc = window.document;

function data(mantissa, line = "= **`0.5`** · normal") {
  return {
    formats: [
      {
        short: "e4m3",
        name: "float8_e4m3fn",
        badge: ["#7b1fa2", "#ffffff"],
        emulated: null,
        line,
        fields: [
          { field: "sign", label: "sign", color: "#C2185B", ink: "#fff", bits: [[7, 0]] },
          { field: "mantissa", label: "mantissa", color: "#33691E", ink: "#fff", bits: mantissa },
        ],
      },
    ],
    words: { bit: "{field} bit {position}" },
  };
}

function mount() {
  const hostElement = doc.createElement("div");
  doc.body.append(hostElement);
  const parentElement = hostElement.attachShadow({ mode: "open" }); // isolated styles: Streamlit mounts it so
  const flips = [];
  const component = { parentElement, setTriggerValue: (name, value) => flips.push([name, value]) };
  return { parentElement, flips, draw: (d) => bitFlipper({ ...component, data: d }) };
}

test("every bit is a labelled toggle button; a click reports the flip", () => {
  const { parentElement, flips, draw } = mount();
  draw(
    data([
      [2, 1],
      [1, 0],
      [0, 0],
    ]),
  );
  const bits = [...parentElement.querySelectorAll("button.bit")];
  assert.deepEqual(
    bits.map((b) => [b.textContent, b.getAttribute("aria-pressed")]),
    [
      ["0", "false"],
      ["1", "true"],
      ["0", "false"],
      ["0", "false"],
    ],
  );
  assert.equal(bits[1].getAttribute("aria-label"), "1, float8_e4m3fn: mantissa bit 2");
  bits[1].click();
  assert.deepEqual(flips, [["flip", { short: "e4m3", position: 2 }]]);
});

test("the flipped bit keeps the keyboard when the new pattern is drawn", () => {
  const { parentElement, draw } = mount();
  draw(
    data([
      [2, 1],
      [1, 0],
      [0, 0],
    ]),
  );
  const bit = parentElement.querySelector("button.bit[data-position='1']");
  bit.focus();
  bit.click();
  draw(
    data([
      [2, 1],
      [1, 1],
      [0, 0],
    ]),
  );
  assert.equal(parentElement.querySelectorAll("button.bit").length, 4); // drawn anew, in place …
  const now = parentElement.activeElement;
  assert.notEqual(now, bit);
  assert.equal(now.dataset.position, "1"); // … and the same bit focused again, showing its new state
  assert.equal(now.getAttribute("aria-pressed"), "true");
});

test("markdown in a line becomes elements; markup in text stays text", () => {
  const box = doc.createElement("p");
  box.append(inline("= **`<img src=x onerror=alert(1)>`** · *emulates* <b>x</b>"));
  assert.equal(box.querySelector("strong code").textContent, "<img src=x onerror=alert(1)>");
  assert.equal(box.querySelector("em").textContent, "emulates");
  assert.equal(box.querySelector("img, b"), null);
  assert.ok(box.textContent.endsWith("<b>x</b>"));
});
