// Bits of a value in any binary floating-point format, from the layout the bundle carries (bundle.formats[dtype]).
// Mirrors mpviz.formats.encode (round to nearest, ties to even; overflow → inf, else NaN, else ±max), exactly:
// integer arithmetic on BigInt, so float64 itself and every narrower format come out bit for bit.
// A pure module (no DOM): unit-tested under node (test/floatbits.test.js) and against Python in Chromium.

const FB_TWO = 2n;

// A bundle format entry → the layout this file works with. Fields the engine may not send yet are derived.
export function fbSpec(f) {
  const S = f.sign_bits,
    E = f.exponent_bits,
    M = f.mantissa_bits;
  const special = f.special_codes;
  const hasSub = f.has_subnormals;
  const top = (1n << BigInt(E + M)) - 1n;
  const skip = special === "ieee" ? 1n << BigInt(M) : special === "top_nan" ? 1n : 0n;
  return {
    name: f.name,
    short: f.short,
    bits: f.bits,
    S,
    E,
    M,
    bias: f.bias,
    hasInf: f.has_inf,
    hasNan: f.has_nan,
    hasSub,
    special,
    hasZero: f.has_zero ?? !(S === 0 && M === 0), // only an unsigned, mantissa-less format (e8m0) lacks zero
    hasNegZero: f.has_negative_zero ?? (S === 1 && special !== "negzero_nan"),
    emin: hasSub ? 1 - f.bias : -f.bias, // log2 of the smallest normal
    signBit: S ? 1n << BigInt(E + M) : 0n,
    maxMag: top - skip, // largest finite pattern with the sign clear
  };
}

// Exact |x| of a finite double as n · 2^q (n a BigInt ≥ 0).
function fbDecompose(x) {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, x);
  const hi = dv.getUint32(0),
    lo = dv.getUint32(4);
  const e = (hi >>> 20) & 0x7ff;
  const frac = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  return e === 0 ? { n: frac, q: -1074 } : { n: frac | (1n << 52n), q: e - 1075 };
}

function fbBitLength(n) {
  return n === 0n ? 0 : n.toString(2).length;
}

function fbNanCode(sp, negative) {
  const s = negative ? sp.signBit : 0n;
  const M = BigInt(sp.M);
  if (sp.special === "ieee") return s | (((1n << BigInt(sp.E)) - 1n) << M) | (1n << (M - 1n));
  if (sp.special === "top_nan") return s | ((1n << BigInt(sp.E + sp.M)) - 1n);
  return sp.signBit; // negzero_nan: the pattern -0 would have
}

function fbOverflowCode(sp, negative) {
  const s = negative ? sp.signBit : 0n;
  if (sp.hasInf) return s | (((1n << BigInt(sp.E)) - 1n) << BigInt(sp.M));
  if (sp.hasNan) return fbNanCode(sp, negative);
  return s | sp.maxMag; // no inf, no NaN: saturate
}

// Round a > 0 (= n · 2^q) to nearest-even with an unbounded exponent → magnitude pattern (may exceed maxMag).
function fbRoundMagnitude(sp, n, q) {
  const M = sp.M;
  const e = fbBitLength(n) - 1 + q; // floor(log2 a)
  let qexp = Math.max(e, sp.emin) - M; // the quantum at a: 2^qexp
  // t = a / 2^qexp = N / D exactly
  let N = n,
    D = 1n;
  if (q - qexp >= 0) N = n << BigInt(q - qexp);
  else D = 1n << BigInt(qexp - q);
  let lo = N / D;
  if (!sp.hasSub && e < sp.emin) lo = 0n; // nothing between 0 and the smallest normal
  const hi = lo === 0n && !sp.hasSub ? 1n << BigInt(M) : lo + 1n;
  let k;
  if (N === lo * D) k = lo;
  else {
    const twice = FB_TWO * N,
      mid = (lo + hi) * D;
    k = twice < mid || (twice === mid && lo % FB_TWO === 0n) ? lo : hi;
  }
  if (k === 0n && !sp.hasZero) k = 1n << BigInt(M);
  if (k === 0n) return 0n;
  if (k === 1n << BigInt(M + 1)) {
    k >>= 1n;
    qexp += 1;
  } // carried into the next binade
  if (k < 1n << BigInt(M)) return k; // subnormal
  return (BigInt(qexp + M + sp.bias) << BigInt(M)) | (k - (1n << BigInt(M)));
}

