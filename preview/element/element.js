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

import { Virtualizer, elementScroll, observeElementOffset, observeElementRect, measureElement } from "@tanstack/virtual-core";
import { CSS } from "./styles.js";
import { blockText } from "./columns.js";
import { INVISIBLE_RANGES } from "./binding.js";
import { MSG, Requests } from "./protocol.js";

/** The most hits a search marks. */
export const MAX_HITS = 10_000;

/** Texts longer than this (UTF-16 units) or with more lines are collapsed. */
export const COLLAPSE_CHARS = 1200;
export const COLLAPSE_LINES = 14;

const SEGMENTS = /** @type {const} */ (["run", "injection", "goal", "history"]);
const SEGMENT_TITLES = { run: "Run messages", injection: "Injection slot", goal: "Goal messages", history: "History" };

const fmt = new Intl.NumberFormat("en-US");
const plural = (n, one, many = one + "s") => `${fmt.format(n)} ${n === 1 ? one : many}`;

/**
 * Creates an element; strings become text nodes, attributes are set with
 * setAttribute: request text never becomes markup.
 *
 * @param {string} tag
 * @param {Record<string, string | number | boolean | undefined>} [attrs]
 * @param {...(Node | string | null | undefined | false)} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== false) el.setAttribute(k, v === true ? "" : String(v));
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return el;
}

/** Whether code point c is one a view marks (INVISIBLE_RANGES, the CLI's
 * set: docs/SPEC.md §7.8). */
export function isInvisible(c) {
  if (c >= 0x20 && c < 0x7f) return false;
  for (const [first, last] of INVISIBLE_RANGES) {
    if (c < first) return false;
    if (c <= last) return true;
  }
  return false;
}

/** The class of the characters to mark: the ranges of INVISIBLE_RANGES. */
const INVISIBLE_CLASS = `[${INVISIBLE_RANGES.map(([a, b]) => `\\u{${a.toString(16)}}-\\u{${b.toString(16)}}`).join("")}]`;
/** A run of tag characters spelling ASCII (U+E0020–E007E spell U+0020–007E:
 * the "ASCII smuggling" way to hide instructions), or one other character
 * to mark. */
const INVISIBLE_RE = new RegExp(`[\\u{e0020}-\\u{e007e}]+|${INVISIBLE_CLASS}`, "gu");
/** Counts marked characters (a tag character is one each). */
const INVISIBLE_COUNT_RE = new RegExp(INVISIBLE_CLASS, "gu");

/**
 * What a run of tag characters spells: U+E0020–E007E are U+0020–007E
 * (abi.TagText), the text the CLI shows as `<hidden text: "…">`.
 * @param {string} run
 */
export function tagText(run) {
  let out = "";
  for (const ch of run) out += String.fromCharCode(/** @type {number} */ (ch.codePointAt(0)) - 0xe0000);
  return out;
}

/** How many characters of `text` a view marks (INVISIBLE_RANGES). @param {string} text */
export function countInvisible(text) {
  INVISIBLE_COUNT_RE.lastIndex = 0;
  let n = 0;
  while (INVISIBLE_COUNT_RE.exec(text)) n++;
  return n;
}

/** `U+202E` for code point c. */
export const codePointName = (c) => `U+${c.toString(16).toUpperCase().padStart(4, "0")}`;

/**
 * Appends one line of text to `pre`, each invisible character (bidi
 * controls, zero-width characters, the BOM, controls, look-alike spaces) in
 * a marker that names its code point: the character itself stays in the
 * text node (so textContent and copy-paste keep the exact text) at font
 * size 0 (a control's box glyph or a look-alike space is not drawn), the
 * name is CSS generated content, and the marker isolates the character's
 * bidi effect so it cannot reorder the text around it.
 */
export function appendLine(pre, line) {
  INVISIBLE_RE.lastIndex = 0;
  let at = 0;
  for (let m = INVISIBLE_RE.exec(line); m; m = INVISIBLE_RE.exec(line)) {
    if (m.index > at) pre.append(document.createTextNode(line.slice(at, m.index)));
    const first = /** @type {number} */ (m[0].codePointAt(0));
    if (first >= 0xe0020 && first <= 0xe007e) {
      // Tag characters: what they spell, readable (the characters stay in
      // the text node, so copying keeps them).
      const said = `hidden text: ${JSON.stringify(tagText(m[0]))}`;
      const n = [...m[0]].length;
      pre.append(
        h(
          "span",
          { class: "cp tag", "data-cp": said, title: `${plural(n, "tag character")} (U+E0020–E007E) spelling ${said.slice(13)}` },
          m[0],
        ),
      );
    } else {
      const name = codePointName(first);
      pre.append(h("span", { class: "cp", "data-cp": name, title: name }, m[0]));
    }
    at = m.index + m[0].length;
  }
  if (at < line.length) pre.append(document.createTextNode(at === 0 ? line : line.slice(at)));
}

/** The exact text, each line break marked (the mark is CSS generated content,
 * so textContent and copy-paste keep the exact text), each invisible
 * character marked with its code point. */
function textBlock(text) {
  const pre = h("pre", { class: text === "" ? "block empty" : "block" });
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (line) appendLine(pre, line);
    if (i < lines.length - 1) pre.append(h("span", { class: "nl" }, "\n"));
  });
  return pre;
}

/**
 * Wraps the search hits `ranges` ([from, to, current] in UTF-16 positions
 * of the block's text) in `<mark>`: only the plain text nodes of the block
 * are split (a marked invisible character keeps its marker); the text stays
 * the same.
 * @param {HTMLElement} pre @param {[number, number, boolean][]} ranges ascending
 * @param {string} [cls] the marks' class
 */
export function markHits(pre, ranges, cls = "hit") {
  if (!ranges.length) return;
  const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  /** @type {[Text, number][]} */
  const nodes = [];
  let at = 0;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    nodes.push([/** @type {Text} */ (n), at]);
    at += /** @type {Text} */ (n).data.length;
  }
  for (let k = nodes.length - 1; k >= 0; k--) {
    const [node, start] = nodes[k];
    if (node.parentNode !== pre) continue;
    const end = start + node.data.length;
    for (let r = ranges.length - 1; r >= 0; r--) {
      const [from, to, current] = ranges[r];
      if (to <= start || from >= end) continue;
      const a = Math.max(from, start) - start;
      const b = Math.min(to, end) - start;
      node.splitText(b);
      const hit = node.splitText(a);
      const mark = h("mark", { class: current ? `${cls} current` : cls });
      hit.replaceWith(mark);
      mark.append(hit);
    }
  }
}

/** The first lines of a long text, cut at COLLAPSE_CHARS / COLLAPSE_LINES. */
function collapsed(text) {
  let cut = Math.min(text.length, COLLAPSE_CHARS);
  let nl = -1;
  for (let k = 0; k < COLLAPSE_LINES; k++) {
    nl = text.indexOf("\n", nl + 1);
    if (nl < 0 || nl >= cut) break;
    if (k === COLLAPSE_LINES - 1) cut = nl;
  }
  // Never cut a surrogate pair in two.
  const c = text.charCodeAt(cut - 1);
  if (c >= 0xd800 && c < 0xdc00) cut--;
  return cut < text.length ? text.slice(0, cut) : null;
}

const quote = (s) => JSON.stringify(s);

