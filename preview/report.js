// The cache report of a run opened in the trajectory browser (issue 35; the
// binding's `cacheReport`, docs/SPEC.md §7.12): per call its cacheable
// prefix, the break and its cause, a chart of cacheable against volatile
// characters with a table beside it, filled slice by slice as the view's
// worker reports. Text reaches the page as text only (textContent), never
// markup.

import { fmt, h } from "./element/text.js";
import { RunChart, colKey } from "./chart.js";
import { runIds, runsOf } from "./runs.js";

const pct = (share) => `${(share * 100).toFixed(1)}%`;

/** The calls a chart draws at most one column each; past it, columns of several calls. */
const COLUMNS = 400;
/** How often (ms) the report is drawn again while it comes. */
const PAINT_MS = 250;
/** The longest slice (ms) of drawing the chart and table in one task (the rest in the next). */
const SLICE_MS = 8;
/** Table rows at most. */
const TABLE_ROWS = 400;

/**
 * @typedef {object} Call one call of a cache report (docs/SPEC.md §7.12)
 * @property {number | null} [previous]
 * @property {boolean} [extends]
 * @property {{segment: string, message: number, char: number, step: number | null, cause: string, excerpt_before: string, excerpt_previous: string | null, excerpt_this: string | null} | null} [break]
 * @property {number} [prompt_chars]
 * @property {number} [cacheable_prefix_chars]
 * @property {number} [cacheable_share]
 * @property {{code: string, path: string, message: string}} [error]
 */

export class RunReport {
  /**
   * @param {{pane: HTMLElement, totals: HTMLElement, call: HTMLElement, chart: HTMLElement, table: HTMLElement}} ui
   * @param {import("@polyloop/preview").PromptView} view
   * @param {{pick: (k: number) => void, changed: () => void}} page
   */
  constructor(ui, view, page) {
    this.ui = ui;
    this.view = view;
    this.page = page;
    /** @type {(Call | null)[]} */
    this.calls = [];
    /** @type {{line: number}[]} */
    this.entries = [];
    /** How the lines are read into runs (runs.js), and the runs. @type {import("./runs.js").Split} */
    this.split = "calls";
    /** @type {{runs: Int32Array, starts: number[], ends: number[]}} */
    this.runs = { runs: new Int32Array(0), starts: [], ends: [] };
    /** the run the chart and table show */
    this.shownRun = 0;
    /** the entry edited in the editor (its call is stale), -1: none */
    this.edited = -1;
    /** What paintTable drew (null: nothing yet), to draw only what changed (the chart keeps its own).
     * @type {any} */
    this.drawn = null;
    /** whether every call is reported (`complete`), and drawn (`done`) */
    this.done = false;
    this.complete = false;
    /** @type {{k: number, gen: number} | null} the entry shown in the view, and its generation */
    this.picked = null;
    /** Timers: the next paint while the report comes (PAINT_MS), its frame, the rest of a paint cut at SLICE_MS. */
    this.frame = 0;
    this.raf = 0;
    this.more = 0;
    /** The report's job (a new file, a new job: a slice of an older one is dropped). */
    this.job = 0;
    this.paintedAt = 0;
    this.chart = new RunChart(ui.chart, (k) => page.pick(k));
    // A click anywhere on a row of the table opens its call (its line's button, for the keyboard).
    ui.table.addEventListener("click", (e) => {
      const k = /** @type {Element} */ (e.target).closest?.("tr[data-call]")?.getAttribute("data-call");
      if (k != null) page.pick(Number(k));
    });
  }

