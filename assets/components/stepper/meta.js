// The payload's "meta": how this mount of the stepper behaves. Its one definition is the JSON Schema
// mpviz/contracts/stepper_meta.schema.json, which mpviz/presentation/stepper_payload.py builds to; only the fields it declares
// are read here (test/contracts.test.js holds both sides to it).
import META from "../../../mpviz/contracts/stepper_meta.schema.json" with { type: "json" };

/**
 * @typedef {object} Meta
 * @property {string} key the component's key (its saved place in sessionStorage)
 * @property {string} locale the words' language
 * @property {number} scale the component's --mpv-scale (1 unless presenter mode)
 * @property {boolean} publish presenter mode: send the place to Python, lay out for a projector
 * @property {{events: number, chunk: number} | null} stream a streamed run: the bundle is its head, and the stepper
 *   asks the host for the other chunks of events
 * @property {boolean} embedded one output among others on a page the stepper does not own (a notebook)
 */

/** The fields the contract declares. */
export const META_FIELDS = Object.keys(META.properties);

/**
 * `raw` (the payload's meta, possibly absent) read field by field, with the contract's defaults.
 * @returns {Meta}
 */
export function readMeta(raw) {
  const m = Object.fromEntries(META_FIELDS.map((k) => [k, raw?.[k]]));
  return {
    key: typeof m.key === "string" && m.key ? m.key : "stepper",
    locale: typeof m.locale === "string" && m.locale ? m.locale : "en",
    scale: Number(m.scale) > 0 ? Number(m.scale) : 1,
    publish: Boolean(m.publish),
    stream: readStream(m.stream),
    embedded: Boolean(m.embedded),
  };
}

function readStream(raw) {
  const events = Number(raw?.events);
  const chunk = Number(raw?.chunk);
  return Number.isInteger(events) && events > 0 && Number.isInteger(chunk) && chunk > 0 ? { events, chunk } : null;
}
