/**
 * `<polyloop-prompt-view>`: a framework-free custom element that shows the
 * prompt a request assembles to, with the same WebAssembly module every other
 * host runs, assembled and decoded in a Web Worker, in a virtualised list
 * (only the rows in view are in the DOM; long texts collapsed with a button to
 * expand them).
 *
 * ```js
 * import { definePromptView } from "@polyloop/preview";
 * definePromptView();                      // registers <polyloop-prompt-view>
 * const view = document.querySelector("polyloop-prompt-view");
 * view.request = { observation_template: "{observation}", steps: [...] };
 * view.addEventListener("polyloop-result", (e) => console.log(e.detail.promptChars));
 * view.addEventListener("polyloop-error", (e) => console.log(e.detail.code, e.detail.path));
 * ```
 *
 * Request text is only ever put into the page as text (textContent, text
 * nodes): never innerHTML.
 *
 * @module
 */

import { MSG, Requests } from "./protocol.js";
import { joinWorker } from "./workers.js";
import { newState, shownMarks, summaryOf } from "./state.js";
import { textsOf } from "./columns.js";
import { build, setState } from "./panes.js";
import { goToStep, mountList, newVirtualizer, scrollToMessage } from "./rows.js";
import { listen, nextHit, render, resetView, search, showError, showMarks, showResult } from "./render.js";
import { searchStateOf } from "./search.js";

export { MAX_HITS, COLLAPSE_CHARS, COLLAPSE_LINES } from "./text.js";

/** HTMLElement where there is a DOM; elsewhere (Node, server-side
 * rendering) a plain class, so that importing this module never throws. */
const ElementBase = /** @type {typeof HTMLElement} */ (globalThis.HTMLElement ?? class {});

/** The number of the next element (its name in its worker's messages). */
let nextClient = 1;

export class PromptView extends ElementBase {
  static observedAttributes = ["request", "step", "theme"];

  /** Where the worker and the module are, unless attributes say (definePromptView).
   * @type {{workerUrl?: string | URL, wasmUrl?: string | URL}} */
  static urls = {};

  /** The element's state, read and drawn by the render modules (state.js). @type {import("./state.js").State} */
  #pv;
  /** the element's worker (workers.js), once it needs one @type {{worker: Worker, leave: () => void} | null} */
  #link = null;
  /** the element's number in its worker's messages */
  #client = nextClient++;
  /** the request as given (the `request` property) @type {any} */
  #request = undefined;
  /** whenRendered's waiters @type {((gen: number) => boolean)[]} */
  #waiters = [];
  /** the requests and jobs sent to the worker, and their replies (protocol.js) */
  #requests = new Requests((msg) => this.#ensureWorker().postMessage({ ...msg, view: this.#client }));
  /** @type {(() => void) | null} */
  #unmount = null;

  constructor() {
    super();
    const root = this.attachShadow({ mode: "open" });
    const pv = newState(this, root, build(root));
    pv.virtualizer = newVirtualizer(pv);
    listen(pv);
    this.#pv = pv;
  }

  /** "loading" | "ok" | "stale" | "error" | "empty" */
  get state() {
    return this.#pv.state;
  }

  /** Timing of the last result (ms): in the worker, and rendering here. */
  get lastTiming() {
    return this.#pv.lastTiming;
  }

  connectedCallback() {
    this.#ensureWorker();
    this.#unmount ??= mountList(this.#pv);
  }

  disconnectedCallback() {
    this.#unmount?.();
    this.#unmount = null;
  }

  /** @param {string} name @param {string | null} _old @param {string | null} value */
  attributeChangedCallback(name, _old, value) {
    if (name === "request" && value !== null) this.setText(value);
    if (name === "step") this.step = value === null || value === "" ? null : Number(value);
  }

  /** Leaves the page's shared worker (it stops once no element uses it);
   * the element can be connected again and joins one then. */
  terminate() {
    this.#link?.leave();
    this.#link = null;
  }

  // ---- public API ---------------------------------------------------------
  /** The request: an object (encoded by the binding), JSON text (judged by
   * the module, as the CLI does) or msgpack bytes (a Uint8Array). */
  get request() {
    return this.#request;
  }

  set request(value) {
    if (typeof value === "string") this.setText(value);
    else if (value instanceof JsonBytes) this.#post({ type: MSG.JSON_BYTES, bytes: value.bytes.slice() }, value);
    else if (value instanceof Uint8Array) this.#post({ type: MSG.BYTES, bytes: value.slice() }, value);
    else this.#post({ type: MSG.OBJECT, request: value }, value);
  }

