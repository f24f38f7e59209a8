// One element of a tensor: the picker, its bits in the step's format (floatbits.js), the arithmetic of its value,
// flipping a bit and ±1 ulp.
// Re-rendering keeps the keyboard where it was: the flipped bit, the ±ulp button, the picker field (WCAG 2.4.3).

import { shownElement } from "./bundle.js";
import { h } from "./dom.js";
import { fbDescribe, fbValue } from "./floatbits.js";
import { fmtExact, pow2Text } from "./numbers.js";
import { Panel } from "./panel.js";

// the control focus sits on, named by what survives a re-render (its data attributes)
function focusKey(el) {
  return el?.dataset?.bit !== undefined
    ? `[data-bit="${el.dataset.bit}"]`
    : el?.dataset?.act
      ? `[data-act="${el.dataset.act}"]`
      : null;
}

export class ElementPanel extends Panel {
  // per step, and after each exploring move (picker, bit, ±ulp), which keeps focus on the same control
  render() {
    const root = this.el.getRootNode();
    const had = root.activeElement && this.el.contains(root.activeElement) ? focusKey(root.activeElement) : null;
    this.draw();
    if (!had) return;
    const again = this.el.querySelector(had) ?? this.el.querySelector("[data-act=ulp-up]"); // a gone button: stay near
    if (again && !again.disabled) again.focus();
    else this.el.querySelector("[data-bit]")?.focus();
  }

