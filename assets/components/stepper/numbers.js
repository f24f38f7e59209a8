// Bundle numbers and their text: finite floats or "inf" / "-inf" / "nan"; minus signs typeset as U+2212.

export function num(x) {
  // bundle numbers: finite floats, or "inf" / "-inf" / "nan"
  if (typeof x === "number") return x;
  if (x === "inf") return Infinity;
  if (x === "-inf") return -Infinity;
  if (x === "nan") return NaN;
  return x === null || x === undefined ? null : Number(x);
}

export function fmtSig(x, digits = 4) {
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

export function fmtExact(x) {
  // the shortest decimal that is exactly this double (fp16/bf16/fp8 values are exact)
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "+inf";
  if (x === -Infinity) return "−inf";
  if (Object.is(x, -0)) return "−0";
  return String(x).replace("-", "−");
}

export function pow2Text(k) {
  return `2^${k}`.replace("-", "−");
}
