// The op card: what the step's op is, its module and phase, dtypes in and out, autocast's casts, where its inputs
// came from, and the story's "what to notice" sentences.

import { h } from "./dom.js";
import { Panel } from "./panel.js";

export class CardPanel extends Panel {
  // per step
  render() {
    const e = this.event();
    const card = this.el;
    const head = h("h2", { class: "mpv-op-title" }, this.w.t("card.title", { index: e.i, op: e.op }));
    for (const lm of e.landmarks)
      head.append(" ", h("span", { class: "mpv-lm" }, this.w.t("card.landmark", { name: lm })));
    const meta = h(
      "p",
      { class: "mpv-meta" },
      this.w.t("card.module", {
        module: e.module || this.w.ts("card.model"),
        phase: this.w.ts(`phases.${e.phase}`),
      }),
    );
    if (e.node) {
      meta.append(" · ", this.w.t("card.node", { node: e.node }));
      if (e.fwd !== null && e.fwd !== undefined)
        meta.append(" ", this.w.t("card.node_fwd", { op_link: this.w.opLink(e.fwd) }));
    }
    const ins = h(
      "span",
      { class: "mpv-dtypes" },
      ...(e.in.length ? e.in.map((x) => this.w.dtypeBadge(x.dtype, x.shape)) : [this.w.ts("card.none")]),
    );
    const outs = h(
      "span",
      { class: "mpv-dtypes" },
      ...(e.out.length ? e.out.map((x) => this.w.dtypeBadge(x.dtype, x.shape)) : [this.w.ts("card.none")]),
    );
    const flow = h(
      "p",
      { class: "mpv-flow" },
      h("span", { class: "mpv-flow-label" }, this.w.ts("card.inputs")),
      ins,
      h("span", { class: "mpv-arrow", "aria-hidden": "true" }, "→"),
      h("span", { class: "mpv-flow-label" }, this.w.ts("card.outputs")),
      outs,
    );
    if (e.cast) {
      flow.append(
        h(
          "span",
          { class: "mpv-cast-badge" },
          e.phase === "forward"
            ? this.w.t("card.cast_badge", { op: e.cast_for || "?" })
            : this.w.t("card.cast_badge_bwd"),
        ),
      );
    }
    const parts = [head, meta, flow];
    const srcs = (e.src || [])
      .map((x) =>
        typeof x === "number"
          ? this.w.opLink(x)
          : typeof x === "string"
            ? h("code", {}, x.replace(/^param:/, ""))
            : null,
      )
      .filter(Boolean);
    if (srcs.length) parts.push(h("p", { class: "mpv-src" }, this.w.t("card.sources", { list: this.w.listOf(srcs) })));
    if (e.other_dtype && this.b.run.counterpart_device) {
      parts.push(
        h(
          "p",
          { class: "mpv-other" },
          this.w.t("card.other_device", {
            a: this.w.deviceName(this.b.run.device),
            b: this.w.deviceName(this.b.run.counterpart_device),
            da: this.w.dtypeBadge(e.out[0]?.dtype),
            db: this.w.dtypeBadge(e.other_dtype),
          }),
        ),
      );
    }
    if (e.creates_nonfinite) {
      const o = e.out.find((x) => x.stats && (x.stats.nan || x.stats.posinf || x.stats.neginf));
      parts.push(
        h(
          "p",
          { class: "mpv-alarm-line" },
          this.w.t("card.creates_nonfinite", { what: this.w.whatNonfinite(o?.stats) }),
        ),
      );
    }
    if (e.phase === "backward" && (this.b.run.emulation_limits || []).includes("backward_emulated")) {
      parts.push(h("p", { class: "mpv-small" }, this.w.t("limits.backward_emulated")));
    }
    const k = this.bundle.storyOf.get(e.i);
    if (k !== undefined && this.b.story[k].notices?.length) {
      const ul = h("ul", { class: "mpv-notices" });
      for (const n of this.b.story[k].notices) ul.append(h("li", { dataset: { kind: n.kind } }, this.notice(n)));
      parts.push(h("h3", {}, this.w.ts("card.notice_title")), ul);
    }
    card.replaceChildren(...parts);
  }

