// The stepper's panels, made for one run and drawn for each step. Each panel reads the context (panel.js) and asks
// the stepper for every change through `emit`; this module only makes them and draws them in order.
import { BannersPanel } from "./banners.js";
import { CardPanel } from "./card.js";
import { ControlsPanel } from "./controls.js";
import { ElementPanel } from "./element.js";
import { ErrorsPanel } from "./errors.js";
import { GraphPanel } from "./graph.js";
import { HeatPanel } from "./heat.js";
import { TreePanel } from "./treepanel.js";
import { ValuesPanel } from "./values.js";

const BUILT = ["banners", "controls", "graph", "errors", "heat"]; // what draws a frame of its own once per run
const PER_STEP = ["graph", "card", "values", "errors", "heat", "element"]; // after the controls, each step
const PENDING_STEP = ["graph", "card", "errors", "heat"]; // what a step draws from a thin event (stream.js)

/**
 * Every panel for this run, built: the attention lesson's landmark graph, or for any other model's bundle
 * (mpviz.show, which has no graph) its module tree.
 * @param {import("./panel.js").Context} ctx
 * @param {(role: string) => HTMLElement} $ a panel's element by its data-role
 */
export function makePanels(ctx, $) {
  const panel = (Kind, role) => new Kind(ctx, $(role));
  const panels = {
    banners: panel(BannersPanel, "banners"),
    controls: panel(ControlsPanel, "controls"),
    graph: panel(ctx.bundle.b.graph.nodes.length ? GraphPanel : TreePanel, "graph"),
    errors: panel(ErrorsPanel, "errors"),
    heat: panel(HeatPanel, "heat"),
    card: panel(CardPanel, "card"),
    values: panel(ValuesPanel, "values"),
    element: panel(ElementPanel, "element"),
  };
  for (const p of BUILT) panels[p].build();
  return panels;
}

/** Draw every panel for the current step; returns what the controls say of it (for the live region). */
export function drawStep(panels) {
  const spoken = panels.controls.render();
  for (const p of PER_STEP) panels[p].render();
  return spoken;
}

/**
 * Draw a step whose event has not arrived yet (a streamed run, stream.js): what reads the run's outline (the
 * controls, the tree, the card, the errors) as usual; the values and the element say `note` instead. Returns what
 * the controls say of it.
 */
export function drawPending(panels, note) {
  const spoken = panels.controls.render();
  for (const p of PENDING_STEP) panels[p].render();
  panels.values.pending(note);
  panels.element.pending(null);
  return spoken;
}