/** The UTF-16 index of code point `cp` of `text` (its length past the end). @param {string} text @param {number} cp */
export function utf16At(text, cp) {
  let i = 0;
  for (let k = 0; k < cp && i < text.length; k++) i += text.codePointAt(i) > 0xffff ? 2 : 1;
  return i;
}

/**
 * @typedef {object} View the compact form of a response the worker sends
 * @property {number} count
 * @property {string[]} roleNames
 * @property {Uint16Array} roles
 * @property {Float64Array} chars
 * @property {Uint32Array} blockStart
 * @property {Uint8Array} bytes the response bytes; texts are byte ranges of them
 * @property {Uint32Array} starts
 * @property {Uint32Array} ends
 * @property {[number, number, number, number]} segEnds where the run, injection, goal and history segments end (the core's)
 * @property {number} steps
 * @property {Uint32Array} stepStart the first message of each step, then the count
 * @property {{channel: string, entry_id: string}[]} injected
 * @property {number} prompt_chars
 * @property {boolean} context_overflow
 * @property {{run: string, injections: string, goal: string}} prefix_digests
 * @property {string | null} budget max_prompt_chars as a decimal string (exact)
 * @property {number} firstOver the first message over the budget (the core's), -1 if none
 * @property {number} changedFrom
 * @property {{run: boolean, injections: boolean, goal: boolean} | null} sameDigests
 */

/** HTMLElement where there is a DOM; elsewhere (Node, server-side
 * rendering) a plain class, so that importing this module never throws. */
const ElementBase = /** @type {typeof HTMLElement} */ (globalThis.HTMLElement ?? class {});

/**
 * The workers of the page, one per worker and module URL, shared by every
 * element (the module is compiled once): each element is a client of one,
 * named by a number in every message.
 * @type {Map<string, {worker: Worker, clients: Map<number, PromptView>}>}
 */
const workers = new Map();
let nextClient = 1;

export class PromptView extends ElementBase {
  static observedAttributes = ["request", "step", "theme"];
  /** Where the worker and the module are, unless attributes say (definePromptView).
   * @type {{workerUrl?: string | URL, wasmUrl?: string | URL}} */
  static urls = {};

  constructor() {
    super();
    const root = this.attachShadow({ mode: "open" });
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    root.adoptedStyleSheets = [sheet];
    /** @private */ this.ui = this.build(root);
    /** @private @type {Worker | null} */ this.worker = null;
    /** @private the element's number in its worker's messages */ this.client = nextClient++;
    /** @private @type {string | null} */ this.workerKey = null;
    /** @private */ this.gen = 0;
    /** @private */ this.shownGen = -1;
    /** @private @type {View | null} */ this.view = null;
    /** @private @type {any} */ this.trajectoryInfo = null;
    /** @private @type {any} */ this.lastError = null;
    /** @private @type {number | null} */ this._step = null;
    /** @private */ this._trajectory = false;
    /** @private @type {any} */ this._request = undefined;
    /** @private @type {Set<number>} */ this.expanded = new Set();
    /** @private @type {Set<number>} */ this.collapsedSegs = new Set();
    /** @private */ this.rows = new Int32Array(0);
    /** @private @type {Map<number, HTMLElement>} */ this.rowCache = new Map();
    /** @private */ this.focusRow = 0;
    /** @private @type {((gen: number) => void)[]} */ this.waiters = [];
    /** @private the requests and jobs sent to the worker, and their replies (protocol.js) */
    this.requests = new Requests((msg) => this.ensureWorker().postMessage({ ...msg, view: this.client }));
    /** "loading" | "ok" | "stale" | "error" | "empty" */
    this.state = "empty";
    /** @private */
    this.virtualizer = new Virtualizer({
      count: 0,
      getScrollElement: () => this.ui.list,
      estimateSize: () => 90,
      overscan: 4,
      observeElementRect,
      observeElementOffset,
      scrollToFn: elementScroll,
      measureElement,
      onChange: () => this.paintRows(),
    });
    /** @private @type {(() => void) | null} */ this.unmount = null;
    /** @private whether the next render scrolls to what the step added */ this.stepScroll = false;
    /** @private */ this.painting = false;
    /** @private the result whose invisible characters hiddenCounts holds @type {View | null} */ this.hiddenOf = null;
    /** @private the search's text ("" for none) */ this.queryText = "";
    /** @private @type {{message: number, block: number, from: number, to: number}[]} the search's hits, in order */ this.hits = [];
    /** @private @type {Map<number, number[]>} message → indexes into hits */ this.hitsByMessage = new Map();
    /** @private the current hit, -1 for none */ this.hit = -1;
    /** @private the result and limit the hits are of */ this.hitsOf = "";
    /** @private @type {Map<number, {count: number, tags: number}>} */ this.hiddenCounts = new Map();
    /** @private */ this.repaint = false;
    /** @private the generation of the ok result shown (-1: none) */ this.viewGen = -1;
    /** @private */ this._cacheBreakpoints = false;
    /** @private @type {{gen: number, breakpoints?: [number, number][], error?: any, reason?: string} | null} the cache breakpoints of result `gen` */
    this.marks = null;
    /** @private @type {Map<number, Map<number, number>>} message → block → breakpoint index (of the marks shown) */
    this.bpAt = new Map();
    /** @private @type {{gen: number, chars: number} | null} "new since the previous call" from code point `chars` of result `gen` */
    this.since = null;
  }

  connectedCallback() {
    this.ensureWorker();
    if (!this.unmount) {
      this.unmount = this.virtualizer._didMount();
      this.virtualizer._willUpdate();
    }
  }

  disconnectedCallback() {
    this.unmount?.();
    this.unmount = null;
  }

  /** @param {string} name @param {string | null} _old @param {string | null} value */
  attributeChangedCallback(name, _old, value) {
    if (name === "request" && value !== null && value !== this._attrText) this.setText(value);
    if (name === "step") this.step = value === null || value === "" ? null : Number(value);
  }

  /** Leaves the page's shared worker (it stops once no element uses it);
   * the element can be connected again and joins one then. */
  terminate() {
    const entry = this.workerKey === null ? undefined : workers.get(this.workerKey);
    if (entry) {
      entry.clients.delete(this.client);
      if (entry.clients.size === 0) {
        entry.worker.terminate();
        workers.delete(/** @type {string} */ (this.workerKey));
      } else entry.worker.postMessage({ type: MSG.DROP, view: this.client });
    }
    this.worker = null;
    this.workerKey = null;
  }

  // ---- public API ---------------------------------------------------------

  /** The request: an object (encoded by the binding), JSON text (judged by
   * the module, as the CLI does) or msgpack bytes (a Uint8Array). */
  get request() {
    return this._request;
  }

  set request(value) {
    if (typeof value === "string") this.setText(value);
    else if (value instanceof JsonBytes) this.post({ type: MSG.JSON_BYTES, bytes: value.bytes.slice() }, value);
    else if (value instanceof Uint8Array) this.post({ type: MSG.BYTES, bytes: value.slice() }, value);
    else this.post({ type: MSG.OBJECT, request: value }, value);
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
    if (fresh) this.resetView();
    return this.post({ type: MSG.TEXT, text, fresh, lineBreak }, text);
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
    if (fresh) this.resetView();
    return this.post({ type: MSG.JSON_BYTES, bytes: bytes.slice(), fresh }, new JsonBytes(bytes));
  }

