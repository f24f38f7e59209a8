// The formats page's bit flipper (mpviz/app/bit_flipper.py): every selected format's stored pattern as one element,
// field by field, each bit a real button (Tab reaches it, Enter or Space or a click flips it). A flip is reported as
// the trigger "flip" {short, position}; the server works out the new value and the rerun draws the new patterns
// here, in place: the focused bit keeps the keyboard. Text goes in with textContent only (no HTML from strings); the
// lines' little markdown (**bold**, *italic*, `code`) becomes elements.
//
// data: {formats: [{short, name, badge: [background, ink], emulated: text|null, line: text,
//                   fields: [{field, label, color, ink, bits: [[position, 0|1], …]}]}],
//        words: {bit: "{field} bit {position}"}}

const FOCUS = (window[Symbol.for("mpviz.bitflip")] ??= { pressed: null });
const FORGET_MS = 20000; // a rerun slower than this (a loaded server) lets the focus go, as the browser would

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text != null) node.textContent = text;
  return node;
}

/** `text` with **bold**, *italic* and `code` as elements, everything else as text nodes. */
export function inline(text) {
  const out = document.createDocumentFragment();
  const stack = [out];
  const top = () => stack[stack.length - 1];
  const parts = String(text ?? "").split(/(`[^`]*`|\*\*|\*)/);
  for (const part of parts) {
    if (!part) continue;
    if (part.length > 1 && part.startsWith("`") && part.endsWith("`")) {
      top().append(el("code", null, part.slice(1, -1)));
    } else if (part === "**" || part === "*") {
      const tag = part === "**" ? "STRONG" : "EM";
      if (top().nodeName === tag) stack.pop();
      else stack.push(top().appendChild(document.createElement(tag)));
    } else {
      top().append(part);
    }
  }
  return out;
}

function bitButton(format, field, [position, bit], words, flip) {
  const button = el("button", "bit", String(bit));
  button.type = "button";
  button.dataset.short = format.short;
  button.dataset.position = String(position);
  button.setAttribute("aria-pressed", bit ? "true" : "false");
  const name = words.bit.replace("{field}", field.label).replace("{position}", String(position));
  button.setAttribute("aria-label", `${bit}, ${format.name}: ${name}`); // starts with what it shows: 0 or 1
  button.title = name;
  button.style.setProperty("--field", field.color);
  button.style.setProperty("--field-ink", field.ink);
  button.addEventListener("click", () => {
    FOCUS.pressed = { short: format.short, position, at: Date.now() };
    flip({ short: format.short, position });
  });
  return button;
}

function drawFormat(format, words, flip) {
  const block = el("section", "format");
  block.setAttribute("aria-label", format.name);
  const head = el("div", "head");
  const badge = el("span", "badge", format.name);
  [badge.style.background, badge.style.color] = format.badge;
  head.append(badge, " ", el("strong", null, format.short));
  block.append(head);
  if (format.emulated) block.append(el("p", "caption")).lastChild.append(inline(format.emulated));
  const row = el("div", "fields");
  for (const field of format.fields) {
    const group = el("div", "field");
    group.setAttribute("role", "group");
    group.setAttribute("aria-label", `${format.name}: ${field.label}`);
    const label = el("div", "label", field.label);
    label.style.color = field.color;
    const bits = el("div", "bits");
    for (const bit of field.bits) bits.append(bitButton(format, field, bit, words, flip));
    group.append(label, bits);
    row.append(group);
  }
  block.append(row, el("p", "line"));
  block.lastChild.append(inline(format.line));
  return block;
}

/** The bit the keyboard is on (a bit of this component), else the one flipped last if focus fell to nothing
 * meanwhile (the page's rerun drew the component anew), else null: focus elsewhere stays where it is. */
function bitToFocus(root, active) {
  if (active?.matches?.("button.bit") && root.contains(active)) {
    return { short: active.dataset.short, position: active.dataset.position };
  }
  const p = FOCUS.pressed;
  const nowhere = !active || active === document.body || !active.isConnected;
  return p && nowhere && Date.now() - p.at <= FORGET_MS ? p : null;
}

function focusBit(root, bit) {
  if (!bit) return;
  const selector = `button.bit[data-short="${CSS.escape(bit.short)}"][data-position="${CSS.escape(String(bit.position))}"]`;
  root.querySelector(selector)?.focus({ preventScroll: true });
}

export default function bitFlipper(component) {
  const { data, parentElement, setTriggerValue } = component;
  if (!data || !Array.isArray(data.formats)) return;
  const active = parentElement.getRootNode().activeElement ?? document.activeElement;
  // parentElement may be a shadow root (isolated styles), where ":scope >" matches nothing: look at its children
  const root =
    [...parentElement.children].find((c) => c.classList.contains("bitflip")) ??
    parentElement.appendChild(el("div", "bitflip"));
  const words = { bit: "{field} {position}", ...data.words };
  const flip = (value) => setTriggerValue("flip", value);
  const bit = bitToFocus(root, active);
  root.replaceChildren(...data.formats.map((format) => drawFormat(format, words, flip)));
  focusBit(root, bit);
}
