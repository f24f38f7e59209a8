// Small helpers with no state: DOM and SVG element builders (attributes, never HTML strings), bundle numbers and
// their text, bytes.
// Plain script (no imports/exports): view/stepper.py concatenates it, in SCRIPTS order, before stepper.js.

// ── elements ───────────────────────────────────────────────────────────────────────────────────────────────
const SVGNS = "http://www.w3.org/2000/svg";

function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false) el.append(k);
  return el;
}

function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVGNS, tag);
  setAttrs(el, attrs);
  for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false) el.append(k);
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
}


// ── numbers ───────────────────────────────────────────────────────────────────────────────────────────────
function num(x) {  // bundle numbers: finite floats, or "inf" / "-inf" / "nan"
  if (typeof x === "number") return x;
  if (x === "inf") return Infinity;
  if (x === "-inf") return -Infinity;
  if (x === "nan") return NaN;
  return x === null || x === undefined ? null : Number(x);
}

function fmtSig(x, digits = 4) {
  x = num(x);
  if (x === null) return "—";
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "+inf";
  if (x === -Infinity) return "−inf";
  if (x === 0) return Object.is(x, -0) ? "−0" : "0";
  const a = Math.abs(x);
  const t = a >= 1e5 || a < 1e-3 ? x.toExponential(digits - 1).replace(/\.?0+e/, "e") : String(+x.toPrecision(digits));
  return t.replace("-", "−");
}

function fmtExact(x) {  // the shortest decimal that is exactly this double (fp16/bf16/fp8 values are exact)
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "+inf";
  if (x === -Infinity) return "−inf";
  if (Object.is(x, -0)) return "−0";
  return String(x).replace("-", "−");
}

function pow2Text(k) {
  return `2^${k}`.replace("-", "−");
}

// ── bytes ──────────────────────────────────────────────────────────────────────────────────────────────────
function sameBytes(a, b) {
  if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

function b64(text) {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let k = 0; k < bin.length; k++) out[k] = bin.charCodeAt(k);
  return out;
}
