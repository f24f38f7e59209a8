// A streamed run's events, fetched from the kernel as the reader steps (mpviz.show past the caps; the protocol is
// mpviz/presentation/widget.py's): the stepper asks `want(i)` before it draws event i; when its chunk is not whole
// yet, the fetcher asks the host once for it and the stepper draws the step as pending ("loading step N…"), keeping
// the controls, the slider and the keys alive. When the chunk arrives `onArrive(k)` is called; a refusal is kept
// (`failure`) and said instead of loading, never asked again. No DOM: unit-tested under node.

/**
 * @typedef {object} EventChannel what the host gives the stepper to reach the kernel (notebook.js)
 * @property {(chunk: number) => void} request send {type: "events", chunk} to the kernel
 * @property {(on: (msg: object, buffers: ArrayBuffer[] | DataView[]) => void) => () => void} listen the kernel's
 *   answers, until the returned function is called
 */

function bytesOf(buffer) {
  if (buffer instanceof Uint8Array) return buffer;
  if (ArrayBuffer.isView(buffer)) return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  if (buffer instanceof ArrayBuffer) return new Uint8Array(buffer);
  return null;
}

// a chunk's JSON array of events, or null when the buffer is not one
function parseChunk(buffer) {
  const bytes = bytesOf(buffer);
  if (!bytes) return null;
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}

export class EventFetcher {
  /**
   * @param {import("./bundle.js").BundleReader} reader a streamed run's reader (its `stream` set)
   * @param {EventChannel | null | undefined} channel null where the host cannot ask (then every fetch fails)
   * @param {(chunk: number) => void} onArrive a chunk is whole now
   */
  constructor(reader, channel, onArrive) {
    this.reader = reader;
    this.channel = channel ?? null;
    this.onArrive = onArrive;
    this.asked = new Set(); // chunks requested and not answered yet
    this.failed = new Map(); // chunk → the kernel's refusal ("no_chunk" | "released" | "no_channel" | "bad_chunk")
    this.unlisten = this.channel ? this.channel.listen((msg, buffers) => this.receive(msg, buffers)) : () => {};
  }

  /** Whether event i can be drawn now; if not, its chunk is asked for (once) unless it failed. */
  want(i) {
    if (this.reader.ready(i)) return true;
    this.ask(this.reader.chunkOf(i));
    return false;
  }

  /** Ask ahead for the chunk after event i's, so stepping on finds it whole. */
  askAhead(i) {
    const next = this.reader.chunkOf(i) + 1;
    if (next * this.reader.stream.chunk < this.reader.b.events.length && !this.reader.whole.has(next)) this.ask(next);
  }

  ask(k) {
    if (this.asked.has(k) || this.failed.has(k)) return;
    if (!this.channel) {
      this.failed.set(k, "no_channel");
      return;
    }
    this.asked.add(k);
    this.channel.request(k);
  }

  /** The kernel's refusal of event i's chunk, or null. */
  failure(i) {
    return this.failed.get(this.reader.chunkOf(i)) ?? null;
  }

  /** One message from the kernel: a chunk (its JSON in the first buffer) or a refusal; anything else ignored. */
  receive(msg, buffers) {
    if (msg?.type !== "events" || !Number.isInteger(msg.chunk)) return;
    const k = msg.chunk;
    this.asked.delete(k);
    if (typeof msg.error === "string") {
      this.failed.set(k, msg.error);
    } else {
      if (!this.reader.fill(k, parseChunk(buffers?.[0]))) this.failed.set(k, "bad_chunk");
    }
    this.onArrive(k);
  }

  close() {
    this.unlisten();
  }
}

/** What step `n` (event `i`) of a streamed run says while its event is on its way, or why it will not come. */
export function pendingNote(fetcher, words, n, i) {
  const failure = fetcher.failure(i);
  if (!failure) return words.ts("stream.loading", { n });
  const reason = words.has(`stream.${failure}`) ? words.ts(`stream.${failure}`) : failure;
  return words.ts("stream.failed", { n, reason });
}