// x (a JS number) stored in the format → its bit pattern (BigInt).
export function fbEncode(x, sp) {
  const negative = x < 0 || Object.is(x, -0);
  const s = negative ? sp.signBit : 0n;
  if (!sp.S && negative && !Number.isNaN(x)) return fbNanCode(sp, false); // unsigned format: invalid
  if (Number.isNaN(x)) return sp.hasNan ? fbNanCode(sp, false) : 0n;
  if (!Number.isFinite(x)) return fbOverflowCode(sp, negative);
  if (x === 0) {
    if (!sp.hasZero) return fbNanCode(sp, false);
    return sp.hasNegZero ? s : 0n;
  }
  const { n, q } = fbDecompose(Math.abs(x));
  const mag = fbRoundMagnitude(sp, n, q);
  if (mag > sp.maxMag) return fbOverflowCode(sp, negative);
  if (mag === 0n) return sp.hasNegZero ? s : 0n;
  return s | mag;
}

export function fbSplit(sp, code) {
  const M = BigInt(sp.M),
    E = BigInt(sp.E);
  return {
    sign: sp.S ? Number((code >> (E + M)) & 1n) : 0,
    e: Number((code >> M) & ((1n << E) - 1n)),
    m: code & ((1n << M) - 1n),
  };
}

export function fbClassify(sp, sign, e, m) {
  const top = 2 ** sp.E - 1;
  if (sp.special === "ieee" && e === top) return m === 0n ? "inf" : "nan";
  if (sp.special === "top_nan" && e === top && m === (1n << BigInt(sp.M)) - 1n) return "nan";
  if (sp.special === "negzero_nan" && sign && e === 0 && m === 0n) return "nan";
  if (e === 0 && sp.hasSub) return m === 0n ? "zero" : "subnormal";
  return "normal";
}

// m · 2^k as a double, exactly where the result is representable (split the scaling to avoid 2^k underflow).
function fbScale(m, k) {
  let v = Number(m);
  while (k < -1000) {
    v *= 2 ** -1000;
    k += 1000;
  }
  while (k > 1000) {
    v *= 2 ** 1000;
    k -= 1000;
  }
  return v * 2 ** k;
}

export function fbValue(sp, code) {
  const { sign, e, m } = fbSplit(sp, code);
  const cls = fbClassify(sp, sign, e, m);
  if (cls === "nan") return NaN;
  let mag;
  if (cls === "inf") mag = Infinity;
  else if (cls === "zero" || cls === "subnormal") mag = fbScale(m, 1 - sp.bias - sp.M);
  else mag = fbScale((1n << BigInt(sp.M)) | m, e - sp.bias - sp.M);
  return sign ? -mag : mag;
}

// The next representable value `step` (±1) patterns away in value order; null past the ends or from NaN.
export function fbNeighbour(sp, code, step) {
  const top = sp.maxMag + (sp.hasInf ? 1n : 0n);
  const lo = sp.S ? -top : 0n;
  const neg = sp.S && (code & sp.signBit) !== 0n;
  const mag = sp.S ? code & (sp.signBit - 1n) : code;
  const ordinal = (neg ? -mag : mag) + BigInt(step);
  if (ordinal < lo || ordinal > top) return null;
  const next = ordinal < 0n ? sp.signBit | -ordinal : ordinal;
  const v = fbValue(sp, next);
  return Number.isNaN(v) ? null : v;
}

// Everything the bits panel shows about x stored in the format.
export function fbDescribe(x, sp) {
  const code = fbEncode(x, sp);
  const { sign, e, m } = fbSplit(sp, code);
  const cls = fbClassify(sp, sign, e, m);
  const value = fbValue(sp, code);
  const bits = code.toString(2).padStart(sp.bits, "0");
  let ulp = NaN; // the spacing of the binade holding the value, read from the pattern's exponent
  if (cls === "normal") ulp = fbScale(1n, e - sp.bias - sp.M);
  else if (cls === "subnormal" || cls === "zero") ulp = fbScale(1n, sp.emin - sp.M);
  return {
    format: sp.name,
    value,
    bits,
    code,
    cls,
    sign,
    exponentBits: bits.slice(sp.S, sp.S + sp.E),
    mantissaBits: bits.slice(sp.S + sp.E),
    exponentRaw: e,
    exponentUnbiased: cls === "normal" ? e - sp.bias : cls === "subnormal" ? sp.emin : null,
    mantissa: m,
    ulp,
    nextUp: cls === "nan" ? null : fbNeighbour(sp, code, +1),
    nextDown: cls === "nan" ? null : fbNeighbour(sp, code, -1),
  };
}
