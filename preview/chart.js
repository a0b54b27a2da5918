// The cache report's chart (report.js draws it): per column (a call, or
// several past COLUMNS) its cacheable prefix and volatile characters as
// bars, an x axis numbered in lines of the file (the page's one numbering:
// the list's rows, the report and the address name a call by its line), a
// y axis in characters, and a mark above each column with a break that is a
// pointer target of 24×24 px (WCAG 2.5.8). A click anywhere in a column (its
// full height) opens its call; the keyboard moves along the columns (arrow
// keys, Home, End, Page Up/Down) and opens one with Enter, and Tab reaches
// each break mark. Built once per run and column shape; then only the
// columns whose figures changed are drawn again, and the bars' height scale
// is one transform (a new highest call changes one attribute, not every bar).

import { fmt, h, svg } from "./element/text.js";

/** The plot's height in its viewBox units (the bars' scale). */
const H = 100;

/**
 * @typedef {object} Column a column of the chart: calls `from`..`to` of the run (0-based), their mean figures
 * @property {number} from
 * @property {number} to
 * @property {number} prompt
 * @property {number} cacheable
 * @property {{k: number, segment: string, cause: string}[]} breaks k: the call, 0-based in the run
 * @property {boolean} error
 * @property {boolean} known whether any of its calls is reported yet
 */