  /**
   * A new file's entries (a run's calls in order): the report starts over
   * (nothing of the previous file stays), computed in the view's worker.
   * @param {{line: number, raw?: Uint8Array, msgpack?: boolean}[]} entries
   * @param {import("./runs.js").Split} [split] how the entries are read into runs (runs.js)
   */
  open(entries, split = this.split) {
    this.entries = entries;
    this.split = split;
    this.shownRun = 0;
    this.drawn = null;
    this.calls = entries.map(() => null);
    this.done = false;
    this.complete = false;
    this.picked = null;
    clearTimeout(this.frame);
    clearTimeout(this.more);
    cancelAnimationFrame(this.raf);
    this.frame = this.more = this.raf = 0;
    const job = ++this.job;
    const on = entries.length > 1 && entries.every((e) => e.raw);
    this.ui.pane.hidden = !on;
    for (const k of /** @type {const} */ (["totals", "call", "table"])) this.ui[k].replaceChildren();
    this.chart.clear();
    if (!on) return;
    const runs = runsOf(runIds(entries.length, split));
    if ("error" in runs) {
      this.ui.totals.textContent = `no report: ${runs.error}`;
      return;
    }
    this.runs = runs;
    this.ui.totals.textContent = "computing…";
    // Sent to the worker in a task of its own (not the one that opened the file); a slice of a report before this
    // one (a file opened before) is dropped.
    setTimeout(() => {
      if (job !== this.job) return;
      this.view.cacheReport(
        entries.map((e) => (e.msgpack ? { msgpack: /** @type {Uint8Array} */ (e.raw) } : /** @type {Uint8Array} */ (e.raw))),
        (p) => job === this.job && this.onSlice(p),
        runs.runs,
      );
    }, 0);
  }

  /** Entry k's line in the file, as the page writes it (the one numbering of the rows, the report and the address).
   * @param {number} k */
  lineOf(k) {
    return fmt.format(this.entries[k]?.line ?? k + 1);
  }

  /** Entry k's run, its call number within it, and the run's first entry. @param {number} k */
  place(k) {
    const r = this.runs.runs[k] ?? 0;
    const start = this.runs.starts[r] ?? 0;
    return { run: r, call: k - start, start, many: this.runs.starts.length > 1 };
  }

  /** @private */
  onSlice({ from, calls, done, error }) {
    calls.forEach((c, i) => (this.calls[from + i] = c));
    if (error) this.ui.totals.textContent = `no report: ${error.code}: ${error.message}`;
    this.complete = done;
    if (this.picked && this.picked.k >= from && this.picked.k < from + calls.length) this.showCall();
    // The rows, the chart and its table drawn again at most every PAINT_MS while the report comes, and once it is
    // done; once a frame at most (slices that come together are drawn together).
    if (this.raf) return;
    clearTimeout(this.frame);
    this.frame = 0;
    const paint = () => {
      this.raf = 0;
      this.paintedAt = performance.now();
      this.page.changed();
      this.paint();
    };
    if (done || performance.now() - this.paintedAt >= PAINT_MS) this.raf = requestAnimationFrame(paint);
    else
      this.frame = window.setTimeout(() => {
        this.frame = 0;
        if (!this.raf) this.raf = requestAnimationFrame(paint);
      }, PAINT_MS);
  }

  /** Entry k is edited in the editor (-1: none): its call is described as stale. @param {number} k */
  setEdited(k) {
    this.edited = k;
    if (this.picked) this.showCall();
  }

  /** The report's call of entry k (null while pending). @param {number} k */
  callOf(k) {
    return this.calls[k] ?? null;
  }

  /**
   * Entry k is shown in the view as generation `gen`: its call is described
   * and what is new since the previous call highlighted in the prompt.
   * @param {number} k @param {number} gen
   */
  pick(k, gen) {
    this.picked = { k, gen };
    this.showCall();
  }

