// The adapter between the stepper and the page's history API.
// Streamlit rewrites the whole query string from the server's copy after a rerun (e.g. the sidebar changed the
// device), and the server never hears of the step we keep in the URL without a rerun. So, once per page, this
// wraps pushState / replaceState: a URL written for the page the active stepper lives on gets the stepper's own
// keys merged back in. The wrapping lives here only; the stepper claims and releases it, and writes its own URLs
// through `replace` (the unwrapped original), so it never merges into itself.
// A push of the URL already shown (the same path and keys in any order, the stepper's own keys aside) keeps the
// entry as it is: leaving the lesson, Streamlit pushes the lesson's URL without our keys (the stepper has already
// let go) before it pushes the next page's, and that entry, the same view again, would cost the reader a Back. For
// the same reason a push that only fills in the query of a page just opened (its bare path) replaces it.

import { LEGACY_EL, PARAMS } from "./place.js";

const PLACE_KEYS = [...PARAMS, ...LEGACY_EL]; // the stepper's own keys in a URL

/** @typedef {{mergeUrl: (url: string | URL | null | undefined) => string | URL | null | undefined}} UrlOwner */

export class HistoryAdapter {
  /**
   * @param {object} registry the page-wide registry (survives Streamlit re-evaluating the module); holds the
   *   originals and the active owner, so a page is wrapped once however often the module runs
   * @param {History} history the page's history object
   * @param {{href: string}} [here] the page's location (what a push is compared with)
   */
  constructor(registry, history, here = globalThis.location) {
    this.registry = registry;
    this.history = history;
    if (!registry.history) {
      const original = { push: history.pushState.bind(history), replace: history.replaceState.bind(history) };
      registry.history = original;
      for (const [name, write] of [
        ["pushState", original.push],
        ["replaceState", original.replace],
      ]) {
        history[name] = (state, unused, url) => {
          let merged;
          try {
            merged = registry.active?.mergeUrl(url) ?? url;
          } catch {
            merged = url; // never break navigation
          }
          if (name === "pushState" && here) {
            // the same view again, or its query filled in: no entry of its own (see the top of this file)
            if (sameUrl(merged, here.href, PLACE_KEYS)) return original.replace(state, unused, here.href);
            if (queryFilledIn(merged, here.href)) return original.replace(state, unused, merged);
          }
          return write(state, unused, merged);
        };
      }
    }
  }

  /** @param {UrlOwner} owner the stepper whose keys every URL of its page keeps, until it releases */
  claim(owner) {
    this.registry.active = owner;
  }

  /** @param {UrlOwner} owner */
  release(owner) {
    if (this.registry.active === owner) this.registry.active = null;
  }

  /** Write a URL as is (the unwrapped replaceState). */
  replace(url) {
    this.registry.history.replace(this.history.state, "", url);
  }
}

/**
 * Whether `url` is the page `current` shows, which has no query yet, with its query filled in. Opening a page,
 * Streamlit pushes its path, then (a slow server: as a second push) the same path with the query its run wrote;
 * the second is the same view, and as an entry of its own it would cost the reader a Back.
 */
export function queryFilledIn(url, current) {
  const [a, b] = both(url, current);
  return a !== null && a.origin === b.origin && a.pathname === b.pathname && b.search === "" && a.search !== "";
}

/**
 * Whether two URLs name the same page and query: origin, path, hash, the same keys and values in any order.
 * @param {string[]} [ignored] keys left out of the comparison
 */
export function sameUrl(url, current, ignored = []) {
  const [a, b] = both(url, current);
  if (a === null) return false;
  const query = (u) =>
    [...u.searchParams]
      .filter(([k]) => !ignored.includes(k))
      .map(([k, v]) => `${k}=${v}`)
      .sort()
      .join("&");
  return a.origin === b.origin && a.pathname === b.pathname && a.hash === b.hash && query(a) === query(b);
}

/** `url` (maybe relative) and `current` parsed, or [null, null] when either is missing or not a URL. */
function both(url, current) {
  if (url == null) return [null, null];
  try {
    return [new URL(url, current), new URL(current)];
  } catch {
    return [null, null];
  }
}