/** A round number ≥ x (1, 2, 2.5 or 5 times a power of ten). @param {number} x */
export function niceCeil(x) {
  if (x <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

/** The columns an x axis of `n` columns numbers: the first, every `step`th (its last call a round line), the last. */
export function tickColumns(n) {
  if (n <= 1) return [0];
  const step = Math.max(1, niceCeil(n / 6));
  const out = [0];
  for (let x = step - 1; x < n - 1; x += step) if (x > 0) out.push(x);
  // The last column, unless a tick is too close to it (then that tick moves to it).
  if (n - 1 - out[out.length - 1] < step / 2 && out.length > 1) out.pop();
  out.push(n - 1);
  return out;
}

export class RunChart {
  #root;
  #pick;
  /** @type {any} what is drawn (null: nothing yet) */
  #d = null;

  /**
   * @param {HTMLElement} root the chart's box (#run-chart)
   * @param {(k: number) => void} pick opens entry k of the file
   */
  constructor(root, pick) {
    this.#root = root;
    this.#pick = pick;
    root.addEventListener("click", (e) => {
      const t = /** @type {Element} */ (e.target);
      const d = this.#d;
      if (!d) return;
      if (d.plot.contains(t)) {
        const x = this.#columnAt(/** @type {MouseEvent} */ (e).clientX);
        if (x !== null) this.#open(x);
        return;
      }
      const k = t.closest?.("[data-call]")?.getAttribute("data-call");
      if (k != null) pick(Number(k));
    });
  }

  /** The svg of the bars (null: nothing drawn). */
  get svg() {
    return this.#d?.svg ?? null;
  }

  /** Drops what is drawn (a new file, or nothing to show). */
  clear() {
    this.#d = null;
    this.#root.replaceChildren();
  }

  /**
   * Draws the run's columns (only what changed since the last draw of the same shape) until `deadline`
   * (performance.now()); whether all are drawn.
   * @param {Column[]} cols
   * @param {{max: number, breaks: number, per: number, start: number, lineOf: (k: number) => string,
   *   lines: (c: Column) => string, label: string, deadline: number}} o start: the run's first entry; lineOf(k): entry
   *   k's line
   */
  draw(cols, o) {
    const shape = `${o.start}|${o.per}|${cols.length}`;
    let d = this.#d;
    if (!d || d.shape !== shape || !this.#root.contains(d.svg)) d = this.#build(shape, cols, o);
    d.cols = cols;
    d.lines = o.lines;
    d.svg.setAttribute("aria-label", o.label);
    const top = niceCeil(o.max);
    if (d.top !== top) {
      d.top = top;
      d.bars.setAttribute("transform", `translate(0 ${H}) scale(1 ${-H / top})`);
      d.yTicks.forEach((t, i) => (t.textContent = fmt.format((top * i) / 2)));
    }
    for (const [x, c] of cols.entries()) {
      // A column none of whose calls is reported yet is drawn when one is (not drawn empty, then again).
      if (!c.known) continue;
      const key = colKey(c);
      if (d.keys[x] === key) continue;
      if (performance.now() > o.deadline) return false;
      d.keys[x] = key;
      const g = svg("g", { "data-call": o.start + c.from });
      g.append(svg("rect", { class: "cacheable", x: x + 0.1, y: 0, width: 0.8, height: c.cacheable }));
      g.append(svg("rect", { class: "volatile", x: x + 0.1, y: c.cacheable, width: 0.8, height: c.prompt - c.cacheable }));
      const t = svg("title", {});
      t.textContent = this.#describe(c);
      g.append(t);
      if (d.groups[x]) d.groups[x].replaceWith(g);
      else d.bars.append(g);
      d.groups[x] = g;
      d.lineAt.get(x)?.remove();
      d.lineAt.delete(x);
      d.markAt.get(x)?.remove();
      d.markAt.delete(x);
      if (c.breaks.length) this.#mark(x, c, o.start);
      if (x === d.cursor) this.#cursor(x);
    }
    return true;
  }

  /** Puts the cursor on entry k's column, if the chart shows it. @param {number} k */
  show(k) {
    const d = this.#d;
    if (!d) return;
    const x = d.cols.findIndex((/** @type {Column} */ c) => k >= d.start + c.from && k <= d.start + c.to);
    if (x >= 0) this.#cursor(x);
  }

  /** @param {string} shape @param {Column[]} cols @param {{start: number, lineOf: (k: number) => string, per: number}} o */
  #build(shape, cols, o) {
    const n = cols.length;
    const s = svg("svg", { viewBox: `0 0 ${n} ${H}`, preserveAspectRatio: "none", role: "img", class: "chart", id: "run-chart-bars" });
    const breakLines = svg("g", { class: "break-lines" });
    const bars = svg("g", { class: "bars" });
    s.append(breakLines, bars);
    const cursor = h("div", { class: "cursor", hidden: true, "aria-hidden": "true" });
    const plot = h(
      "div",
      {
        class: "plot",
        tabindex: 0,
        role: "slider",
        "aria-label": "Calls of the run, by line: arrow keys move, Enter opens the call",
        "aria-describedby": "run-chart-bars",
        "aria-orientation": "horizontal",
        "aria-valuemin": 1,
        "aria-valuemax": n,
        "aria-valuenow": 1,
      },
      s,
      cursor,
    );
    plot.addEventListener("keydown", (e) => this.#key(e));
    const marks = h("div", { class: "marks" });
    const yTicks = [0, 1, 2].map((i) => h("span", { class: "tick", style: `bottom: ${i * 50}%` }));
    const yAxis = h("div", { class: "y-axis" }, h("span", { class: "axis-title" }, "chars"), h("div", { class: "ticks" }, ...yTicks));
    const xAxis = h(
      "div",
      { class: "x-axis" },
      ...tickColumns(n).map((x) =>
        h("span", { class: "tick", style: `left: ${((x + 0.5) / n) * 100}%` }, o.lineOf(o.start + cols[x].from)),
      ),
      h("span", { class: "axis-title", title: o.per > 1 ? `${fmt.format(o.per)} calls a column` : "one call a column" }, "line"),
    );
    this.#root.replaceChildren(h("div", { class: "chart-box" }, yAxis, plot, marks, xAxis));
    this.#d = {
      shape,
      start: o.start,
      svg: s,
      plot,
      bars,
      breakLines,
      marks,
      cursorEl: cursor,
      cursor: null,
      lineOf: o.lineOf,
      yTicks,
      n,
      cols,
      lines: null,
      keys: [],
      groups: [],
      lineAt: new Map(),
      markAt: new Map(),
      top: 0,
    };
    return this.#d;
  }

  /** What column c shows, in words (its title, the slider's value text). @param {Column} c */
  #describe(c) {
    const d = this.#d;
    return (
      `${d.lines(c)}: ${fmt.format(Math.round(c.cacheable))} cacheable of ${fmt.format(Math.round(c.prompt))} chars` +
      (c.error ? "; rejected" : "") +
      (c.breaks.length ? `; break: ${c.breaks[0].segment} (${c.breaks[0].cause})` : "")
    );
  }

  /** The break mark of column x: a red line through the column, and a 24×24 px button above it. */
  #mark(x, /** @type {Column} */ c, /** @type {number} */ start) {
    const d = this.#d;
    const b = c.breaks[0];
    const line = svg("rect", { class: "break-line", x: x + 0.1, y: 0, width: 0.8, height: H });
    d.breakLines.append(line);
    d.lineAt.set(x, line);
    const icon = svg("svg", { width: 10, height: 14, viewBox: "0 0 10 14", "aria-hidden": "true" });
    icon.append(svg("rect", { class: "break", x: 0, y: 0, width: 10, height: 14 }));
    const what = `line ${d.lineOf(start + b.k)}: breaks the cache in ${b.segment} (${b.cause}); open this call`;
    const m = h(
      "button",
      {
        type: "button",
        class: "break-mark",
        "data-call": start + b.k,
        "aria-label": what,
        title: what,
        style: `left: ${((x + 0.5) / d.n) * 100}%`,
      },
      icon,
    );
    // In column order, so Tab goes left to right (after the plot: the DOM has the plot first, the grid draws the
    // marks above it).
    const next = [...d.markAt.entries()].filter(([at]) => at > x).sort((a, b) => a[0] - b[0])[0];
    if (next) next[1].before(m);
    else d.marks.append(m);
    d.markAt.set(x, m);
  }

  /** The column under clientX (null: none). @param {number} clientX */
  #columnAt(clientX) {
    const d = this.#d;
    const r = d.plot.getBoundingClientRect();
    if (!r.width) return null;
    return Math.max(0, Math.min(d.n - 1, Math.floor(((clientX - r.left) / r.width) * d.n)));
  }

  /** Opens column x's call (its break's call, for a column of several calls with a break). @param {number} x */
  #open(x) {
    const d = this.#d;
    const c = d.cols[x];
    if (!c) return;
    this.#cursor(x);
    this.#pick(d.start + (c.from === c.to ? c.from : (c.breaks[0]?.k ?? c.from)));
  }

  /** The cursor (the column the keyboard is on, and the call shown) at column x. @param {number} x */
  #cursor(x) {
    const d = this.#d;
    const c = d.cols[x];
    if (!c) return;
    d.cursor = x;
    const el = /** @type {HTMLElement} */ (d.cursorEl);
    el.hidden = false;
    el.style.left = `${(x / d.n) * 100}%`;
    el.style.width = `${100 / d.n}%`;
    d.plot.setAttribute("aria-valuenow", String(x + 1));
    d.plot.setAttribute("aria-valuetext", this.#describe(c));
  }

  /** @param {KeyboardEvent} e */
  #key(e) {
    const d = this.#d;
    const at = d.cursor ?? 0;
    const to = {
      ArrowLeft: at - 1,
      ArrowDown: at - 1,
      ArrowRight: at + 1,
      ArrowUp: at + 1,
      PageDown: at - 10,
      PageUp: at + 10,
      Home: 0,
      End: d.n - 1,
    }[e.key];
    if (to !== undefined) {
      e.preventDefault();
      this.#cursor(Math.max(0, Math.min(d.n - 1, to)));
    } else if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      this.#open(at);
    }
  }
}

/** What a column of the chart shows, as a key: the same key, nothing to draw again. @param {Column} c */
export function colKey(c) {
  return `${c.from}-${c.to}|${c.prompt}|${c.cacheable}|${c.error}|${c.breaks.map((b) => `${b.k}:${b.segment}:${b.cause}`).join(",")}`;
}