  /**
   * Sets the request as msgpack bytes; `fresh` as for setText.
   * @param {Uint8Array} bytes
   * @param {{fresh?: boolean}} [opts]
   * @returns {number} the generation its result will carry
   */
  setBytes(bytes, { fresh = false } = {}) {
    if (fresh) this.resetView();
    return this.post({ type: MSG.BYTES, bytes: bytes.slice(), fresh }, bytes);
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
    this.requests.job(MSG.VERDICTS, { items }, onProgress);
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
    const m = await this.requests.request(MSG.COMPARE, { a, b });
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
    return this._cacheBreakpoints;
  }

  set cacheBreakpoints(on) {
    this._cacheBreakpoints = Boolean(on);
    if (!on) this.marks = null;
    this.post({ type: MSG.MARKS, on: this._cacheBreakpoints });
  }

  /** The cache breakpoints drawn: `[message, block]` pairs in prompt order
   * (null when none are drawn), or the export's error, for the result shown. */
  get breakpoints() {
    const m = this.shownMarks();
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
    this.since = chars === null ? null : { gen, chars };
    if (this.view) this.render();
  }

  /**
   * The request as a provider's request body (the binding's `export`,
   * docs/SPEC.md §7.13), exported in the element's worker: its JSON text
   * (`JSON.stringify` of the answer), or the error, with `gen` the
   * generation of the request exported.
   * @param {"anthropic" | "openai-chat" | "openai-responses"} provider
   * @param {object | null} [options]
   * @returns {Promise<{gen: number, text?: string, error?: {code: string, path: string, message: string}, location?: {from: number, to: number, exact: boolean} | null}>}
   */
  async exportRequest(provider, options = null) {
    const { gen, text, error, location } = await this.requests.request(MSG.EXPORT, { provider, options });
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
    this.requests.job(MSG.CACHE_REPORT, { items, runs }, onProgress);
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
    return this.post({ type: MSG.EDIT, changes });
  }

  /** Show the prompt as sent before step `k` (after k completed steps),
   * built with the incremental prompt; null shows the whole request. */
  get step() {
    return this._step;
  }

  set step(k) {
    const v = k === null || k === undefined || Number.isNaN(Number(k)) ? null : Math.max(0, Math.floor(Number(k)));
    if (v === this._step) return;
    this._step = v;
    // Once shown, the view scrolls to what this step added.
    this.stepScroll = v !== null;
    if (v !== null && !this._trajectory) this.trajectory = true;
    else this.render();
  }

  /** Whether the prompt is also built step by step (for `step`). */
  get trajectory() {
    return this._trajectory;
  }

  set trajectory(on) {
    this._trajectory = Boolean(on);
    this.post({ type: MSG.TRAJECTORY, on: this._trajectory });
  }

  /** Number of steps of the request shown (null before a result). */
  get stepCount() {
    return this.trajectoryInfo?.steps ?? this.view?.steps ?? null;
  }

  /** The generation of the newest request sent, and of the one shown. */
  get generation() {
    return this.gen;
  }

  get shownGeneration() {
    return this.shownGen;
  }

  /** The last error (code, path, message, offset, location), or null. */
  get error() {
    return this.lastError;
  }

  /** Summary of what is shown. */
  get summary() {
    const v = this.view;
    if (!v) return null;
    const lim = this.limit();
    return { messages: lim, promptChars: this.prefixChars(lim), contextOverflow: this.overflowAt(lim), stale: this.state === "stale" };
  }

  /** Resolves once the result of generation `gen` (or a newer one) is in the DOM. */
  whenRendered(gen = this.gen) {
    if (this.shownGen >= gen) return Promise.resolve(this.shownGen);
    return new Promise((resolve) => this.waiters.push((g) => g >= gen && (resolve(g), true)));
  }

  /** The full response of the last accepted request as JSON text. */
  responseJSON() {
    return /** @type {Promise<string | null>} */ (this.askResponse(false));
  }

  /** The exact response bytes (msgpack) of the last accepted request, as
   * the module returned them (for tests and tools: what the CLI's
   * `--out msgpack` writes for the same request). */
  responseBytes() {
    return /** @type {Promise<Uint8Array | null>} */ (this.askResponse(true));
  }

  /** The module as the element's worker compiled it (a WebAssembly.Module):
   * `loadAssembler({ module })` then builds an assembler on this thread
   * without compiling it again. @returns {Promise<WebAssembly.Module>} */
  async compiledModule() {
    return (await this.requests.request(MSG.MODULE)).module;
  }

  /** @private The worker's copy of the last accepted response: its bytes, or JSON text. */
  async askResponse(bytes) {
    const m = await this.requests.request(MSG.RESPONSE, { bytes });
    return m.bytes === undefined ? m.text : m.bytes;
  }

  /** Scrolls message `i` into view and focuses its row. */
  scrollToMessage(i) {
    const row = this.rows.indexOf(i);
    if (row < 0) return;
    this.focusRow = row;
    this.virtualizer.scrollToIndex(row, { align: "start" });
    requestAnimationFrame(() => this.rowCache.get(row)?.focus());
  }

  /**
   * Scrolls to step `k` (1-based: `steps[k - 1]`, its raw output first) and
   * focuses it; false when the request has no such step (or it is not shown).
   * @param {number} k
   */
  goToStep(k) {
    const v = this.view;
    if (!v || !Number.isInteger(k) || k < 1 || k > v.steps) return false;
    const i = v.stepStart[k - 1];
    if (i >= this.limit() || this.rows.indexOf(i) < 0) return false;
    this.scrollToMessage(i);
    return true;
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
    this.queryText = query;
    this.findHits();
    if (this.hits.length) this.showHit(0);
    else this.repaintRows();
    return this.hits.length;
  }

  /** Goes to the next hit (`dir` 1) or the previous one (-1), wrapping.
   * @param {1 | -1} [dir] */
  nextHit(dir = 1) {
    const n = this.hits.length;
    if (n) this.showHit((((this.hit + dir) % n) + n) % n);
  }

  /** The search: its text, the number of hits, the current one (0-based,
   * -1 for none) and the message it is in. */
  get searchState() {
    const h = this.hits[this.hit];
    return { query: this.queryText, count: this.hits.length, current: this.hit, message: h ? h.message : -1 };
  }

  /** @private Finds the hits of the search in the messages shown. */
  findHits() {
    const v = this.view;
    this.hits = [];
    this.hitsByMessage = new Map();
    this.hitsOf = v ? `${this.shownGen}:${this.limit()}` : "";
    if (!v || !this.queryText) {
      this.hit = -1;
      return;
    }
    const re = new RegExp(this.queryText.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "giu");
    const lim = this.limit();
    for (let i = 0; i < lim && this.hits.length < MAX_HITS; i++) {
      for (let b = v.blockStart[i]; b < v.blockStart[i + 1]; b++) {
        const text = blockText(/** @type {any} */ (v), b);
        re.lastIndex = 0;
        for (let m = re.exec(text); m && this.hits.length < MAX_HITS; m = re.exec(text)) {
          const list = this.hitsByMessage.get(i) ?? [];
          list.push(this.hits.length);
          this.hitsByMessage.set(i, list);
          this.hits.push({ message: i, block: b - v.blockStart[i], from: m.index, to: m.index + m[0].length });
        }
      }
    }
    this.hit = Math.min(this.hit, this.hits.length - 1);
    if (this.hit < 0 && this.hits.length) this.hit = 0;
  }