  // one "what to notice" fact → a sentence from its template
  notice(n) {
    const dt = (d) => this.w.dtypeBadge(d);
    const cat = (c) => (c ? this.w.term(c, c) : this.w.ts("notice.no_category"));
    const code = (x) => h("code", {}, x);
    switch (n.kind) {
      case "cast_for_policy": {
        const items = (n.casts || []).map((c) =>
          this.w.t("notice.cast_item", {
            input:
              c.input === null || c.input === undefined
                ? c.input_event !== null && c.input_event !== undefined
                  ? this.w.t("notice.input_event", { op_link: this.w.opLink(c.input_event) })
                  : this.w.ts("notice.input_unknown")
                : c.input.startsWith("param:")
                  ? this.w.t("notice.input_param", { name: c.input.slice(6) })
                  : code(c.input),
            from: dt(c.from),
            to: dt(c.to),
            op_link: this.w.opLink(c.event),
          }),
        );
        return this.w.t("notice.cast_for_policy", {
          op: n.op,
          policy: this.w.policyName(n.policy),
          category: cat(n.category),
          casts: this.w.listOf(items),
        });
      }
      case "runs_in_arriving_dtype": {
        const frag = this.w.t("notice.runs_in_arriving_dtype", {
          op: n.op,
          dtype: dt(n.dtype),
          policy: this.w.policyName(n.policy),
        });
        if (n.other) {
          frag.append(
            " ",
            this.w.t("notice.runs_other", {
              policy: this.w.policyName(n.other.policy),
              op: n.other.op,
              category: cat(n.other.category),
              dtype: dt(n.other.dtype),
            }),
          );
        }
        return frag;
      }
      case "type_promotion":
        return this.w.t("notice.type_promotion", {
          op: n.op,
          inputs: this.w.listOf((n.inputs || []).map(dt)),
          output: dt(n.output),
        });
      case "grad_follows_forward": {
        const same = n.dtype === n.forward_dtype;
        const frag = this.w.t(same ? "notice.grad_follows_forward" : "notice.grad_differs", {
          forward: n.forward,
          dtype: dt(n.dtype),
          forward_dtype: dt(n.forward_dtype),
        });
        if (n.casts?.length) {
          frag.append(
            " ",
            this.w.t("notice.grad_casts", { links: this.w.listOf(n.casts.map((c) => this.w.opLink(c))) }),
          );
        }
        return frag;
      }
      case "param_grad_direct":
        return this.w.t("notice.param_grad_direct", { param: n.param, dtype: dt(n.dtype) });
      case "param_grad_upcast":
        return this.w.t("notice.param_grad_upcast", {
          param: n.param,
          node: n.node,
          op_link: this.w.opLink(n.event),
          from: dt(n.from),
          to: dt(n.to),
        });
      case "nonfinite_created":
        return this.w.t("notice.nonfinite_created", {
          op_link: this.w.opLink(n.event),
          op: n.op,
          what: this.w.whatNonfinite(n),
        });
      case "other_device_dtype":
        return this.w.t("notice.other_device_dtype", {
          policy: this.w.policyName(n.policy),
          dtype: dt(n.dtype),
          here: dt(n.here),
        });
      case "dtype_argument":
      case "dtype_argument_converted":
      case "listed_arrived_same":
      case "listed_arrived_here_only":
      case "listed_arrived": {
        const opt = (x, f) => (x ? f(x) : undefined); // fields only some of these kinds carry
        return this.w.t(`notice.${n.kind}`, {
          ...n,
          policy: this.w.policyName(n.policy),
          other_policy: opt(n.other_policy, (x) => this.w.policyName(x)),
          category: cat(n.category),
          other_category: opt(n.other_category, cat),
          dtype: dt(n.dtype),
          cast_from: opt(n.cast_from, dt),
          cast_to: opt(n.cast_to, dt),
        });
      }
      default:
        return this.w.has(`notice.${n.kind}`) ? this.w.t(`notice.${n.kind}`, n) : document.createTextNode(n.kind);
    }
  }
}
