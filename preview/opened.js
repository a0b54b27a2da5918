// The open file: its requests (files.js reads them as the CLI does), the
// entry the editor holds, the list of its entries (browser.js) and its run's
// cache report (caching.js), and the ways a file is opened (the picker,
// drag-and-drop, "Open as JSON lines").

import { MAX_STRING_UNITS } from "./element/binding.js";
import { EntryBrowser } from "./browser.js";
import { RunReport } from "./report.js";
import { looksLikeLines, requestsOfFileInSlices, tooLargeText } from "./files.js";
import { $, fmt, notice } from "./page.js";

/** A bigint as its exact JSON number (JSON.rawJSON), never rounded. */
const exactInts = (/** @type {string} */ _k, /** @type {any} */ v) =>
  typeof v === "bigint" ? /** @type {any} */ (JSON).rawJSON(String(v)) : v;

/** Resolves once the page has painted (a frame, then a task), or after 100 ms where no frame comes (a
 * hidden tab). */
const painted = () =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, 100);
    requestAnimationFrame(() => setTimeout(() => (clearTimeout(timer), resolve(undefined)), 0));
  });

/** A request of a file as a side of the comparison: its bytes as the file
 * holds them (the module judges them, as the CLI does), or its error. */
export function sideOf(r, label) {
  if (r.error) return `Not compared ${label}: ${r.error}`;
  if (r.bytes && !r.json) return { side: { kind: "bytes", bytes: r.bytes.slice() }, label };
  return { side: { kind: "jsonBytes", bytes: r.raw.slice() }, label };
}

/**
 * @typedef {{label: string, line?: number, size?: number, raw?: Uint8Array, text?: string, bytes?: Uint8Array,
 *   json?: boolean, error?: string, invalid?: boolean, mixed?: boolean, crlf?: boolean, fffd?: number}} Request
 */

export class OpenedFile {
  /** @type {Request[]} */
  #requests = [];
  /** The open file's name. */
  #name = "";
  /** The file last opened, for "Open as JSON lines". @type {{name: string, bytes: Uint8Array} | null} */
  #last = null;
  /** The request of the file the editor last loaded. @type {Request | null} */
  #picked = null;
  /** The entry of the open file last loaded and its generation in the view. @type {{k: number, gen: number} | null} */
  #lastPick = null;
  /** An address naming an entry (a line) of a file not open: gone to once a file is opened.
   * @type {{line: string, step: string | null} | null} */
  #pending = null;
  #dragDepth = 0;
  /** The newest open(): an older one still reading its file stops there. */
  #opening = 0;
  #view;
  #doc;
  #address;
  #runSplit = /** @type {HTMLSelectElement} */ ($("run-split"));