  draw() {
    const e = this.event();
    const box = this.el;
    const smp = this.bundle.sample(e.i);
    const sp = smp ? this.bundle.spec(smp.out.dtype) : null;
    if (!smp || !sp) {
      box.replaceChildren(
        h("h2", {}, this.w.ts("element.title")),
        h("p", { class: "mpv-muted" }, this.w.ts("element.none")),
      );
      return;
    }
    const [m, r, c] = shownElement(this.place.el, smp);
    const [M, R, C] = smp.shape;
    const own = smp.values[(m * R + r) * C + c];
    const value = this.place.explore ? this.place.explore.value : own;
    const d = fbDescribe(value, sp);
    const picker = h("div", { class: "mpv-picker" });
    const field = (k, label, max) => {
      const inp = h("input", {
        type: "number",
        min: 0,
        max,
        step: 1,
        value: [m, r, c][k],
        class: "mpv-num",
        dataset: { act: `el-${k}` },
        "aria-label": label,
      });
      inp.addEventListener("change", () => {
        const el = [m, r, c];
        el[k] = Math.max(0, Math.min(max, Math.round(Number(inp.value)) || 0));
        this.emit("element", el);
      });
      return h("label", { class: "mpv-field-label" }, label, " ", inp);
    };
    picker.append(
      field(0, this.w.ts("element.mat"), M - 1),
      field(1, this.w.ts("element.row"), R - 1),
      field(2, this.w.ts("element.col"), C - 1),
    );
    const title = h(
      "h2",
      {},
      this.w.t("element.title_of", { name: e.landmarks[0] ?? e.op, dtype: this.w.dtypeBadge(sp.name) }),
    );
    const valueLine = h(
      "p",
      { class: "mpv-value-line" },
      this.w.t(this.place.explore ? "element.exploring" : "element.value", {
        m,
        r,
        c,
        value: h("code", { class: "mpv-value", dataset: { value: String(d.value) } }, fmtExact(d.value)),
        dtype: sp.name,
      }),
    );
    const bits = h("div", {
      class: `mpv-bits${sp.bits > 16 ? " mpv-bits-wide" : ""}`,
      role: "group",
      "aria-label": this.w.ts("element.bits_aria"),
    });
    const field_ = (cls, from, to, label) => {
      const grp = h("div", { class: `mpv-bitfield ${cls}` }, h("span", { class: "mpv-bitfield-label" }, label));
      const row = h("div", { class: "mpv-bitrow" });
      for (let k = from; k < to; k++) {
        const bit = d.bits[k];
        row.append(
          h(
            "button",
            {
              type: "button",
              class: "mpv-bit",
              dataset: { bit: sp.bits - 1 - k },
              "aria-label": this.w.ts("element.bit_aria", { k: sp.bits - 1 - k, v: bit }),
              onclick: () => this.flipBit(sp, d.code, sp.bits - 1 - k),
            },
            bit,
          ),
        );
      }
      grp.append(row);
      return grp;
    };
    if (sp.S) bits.append(field_("mpv-sign", 0, 1, this.w.ts("element.sign")));
    bits.append(field_("mpv-exp", sp.S, sp.S + sp.E, this.w.ts("element.exponent")));
    if (sp.M) bits.append(field_("mpv-man", sp.S + sp.E, sp.bits, this.w.ts("element.mantissa")));
    const parts = [title, picker, valueLine, bits, h("p", { class: "mpv-arith" }, this.arithmetic(d, sp))];
    const step = (dir) => {
      const v = dir > 0 ? d.nextUp : d.nextDown;
      return h(
        "button",
        {
          type: "button",
          class: "mpv-btn",
          dataset: { act: dir > 0 ? "ulp-up" : "ulp-down" },
          disabled: v === null,
          onclick: () => this.emit("explore", { value: v }),
        },
        this.w.ts(dir > 0 ? "element.ulp_up" : "element.ulp_down", { value: v === null ? "—" : fmtExact(v) }),
      );
    };
    const nav = h("div", { class: "mpv-ulp" }, step(-1), step(1));
    if (this.place.explore) {
      nav.append(
        h(
          "button",
          {
            type: "button",
            class: "mpv-btn mpv-btn-quiet",
            dataset: { act: "ulp-reset" },
            onclick: () => this.emit("explore", null),
          },
          this.w.ts("element.back", { value: fmtExact(own) }),
        ),
      );
    }
    parts.push(nav);
    if (Number.isFinite(d.ulp)) {
      parts.push(
        h(
          "p",
          { class: "mpv-small" },
          this.w.t("element.ulp_line", {
            ulp: `${pow2Text(Math.round(Math.log2(d.ulp)))} = ${fmtExact(d.ulp)}`,
            gl_ulp: this.w.term("ulp"),
            binade: d.cls === "normal" ? `[${pow2Text(d.exponentUnbiased)}, ${pow2Text(d.exponentUnbiased + 1)})` : "—",
          }),
        ),
      );
    }
    if (smp.of && smp.of.reduce((a, b) => a * b, 1) > M * R * C) {
      parts.push(h("p", { class: "mpv-small" }, this.w.t("element.sampled", { m: M, r: R, c: C })));
    }
    box.replaceChildren(...parts);
  }

  flipBit(sp, code, k) {
    this.emit("explore", { value: fbValue(sp, code ^ (1n << BigInt(k))) });
  }

  arithmetic(d, sp) {
    const sign = d.sign ? "−1" : "+1";
    if (d.cls === "nan") return this.w.t("element.arith_nan");
    if (d.cls === "inf") return this.w.t("element.arith_inf", { sign: d.sign ? "−" : "+" });
    if (d.cls === "zero") return this.w.t("element.arith_zero", { sign: d.sign ? "−" : "+" });
    const man = d.mantissaBits;
    const frac = sp.M ? Number(d.mantissa) / 2 ** sp.M : 0;
    if (d.cls === "subnormal") {
      return this.w.t("element.arith_sub", {
        sign,
        bias: sp.bias,
        e: 1 - sp.bias,
        m: man,
        mval: fmtExact(frac),
        value: fmtExact(d.value),
        gl_subnormal: this.w.term("subnormal"),
      });
    }
    return this.w.t("element.arith_normal", {
      sign,
      raw: d.exponentRaw,
      bias: sp.bias,
      e: d.exponentUnbiased,
      m: man || "0",
      mval: fmtExact(1 + frac),
      value: fmtExact(d.value),
    });
  }
}
