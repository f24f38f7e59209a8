// The adapter between the stepper and the page's history API.
// Streamlit rewrites the whole query string from the server's copy after a rerun (e.g. the sidebar changed the
// device), and the server never hears of the step we keep in the URL without a rerun. So, once per page, this
// wraps pushState / replaceState: a URL written for the page the active stepper lives on gets the stepper's own
// keys merged back in. The wrapping lives here only; the stepper claims and releases it, and writes its own URLs
// through `replace` (the unwrapped original), so it never merges into itself.

/** @typedef {{mergeUrl: (url: string | URL | null | undefined) => string | URL | null | undefined}} UrlOwner */

export class HistoryAdapter {
  /**
   * @param {object} registry the page-wide registry (survives Streamlit re-evaluating the module); holds the
   *   originals and the active owner, so a page is wrapped once however often the module runs
   * @param {History} history the page's history object
   */
  constructor(registry, history) {
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
