// The preview's trajectory browser: the entries of a JSON-lines file (one
// request a line) in a virtualised list (only the rows in view are in the
// DOM, so 100,000 entries cost what 30 do), each with its line, size, step
// count and the module's verdict (ok or the error code), computed in the
// view's worker in the background; a search and an "errors only" filter.
// Entry text reaches the page as text only (textContent), never markup.

import { Virtualizer, elementScroll, observeElementOffset, observeElementRect } from "@tanstack/virtual-core";

/** Height of one row (px): fixed, so no row is measured. */
const ROW = 40;
const fmt = new Intl.NumberFormat("en-US");

/** A size in bytes as people read it. @param {number} n */
export function sizeText(n) {
  if (n < 1000) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(1)} KB`;
  return `${(n / 1e6).toFixed(1)} MB`;
}

/**
 * @typedef {object} Entry
 * @property {number} line the entry's line in the file (1-based)
 * @property {number} size its size in bytes
 * @property {Uint8Array} raw its bytes (judged by the module)
 * @property {boolean} [msgpack] the bytes are msgpack (a value of a msgpack stream), not JSON text
 * @property {string} [text] its text, for the search
 * @property {string} [find] its text with JSON's escapes decoded (searchText)
 * @property {string | null} [code] the module's verdict: "ok", an error code, null while pending
 * @property {number} [steps] its number of steps, -1 when unknown
 */

export class EntryBrowser {
  /**
   * @param {{pane: HTMLElement, list: HTMLElement, rows: HTMLElement, search: HTMLInputElement, errors: HTMLInputElement, count: HTMLElement}} ui
   * @param {(k: number) => void} onPick called with the index of the entry picked
   */
  constructor(ui, onPick) {
    this.ui = ui;
    this.onPick = onPick;
    /** @type {Entry[]} */ this.entries = [];
    /** indices of the entries shown (search and filter applied) */ this.shown = new Int32Array(0);
    this.selected = -1;
    this.judged = 0;
    /** performance.now() when the list of the newest file was first painted */ this.paintedAt = 0;
    /** @type {Map<number, HTMLElement>} */ this.cache = new Map();
    /** The cache report's call of entry k, once known (RunReport.callOf).
     * @type {(k: number) => import("./caching.js").Call | null} */
    this.callOf = () => null;
    /** the entry the editor holds with edits (-1: none) */
    this.edited = -1;
    this.filterTimer = 0;
    this.virtualizer = new Virtualizer({
      count: 0,
      getScrollElement: () => ui.list,
      estimateSize: () => ROW,
      overscan: 8,
      observeElementRect,
      observeElementOffset,
      scrollToFn: elementScroll,
      onChange: () => this.paint(),
    });
    this.unmount = this.virtualizer._didMount();
    ui.search.addEventListener("input", () => this.refilterSoon(60));
    ui.errors.addEventListener("change", () => this.refilter());
    ui.rows.addEventListener("click", (e) => {
      const el = /** @type {HTMLElement} */ (e.target).closest?.("[data-entry]");
      if (el) this.pick(Number(el.getAttribute("data-entry")));
    });
    ui.list.addEventListener("keydown", (e) => this.onKey(e));
  }

  /**
   * Shows the entries of a new file (hidden for fewer than two) and starts
   * their verdicts with `judge` (the view's worker).
   * @param {Entry[]} entries
   * @param {(items: (Uint8Array | {msgpack: Uint8Array})[], onProgress: (p: any) => void) => void} judge
   */
  open(entries, judge) {
    this.entries = entries;
    // A single request is not listed (nor judged here: the view shows it).
    this.judged = entries.length > 1 ? 0 : entries.length;
    this.selected = entries.length ? 0 : -1;
    this.ui.search.value = "";
    this.ui.errors.checked = false;
    this.ui.pane.hidden = entries.length < 2;
    document.querySelector("main")?.classList.toggle("browsing", entries.length > 1);
    this.ui.list.scrollTop = 0;
    this.refilter();
    this.paintedAt = performance.now();
    this.prepareSearch(entries);
    if (entries.length > 1)
      judge(
        entries.map((e) => (e.msgpack ? { msgpack: e.raw } : e.raw)),
        (p) => this.onVerdicts(p),
      );
  }

  /** @private Decodes the entries' texts for the search in the background,
   * in slices of a few milliseconds, so the first search is as quick as the
   * next. @param {Entry[]} entries */
  prepareSearch(entries) {
    let k = 0;
    const slice = () => {
      if (this.entries !== entries) return;
      const t0 = performance.now();
      for (; k < entries.length && performance.now() - t0 < 8; k++) if (entries[k].text !== undefined) searchText(entries[k]);
      if (k < entries.length) setTimeout(slice, 0);
    };
    if (entries.length > 1) setTimeout(slice, 0);
  }

  /** @private Verdicts of a slice of entries arrived. */
  onVerdicts({ from, codes, steps, done }) {
    for (let i = 0; i < codes.length; i++) {
      const e = this.entries[from + i];
      if (!e) break;
      e.code = codes[i];
      e.steps = steps[i];
    }
    this.judged = Math.max(this.judged, from + codes.length);
    if (this.ui.errors.checked && (done || !this.filterTimer)) this.refilterSoon(done ? 0 : 250);
    this.refreshRows();
    this.renderCount();
  }

  /** The rows in view drawn again (their verdicts or cache report came). */
  refreshRows() {
    for (const [row, el] of this.cache) {
      const fresh = this.rowElement(row);
      el.replaceWith(fresh);
      this.cache.set(row, fresh);
    }
    this.paint();
  }

  /** @private */
  refilterSoon(ms) {
    clearTimeout(this.filterTimer);
    this.filterTimer = window.setTimeout(() => {
      this.filterTimer = 0;
      this.refilter();
    }, ms);
  }

  /** @private Recomputes the entries shown from the search and the filter. */
  refilter() {
    const t0 = performance.now();
    const q = this.ui.search.value.trim();
    const errorsOnly = this.ui.errors.checked;
    const match = q ? matcher(q) : null;
    const out = [];
    for (let k = 0; k < this.entries.length; k++) {
      const e = this.entries[k];
      if (errorsOnly && (e.code == null || e.code === "ok")) continue;
      if (match && !match(e)) continue;
      out.push(k);
    }
    /** How long the last search and filter took (ms), for the benchmark. */
    this.filterMs = performance.now() - t0;
    this.shown = Int32Array.from(out);
    this.cache.clear();
    this.ui.rows.replaceChildren();
    this.virtualizer.setOptions({ ...this.virtualizer.options, count: this.shown.length });
    this.virtualizer._willUpdate();
    this.paint();
    this.renderCount();
  }

  /** @private */
  renderCount() {
    const n = this.entries.length;
    const errors = this.entries.reduce((a, e) => a + (e.code != null && e.code !== "ok" ? 1 : 0), 0);
    const parts = [`${fmt.format(this.shown.length)} of ${fmt.format(n)} entries`, `${fmt.format(errors)} rejected`];
    if (this.judged < n) parts.push(`verdicts ${fmt.format(this.judged)} / ${fmt.format(n)}`);
    this.ui.count.textContent = parts.join(" · ");
  }

  /** @private Puts the rows in view (only those) into the DOM. */
  paint() {
    const items = this.virtualizer.getVirtualItems();
    this.ui.rows.style.height = `${this.virtualizer.getTotalSize()}px`;
    const keep = new Set();
    for (const it of items) {
      keep.add(it.index);
      let el = this.cache.get(it.index);
      if (!el) {
        el = this.rowElement(it.index);
        this.cache.set(it.index, el);
        this.ui.rows.append(el);
      }
    }
    for (const [row, el] of this.cache) {
      if (!keep.has(row)) {
        el.remove();
        this.cache.delete(row);
      }
    }
    this.markActive();
  }

  /** @private The list's active descendant: the picked row while it is in the DOM, else none (an id that names
   * no element is invalid ARIA). */
  markActive() {
    const id = `entry-${this.selected}`;
    if (this.selected >= 0 && document.getElementById(id)) this.ui.list.setAttribute("aria-activedescendant", id);
    else this.ui.list.removeAttribute("aria-activedescendant");
  }

  /** @private The row of shown entry `row`. */
  rowElement(row) {
    const k = this.shown[row];
    const e = this.entries[k];
    const el = document.createElement("div");
    el.className = "entry";
    el.id = `entry-${k}`;
    el.setAttribute("role", "option");
    el.setAttribute("data-entry", String(k));
    el.setAttribute("aria-selected", String(k === this.selected));
    el.style.transform = `translateY(${row * ROW}px)`;
    const line = span("entry-line", `line ${fmt.format(e.line)}${k === this.edited ? " · edited" : ""}`);
    if (k === this.edited) line.classList.add("edited");
    const code = e.code ?? null;
    const verdict = span(`verdict ${code === null ? "pending" : code === "ok" ? "ok" : "bad"}`, code ?? "…");
    verdict.setAttribute("data-verdict", code ?? "");
    const steps =
      e.steps === undefined ? "… steps" : e.steps < 0 ? "steps unknown" : `${fmt.format(e.steps)} ${e.steps === 1 ? "step" : "steps"}`;
    const meta = span("entry-meta", `${sizeText(e.size)} · ${steps}`);
    const call = this.callOf(k);
    let cache = null;
    if (call && !call.error) {
      const share = `${Math.floor(/** @type {number} */ (call.cacheable_share) * 100)}% cacheable`;
      if (call.break) {
        cache = span("entry-cache break", `break: ${call.break.segment}`);
        cache.title = `${share}; ${call.break.cause} at message ${call.break.message}, char ${call.break.char}`;
      } else cache = span("entry-cache", call.previous == null ? "first call" : share);
    }
    el.append(line, verdict, meta);
    if (cache) el.append(cache);
    return el;
  }

  /** Picks entry k (shown or not): marks it and opens it. @param {number} k */
  pick(k) {
    if (this.select(k)) this.onPick(k);
  }

  /** Marks entry k as the one picked (scrolled into view when shown),
   * without opening it; whether there is one. @param {number} k */
  select(k) {
    if (k < 0 || k >= this.entries.length) return false;
    this.selected = k;
    for (const el of this.cache.values()) el.setAttribute("aria-selected", String(Number(el.getAttribute("data-entry")) === k));
    this.markActive();
    const row = this.shown.indexOf(k);
    if (row >= 0) this.virtualizer.scrollToIndex(row, { align: "auto" });
    return true;
  }

  /** @private Arrow keys, Home and End move the pick among the shown entries. */
  onKey(e) {
    const n = this.shown.length;
    if (!n) return;
    let row = this.shown.indexOf(this.selected);
    if (e.key === "ArrowDown") row = Math.min(n - 1, row + 1);
    else if (e.key === "ArrowUp") row = Math.max(0, row - 1);
    else if (e.key === "Home") row = 0;
    else if (e.key === "End") row = n - 1;
    else return;
    e.preventDefault();
    this.virtualizer.scrollToIndex(row, { align: "auto" });
    this.pick(this.shown[row]);
  }
}

/** `s` as a regular expression matching itself. @param {string} s */
export const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The search q as a test of an entry: its line number (`1234`, `1,234`,
 * `line 1234`, `line 1,234`), its verdict, or a
 * part of its decoded text, ignoring case (`Süd` finds `S\u00fcd`, which
 * Python's json.dumps writes; `süd` finds `Süd`).
 * @param {string} q
 * @returns {(e: Entry) => boolean}
 */
export function matcher(q) {
  const re = new RegExp(escapeRegExp(q), "iu");
  // A line number as the rows write it or plainly: "1234", "1,234", "line 1234", "line 1,234".
  const num = /^(?:line\s*)?(\d{1,3}(?:,\d{3})+|\d+)$/i.exec(q.trim());
  const line = num ? num[1].replaceAll(",", "") : null;
  const lower = q.toLowerCase();
  return (e) => {
    if (line !== null && String(e.line) === line) return true;
    if (e.code && e.code.toLowerCase().includes(lower)) return true;
    return e.text !== undefined && re.test(searchText(e));
  };
}

/** JSON's escapes in string literals: `\uXXXX` (surrogate pairs too, as
 * two units), `\n`, `\"`… */
const ESCAPE = /\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))/g;
const SIMPLE = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/**
 * The text of an entry as it reads: its JSON text with the escapes of its
 * strings decoded (computed once; the text itself when it has none).
 * @param {Entry} e
 */
export function searchText(e) {
  if (e.find === undefined) {
    const t = /** @type {string} */ (e.text);
    e.find = t.includes("\\") ? t.replace(ESCAPE, (_m, hex, c) => (hex ? String.fromCharCode(parseInt(hex, 16)) : SIMPLE[c])) : t;
  }
  return e.find;
}

/** @param {string} cls @param {string} text */
function span(cls, text) {
  const s = document.createElement("span");
  s.className = cls;
  s.textContent = text;
  return s;
}