  /**
   * @param {import("@polyloop/preview").PromptView} view
   * @param {import("./doc.js").EditorDoc} doc
   * @param {{push(): void, applyStep(step: string): void}} address the page's address (push: what is shown now)
   */
  constructor(view, doc, address) {
    this.#view = view;
    this.#doc = doc;
    this.#address = address;
    /** The list of a file's entries (shown for two or more). */
    this.browser = new EntryBrowser(
      {
        pane: $("browser"),
        list: $("browser-list"),
        rows: $("browser-rows"),
        search: /** @type {HTMLInputElement} */ ($("browser-search")),
        errors: /** @type {HTMLInputElement} */ ($("browser-errors")),
        count: $("browser-count"),
      },
      (k) => this.loadPicked(k).then(() => address.push()),
    );
    this.report = new RunReport(
      { pane: $("run"), totals: $("run-totals"), call: $("run-call"), chart: $("run-chart"), table: $("run-table") },
      view,
      { pick: (k) => this.browser.pick(k), changed: () => this.browser.refreshRows() },
    );
    this.browser.callOf = (k) => this.report.callOf(k);
    this.#runSplit.addEventListener("change", () => {
      this.report.open(/** @type {any} */ (this.#requests), /** @type {any} */ (this.#runSplit.value));
      if (this.#requests.length > 1 && this.#lastPick) this.report.pick(this.#lastPick.k, this.#lastPick.gen);
      this.browser.refreshRows();
    });
    this.#wireOpening();
  }

  /** The open file's requests (none: no file open). */
  get requests() {
    return this.#requests;
  }
  get name() {
    return this.#name;
  }
  /** The request the editor last loaded, null when none of a file. */
  get picked() {
    return this.#picked;
  }
  /** The index of the entry at line `line` of the open file (-1: none, or one entry only). @param {string} line */
  indexOfLine(line) {
    return this.#requests.length < 2 ? -1 : this.#requests.findIndex((r) => String(r.line) === line);
  }
  /** Goes to line `line` (and `step`) once a file is opened. */
  goOnOpen(/** @type {{line: string, step: string | null}} */ goal) {
    this.#pending = goal;
  }
  /** Shows entry k (selected in the list) unless it is shown. @param {number} k */
  async show(k) {
    if (k === this.browser.selected) return;
    this.browser.select(k);
    await this.loadPicked(k);
  }

  #wireOpening() {
    $("open").addEventListener("click", () => /** @type {HTMLInputElement} */ ($("file")).click());
    $("file").addEventListener("change", (ev) => {
      const f = /** @type {HTMLInputElement} */ (ev.target).files?.[0];
      if (f) this.open(f);
    });
    window.addEventListener("dragenter", (e) => {
      if (!e.dataTransfer?.types.includes("Files")) return;
      this.#dragDepth++;
      $("drop").hidden = false;
    });
    window.addEventListener("dragleave", () => {
      if (--this.#dragDepth <= 0) {
        this.#dragDepth = 0;
        $("drop").hidden = true;
      }
    });
    window.addEventListener("dragover", (e) => e.preventDefault());
    window.addEventListener("drop", (e) => {
      e.preventDefault();
      this.#dragDepth = 0;
      $("drop").hidden = true;
      const f = e.dataTransfer?.files?.[0];
      if (f) this.open(f);
    });
    $("as-lines").addEventListener("click", () => {
      if (!this.#last) return;
      const { name, bytes } = this.#last;
      this.open({ name, size: bytes.length, arrayBuffer: async () => bytes.slice().buffer }, { lines: true });
    });
  }

  /**
   * Opens a file: its requests (files.js), the first one loaded. Never holds
   * the page's thread long (a 2,000-line, 5 MB file: issue 43): the file's
   * lines are read in slices, its list is shown and painted, then its report
   * started and its first entry loaded, each in tasks of their own; the
   * verdicts and the cache report come from the worker. A file opened
   * meanwhile wins.
   * @param {{name: string, size: number, arrayBuffer(): Promise<ArrayBuffer>}} file
   * @param {{lines?: boolean, split?: import("./runs.js").Split}} [opts] JSON lines whatever the name (an explicit
   *   choice); how its lines are read into runs (runs.js; default one run's calls)
   */
  async open(file, opts = {}) {
    const opening = ++this.#opening;
    if (file.size > MAX_STRING_UNITS) {
      notice(`Not opened ${file.name}: ${tooLargeText(file.size)}`, "bad");
      return;
    }
    const bytes = new Uint8Array(await file.arrayBuffer());
    const requests = /** @type {Request[]} */ (await requestsOfFileInSlices(bytes, file.name, opts));
    if (opening !== this.#opening) return;
    if (requests.length === 1 && requests[0].error) {
      notice(`Not opened ${file.name}: ${requests[0].error}`, "bad");
      return;
    }
    this.#requests = requests;
    this.#name = file.name;
    this.#last = { name: file.name, bytes };
    // An address that named an entry before the file was open: that entry is the first shown (never another).
    const goal = this.#pending;
    this.#pending = null;
    const goalK = goal && requests.length > 1 ? requests.findIndex((r) => String(r.line) === goal.line) : -1;
    const first = Math.max(0, goalK);
    this.browser.open(/** @type {any} */ (requests), (items, onProgress) => this.#view.verdicts(items, onProgress));
    this.browser.select(first);
    const asLines = /** @type {HTMLButtonElement} */ ($("as-lines"));
    asLines.textContent = requests[0]?.raw ? "Open as JSON lines" : "Open as a msgpack stream";
    let opened = `Opened ${file.name}: ${requests.length === 1 ? "one request" : `${fmt.format(requests.length)} requests (pick one in the list)`}.`;
    if (goal && goalK >= 0) opened += ` The address named line ${goal.line}: shown.`;
    else if (goal) opened += ` The address named line ${goal.line}, which this file does not have: line ${requests[0]?.line ?? 1} shown.`;
    // The list painted, then (a task of its own) the report started (in the worker) and the entry loaded
    // into the editor and the view.
    if (requests.length > 1) await painted();
    if (opening !== this.#opening) return;
    this.#runSplit.value = opts.split ?? "calls";
    this.report.open(/** @type {any} */ (requests), /** @type {any} */ (this.#runSplit.value));
    await this.loadPicked(first, opened);
    if (goal && goalK >= 0 && goal.step !== null) this.#address.applyStep(goal.step);
    this.#address.push();
    // One request read from lines that are each an object: the CLI's reading
    // (one JSON text), and the other one offered.
    asLines.hidden = !(requests.length === 1 && !opts.lines && looksLikeLines(bytes));
  }

  /** Closes the open file (its list, its entry's title): the editor's next
   * document is not one of its entries. */
  leave() {
    this.#requests = [];
    this.#picked = null;
    this.browser.open([], () => {});
    this.report.open([]);
    $("editor-title").textContent = "Request";
    $("as-lines").hidden = true;
  }

  /**
   * The entry of the open file the editor holds, edited or not: an edited one
   * is marked in the list and its report entry stale (the report is of the
   * file's line, not of the editor's text).
   * @param {import("@codemirror/state").Text | null} doc the editor's document, null: none edited
   */
  markEdited(doc) {
    const loaded = this.#doc.loaded;
    const edited =
      doc !== null && this.#requests.length > 1 && this.#lastPick !== null && (doc.length !== loaded.length || doc.toString() !== loaded);
    const k = edited ? /** @type {{k: number}} */ (this.#lastPick).k : -1;
    if (this.browser.edited === k) return;
    this.browser.edited = k;
    this.browser.refreshRows();
    this.report.setEdited(k);
  }

  /** Shows request k of the open file: a new document (nothing of the
   * previous one's prompt stays on screen); the notice says what the view
   * judges, after `prefix`. */
  async loadPicked(k, prefix = "") {
    const r = this.#requests[k];
    if (!r) return;
    const doc = this.#doc;
    const say = (text, cls = "") => notice([prefix, text].filter(Boolean).join(" "), cls);
    this.#picked = r;
    this.markEdited(null);
    if (this.#requests.length > 1) $("editor-title").textContent = `Request · ${r.label}`;
    else $("editor-title").textContent = "Request";
    let gen;
    if (r.bytes && !r.json) {
      let shown;
      try {
        const { decode: decodeMsgpack } = await import("@msgpack/msgpack");
        shown = JSON.stringify(decodeMsgpack(r.bytes, { useBigInt64: true }), exactInts, 2);
      } catch {
        shown = "";
      }
      doc.afterEdit = "Edited: the view now judges the editor's text (the JSON copy, edited), not the msgpack file's bytes.";
      gen = doc.set(shown ?? "", { bytes: r.bytes, fresh: true });
      say("msgpack file: the view judges the file's bytes; the editor shows a JSON copy (your first edit switches to it).");
    } else if (r.invalid) {
      gen = doc.set(/** @type {string} */ (r.text), { bytes: r.bytes, json: true, fresh: true, lock: true });
      say(
        "This request is not valid UTF-8: the view judges the file's bytes, as the CLI does. The editor shows them with U+FFFD (\uFFFD) and takes no edit; “Convert to text” replaces the invalid bytes and judges the editor's text from then on.",
        "bad",
      );
    } else if (r.mixed) {
      doc.afterEdit =
        "Edited: the view now judges the editor's text, whose line breaks are all LF (byte offsets count that text, not the file).";
      gen = doc.set(/** @type {string} */ (r.text), { bytes: r.bytes, json: true, fresh: true });
      say(
        "This file mixes line breaks (CR, LF, CRLF): the view judges the file's bytes, as the CLI does, until your first edit; then the editor's text (line breaks LF).",
      );
    } else {
      gen = doc.set(/** @type {string} */ (r.text), { fresh: true, crlf: r.crlf });
      say(r.crlf ? "CRLF line breaks: kept when judged, so byte offsets are the file's." : "");
    }
    this.#lastPick = { k, gen };
    if (this.#requests.length > 1) this.report.pick(k, gen);
  }
}
