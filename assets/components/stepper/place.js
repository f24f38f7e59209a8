// The reader's place in the URL and in sessionStorage: reading a place back, and merging it into a URL. No DOM.
// The keys and values are the contracts mpviz/app/url.py and mpviz/app/page.py read too (mpviz/contracts/).
import PERSONAL_KEYS from "../../../mpviz/contracts/personal_keys.json" with { type: "json" };
import KEYS from "../../../mpviz/contracts/stepper_keys.json" with { type: "json" };

export const VIEWS = KEYS.views;
export const PHASES = KEYS.phases;
export const PARAMS = KEYS.place;
export const LEGACY_EL = KEYS.legacy_element;
// the guided lesson's stop: a URL naming another stop is another view (urlsync.js carries no place into it)
export const STOP = KEYS.stop;

/** The guided lesson's stop `url` names (relative to `base`), or null outside the tour. */
export function stopOf(url, base) {
  try {
    return new URL(url, base).searchParams.get(STOP);
  } catch {
    return null;
  }
}
// this browser's role in a class: never in a copied link
export const PERSONAL = PERSONAL_KEYS;

/**
 * The link "Copy link" hands out: this view's URL without this browser's role in a class (PERSONAL), and with the
 * language it is read in, so a reader whose browser speaks another language opens it as the sender saw it (README).
 * @param {string} href the page's URL (its place already written)
 * @param {string | undefined} lang the language the lesson is shown in
 */
export function sharedLink(href, lang) {
  const link = new URL(href);
  for (const k of PERSONAL) link.searchParams.delete(k);
  if (lang) link.searchParams.set("lang", lang);
  return link.toString();
}

/** @returns {import("./panel.js").Place} the start of a lesson */
export function freshPlace() {
  return { view: "story", phase: "all", pos: 0, head: 0, el: [0, 0, 0], explore: null };
}

// "3.1.4" (or the legacy em/er/ec keys) → [3, 1, 4], each a non-negative integer
export function parseEl(src) {
  const el = typeof src.el === "string" ? src.el.split(".") : LEGACY_EL.map((k) => src[k]);
  return [0, 1, 2].map((k) => Math.max(0, parseInt(el[k], 10) || 0));
}

/** Whether a query names a place (any of the stepper's keys). */
export function hasPlace(q) {
  return PARAMS.some((k) => q.has(k)) || LEGACY_EL.some((k) => q.has(k));
}

/**
 * The place to start from: the URL's keys when it has any (a shared link), else the saved place.
 * A later stepper in the same page load (a remount, or coming back to this page) may see a URL written for another
 * run; then the saved tensor wins.
 * @param {URLSearchParams} q the page's query
 * @param {object | null} saved what saveState stored for this stepper
 * @param {import("./bundle.js").BundleReader} reader this run
 * @param {boolean} later whether a stepper already loaded in this page
 */
export function restorePlace(q, saved, reader, later) {
  const fromUrl = hasPlace(q);
  const place = freshPlace();
  const src = fromUrl ? Object.fromEntries(q) : saved || {};
  if (VIEWS.includes(src.view)) place.view = src.view;
  if (PHASES.includes(src.phase)) place.phase = src.phase;
  place.head = Math.max(0, parseInt(src.head, 10) || 0);
  place.el = parseEl(src);
  const step = Math.max(0, parseInt(src.step, 10) || 0);
  const stale =
    later &&
    saved &&
    saved.sig !== reader.sig &&
    saved.view === place.view &&
    saved.phase === place.phase &&
    String(saved.step) === String(src.step ?? "");
  place.pos = stale
    ? reader.positionOf(
        reader.matchEvent({ key: saved.key, i: saved.i, phase: saved.eventPhase }),
        place.view,
        place.phase,
      )
    : Math.min(step, reader.list(place.view, place.phase).length - 1);
  return place;
}

/** What sessionStorage keeps of a place: enough to find the same tensor in another run. */
export function savedPlace(place, e, sig) {
  return {
    view: place.view,
    phase: place.phase,
    step: place.pos,
    head: place.head,
    el: place.el.join("."),
    key: e.key,
    i: e.i,
    eventPhase: e.phase,
    sig,
  };
}

/** `url` with the place's keys set (and old element keys gone); `head` only when the run has a heatmap. */
export function mergePlace(url, base, place, withHead) {
  const u = new URL(url, base);
  const q = u.searchParams;
  q.set("step", String(place.pos));
  q.set("view", place.view);
  q.set("phase", place.phase);
  if (withHead) q.set("head", String(place.head));
  else q.delete("head");
  q.set("el", place.el.join("."));
  for (const k of LEGACY_EL) q.delete(k);
  return u.toString();
}
