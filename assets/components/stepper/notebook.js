// The notebook host (mpviz.show; mpviz/presentation/widget.py's anywidget): what Streamlit's component gives the stepper in the
// app, given here by the widget, in Jupyter, VS Code or marimo. anywidget loads this file as the widget's module and
// calls `render` for each view of it. The stepper itself is the built mpviz/presentation/static/stepper.js, sent as the widget's
// `_stepper_js` text and imported from a Blob URL (as the offline lesson file does), with its CSS and markup in a
// shadow root of the output cell. The payload (mpviz.presentation.stepper_payload's bytes, meta.embedded set) arrives as the
// `payload` bytes; every step, pick and zoom then happens here, with no message to the kernel, except for a model past
// the caps (meta.stream): its events come a chunk at a time through anywidget's custom messages (the `events`
// channel below; the protocol is mpviz/presentation/widget.py's, the fetching stream.js's).

let stepper = null; // the stepper's module, imported once per page: {text, module promise}

function loadStepper(text) {
  if (stepper?.text !== text) {
    const url = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
    const module = import(url).finally(() => URL.revokeObjectURL(url));
    stepper = { text, module };
  }
  return stepper.module;
}

function bytesOf(value) {
  // anywidget hands binary traits over as a DataView
  if (value instanceof DataView) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return value;
}

async function render({ model, el }) {
  el.classList.add("mpv-notebook"); // where the stepper sits in the page (tests find it by this)
  const root = el.attachShadow({ mode: "open" });
  const style = document.createElement("style");
  style.textContent = model.get("_stepper_css");
  const markup = document.createElement("template");
  markup.innerHTML = model.get("_stepper_html"); // the stepper's own markup file, never data
  root.append(style, markup.content);
  const { default: mountStepper } = await loadStepper(model.get("_stepper_js"));
  // this view's way to the kernel: one listener on the model's custom messages, handed to whoever listens now
  const listeners = new Set();
  const onMessage = (msg, buffers) => {
    for (const on of listeners) on(msg, buffers);
  };
  model.on("msg:custom", onMessage);
  const events = {
    request: (chunk) => model.send({ type: "events", chunk }),
    listen(on) {
      listeners.add(on);
      return () => listeners.delete(on);
    },
  };
  const mount = () =>
    mountStepper({
      parentElement: root,
      data: bytesOf(model.get("payload")),
      events,
      setStateValue() {},
      setTriggerValue() {},
    });
  let detach = mount();
  const remount = () => {
    detach?.();
    detach = mount();
  };
  model.on("change:payload", remount);
  return () => {
    model.off("change:payload", remount);
    model.off("msg:custom", onMessage);
    detach?.();
  };
}

export default { render };
