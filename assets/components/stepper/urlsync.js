// The place outside the stepper: in the page's URL (a link reproduces the view) and in sessionStorage (a remount or
// a later visit in the same tab finds it again). URL writes are coalesced while a key is held down and written
// with the unwrapped replaceState (history.js), so the page's history gets no entry per step; every URL the page
// itself writes for the stepper's page gets the stepper's keys merged back in while this sync is attached.
// An embedded stepper (a notebook) neither reads nor writes the page's URL. Its place belongs to the guided lesson's
// stop it was drawn for: a URL that opens another stop (a think-first stop, which asks before its page runs and
// removes the stepper) gets none of the previous stop's place.
import { HistoryAdapter } from "./history.js";
import { hasPlace, mergePlace, restorePlace, savedPlace, sharedLink, stopOf } from "./place.js";

const URL_WRITE_MS = 150; // coalesce URL writes while a key is held down
// One per page (this module is evaluated once per page): the history wrapping, its active owner, and whether a
// stepper has loaded yet (the first one of a page load trusts its URL: a shared link).
const PAGE = { history: null, active: null, loaded: false };

export class UrlSync {
  /**
   * @param {import("./meta.js").Meta} meta
   * @param {() => import("./store.js").PlaceStore} store the place's store (null until the first run has loaded)
   * @param {Element} app the stepper's element (a URL is merged only while it is in the page)
   * @param {{onWrite?: () => void, page?: object, win?: Window}} [opts] onWrite: after each URL write (publishing)
   */
  constructor(meta, store, app, { onWrite = () => {}, page = PAGE, win = globalThis } = {}) {
    this.meta = meta;
    this.store = store;
    this.app = app;
    this.onWrite = onWrite;
    this.page = page;
    this.win = win;
    this.timer = null;
    this.path = null;
    this.history = null; // the page's HistoryAdapter, made on first attach (an embedded stepper never wraps)
    this.stop = null; // the guided lesson's stop the place belongs to (null outside the tour)
    this.fromSaved = false; // the place came back from this tab's storage, not from the URL
  }

  /** The place belongs to the view the page shows now (each run the stepper is drawn in). */
  claimStop() {
    this.stop = stopOf(this.win.location.href);
  }

  storeKey() {
    return `mpviz.stepper.${this.meta.key}`;
  }

  /** The place to start from: the URL's keys (a shared link), else what this tab saved. */
  restore(reader) {
    let saved;
    try {
      saved = JSON.parse(this.win.sessionStorage.getItem(this.storeKey()) || "null");
    } catch {
      saved = null;
    }
    const later = this.page.loaded;
    this.page.loaded = true;
    const query = this.meta.embedded ? new URLSearchParams() : new URLSearchParams(this.win.location.search);
    this.fromSaved = Boolean(saved) && !hasPlace(query);
    return restorePlace(query, saved, reader, later);
  }

  /** A place read back from this tab is written into the URL again: coming Back to the lesson, the page may have
   * rewritten its URL without the stepper's keys before this stepper was drawn. */
  showRestored() {
    if (this.fromSaved) this.write();
    this.fromSaved = false;
  }

  /** Keep the place in sessionStorage now, in the URL shortly. */
  save() {
    const state = savedPlace(this.store().place, this.store().event(), this.store().reader.sig);
    try {
      this.win.sessionStorage.setItem(this.storeKey(), JSON.stringify(state));
    } catch {
      /* storage off: URL only */
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.write(), URL_WRITE_MS);
  }

  /** Write the place into the URL now (a pending write is done). */
  write() {
    clearTimeout(this.timer);
    if (this.meta.embedded) return; // one output among others on a page that is not ours (a notebook)
    const href = this.win.location.href;
    const next = this.mergeUrl(href);
    if (next !== href) this.history.replace(next);
    this.onWrite();
  }

  // `url` with the stepper's keys set to its current place, if it is a URL of the page the stepper lives on; any
  // other URL unchanged (the history adapter calls this for every URL the page writes)
  mergeUrl(url) {
    if (url == null || !this.path || !this.store() || !this.app.isConnected) return url;
    if (new URL(url, this.win.location.href).pathname !== this.path) return url;
    if (stopOf(url, this.win.location.href) !== this.stop) return url; // another stop of the tour: not our place
    return mergePlace(url, this.win.location.href, this.store().place, Boolean(this.store().reader.probs()));
  }

  /** The link "Copy link" hands out (the place written first). */
  link() {
    this.write();
    return sharedLink(this.win.location.href, this.meta.locale);
  }

  /** The page the stepper is on now owns the URL's stepper keys (back on it after a detach: they are written). */
  attach() {
    this.path = this.win.location.pathname;
    this.claimStop();
    if (this.meta.embedded) return;
    const back = this.history !== null;
    this.history ??= new HistoryAdapter(this.page, this.win.history, this.win.location);
    this.history.claim(this);
    if (back) this.write();
  }

  /** Write what is pending and let go of the page's URLs. */
  detach() {
    if (!this.path) return;
    this.write();
    this.history?.release(this);
    this.path = null;
  }
}
