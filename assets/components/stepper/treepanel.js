// The graph of any model (a bundle without the attention lesson's landmark graph, mpviz.show): its module tree,
// collapsible, and the current module's own ops in dataflow order. The tree (modtree.js, pure) keeps the path to
// the current op's module open and marks its row; each row carries the module's op count and its casts and inf/NaN
// marks. A WAI-ARIA tree: one row in the Tab order, arrows move and open/close, Enter goes to the module's first op
// (in the phase shown). Rows are rebuilt only when what is open changes, so a step costs a few class flips.

import { h } from "./dom.js";
import { mtAncestors, mtBuild, mtFlow, mtKey, mtRows, mtWindow } from "./modtree.js";
import { Panel } from "./panel.js";

const FLOW_MAX = 48; // ops of one module drawn at once (a window around the current one)

// scroll `box` (a scrolling column, positioned: its rows' offsetTop is within it) so that `el` is in view, without
// scrolling the page around it
function keepVisible(box, el) {
  if (!box || !el) return;
  const top = el.offsetTop;
  if (top < box.scrollTop || top + el.offsetHeight > box.scrollTop + box.clientHeight)
    box.scrollTop = Math.max(0, top - box.clientHeight / 3);
}

export class TreePanel extends Panel {
  // once per bundle
  build() {
    this.tree = mtBuild(this.b.events);
    this.expanded = new Set([""]);
    this.module = null; // the module whose path was last opened for the current op
    this.focusPath = ""; // the row in the Tab order
    this.rowEls = new Map();
    const fig = this.el;
    const model = this.b.run.config?.model ?? "";
    this.list = h("ul", { class: "mpv-tree", role: "tree", "aria-label": this.w.ts("tree.label") });
    this.list.addEventListener("keydown", (e) => this.onKey(e));
    this.flowTitle = h("h3", { class: "mpv-flow-title" });
    this.flow = h("ol", { class: "mpv-flow", "aria-label": this.w.ts("tree.flow_label") });
    fig.replaceChildren(
      h(
        "figcaption",
        { class: "mpv-title" },
        this.w.t("tree.title", { model, events: this.w.int(this.b.events.length) }),
      ),
      h(
        "div",
        { class: "mpv-tree-box" },
        h("div", { class: "mpv-tree-col" }, this.list),
        h("div", { class: "mpv-flow-col" }, this.flowTitle, this.flow),
      ),
    );
    this.flowKey = null;
    this.rows = [];
  }

  layout() {
    // the tree flows with the page's width: nothing to measure
  }

  // per step
  render() {
    const e = this.event();
    if (e.module !== this.module) {
      this.module = e.module;
      const closed = mtAncestors(e.module).filter((p) => !this.expanded.has(p));
      for (const p of closed) this.expanded.add(p);
      if (closed.length) this.drawRows(); // rows are rebuilt only when what is open changes
      if (!this.list.contains(this.el.getRootNode().activeElement)) this.moveTabStop(e.module);
    }
    const moved = this.marked !== e.module;
    this.markRows(e);
    const flowMoved = this.drawFlow(e);
    // only when the module or op changed: reading positions forces a layout of what this step changed
    if (moved) keepVisible(this.list.parentElement, this.rowEls.get(e.module));
    if (flowMoved) keepVisible(this.flow.parentElement, this.flowEls.get(e.i));
  }

  drawRows() {
    this.rows = mtRows(this.tree, this.expanded);
    this.rowEls = new Map();
    const items = this.rows.map((r, k) => {
      const n = this.tree.get(r.path);
      const marks = [h("span", { class: "mpv-tree-ops" }, this.w.ts("tree.ops", { n: this.w.int(n.ops) }))];
      if (n.casts)
        marks.push(
          h(
            "span",
            { class: "mpv-tree-cast", title: this.w.ts("tree.casts_name", { n: n.casts }) },
            this.w.ts("tree.casts", { n: n.casts }),
          ),
        );
      if (n.bad) marks.push(h("span", { class: "mpv-tree-bad" }, this.w.ts("tree.bad")));
      const li = h(
        "li",
        {
          role: "treeitem",
          class: "mpv-tree-row",
          "aria-level": r.depth + 1,
          "aria-expanded": r.leaf ? null : String(r.open),
          "aria-selected": "false",
          tabindex: r.path === this.focusPath ? "0" : "-1",
          style: `--mpv-depth:${r.depth}`,
          dataset: { path: r.path },
          onclick: (ev) => {
            this.moveTabStop(r.path);
            if (ev.target.closest(".mpv-tree-twisty")) this.toggle(r.path);
            else this.jumpTo(r.path);
          },
        },
        h("span", { class: "mpv-tree-twisty", "aria-hidden": "true" }, r.leaf ? "" : r.open ? "▾" : "▸"),
        h("span", { class: "mpv-tree-name" }, r.path === "" ? this.w.ts("tree.model") : n.name),
        " ",
        ...marks,
      );
      li.dataset.row = String(k);
      this.rowEls.set(r.path, li);
      return li;
    });
    if (!this.rowEls.has(this.focusPath)) this.focusPath = "";
    this.rowEls.get(this.focusPath).tabIndex = 0;
    this.list.replaceChildren(...items);
    this.marked = null;
  }

