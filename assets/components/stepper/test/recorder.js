// The stepper's reads of the bundle, checked against the bundle's one schema (mpviz/contracts/bundle.schema.json,
// which tests/test_stepper.py validates Python's bundles against): a Proxy around the bundle that follows each read
// down the schema and notes every field it does not declare.

import SCHEMA from "../../../../mpviz/contracts/bundle.schema.json" with { type: "json" };

// a JSON Schema → {kind: "union" | "array" | "map" | "object" | "ref" | "any" | "primitive", ...}
function parseType(s) {
  if (s.$ref) return { kind: "ref", name: s.$ref.replace("#/$defs/", "") };
  if (s.anyOf) return { kind: "union", of: s.anyOf.map(parseType) };
  if (s.type === "array") return { kind: "array", items: parseType(s.items) };
  if (s.type === "object" && s.properties)
    return {
      kind: "object",
      open: s.additionalProperties !== false,
      props: new Map(Object.entries(s.properties).map(([k, v]) => [k, parseType(v)])),
    };
  if (s.type === "object") return { kind: "map", values: parseType(s.additionalProperties ?? {}) };
  if ("const" in s || ["number", "string", "boolean", "null"].includes(s.type)) return { kind: "primitive" };
  return { kind: "any" };
}

/** The schema's definitions: name → parsed type. */
export function readSchema() {
  return new Map(Object.entries(SCHEMA.$defs).map(([name, s]) => [name, parseType(s)]));
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