  /** @private Describes the picked call, and marks its new characters in the view. */
  showCall() {
    const p = this.picked;
    const box = this.ui.call;
    if (!p || this.ui.pane.hidden) return box.replaceChildren();
    const c = this.calls[p.k];
    const at = this.place(p.k);
    const head = h(
      "b",
      {},
      `Line ${fmt.format(this.entries[p.k].line)} (call ${fmt.format(at.call)} of ${at.many ? `run ${fmt.format(at.run + 1)}` : "the run"}): `,
    );
    if (at.run !== this.shownRun && this.complete) {
      this.shownRun = at.run;
      this.paint();
    } else this.shownRun = at.run;
    this.chart.show(p.k);
    box.classList.toggle("stale", p.k === this.edited);
    if (!c) {
      this.view.markNew(p.gen, null);
      return box.replaceChildren(head, "computing…");
    }
    if (p.k === this.edited)
      return box.replaceChildren(
        head,
        h("span", { "data-field": "stale" }, "edited: "),
        "the figures of this call are the file's line, not the editor's text, which the report does not read.",
      );
    if (c.error) {
      this.view.markNew(p.gen, null);
      return box.replaceChildren(
        head,
        `rejected (${c.error.code}), left out of the run: the next call is compared with the last valid one.`,
      );
    }
    const chars = /** @type {number} */ (c.cacheable_prefix_chars);
    const parts = [
      head,
      `${fmt.format(/** @type {number} */ (c.prompt_chars))} chars; cacheable prefix `,
      h("span", { "data-field": "cacheable" }, `${fmt.format(chars)} chars (${pct(/** @type {number} */ (c.cacheable_share))})`),
      "; ",
    ];
    if (c.previous == null) parts.push("the first call of the run: nothing is cached yet.");
    else if (c.extends) parts.push(`extends line ${this.lineOf(c.previous)}: the new characters are highlighted in the prompt.`);
    else {
      const b = /** @type {NonNullable<Call["break"]>} */ (c.break);
      parts.push(
        h("span", { class: "break", "data-field": "break" }, `breaks the cache of line ${this.lineOf(c.previous)}`),
        ` in segment `,
        h("span", { "data-field": "segment" }, b.segment),
        `, message ${fmt.format(b.message)}, char ${fmt.format(b.char)}${b.step == null ? "" : ` (step ${b.step})`}: `,
        h("span", { "data-field": "cause" }, b.cause),
        h(
          "div",
          { class: "excerpts" },
          "before: ",
          h("q", {}, b.excerpt_before),
          " · previous: ",
          b.excerpt_previous === null ? "(no message)" : h("q", {}, b.excerpt_previous),
          " · this call: ",
          b.excerpt_this === null ? "(no message)" : h("q", {}, b.excerpt_this),
        ),
      );
    }
    box.replaceChildren(...parts);
    this.view.markNew(p.gen, c.previous == null ? null : chars);
  }

  /** @private The totals, the chart and its table. */
  paint() {
    const all = this.calls;
    const nRuns = this.runs.starts.length;
    let allBreaks = 0;
    for (const c of all) if (c?.break) allBreaks++;
    const r = Math.min(this.shownRun, nRuns - 1);
    const start = this.runs.starts[r];
    const calls = all.slice(start, this.runs.ends[r]);
    const n = calls.length;
    let prompt = 0;
    let cacheable = 0;
    let breaks = 0;
    let errors = 0;
    let max = 1;
    for (const c of calls) {
      if (!c) continue;
      if (c.error) errors++;
      else {
        prompt += /** @type {number} */ (c.prompt_chars);
        cacheable += /** @type {number} */ (c.cacheable_prefix_chars);
        if (c.break) breaks++;
        max = Math.max(max, /** @type {number} */ (c.prompt_chars));
      }
    }
    const known = all.reduce((a, c) => a + (c ? 1 : 0), 0);
    const runs =
      nRuns > 1
        ? `${fmt.format(nRuns)} runs, ${fmt.format(allBreaks)} ${allBreaks === 1 ? "break" : "breaks"} in all · run ${fmt.format(r + 1)} (lines ${fmt.format(this.entries[start].line)}–${fmt.format(this.entries[start + n - 1].line)}): `
        : "";
    this.ui.totals.textContent =
      runs +
      `${fmt.format(n)} ${n === 1 ? "call" : "calls"}${errors ? ` (${fmt.format(errors)} rejected)` : ""} · ${fmt.format(breaks)} ${breaks === 1 ? "break" : "breaks"} · ` +
      `${fmt.format(cacheable)} of ${fmt.format(prompt)} chars cacheable${prompt ? ` (${pct(cacheable / prompt)})` : ""}` +
      (this.complete ? "" : ` · ${fmt.format(known)} / ${fmt.format(all.length)} reported`);
    const per = Math.ceil(n / COLUMNS);
    const cols = [];
    for (let a = 0; a < n; a += per) {
      const group = calls.slice(a, Math.min(n, a + per));
      const sum = (/** @type {"prompt_chars" | "cacheable_prefix_chars"} */ f) =>
        group.reduce((s, c) => s + (c && !c.error ? /** @type {number} */ (c[f]) : 0), 0);
      cols.push({
        from: a,
        to: a + group.length - 1,
        prompt: sum("prompt_chars") / group.length,
        cacheable: sum("cacheable_prefix_chars") / group.length,
        breaks: group.flatMap((c, i) => (c?.break ? [{ k: a + i, ...c.break }] : [])),
        error: group.some((c) => c?.error),
        known: group.some((c) => c),
      });
    }
    const lines = (/** @type {{from: number, to: number}} */ c) =>
      c.from === c.to ? `line ${this.lineOf(start + c.from)}` : `lines ${this.lineOf(start + c.from)}–${this.lineOf(start + c.to)}`;
    const label =
      `Cacheable and volatile characters per call, ${per > 1 ? `${fmt.format(per)} calls a column, ` : ""}` +
      `${fmt.format(breaks)} ${breaks === 1 ? "break" : "breaks"}` +
      (breaks ? ` (lines ${cols.flatMap((c) => c.breaks.map((b) => this.lineOf(start + b.k))).join(", ")})` : "") +
      "; the table below lists them.";
    const shape = `${start}|${per}|${cols.length}`;
    if (!this.drawn || this.drawn.shape !== shape || !this.ui.table.contains(this.drawn.table))
      this.drawn = { shape, table: null, rows: [], rowKeys: [] };
    // Drawn in slices of at most SLICE_MS (the first paint of a long run builds hundreds of columns and rows):
    // what is left is drawn in the next task, so no task of the page's thread grows long.
    const deadline = performance.now() + SLICE_MS;
    const drawn =
      this.chart.draw(cols, { max, breaks, per, start, lineOf: (k) => this.lineOf(k), lines, label, deadline }) &&
      this.paintTable(cols, per, start, lines, deadline);
    if (this.picked) this.chart.show(this.picked.k);
    if (!drawn && !this.more)
      this.more = window.setTimeout(() => {
        this.more = 0;
        this.paint();
      }, 0);
    this.done = this.complete && drawn;
  }

