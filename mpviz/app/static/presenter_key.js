// The presenter key (mpviz/app/follow.py): the secret that makes this browser a room's presenter. It lives in this
// browser's localStorage only (a reload, a new tab, a page change keep it; another device has none) and goes to the
// server only as this component's state, over the presenter's own connection: never into a URL, a link or the page.
// data: {fresh: a new key the server made, used only if this browser holds none; adopt: a key handed over from
// another device (stored instead); code: the room the key holds now, kept beside it so that a presenter whose room
// ended is told which}. The component draws nothing and reports {key, code} once per change.

const STORE = "mpviz.presenter";
const SENT = (window[Symbol.for("mpviz.presenterKey")] ??= { last: null });
const KEY = /^[A-Za-z0-9_-]{22,128}$/;

function stored() {
  try {
    const held = JSON.parse(localStorage.getItem(STORE) || "null");
    return held && typeof held.key === "string" && KEY.test(held.key) ? held : null;
  } catch {
    return null; // storage blocked or garbled: a fresh key (this browser then presents a new room)
  }
}

export default function presenterKey(component) {
  const d = component.data;
  if (!d || typeof d !== "object") return;
  let held = stored();
  if (typeof d.adopt === "string" && KEY.test(d.adopt)) held = { key: d.adopt, code: null };
  if (!held && typeof d.fresh === "string" && KEY.test(d.fresh)) held = { key: d.fresh, code: null };
  if (!held) return;
  if (typeof d.code === "string") held.code = d.code;
  try {
    localStorage.setItem(STORE, JSON.stringify(held));
  } catch {
    // no storage (a locked-down browser): this tab keeps the key for its own session only
  }
  // `fresh` is new in every server session: a reconnect that started a new session is told again
  const text = JSON.stringify([d.fresh, held]);
  if (text === SENT.last) return; // this session has it: a rerun that mounts the same data sends nothing
  SENT.last = text;
  component.setStateValue("held", held);
}
