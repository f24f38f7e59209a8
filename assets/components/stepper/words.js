// Words and small visual atoms: text lookups with {placeholders} filled by nodes, glossary terms, dtype badges,
// op links, device and policy names. Every word comes from the payload's text tables.
// One Words per payload, shared by every panel (its context's `words`).

import { h } from "./dom.js";

export class Words {
  /**
   * @param {{ui: object, glossary: object}} text the payload's text tables (mpviz/locales/<locale>/stepper.toml, glossary.toml)
   * @param {{dtype_colors?: Object<string, string>}} style the payload's colours
   * @param {Object<string, object>} formats the bundle's formats by short name (bundle.schema.json, Format)
   * @param {string} locale BCP 47 tag for numbers and lists
   * @param {(type: string, ...args: any[]) => void} emit the stepper's action channel (an op link jumps)
   */
  constructor(text, style, formats, locale, emit) {
    this.text = text;
    this.style = style;
    this.formats = formats;
    this.locale = locale;
    this.emit = emit;
    this.listFormat = null;
    this.intFormat = null;
  }

  // ── text ──
  lookup(path, table = this.text.ui) {
    let v = table;
    for (const p of path.split(".")) v = v && typeof v === "object" ? v[p] : undefined;
    return typeof v === "string" ? v : null;
  }

  has(path) {
    return this.lookup(path) !== null;
  }

  // template → DocumentFragment: {name} filled (Nodes as they are, the rest as text), `code` and **bold** markup
  t(path, vals = {}, table = this.text.ui) {
    const tpl = this.lookup(path, table) ?? path;
    const frag = document.createDocumentFragment();
    const re = /`([^`]+)`|\*\*(.+?)\*\*/g;
    let last = 0,
      m;
    while ((m = re.exec(tpl))) {
      this.fill(frag, tpl.slice(last, m.index), vals);
      const el = document.createElement(m[1] !== undefined ? "code" : "strong");
      this.fill(el, m[1] ?? m[2], vals);
      frag.append(el);
      last = re.lastIndex;
    }
    this.fill(frag, tpl.slice(last), vals);
    return frag;
  }

  fill(parent, text, vals) {
    const parts = text.split(/(\{\{|\}\}|\{\w+\})/);
    for (const p of parts) {
      if (!p) continue;
      if (p === "{{" || p === "}}") parent.append(p[0]);
      else if (/^\{\w+\}$/.test(p)) {
        const name = p.slice(1, -1);
        const v = name.startsWith("gl_") && !(name in vals) ? this.term(name.slice(3)) : vals[name];
        if (v instanceof Node) parent.append(v.parentNode ? v.cloneNode(true) : v);
        else parent.append(v === undefined || v === null ? p : String(v));
      } else parent.append(p);
    }
  }

  // plain string (for aria-label, title): markup dropped
  ts(path, vals = {}) {
    return this.t(path, vals).textContent;
  }

  // a term of art with its glossary definition on hover and keyboard focus
  term(key, shown) {
    const g = this.text.glossary?.[key];
    const el = h("span", { class: "mpv-term", tabindex: 0, dataset: { term: key } }, shown ?? g?.term ?? key);
    if (g) el.setAttribute("aria-describedby", "mpv-tip");
    return el;
  }

  listOf(items) {
    // locale-aware "a, b and c" with nodes
    const frag = document.createDocumentFragment();
    if (!items.length) return frag;
    const marks = items.map((_, k) => `\u0001${k}\u0002`);
    const parts = (this.listFormat ??= new Intl.ListFormat(this.locale, { type: "conjunction" })).formatToParts(marks);
    for (const p of parts) {
      if (p.type === "element") {
        const k = Number(p.value.slice(1, -1));
        const v = items[k];
        frag.append(v instanceof Node ? v : String(v));
      } else frag.append(p.value);
    }
    return frag;
  }

  // "3 NaN and 2 +inf" from a tensor's stats
  whatNonfinite(st) {
    if (!st) return "";
    const items = [];
    if (st.nan) items.push(this.ts("notice.what_nan", { n: this.int(st.nan) }));
    if (st.posinf) items.push(this.ts("notice.what_posinf", { n: this.int(st.posinf) }));
    if (st.neginf) items.push(this.ts("notice.what_neginf", { n: this.int(st.neginf) }));
    return this.listOf(items);
  }

  // ── little visual atoms ──
  color(dtype) {
    return this.style.dtype_colors?.[dtype] ?? "#999999";
  }

  short(dtype) {
    return this.formats[dtype]?.short ?? dtype ?? "—";
  }

  ink(bg) {
    // black or white text, whichever contrasts more with bg
    const c = [1, 3, 5]
      .map((k) => parseInt(bg.slice(k, k + 2), 16) / 255)
      .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    const L = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    return (L + 0.05) / 0.05 >= 1.05 / (L + 0.05) ? "#111111" : "#ffffff";
  }

  dtypeBadge(dtype, shape) {
    const bg = this.color(dtype);
    return h(
      "span",
      { class: "mpv-dtype", style: `background:${bg};color:${this.ink(bg)}`, title: dtype },
      this.short(dtype),
      shape ? h("span", { class: "mpv-shape" }, this.shapeText(shape)) : null,
    );
  }

  shapeText(shape) {
    return shape.length ? shape.join("×") : this.ts("card.scalar");
  }

  opLink(i) {
    return h(
      "button",
      {
        type: "button",
        class: "mpv-link",
        dataset: { op: i },
        onclick: () => this.emit("jump", i, "full"),
      },
      this.ts("card.op_ref", { index: i }),
    );
  }

  int(n) {
    return (this.intFormat ??= new Intl.NumberFormat(this.locale)).format(n);
  }

  deviceName(d) {
    return this.has(`devices.${d}`) ? this.ts(`devices.${d}`) : d;
  }

  policyName(p) {
    return this.has(`policies.${p}`) ? this.ts(`policies.${p}`) : p;
  }
}