  // the one row in the Tab order
  moveTabStop(path) {
    if (!this.rowEls.has(path)) return;
    this.rowEls.get(this.focusPath)?.setAttribute("tabindex", "-1");
    this.focusPath = path;
    this.rowEls.get(path).tabIndex = 0;
  }

  markRows(e) {
    const on = new Set(mtAncestors(e.module));
    if (this.marked === e.module) return;
    for (const [path, li] of this.rowEls) {
      li.classList.toggle("mpv-tree-path", on.has(path) && path !== e.module);
      li.classList.toggle("mpv-tree-on", path === e.module);
      li.setAttribute("aria-selected", String(path === e.module));
    }
    this.marked = e.module;
  }

  // the current module's ops (a window of them), the current one marked; whether the mark moved
  drawFlow(e) {
    const node = this.tree.get(e.module);
    const key = `${e.module}|${e.phase}`;
    if (key !== this.flowKey) {
      this.flowKey = key;
      this.flowOps = mtFlow(this.b.events, node, e.phase);
      this.flowTitle.replaceChildren(
        this.w.t("tree.flow_title", {
          module: e.module || this.w.ts("tree.model"),
          phase: this.w.ts(`phases.${e.phase}`),
        }),
      );
      this.flowStart = -1;
    }
    const { ops, level, from } = this.flowOps;
    const { start, shown } = mtWindow(ops, e.i, FLOW_MAX);
    if (start !== this.flowStart) {
      this.flowStart = start;
      this.flowEls = new Map();
      const items = shown.map((i) => {
        const ev = this.b.events[i];
        const out = ev.out[0];
        const src = from.get(i);
        const li = h(
          "li",
          { class: "mpv-flow-op", style: `--mpv-level:${Math.min(level.get(i), 12)}` },
          h(
            "button",
            {
              type: "button",
              class: "mpv-flow-btn",
              dataset: { event: i },
              onclick: () => this.emit("jump", i, "full"),
            },
            `#${i} ${ev.op.replace(/^aten\./, "").replace(/\.default$/, "")}`,
          ),
          " ",
          out ? this.w.dtypeBadge(out.dtype) : null,
          ev.cast ? h("span", { class: "mpv-tree-cast" }, this.w.ts("tree.casts", { n: 1 })) : null,
          src.length
            ? h("span", { class: "mpv-flow-from" }, " ", this.w.ts("tree.flow_from", { from: src.join(", #") }))
            : null,
        );
        this.flowEls.set(i, li);
        return li;
      });
      const more = ops.length - shown.length;
      if (more > 0) items.push(h("li", { class: "mpv-flow-more" }, this.w.ts("tree.flow_more", { n: more })));
      this.flow.replaceChildren(...items);
      this.flowOn = null;
    }
    if (this.flowOn === e.i) return false;
    this.flowEls.get(this.flowOn)?.classList.remove("mpv-flow-on");
    this.flowEls.get(e.i)?.classList.add("mpv-flow-on");
    this.flowOn = e.i;
    return true;
  }

  toggle(path) {
    if (this.expanded.has(path)) this.expanded.delete(path);
    else this.expanded.add(path);
    this.drawRows();
    this.markRows(this.event());
    this.rowEls.get(path)?.focus();
  }

  // the module's first op in the phase the reader is in (else its first op at all)
  jumpTo(path) {
    const first = this.tree.get(path).first;
    const i = first[this.place.phase] ?? first.all;
    if (i >= 0) this.emit("jump", i);
  }

  onKey(e) {
    const li = e.target.closest?.("[role=treeitem]");
    if (!li) return;
    const k = Number(li.dataset.row);
    const act = mtKey(this.rows, k, e.key);
    if (!act) return;
    e.preventDefault();
    e.stopPropagation();
    const target = this.rows[act.focus]?.path ?? "";
    if (act.expand !== undefined || act.collapse !== undefined) {
      this.focusPath = target;
      const path = act.expand ?? act.collapse;
      if (act.expand !== undefined) this.expanded.add(path);
      else this.expanded.delete(path);
      this.drawRows();
      this.markRows(this.event());
    } else {
      this.moveTabStop(target);
    }
    if (act.jump !== undefined) this.jumpTo(act.jump);
    this.rowEls.get(target)?.focus();
  }

  // after a jump: keep focus in the tree when it was there (the stepper asks the graph to show the landmark)
  focusNode() {
    const active = this.el.getRootNode().activeElement;
    if (this.list.contains(active)) this.rowEls.get(this.focusPath)?.focus();
  }
}