  /** @private The chart's table (at most TABLE_ROWS rows: columns of several calls past it), drawn incrementally
   * as the chart is (built anew when the chart is: a new run or column shape); whether all of it is drawn (false:
   * the deadline came first). */
  paintTable(cols, per, start, lines, deadline = Infinity) {
    const d = /** @type {NonNullable<typeof this.drawn>} */ (this.drawn);
    if (!d.table || !this.ui.table.contains(d.table)) {
      const head = h(
        "tr",
        {},
        ...[per > 1 ? "lines" : "line", "prompt chars", "cacheable", "volatile", "break: segment", "cause"].map((t) =>
          h("th", { scope: "col" }, t),
        ),
      );
      const caption = h("caption", {}, per > 1 ? `Means per column of ${fmt.format(per)} calls` : "Per call");
      d.tbody = h("tbody", {});
      d.table = h("table", {}, caption, h("thead", {}, head), d.tbody);
      d.rowKeys = [];
      d.rows = [];
      this.ui.table.replaceChildren(d.table);
    }
    for (const [x, c] of cols.slice(0, TABLE_ROWS).entries()) {
      // The report comes in order: rows are added as their calls come (never drawn empty, then again).
      if (!c.known) break;
      const key = colKey(c);
      if (d.rowKeys[x] === key) continue;
      if (performance.now() > deadline) return false;
      d.rowKeys[x] = key;
      const b = c.breaks[0];
      const tr = h(
        "tr",
        b ? { class: "break", "data-call": String(start + c.from) } : { "data-call": String(start + c.from) },
        h("th", { scope: "row" }, h("button", { type: "button", class: "open-call" }, lines(c).replace(/^lines? /, ""))),
        h("td", {}, fmt.format(Math.round(c.prompt))),
        h("td", {}, fmt.format(Math.round(c.cacheable))),
        h("td", {}, fmt.format(Math.round(c.prompt - c.cacheable))),
        h(
          "td",
          { "data-field": "segment" },
          b ? b.segment + (c.breaks.length > 1 ? ` (+${c.breaks.length - 1})` : "") : c.error ? "(rejected)" : "",
        ),
        h("td", { "data-field": "cause" }, b ? b.cause : ""),
      );
      if (d.rows[x]) d.rows[x].replaceWith(tr);
      else d.tbody.append(tr);
      d.rows[x] = tr;
    }
    return true;
  }
}