  /**
   * Sets the request as JSON text. With `fresh`, a new document (a file
   * opened, another entry picked): the prompt shown so far is dropped (an
   * error shows alone, never over a stale prompt) and the result is not
   * compared with the previous one.
   * With `lineBreak: "\r\n"`, the text is a CRLF file as an editor holds
   * it (line breaks LF): it is judged with each LF written CRLF, so an
   * error's byte offset is the file's (the CLI's), while positions
   * (`error.location`) stay this text's; edits keep the setting.
   * @param {string} text
   * @param {{fresh?: boolean, lineBreak?: "\n" | "\r\n"}} [opts]
   * @returns {number} the generation its result will carry
   */
  setText(text, { fresh = false, lineBreak = "\n" } = {}) {
    if (fresh) resetView(this.#pv);
    return this.#post({ type: MSG.TEXT, text, fresh, lineBreak }, text);
  }

  /**
   * Sets the request as the bytes of JSON text, judged as they are (as the
   * CLI judges a file): for a file that is not valid UTF-8, whose text the
   * page cannot hold without changing it.
   * @param {Uint8Array} bytes
   * @param {{fresh?: boolean}} [opts] as for setText
   * @returns {number} the generation its result will carry
   */
  setJSONBytes(bytes, { fresh = false } = {}) {
    if (fresh) resetView(this.#pv);
    return this.#post({ type: MSG.JSON_BYTES, bytes: bytes.slice(), fresh }, new JsonBytes(bytes));
  }

  /**
   * Sets the request as msgpack bytes; `fresh` as for setText.
   * @param {Uint8Array} bytes
   * @param {{fresh?: boolean}} [opts]
   * @returns {number} the generation its result will carry
   */
  setBytes(bytes, { fresh = false } = {}) {
    if (fresh) resetView(this.#pv);
    return this.#post({ type: MSG.BYTES, bytes: bytes.slice(), fresh }, bytes);
  }

  /**
   * The module's verdict on each of `items` (the UTF-8 bytes of one JSON
   * request each), computed in the element's worker in the background:
   * `onProgress({from, codes, steps, done})` gets them slice by slice (codes:
   * "ok" or the error code; steps: the request's number of steps, -1 when
   * unknown). A newer call supersedes an older one.
   * @param {(Uint8Array | {msgpack: Uint8Array})[]} items the bytes of JSON text, or `{msgpack}` bytes
   * @param {(p: {from: number, codes: string[], steps: number[], done: boolean}) => void} onProgress
   */
  verdicts(items, onProgress) {
    this.#requests.job(MSG.VERDICTS, { items }, onProgress);
  }

  /**
   * The module's comparison of two sides (docs/SPEC.md §7.9), run in the
   * element's worker: each side `{kind: "text", text}`, `{kind: "jsonBytes",
   * bytes}`, `{kind: "bytes", bytes}` (msgpack) or `{kind: "current"}` (this
   * element's request, with every edit sent before). Resolves with the
   * core's answer, or the error of a side (its path prefixed with `a` or
   * `b`).
   * @param {object} a
   * @param {object} b
   * @returns {Promise<{answer: any} | {error: {code: string, path: string, message: string}}>}
   */
  async compare(a, b) {
    const m = await this.#requests.request(MSG.COMPARE, { a, b });
    return m.error ? { error: m.error } : { answer: m.answer };
  }

  /**
   * Draw the cache breakpoints of the Anthropic export (the default
   * policy, docs/SPEC.md §7.13) on the prompt: after each result, the
   * worker exports the request and the blocks it marks with `cache_control`
   * get a marker ("cache breakpoint k of n"), taken from the export's
   * answer. Not drawn in step mode, nor for a response over 4 MB (said so).
   */
  get cacheBreakpoints() {
    return this.#pv._cacheBreakpoints;
  }

  set cacheBreakpoints(on) {
    this.#pv._cacheBreakpoints = Boolean(on);
    if (!on) this.#pv.marks = null;
    this.#post({ type: MSG.MARKS, on: this.#pv._cacheBreakpoints });
  }

  /** The cache breakpoints drawn: `[message, block]` pairs in prompt order
   * (null when none are drawn), or the export's error, for the result shown. */
  get breakpoints() {
    const m = shownMarks(this.#pv);
    return m ? { list: m.breakpoints ?? null, error: m.error ?? null, reason: m.reason ?? null } : null;
  }

  /**
   * Highlights what is "new since the previous call" in the result of
   * generation `gen` (what setText and the other setters returned): the
   * characters from code point `chars` of the prompt on (a run's cache
   * report's `cacheable_prefix_chars`). Shown only while that result is
   * (an edit ends it); null clears it.
   * @param {number} gen @param {number | null} chars
   */
  markNew(gen, chars) {
    this.#pv.since = chars === null ? null : { gen, chars };
    if (this.#pv.view) render(this.#pv);
  }

  /**
   * The request as a provider's request body (the binding's `export`,
   * docs/SPEC.md §7.13), exported in the element's worker: its JSON text
   * (`JSON.stringify` of the answer), or the error, with `gen` the
   * generation of the request exported.
   * @param {import("@polyloop/assembly").Provider} provider one of the binding's PROVIDERS
   * @param {object | null} [options]
   * @returns {Promise<{gen: number, text?: string, error?: {code: string, path: string, message: string}, location?: {from: number, to: number, exact: boolean} | null}>}
   */
  async exportRequest(provider, options = null) {
    const { gen, text, error, location } = await this.#requests.request(MSG.EXPORT, { provider, options });
    return error ? { gen, error, location: location ?? null } : { gen, text };
  }

  /**
   * The cache report of a run (the binding's `cacheReport`, docs/SPEC.md
   * §7.12) over `items` (as for verdicts: a run's calls in order), computed
   * in the worker in slices: `onProgress({from, calls, done})` gets the
   * report's calls slice by slice, each `previous` an index into `items`.
   * A newer call supersedes an older one. `runs`, the run of each item
   * (each run's items together): each run reported on its own, its first
   * call compared with nothing.
   * @param {(Uint8Array | {msgpack: Uint8Array})[]} items
   * @param {(p: {from: number, calls: any[], done: boolean, error?: any}) => void} onProgress
   * @param {ArrayLike<number>} [runs]
   */
  cacheReport(items, onProgress, runs) {
    this.#requests.job(MSG.CACHE_REPORT, { items, runs }, onProgress);
  }

  /**
   * Applies edits to the JSON text set with setText (an editor's changes, so
   * a 16 MB document is not copied on every keystroke): `[from, to, insert]`,
   * ascending, in positions of the text before the edit.
   *
   * @param {[number, number, string][]} changes
   * @returns {number} the generation its result will carry
   */
  applyChanges(changes) {
    return this.#post({ type: MSG.EDIT, changes });
  }

  /** Show the prompt as sent before step `k` (after k completed steps),
   * built with the incremental prompt; null shows the whole request. */
  get step() {
    return this.#pv._step;
  }

  set step(k) {
    const v = k === null || k === undefined || Number.isNaN(Number(k)) ? null : Math.max(0, Math.floor(Number(k)));
    if (v === this.#pv._step) return;
    this.#pv._step = v;
    // Once shown, the view scrolls to what this step added.
    this.#pv.stepScroll = v !== null;
    if (v !== null && !this.#pv._trajectory) this.trajectory = true;
    else render(this.#pv);
  }

  /** Whether the prompt is also built step by step (for `step`). */
  get trajectory() {
    return this.#pv._trajectory;
  }

  set trajectory(on) {
    this.#pv._trajectory = Boolean(on);
    this.#post({ type: MSG.TRAJECTORY, on: this.#pv._trajectory });
  }

  /** Number of steps of the request shown (null before a result). */
  get stepCount() {
    return this.#pv.trajectoryInfo?.steps ?? this.#pv.view?.steps ?? null;
  }

  /** The generation of the newest request sent, and of the one shown. */
  get generation() {
    return this.#pv.gen;
  }

  get shownGeneration() {
    return this.#pv.shownGen;
  }

  /** The last error (code, path, message, offset, location), or null. */
  get error() {
    return this.#pv.lastError;
  }

  /** Summary of what is shown. */
  get summary() {
    return summaryOf(this.#pv);
  }

  /** Resolves once the result of generation `gen` (or a newer one) is in the DOM. */
  whenRendered(gen = this.#pv.gen) {
    if (this.#pv.shownGen >= gen) return Promise.resolve(this.#pv.shownGen);
    return new Promise((resolve) => this.#waiters.push((g) => g >= gen && (resolve(g), true)));
  }

  /** The full response of the last accepted request as JSON text. */
  responseJSON() {
    return this.#requests.request(MSG.RESPONSE, { bytes: false }).then((m) => /** @type {string | null} */ (m.text));
  }

  /** The exact response bytes (msgpack) of the last accepted request, as
   * the module returned them (for tests and tools: what the CLI's
   * `--out msgpack` writes for the same request). */
  responseBytes() {
    return this.#requests.request(MSG.RESPONSE, { bytes: true }).then((m) => /** @type {Uint8Array | null} */ (m.bytes));
  }

  /** The module as the element's worker compiled it (a WebAssembly.Module):
   * `loadAssembler({ module })` then builds an assembler on this thread
   * without compiling it again. @returns {Promise<WebAssembly.Module>} */
  async compiledModule() {
    return (await this.#requests.request(MSG.MODULE)).module;
  }

  /** Scrolls message `i` into view and focuses its row. */
  scrollToMessage(i) {
    scrollToMessage(this.#pv, i);
  }

  /**
   * Scrolls to step `k` (1-based: `steps[k - 1]`, its raw output first) and
   * focuses it; false when the request has no such step (or it is not shown).
   * @param {number} k
   */
  goToStep(k) {
    return goToStep(this.#pv, k);
  }

  /**
   * Searches the messages shown (decoded text, case ignored: `süd` finds
   * `SÜD`), marks every hit, and goes to the first (scrolled to, its
   * message expanded when the hit is past the fold). The hits follow new
   * results until the search is cleared (""). Fires `polyloop-search`.
   * @param {string} query
   * @returns {number} the number of hits (at most MAX_HITS)
   */
  search(query) {
    return search(this.#pv, query);
  }

  /** Goes to the next hit (`dir` 1) or the previous one (-1), wrapping.
   * @param {1 | -1} [dir] */
  nextHit(dir = 1) {
    nextHit(this.#pv, dir);
  }

  /** The search: its text, the number of hits, the current one (0-based,
   * -1 for none) and the message it is in. */
  get searchState() {
    return searchStateOf(this.#pv);
  }

  /** The texts of message `i`'s blocks (for tests and tools). */
  messageTexts(i) {
    return this.#pv.view ? textsOf(this.#pv.view, i) : null;
  }

  // ---- worker -------------------------------------------------------------
  /** The page's worker for this element's worker and module URLs
   * (started by the first element that needs it). */
  #ensureWorker() {
    if (this.#link) return this.#link.worker;
    const defaults = /** @type {typeof PromptView} */ (this.constructor).urls ?? {};
    const custom = this.getAttribute("worker-url") ?? (defaults.workerUrl === undefined ? null : String(defaults.workerUrl));
    const wasm = this.getAttribute("wasm-url") ?? (defaults.wasmUrl === undefined ? null : String(defaults.wasmUrl));
    this.#link = joinWorker(custom, wasm === null ? undefined : new URL(wasm, document.baseURI).href, this.#client, {
      message: (m) => this.#onWorker(m),
      fatal: (message, code) => this.#fatal(message, code),
    });
    if (this.#pv.state === "empty") setState(this.#pv, "loading");
    return this.#link.worker;
  }

  #post(msg, request) {
    if (request !== undefined) this.#request = request;
    const gen = ++this.#pv.gen;
    this.#ensureWorker().postMessage({ ...msg, view: this.#client, gen });
    return gen;
  }

  /** A message of the worker for this element: a reply, or an event. */
  #onWorker(m) {
    const tIn = performance.now();
    if (this.#requests.settle(m)) return;
    if (m.type === MSG.MARKS) return showMarks(this.#pv, m);
    if (m.type === MSG.FATAL) return this.#fatal(m.message);
    if (m.type === MSG.READY) return performance.mark("polyloop:worker-ready");
    if (m.type !== MSG.RESULT || m.gen < this.#pv.shownGen) return;
    if (m.ok) {
      showResult(this.#pv, m);
      this.#pv.emit("polyloop-result", { gen: m.gen, ...this.summary, ms: m.ms, stepCount: this.stepCount });
    } else {
      this.#pv.shownGen = m.gen;
      showError(this.#pv, m.gen, { ...m.error, location: m.location ?? null, syntax: Boolean(m.syntax), template: m.template ?? null });
    }
    this.#pv.lastTiming = { ...(m.timing ?? {}), worker: m.msTotal ?? m.ms, render: performance.now() - tIn };
    this.#settle(m.gen);
  }

  #settle(gen) {
    this.#waiters = this.#waiters.filter((w) => !w(gen));
    this.#pv.emit("polyloop-rendered", { gen });
  }

  #fatal(message, code = "internal") {
    showError(this.#pv, this.#pv.gen, { code, path: "", message, location: null, syntax: false, template: null });
    this.#settle(this.#pv.gen);
  }
}

/** Bytes of JSON text given as the request (setJSONBytes). */
class JsonBytes {
  /** @param {Uint8Array} bytes */
  constructor(bytes) {
    this.bytes = bytes;
  }
}

/**
 * Registers the element (once) as `name` (default `polyloop-prompt-view`).
 * `urls`: where its worker and the module are when a bundler does not emit
 * them (esbuild): `workerUrl` (the element's worker.js, bundled), `wasmUrl`
 * (assembly.wasm); the `worker-url` and `wasm-url` attributes override them.
 * Needs a DOM (custom elements): in Node it throws an Error saying so.
 * @param {string} [name]
 * @param {{workerUrl?: string | URL, wasmUrl?: string | URL}} [urls]
 */
export function definePromptView(name = "polyloop-prompt-view", urls = {}) {
  if (typeof customElements === "undefined" || globalThis.HTMLElement === undefined)
    throw new Error("definePromptView needs a browser DOM (customElements); importing @polyloop/preview elsewhere is safe");
  if (!customElements.get(name))
    customElements.define(
      name,
      class extends PromptView {
        static urls = { ...urls };
      },
    );
  return customElements.get(name);
}