  /** @private Makes hit k the current one and goes to it. */
  showHit(k) {
    const hit = this.hits[k];
    if (!hit) return;
    this.hit = k;
    const text = /** @type {string[]} */ (this.messageTexts(hit.message))[hit.block];
    const cut = collapsed(text);
    if (cut !== null && hit.to > cut.length) this.expanded.add(hit.message);
    const folded = this.collapsedSegs.has(this.segOf(hit.message));
    if (folded) this.collapsedSegs.delete(this.segOf(hit.message));
    if (folded) this.render();
    else this.repaintRows();
    this.scrollToMessage(hit.message);
    // Then the hit itself into view (a long message's hit may be far below its start).
    requestAnimationFrame(() =>
      requestAnimationFrame(() => {
        const row = this.rowCache.get(this.rows.indexOf(hit.message));
        row?.querySelector("mark.hit.current")?.scrollIntoView({ block: "center" });
        this.emit("polyloop-search", this.searchState);
      }),
    );
  }

  /** @private Puts every row in view again (their marks changed). */
  repaintRows() {
    this.rowCache.clear();
    this.ui.rows.replaceChildren();
    this.virtualizer.setOptions({ ...this.virtualizer.options, getItemKey: this.rowKeys() });
    this.virtualizer._willUpdate();
    this.paintRows();
  }

  /** The texts of message `i`'s blocks (for tests and tools). */
  messageTexts(i) {
    const v = this.view;
    if (!v || i < 0 || i >= v.count) return null;
    const out = [];
    for (let b = v.blockStart[i]; b < v.blockStart[i + 1]; b++) out.push(blockText(/** @type {any} */ (v), b));
    return out;
  }

  // ---- worker -------------------------------------------------------------

  /** @private The page's worker for this element's worker and module URLs
   * (started by the first element that needs it). */
  ensureWorker() {
    if (this.worker) return this.worker;
    const defaults = /** @type {typeof PromptView} */ (this.constructor).urls ?? {};
    const custom = this.getAttribute("worker-url") ?? (defaults.workerUrl === undefined ? null : String(defaults.workerUrl));
    const wasm = this.getAttribute("wasm-url") ?? (defaults.wasmUrl === undefined ? null : String(defaults.wasmUrl));
    const wasmUrl = wasm === null ? undefined : new URL(wasm, document.baseURI).href;
    const key = `${custom ?? ""}\n${wasmUrl ?? ""}`;
    let entry = workers.get(key);
    if (!entry) {
      // The default in the form bundlers recognise (Vite emits the worker).
      const w = custom
        ? new Worker(new URL(custom, document.baseURI), { type: "module" })
        : new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
      // Not the literal form: a bundler would emit worker.js a second time, unbundled, for this URL (which
      // only names the worker in an error message).
      const workerUrl = custom ? new URL(custom, document.baseURI) : new URL(WORKER_FILE, import.meta.url);
      const clients = new Map();
      let started = false;
      w.onmessage = (ev) => {
        const m = ev.data;
        if (m.type === MSG.READY) started = true;
        if (m.view === undefined) for (const el of clients.values()) el.onWorker(m);
        else clients.get(m.view)?.onWorker(m);
      };
      w.onerror = (ev) => {
        // Before it answered, the worker did not load (most often: a bundle
        // without the element's worker.js, which esbuild does not emit).
        const [code, message] = started
          ? ["internal", `the assembly worker failed: ${ev.message ?? "unknown error"}`]
          : ["worker_failed", workerFailed(workerUrl.href, ev.message)];
        for (const el of clients.values()) el.fatal(message, code);
      };
      w.postMessage({ type: MSG.INIT, wasmUrl });
      entry = { worker: w, clients };
      workers.set(key, entry);
    }
    entry.clients.set(this.client, this);
    this.worker = entry.worker;
    this.workerKey = key;
    if (this.state === "empty") this.setState("loading");
    return entry.worker;
  }

  /** @private */
  post(msg, request) {
    if (request !== undefined) this._request = request;
    const gen = ++this.gen;
    this.ensureWorker().postMessage({ ...msg, view: this.client, gen });
    return gen;
  }

  /** @private */
  onWorker(m) {
    const tIn = performance.now();
    if (this.requests.settle(m)) return;
    if (m.type === MSG.MARKS) {
      if (!this._cacheBreakpoints || m.gen !== this.viewGen) return;
      // The breakpoints the result carried, confirmed: nothing to draw again.
      const shown = this.marks?.gen === m.gen ? this.marks : null;
      this.marks = m;
      if (shown && JSON.stringify([shown.breakpoints, shown.error]) === JSON.stringify([m.breakpoints, m.error])) return;
      const drawn = this.bpAt.size;
      this.indexMarks();
      this.renderMarks();
      // Rows drawn again only when they gain or lose a marker (a 16 MB prompt gets none: no long task).
      if (drawn || this.bpAt.size) this.repaintRows();
      return;
    }
    if (m.type === MSG.FATAL) return this.fatal(m.message);
    if (m.type === MSG.READY) {
      performance.mark("polyloop:worker-ready");
      return;
    }
    if (m.type !== MSG.RESULT || m.gen < this.shownGen) return;
    this.shownGen = m.gen;
    if (m.ok) {
      const first = !this.view;
      this.view = m.columns;
      this.viewGen = m.gen;
      if (m.marks) this.marks = { gen: m.gen, ...m.marks };
      this.trajectoryInfo = m.trajectory;
      this.lastError = null;
      if (first) this.focusRow = 0;
      this.setState("ok");
      this.render();
      const s = this.summary;
      this.emit("polyloop-result", { gen: m.gen, ...s, ms: m.ms, stepCount: this.stepCount });
    } else {
      this.lastError = { ...m.error, location: m.location ?? null, syntax: Boolean(m.syntax), template: m.template ?? null };
      this.setState(this.view ? "stale" : "error");
      this.renderError();
      this.emit("polyloop-error", { gen: m.gen, ...this.lastError });
    }
    /** Timing of the last result (ms): in the worker, and rendering here. */
    this.lastTiming = { ...(m.timing ?? {}), worker: m.msTotal ?? m.ms, render: performance.now() - tIn };
    this.settle(m.gen);
  }

  /** @private */
  settle(gen) {
    this.waiters = this.waiters.filter((w) => !w(gen));
    this.emit("polyloop-rendered", { gen });
  }

  /** @private */
  fatal(message, code = "internal") {
    this.lastError = { code, path: "", message, location: null, syntax: false, template: null };
    this.setState(this.view ? "stale" : "error");
    this.renderError();
    this.emit("polyloop-error", { gen: this.gen, ...this.lastError });
    this.settle(this.gen);
  }

