// The stepper's reads of the bundle, checked against schema.js: the typedefs parsed (the same reading
// tests/test_stepper.py makes of them), and a Proxy around the bundle that follows each read down the types and
// notes every field the schema does not declare.

import { readFileSync } from "node:fs";

// split at `sep` where no (), <> or quotes enclose it
function splitTop(t, sep) {
  const parts = [];
  let depth = 0,
    quoted = false,
    start = 0;
  for (let k = 0; k < t.length; k++) {
    const ch = t[k];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && "(<".includes(ch)) depth++;
    else if (!quoted && ")>".includes(ch)) depth--;
    else if (!quoted && depth === 0 && t.startsWith(sep, k)) {
      parts.push(t.slice(start, k));
      start = k + sep.length;
    }
  }
  return [...parts, t.slice(start)].map((p) => p.trim());
}

// a JSDoc type → {kind: "union" | "array" | "map" | "ref" | "any" | "primitive", ...}
function parseType(t) {
  t = t.trim();
  const union = splitTop(t, "|");
  if (union.length > 1) return { kind: "union", of: union.map(parseType) };
  if (t.endsWith("[]")) return { kind: "array", items: parseType(t.slice(0, -2)) };
  if (t.startsWith("(") && t.endsWith(")")) return parseType(t.slice(1, -1));
  const map = t.match(/^Object<string, (.+)>$/);
  if (map) return { kind: "map", values: parseType(map[1]) };
  if (t === "*") return { kind: "any" };
  if (/^"|^(number|string|boolean|null)$/.test(t)) return { kind: "primitive" };
  return { kind: "ref", name: t };
}

/** schema.js's typedefs: name → {props: Map(name → type), open} or a plain type. */
export function readSchema() {
  const src = readFileSync(new URL("../schema.js", import.meta.url), "utf8");
  const defs = new Map();
  for (const [, block] of src.matchAll(/\/\*\*([\s\S]*?)\*\//g)) {
    const lines = block.split("\n").map((l) => l.trim().replace(/^\*\s?/, ""));
    const [, kind, name] = lines.find((l) => l.startsWith("@typedef")).match(/^@typedef \{(.+?)\} (\w+)/);
    const props = lines.filter((l) => l.startsWith("@property")).map((l) => l.match(/^@property \{(.+?)\} \[?(\w+)/));
    if (!props.length) defs.set(name, parseType(kind));
    else
      defs.set(name, {
        kind: "object",
        open: kind !== "object",
        props: new Map(props.map(([, t, p]) => [p, parseType(t)])),
      });
  }
  return defs;
}

/**
 * `value` wrapped so that every read is checked against `type`; undeclared reads go into `misses` as paths.
 * Reads the language makes on its own (Symbol keys, toJSON, array methods and length) are not the bundle's fields.
 */
export function recorded(value, type, defs, misses, path = "bundle") {
  const resolve = (t, v) => {
    while (t.kind === "ref" || t.kind === "union") {
      if (t.kind === "ref") t = defs.get(t.name);
      else t = t.of.find((u) => u.kind !== "primitive" && (u.kind !== "array" || Array.isArray(v))) ?? { kind: "any" };
    }
    return t;
  };
  const t = resolve(type, value);
  if (value === null || typeof value !== "object" || t.kind === "any" || t.kind === "primitive") return value;
  return new Proxy(value, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof prop === "symbol" || prop === "toJSON") return v;
      if (t.kind === "array") {
        return /^\d+$/.test(prop) ? recorded(v, t.items, defs, misses, `${path}[]`) : v;
      }
      if (t.kind === "map") return recorded(v, t.values, defs, misses, `${path}{}`);
      if (t.props.has(prop)) return recorded(v, t.props.get(prop), defs, misses, `${path}.${prop}`);
      if (!t.open && !(prop in Object.prototype)) misses.add(`${path}.${prop}`);
      return v;
    },
  });
}