  /** @private */
  emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }

  // ---- DOM ----------------------------------------------------------------

  /** @private @param {ShadowRoot} root */
  build(root) {
    const state = h("span", { class: "state", role: "status", "aria-live": "polite" });
    const totals = h("span", { class: "totals" });
    const fill = h("div", { class: "fill" });
    const label = h("span", { class: "label" });
    const gauge = h("div", { class: "gauge none", title: "prompt_chars against max_prompt_chars" }, fill, label);
    const legend = h("span", { class: "legend", "aria-hidden": "true" }, ...SEGMENTS.map((s) => h("span", { class: `seg-${s}` }, s)));
    const bar = h("div", { class: "bar", part: "bar" }, state, totals, gauge, legend);
    const banner = h("div", { class: "stale-banner", hidden: true });
    const error = h("div", { class: "error", role: "alert", hidden: true });
    const cache = h("div", { class: "cache", "aria-live": "polite" });
    const bps = h("div", { class: "bps" });
    const rows = h("div", { class: "rows" });
    const list = h(
      "div",
      { class: "list", tabindex: "0", role: "region", "aria-label": "Assembled messages (arrow keys move between rows, Enter expands)" },
      rows,
    );
    const digestBody = h("tbody");
    const digestNote = h("span", { class: "stale-note" });
    const digests = h("details", { class: "digests" }, h("summary", {}, "Prefix digests", digestNote), h("table", {}, digestBody));
    // One frame fills the host whatever display the page gives it (a host rule `display: block; height:
    // 300px` leaves no blank band: the list takes the height left).
    root.append(h("div", { class: "frame" }, bar, banner, error, cache, bps, list, digests));
    list.addEventListener("keydown", (e) => this.onKey(e));
    list.addEventListener("copy", (e) => this.onCopy(/** @type {ClipboardEvent} */ (e)));
    rows.addEventListener("click", (e) => this.onClick(e));
    return { state, totals, gauge, fill, label, banner, error, cache, bps, list, rows, digests, digestBody, digestNote };
  }

  /** @private */
  setState(s) {
    this.state = s;
    this.dataset.state = s;
    this.classList.toggle("stale-view", s === "stale");
    const text = { loading: "loading…", ok: "assembled", stale: "stale", error: "error", empty: "no request" }[s];
    this.ui.state.textContent = text;
    this.ui.state.dataset.state = s;
    const e = this.lastError;
    this.ui.banner.hidden = s !== "stale";
    if (s === "stale" && e) {
      this.ui.banner.textContent = e.syntax
        ? "Stale: the request is not valid JSON; the prompt below is from the last request that assembled."
        : `Stale: the request is rejected (${e.code}); the prompt below is from the last request that assembled.`;
    }
    if (s === "ok") this.ui.error.hidden = true;
    this.renderMarks();
    // "Since the previous result" describes a result: none while rejected.
    this.ui.cache.hidden = s !== "ok";
    this.markResult(s);
  }

  /** @private One state per view: what describes a result (totals, gauge,
   * prefix digests) is the current request's when "ok", visibly the last
   * valid request's when "stale", and cleared when there is none. */
  markResult(s) {
    const { totals, gauge, fill, label, digests, digestBody, digestNote } = this.ui;
    const stale = s === "stale";
    if (!this.view || (s !== "ok" && !stale)) {
      totals.textContent = "";
      delete totals.dataset.value;
      gauge.className = "gauge none";
      fill.style.width = "0";
      label.textContent = s === "loading" ? "" : "no result";
      delete label.dataset.value;
      digestBody.replaceChildren();
      digestNote.textContent = s === "loading" ? "" : ": none (no request assembled)";
      digests.classList.remove("stale");
      gauge.title = "prompt_chars against max_prompt_chars";
      return;
    }
    const last = "of the last request that assembled, not the one given";
    gauge.classList.toggle("stale", stale);
    gauge.title = stale ? `prompt_chars against max_prompt_chars ${last}` : "prompt_chars against max_prompt_chars";
    label.textContent = stale ? `last valid · ${label.dataset.value ?? ""}` : (label.dataset.value ?? "");
    totals.classList.toggle("stale", stale);
    if (totals.dataset.value !== undefined) totals.textContent = stale ? `last valid · ${totals.dataset.value}` : totals.dataset.value;
    digests.classList.toggle("stale", stale);
    digestNote.textContent = stale ? ` (stale: ${last})` : "";
  }

  /** @private Drops the prompt shown (a new document): nothing stale stays. */
  resetView() {
    this.view = null;
    this.viewGen = -1;
    this.marks = null;
    this.since = null;
    this.trajectoryInfo = null;
    this.lastError = null;
    this.rows = new Int32Array(0);
    this.rowCache.clear();
    this.ui.rows.replaceChildren();
    this.ui.rows.style.height = "0px";
    this.ui.totals.textContent = "";
    this.ui.cache.replaceChildren();
    this.ui.error.hidden = true;
    this.expanded.clear();
    this.virtualizer.setOptions({ ...this.virtualizer.options, count: 0 });
    this.setState("loading");
  }

  /** @private After a render in step mode: scrolls to the first message
   * step k added (those are marked "new at step k"), once per step set. */
  scrollToStep() {
    const t = this.trajectoryInfo;
    if (!this.stepScroll || !t || this._step === null) return;
    this.stepScroll = false;
    const k = Math.min(this._step, t.steps);
    if (k === 0) return;
    const row = this.rows.indexOf(t.stepStart[k - 1]);
    if (row >= 0) this.virtualizer.scrollToIndex(row, { align: "start" });
  }

  /** @private messages shown: all, or those before step `step`. */
  limit() {
    const v = this.view;
    if (!v) return 0;
    const t = this.trajectoryInfo;
    if (this._step === null || !t) return v.count;
    return t.stepStart[Math.min(this._step, t.steps)];
  }

  /** @private */
  prefixChars(n) {
    let s = 0;
    const c = /** @type {View} */ (this.view).chars;
    for (let i = 0; i < n; i++) s += c[i];
    return s;
  }

  /** @private whether the first n messages exceed the budget: the running
   * sum first exceeds it at v.firstOver, and never falls back */
  overflowAt(n) {
    const v = /** @type {View} */ (this.view);
    return v.firstOver >= 0 && v.firstOver < n;
  }

  /** @private the first message of segment s */
  segStart(s) {
    return s === 0 ? 0 : /** @type {View} */ (this.view).segEnds[s - 1];
  }

  /** @private the segment of message i */
  segOf(i) {
    const e = /** @type {View} */ (this.view).segEnds;
    return i < e[0] ? 0 : i < e[1] ? 1 : i < e[2] ? 2 : 3;
  }

  /** @private Rebuilds the row index and repaints. */
  render() {
    const v = this.view;
    if (!v) return;
    const lim = this.limit();
    if (this.queryText && this.hitsOf !== `${this.shownGen}:${lim}`) {
      this.findHits();
      this.hitsOf = `${this.shownGen}:${lim}`;
      this.rowCache.clear();
      this.ui.rows.replaceChildren();
      this.emit("polyloop-search", this.searchState);
    }
    const rows = [];
    for (let s = 0; s < 4; s++) {
      rows.push(-1 - s);
      if (this.collapsedSegs.has(s)) continue;
      for (let i = this.segStart(s); i < Math.min(v.segEnds[s], lim); i++) rows.push(i);
    }
    // The same rows (an edit that changed text, not the message list): the
    // same row keys, so the virtualizer keeps its measurements instead of
    // recomputing all of them (30,000 rows at 16 MB: a long main-thread
    // task on a busy machine).
    const same = rows.length === this.rows.length && rows.every((r, k) => r === this.rows[k]);
    this.rows = Int32Array.from(rows);
    this.rowCache.clear();
    this.ui.rows.replaceChildren();
    this.virtualizer.setOptions({
      ...this.virtualizer.options,
      count: this.rows.length,
      getItemKey: same ? this.virtualizer.options.getItemKey : this.rowKeys(),
    });
    this.virtualizer._willUpdate();
    this.indexMarks();
    this.renderTotals(lim);
    this.renderCache(lim);
    this.renderMarks();
    this.renderDigests();
    this.paintRows();
    this.scrollToStep();
  }

  /** @private A new key function (the virtualizer recomputes its
   * measurements when it changes): a row's key is its message or segment and
   * whether it is expanded. */
  rowKeys() {
    const marked = this.bpAt;
    const since = this.sinceFrom();
    return (/** @type {number} */ i) => {
      const r = this.rows[i];
      return `${r}:${this.expanded.has(r) ? 1 : 0}:${marked.has(r) ? 1 : 0}:${since !== null && r >= since[0] ? 1 : 0}`;
    };
  }

  /** @private Puts the visible rows (only those) into the DOM: new rows are
   * added and measured, rows out of view removed, the others moved. Calls
   * made while painting (the virtualizer reacting to a measurement) repaint
   * once more instead of recursing. */
  paintRows() {
    if (!this.view) return;
    if (this.painting) {
      this.repaint = true;
      return;
    }
    this.painting = true;
    try {
      for (let pass = 0; pass < 4; pass++) {
        this.repaint = false;
        const items = this.virtualizer.getVirtualItems();
        const height = `${this.virtualizer.getTotalSize()}px`;
        if (this.ui.rows.style.height !== height) this.ui.rows.style.height = height;
        const keep = new Set();
        const fresh = [];
        for (const it of items) {
          keep.add(it.index);
          let el = this.rowCache.get(it.index);
          if (!el) {
            el = this.rowElement(it.index);
            this.rowCache.set(it.index, el);
            this.ui.rows.append(el);
            fresh.push(el);
          }
          const tr = `translateY(${it.start}px)`;
          if (el.style.transform !== tr) el.style.transform = tr;
        }
        for (const [i, el] of this.rowCache) {
          if (!keep.has(i)) {
            el.remove();
            this.rowCache.delete(i);
          }
        }
        for (const el of fresh) this.virtualizer.measureElement(el);
        if (!this.repaint) break;
      }
    } finally {
      this.painting = false;
    }
  }

  /** @private @param {number} row */
  rowElement(row) {
    const v = /** @type {View} */ (this.view);
    const r = this.rows[row];
    if (r < 0) {
      const s = -1 - r;
      const name = SEGMENTS[s];
      const folded = this.collapsedSegs.has(s);
      const n = this.segmentCount(s);
      const detail =
        s === 3
          ? plural(this.stepsBefore(this.limit()), "step")
          : s === 1
            ? n
              ? `${plural(n, "entry", "entries")}, by code point`
              : "empty"
            : plural(n, "message");
      const el = h(
        "div",
        { class: "row head", "data-index": row, "data-segment": name, role: "heading", "aria-level": "2", tabindex: "-1" },
        `${SEGMENT_TITLES[name]} · ${detail}`,
        n
          ? h(
              "button",
              {
                type: "button",
                "data-fold": s,
                "aria-expanded": String(!folded),
                "aria-label": `${folded ? "Expand" : "Collapse"} ${SEGMENT_TITLES[name]}`,
              },
              folded ? "expand" : "collapse",
            )
          : null,
      );
      return el;
    }
    const i = r;
    const seg = SEGMENTS[this.segOf(i)];
    const texts = this.messageTexts(i) ?? [];
    const t = this.trajectoryInfo;
    const lim = this.limit();
    const isNew = this._step !== null && t && this._step > 0 && i >= t.stepStart[Math.min(this._step, t.steps) - 1];
    const firstOver = v.firstOver >= 0 && v.firstOver < lim ? v.firstOver : -1;
    const isOver = i === firstOver;
    const isChanged = this._step === null && v.changedFrom === i && v.changedFrom >= 0;
    const open = this.expanded.has(i);
    const since = this.sinceFrom();
    // What is new since the previous call: all of this message (0), or from code point `sinceAt` of its text.
    const sinceAt = since === null || i < since[0] ? -1 : i === since[0] ? since[1] : 0;
    let cpBefore = 0;
    const bps = this.bpAt.get(i);
    const blocks = [];
    let long = false;
    const hitsHere = this.hitsByMessage.get(i);
    texts.forEach((text, b) => {
      const cut = open ? null : collapsed(text);
      if (cut !== null) long = true;
      const block = textBlock(cut ?? text);
      if (hitsHere) {
        const shownLength = (cut ?? text).length;
        /** @type {[number, number, boolean][]} */
        const ranges = [];
        for (const k of hitsHere) {
          const hit = this.hits[k];
          if (hit.block === b && hit.to <= shownLength) ranges.push([hit.from, hit.to, k === this.hit]);
        }
        markHits(block, ranges);
      }
      if (sinceAt > 0) {
        const shown = cut ?? text;
        const from = utf16At(text, Math.max(0, sinceAt - cpBefore));
        if (from < shown.length) markHits(block, [[from, shown.length, false]], "since");
        cpBefore += [...text].length;
      }
      blocks.push(block);
      const k = bps?.get(b);
      if (k !== undefined) {
        const n = /** @type {any} */ (this.marks).breakpoints.length;
        blocks.push(
          h(
            "div",
            {
              class: "bp",
              "data-breakpoint": k + 1,
              title: "Anthropic's cache_control on this block (the export's default policy): the prompt up to here is cached as a prefix",
            },
            `cache breakpoint ${k + 1} of ${n}`,
          ),
        );
      }
    });
    const anyLong = open || long;
    const hidden = this.invisibleIn(i, texts);
    const el = h(
      "article",
      {
        class: `row`,
        "data-index": row,
        "data-message": i,
        tabindex: "-1",
        "aria-label": `message ${i}, ${v.roleNames[v.roles[i]]}, ${plural(v.chars[i], "char")}`,
      },
      h(
        "div",
        {
          class: `msg seg-${seg}${isNew ? " is-new" : ""}${isOver ? " is-over" : ""}${sinceAt === 0 ? " is-since" : ""}`,
          "data-segment": seg,
        },
        h(
          "div",
          { class: "meta" },
          h("span", { class: "role" }, v.roleNames[v.roles[i]]),
          h("span", { class: "where" }, `#${i} · ${this.where(i)}`),
          seg === "injection" ? h("span", { class: "entry", title: "entry_id" }, `entry ${v.injected[i - v.segEnds[0]].entry_id}`) : null,
          isNew ? h("span", { class: "badge new", title: `added by step ${this._step}` }, `new at step ${this._step}`) : null,
          sinceAt >= 0
            ? h(
                "span",
                {
                  class: "badge since",
                  "data-since": sinceAt,
                  title: "past the prefix this call shares with the previous call of the run (its cache report): not cacheable",
                },
                sinceAt === 0 ? "new since the previous call" : `new since the previous call from char ${fmt.format(sinceAt)}`,
              )
            : null,
          isOver
            ? h(
                "span",
                { class: "badge over", title: "the budget (max_prompt_chars) is first exceeded in this message" },
                "budget exceeded here",
              )
            : null,
          isChanged
            ? h(
                "span",
                {
                  class: "badge changed",
                  title: "the first message that differs from the previous result; those above are byte-identical",
                },
                "changed since last result",
              )
            : null,
          hidden.count
            ? h(
                "span",
                {
                  class: `badge hidden${hidden.tags ? " tags" : ""}`,
                  "data-invisible": hidden.count,
                  title: "characters a reader does not see (docs/SPEC.md §7.8), each marked with its code point in the text",
                },
                `${plural(hidden.count, "invisible character")}${hidden.tags ? ` · ${plural(hidden.tags, "tag character")} spelling hidden text` : ""}`,
              )
            : null,
          h("span", { class: "chars", title: "message_chars: code points" }, plural(v.chars[i], "char")),
        ),
        ...blocks,
        anyLong
          ? h(
              "button",
              { type: "button", class: "more", "data-expand": i, "aria-expanded": String(open) },
              open
                ? "Collapse"
                : `Show all (${plural(v.chars[i], "character")}${hidden.count ? `, ${fmt.format(hidden.count)} invisible` : ""})`,
            )
          : null,
      ),
    );
    return el;
  }

  /** @private How many invisible characters (and tag characters) message
   * i's texts hold, counted once per result. @param {number} i @param {string[]} texts */
  invisibleIn(i, texts) {
    if (this.hiddenOf !== this.view) {
      this.hiddenOf = this.view;
      this.hiddenCounts = new Map();
    }
    let got = this.hiddenCounts.get(i);
    if (!got) {
      let count = 0;
      let tags = 0;
      for (const t of texts) {
        count += countInvisible(t);
        tags += t.match(/[\u{e0020}-\u{e007e}]/gu)?.length ?? 0;
      }
      got = { count, tags };
      this.hiddenCounts.set(i, got);
    }
    return got;
  }

  /** @private messages of segment s (within the shown limit) */
  segmentCount(s) {
    const v = /** @type {View} */ (this.view);
    const lim = this.limit();
    return Math.max(0, Math.min(v.segEnds[s], lim) - this.segStart(s));
  }

  /** @private where message i comes from in the request */
  where(i) {
    const v = /** @type {View} */ (this.view);
    const [run, inj, goal] = v.segEnds;
    if (i < run) return `run_messages[${i}]`;
    if (i < inj) {
      const entry = v.injected[i - run];
      let k = 0;
      for (let j = run; j < i; j++) if (v.injected[j - run].channel === entry.channel) k++;
      return `injections[${quote(entry.channel)}][${k}]`;
    }
    if (i < goal) return `goal_messages[${i - inj}]`;
    const s = this.stepOf(i);
    return i === v.stepStart[s] ? `steps[${s}].raw_output` : `steps[${s}].observation (rendered)`;
  }

  /** @private The step message i belongs to (a history message): the last
   * step starting at or before it (step_start, binary search). */
  stepOf(i) {
    const st = /** @type {View} */ (this.view).stepStart;
    let lo = 0;
    let hi = st.length - 2;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (st[mid] <= i) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** @private How many steps start before message n. */
  stepsBefore(n) {
    const v = /** @type {View} */ (this.view);
    let k = 0;
    while (k < v.steps && v.stepStart[k] < n) k++;
    return k;
  }

  /** @private The cache breakpoints of the result shown, or null. */
  shownMarks() {
    const m = this.marks;
    return m && this._cacheBreakpoints && this.view && m.gen === this.viewGen ? m : null;
  }

  /** @private Indexes the breakpoints shown (none in step mode). */
  indexMarks() {
    this.bpAt = new Map();
    const list = this._step === null ? this.shownMarks()?.breakpoints : null;
    list?.forEach(([i, b], k) => {
      const at = this.bpAt.get(i) ?? new Map();
      at.set(b, k);
      this.bpAt.set(i, at);
    });
  }

  /** @private Where "new since the previous call" starts in the result
   * shown: [message, code point in it], or null. */
  sinceFrom() {
    const s = this.since;
    const v = this.view;
    if (!s || !v || s.gen !== this.viewGen || this._step !== null) return null;
    let left = s.chars;
    for (let i = 0; i < v.count; i++) {
      if (left < v.chars[i]) return [i, left];
      left -= v.chars[i];
    }
    return null;
  }

  /** @private The line saying where the cache breakpoints are (or why none are drawn). */
  renderMarks() {
    const el = this.ui.bps;
    const m = this.shownMarks();
    if (!this._cacheBreakpoints || !this.view) return void el.replaceChildren();
    const title = h(
      "b",
      {},
      this.state === "stale" ? "Anthropic cache breakpoints (of the last valid request): " : "Anthropic cache breakpoints: ",
    );
    if (this._step !== null || this._trajectory) el.replaceChildren(title, "drawn on the whole request (not step by step).");
    else if (!m) el.replaceChildren(title, "exporting…");
    else if (m.error)
      el.replaceChildren(title, "none, the export is refused: ", h("span", { class: "code" }, m.error.code), ` at ${m.error.path}`);
    else if (m.reason) el.replaceChildren(title, m.reason);
    else {
      const list = /** @type {[number, number][]} */ (m.breakpoints);
      const at = list.map(([i, b]) => (b ? `#${i} block ${b}` : `#${i}`)).join(", ");
      el.replaceChildren(title, list.length ? `${list.length} (the default policy, at most 4), after ${at}.` : "none.");
    }
  }

  /** @private */
  renderTotals(lim) {
    const v = /** @type {View} */ (this.view);
    const chars = this.prefixChars(lim);
    const t = this.trajectoryInfo;
    const stepNote = this._step !== null && t ? ` · as sent after ${Math.min(this._step, t.steps)} of ${plural(t.steps, "step")}` : "";
    this.ui.totals.dataset.value = `${plural(chars, "char")} · ${plural(lim, "message")}${stepNote}`;
    this.ui.gauge.className = "gauge";
    this.showLabel(this.gaugeLabel(v, chars, lim));
  }

  /** @private Shows the totals and the gauge's label (marked when stale). */
  showLabel(text) {
    this.ui.label.dataset.value = text;
    this.markResult(this.state);
  }

  /** @private The gauge's fill and classes; its label. */
  gaugeLabel(v, chars, lim) {
    const { gauge, fill } = this.ui;
    if (v.budget === null) {
      fill.style.width = "0";
      gauge.classList.add("none");
      return "no budget";
    }
    // The budget in integers (BigInt): exact at any size; the share used
    // in basis points, for the gauge's width.
    const b = BigInt(v.budget);
    const c = BigInt(chars);
    const bp = b > 0n ? Number((c * 10000n) / b) : c > 0n ? Infinity : 0;
    fill.style.width = `${Math.min(100, bp / 100)}%`;
    if (this.overflowAt(lim)) {
      gauge.classList.add("over");
      return `context overflow · ${fmt.format(chars)} / ${fmt.format(b)}`;
    }
    if (c * 10n > b * 9n) gauge.classList.add("warn");
    return `${fmt.format(chars)} / ${fmt.format(b)}`;
  }

  /** @private what stayed byte-identical (cacheable) */
  renderCache(lim) {
    const v = /** @type {View} */ (this.view);
    const c = this.ui.cache;
    const t = this.trajectoryInfo;
    if (this._step !== null && t) {
      const k = Math.min(this._step, t.steps);
      if (k === 0) {
        c.replaceChildren(h("b", {}, "Step 0: "), "the prompt before any step (run, injections, goal).");
      } else {
        const prev = this.prefixChars(t.stepStart[k - 1]);
        c.replaceChildren(
          h("b", {}, `Step ${k}: `),
          h("span", { class: "same" }, "run, injections and goal unchanged (same prefix digests)"),
          `; the whole prompt of step ${k - 1} (${plural(prev, "char")}) is a byte-identical prefix: cacheable. Step ${k} added ${plural(this.prefixChars(lim) - prev, "char")}.`,
        );
      }
      return;
    }
    if (!v.sameDigests) {
      c.replaceChildren();
      return;
    }
    const parts = [h("b", {}, "Since the previous result: ")];
    for (const [k, name] of /** @type {const} */ ([
      ["run", "run"],
      ["injections", "injections"],
      ["goal", "goal"],
    ])) {
      parts.push(
        h(
          "span",
          { class: v.sameDigests[k] ? "same" : "changed", "data-digest-state": k },
          `${name} ${v.sameDigests[k] ? "identical" : "changed"}`,
        ),
        " · ",
      );
    }
    if (v.changedFrom < 0) parts.push("every message byte-identical.");
    else parts.push(`messages before #${v.changedFrom} byte-identical (${plural(this.prefixChars(v.changedFrom), "char")} cacheable).`);
    c.replaceChildren(...parts);
  }

  /** @private */
  renderDigests() {
    const v = /** @type {View} */ (this.view);
    this.ui.digestBody.replaceChildren(
      ...["run", "injections", "goal"].map((k) =>
        h(
          "tr",
          {},
          h("td", {}, k),
          h("td", { class: "d", "data-digest": k }, v.prefix_digests[k]),
          h("td", {}, v.sameDigests ? (v.sameDigests[k] ? "unchanged" : "changed") : ""),
        ),
      ),
    );
  }

  /** @private */
  renderError() {
    const e = this.lastError;
    const panel = this.ui.error;
    if (!e) {
      panel.hidden = true;
      return;
    }
    const parts = [
      h("div", {}, h("span", { class: "code" }, e.code), e.path ? " at " : "", e.path ? h("span", { class: "path" }, e.path) : ""),
      h("div", { class: "message" }, e.message),
    ];
    const tpl = e.template;
    if (tpl) {
      const cps = [...tpl.text];
      const offset = tpl.offset;
      const before = cps.slice(0, offset).join("");
      const at = cps[offset];
      const after = cps.slice(offset + 1).join("");
      const line = before.split("\n").length;
      const column = [...before.slice(before.lastIndexOf("\n") + 1)].length + 1;
      const mark =
        at === undefined
          ? h("mark", { class: "end", "data-offset": offset, title: "end of the template" }, "\u2038")
          : h("mark", { "data-offset": offset }, at === "\n" ? "\u21b5\n" : at);
      parts.push(
        h("div", { class: "template", "data-template": "" }, before, mark, after),
        h(
          "div",
          { class: "column", "data-column": column, "data-line": line },
          `line ${line}, column ${column} (code-point offset ${offset})`,
        ),
      );
    }
    if (e.location) {
      const b = h(
        "button",
        { type: "button", class: "locate" },
        e.syntax ? "Show the syntax error in the editor" : `Show ${e.path || "the request"} in the editor`,
      );
      b.addEventListener("click", () => this.emit("polyloop-locate", { ...e.location, code: e.code, path: e.path }));
      parts.push(h("div", {}, b));
    }
    panel.replaceChildren(...parts);
    panel.hidden = false;
  }

  /** @private */
  onClick(e) {
    const t = /** @type {HTMLElement} */ (e.target);
    const fold = t.closest?.("[data-fold]");
    const root = /** @type {ShadowRoot} */ (this.shadowRoot);
    if (fold) {
      const s = Number(fold.getAttribute("data-fold"));
      const had = root.activeElement === fold;
      if (this.collapsedSegs.has(s)) this.collapsedSegs.delete(s);
      else this.collapsedSegs.add(s);
      this.render();
      if (had) this.refocus(`[data-fold="${s}"]`);
      return;
    }
    const more = t.closest?.("[data-expand]");
    if (more) {
      const i = Number(more.getAttribute("data-expand"));
      const had = root.activeElement === more;
      this.toggleExpand(i);
      if (had) this.refocus(`[data-expand="${i}"]`);
    }
  }

  /** @private Focus back on the control `selector` names (its row was drawn again, so the element that had
   * focus is gone): now if it is in the DOM, else once the rows are painted. */
  refocus(selector) {
    const root = /** @type {ShadowRoot} */ (this.shadowRoot);
    const focus = () => {
      const el = /** @type {HTMLElement | null} */ (root.querySelector(selector));
      el?.focus({ preventScroll: true });
      return el !== null;
    };
    if (!focus()) requestAnimationFrame(() => (this.paintRows(), focus()));
  }

  /** @private */
  toggleExpand(i) {
    if (this.expanded.has(i)) this.expanded.delete(i);
    else this.expanded.add(i);
    const row = this.rows.indexOf(i);
    this.rowCache.get(row)?.remove();
    this.rowCache.delete(row);
    this.virtualizer.setOptions({ ...this.virtualizer.options });
    this.paintRows();
  }

  /** @private Copying from the messages: the exact text selected (the
   * browser's own copy drops NUL and other controls). */
  onCopy(e) {
    const root = /** @type {any} */ (this.shadowRoot);
    const sel = typeof root.getSelection === "function" ? root.getSelection() : document.getSelection();
    if (!sel || sel.rangeCount === 0 || !e.clipboardData) return;
    const text = sel.getRangeAt(0).toString();
    if (!text) return;
    e.clipboardData.setData("text/plain", text);
    e.preventDefault();
  }

  /** @private keyboard: arrows move between rows, Enter expands, Home/End */
  onKey(e) {
    const n = this.rows.length;
    if (!n) return;
    let r = this.focusRow;
    if (e.key === "ArrowDown" || e.key === "j") r = Math.min(n - 1, r + 1);
    else if (e.key === "ArrowUp" || e.key === "k") r = Math.max(0, r - 1);
    else if (e.key === "Home") r = 0;
    else if (e.key === "End") r = n - 1;
    else if (e.key === "PageDown") r = Math.min(n - 1, r + 8);
    else if (e.key === "PageUp") r = Math.max(0, r - 8);
    else if (e.key === "Enter" || e.key === " ") {
      if (/** @type {Element} */ (e.target).closest?.("button")) return; // the button's own click (onClick)
      const m = this.rows[r];
      if (m >= 0) this.toggleExpand(m);
      else {
        const s = -1 - m;
        if (this.collapsedSegs.has(s)) this.collapsedSegs.delete(s);
        else this.collapsedSegs.add(s);
        this.render();
      }
      e.preventDefault();
      // The row was drawn again: focus back on it, so the arrow keys keep working.
      requestAnimationFrame(() => {
        this.paintRows();
        const el = this.rowCache.get(r);
        el?.setAttribute("aria-current", "true");
        el?.focus({ preventScroll: true });
      });
      return;
    } else return;
    e.preventDefault();
    this.focusRow = r;
    this.virtualizer.scrollToIndex(r, { align: "auto" });
    requestAnimationFrame(() => {
      this.paintRows();
      for (const el of this.rowCache.values()) el.classList.remove("focused");
      const el = this.rowCache.get(r);
      el?.setAttribute("aria-current", "true");
      el?.focus({ preventScroll: true });
    });
  }
}

/**
 * The message of `worker_failed`: the element's worker did not load.
 * @param {string} url @param {string | undefined} detail
 */
export function workerFailed(url, detail) {
  return (
    `the prompt view's worker did not start from ${url}${detail ? ` (${detail})` : ""}: serve the element's worker ` +
    `(preview/element/worker.js of @polyloop/assembly, bundled) and give its URL with the worker-url attribute or ` +
    `definePromptView(name, { workerUrl, wasmUrl }) (docs/PREVIEW.md, "Bundlers": esbuild does not emit it by itself)`
  );
}

/** The default worker beside this file (named in errors; the Worker itself is made from the literal form). */
const WORKER_FILE = "./worker.js";

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
