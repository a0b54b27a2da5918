/**
 * What redraws the view from the element's state `pv`: a new result or
 * limit (render), a hit to show, a new document, and the list's keyboard,
 * clicks and copy.
 *
 * @module
 */

import { collapsed } from "./text.js";
import { renderError, renderMarks, renderPanes, setState } from "./panes.js";
import { paintRows, refocus, repaintRows, rowKeys, scrollToMessage, toggleExpand } from "./rows.js";
import { findHits, searchStateOf } from "./search.js";
import { frameOf, indexMarks } from "./state.js";
import { segOf, segStart, textsOf } from "./columns.js";

/** Rebuilds the row index and repaints. */
export function render(pv) {
  const v = pv.view;
  if (!v) return;
  // What is shown, once: the panes and the rows are drawn from it.
  pv.frame = frameOf(pv);
  const lim = pv.frame.lim;
  if (pv.queryText && pv.hitsOf !== `${pv.shownGen}:${lim}`) {
    findHits(pv);
    pv.hitsOf = `${pv.shownGen}:${lim}`;
    pv.rowCache.clear();
    pv.ui.rows.replaceChildren();
    pv.emit("polyloop-search", searchStateOf(pv));
  }
  const rows = [];
  for (let s = 0; s < 4; s++) {
    rows.push(-1 - s);
    if (pv.collapsedSegs.has(s)) continue;
    for (let i = segStart(v, s); i < Math.min(v.segEnds[s], lim); i++) rows.push(i);
  }
  // The same rows (an edit that changed text, not the message list): the
  // same row keys, so the virtualizer keeps its measurements instead of
  // recomputing all of them (30,000 rows at 16 MB: a long main-thread
  // task on a busy machine).
  const same = rows.length === pv.rows.length && rows.every((r, k) => r === pv.rows[k]);
  pv.rows = Int32Array.from(rows);
  pv.rowCache.clear();
  pv.ui.rows.replaceChildren();
  pv.virtualizer.setOptions({
    ...pv.virtualizer.options,
    count: pv.rows.length,
    getItemKey: same ? pv.virtualizer.options.getItemKey : rowKeys(pv),
  });
  pv.virtualizer._willUpdate();
  indexMarks(pv);
  renderPanes(pv.ui, pv.frame);
  paintRows(pv);
  scrollToStep(pv);
}

/** Makes hit k the current one and goes to it. */
export function showHit(pv, k) {
  const hit = pv.hits[k];
  if (!hit) return;
  pv.hit = k;
  const text = /** @type {string[]} */ (textsOf(pv.view, hit.message))[hit.block];
  const cut = collapsed(text);
  if (cut !== null && hit.to > cut.length) pv.expanded.add(hit.message);
  const folded = pv.collapsedSegs.has(segOf(pv.view, hit.message));
  if (folded) pv.collapsedSegs.delete(segOf(pv.view, hit.message));
  if (folded) render(pv);
  else repaintRows(pv);
  scrollToMessage(pv, hit.message);
  // Then the hit itself into view (a long message's hit may be far below its start).
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      const row = pv.rowCache.get(pv.rows.indexOf(hit.message));
      row?.querySelector("mark.hit.current")?.scrollIntoView({ block: "center" });
      pv.emit("polyloop-search", searchStateOf(pv));
    }),
  );
}

/** After a render in step mode: scrolls to the first message
 * step k added (those are marked "new at step k"), once per step set. */
export function scrollToStep(pv) {
  const t = pv.trajectoryInfo;
  if (!pv.stepScroll || !t || pv._step === null) return;
  pv.stepScroll = false;
  const k = Math.min(pv._step, t.steps);
  if (k === 0) return;
  const row = pv.rows.indexOf(t.stepStart[k - 1]);
  if (row >= 0) pv.virtualizer.scrollToIndex(row, { align: "start" });
}

/** Drops the prompt shown (a new document): nothing stale stays. */
export function resetView(pv) {
  pv.view = null;
  pv.viewGen = -1;
  pv.marks = null;
  pv.since = null;
  pv.trajectoryInfo = null;
  pv.lastError = null;
  pv.rows = new Int32Array(0);
  pv.rowCache.clear();
  pv.ui.rows.replaceChildren();
  pv.ui.rows.style.height = "0px";
  pv.ui.totals.textContent = "";
  pv.ui.cache.replaceChildren();
  pv.ui.error.hidden = true;
  pv.expanded.clear();
  pv.virtualizer.setOptions({ ...pv.virtualizer.options, count: 0 });
  setState(pv, "loading");
}

export function onClick(pv, e) {
  const t = /** @type {HTMLElement} */ (e.target);
  const fold = t.closest?.("[data-fold]");
  const root = /** @type {ShadowRoot} */ (pv.root);
  if (fold) {
    const s = Number(fold.getAttribute("data-fold"));
    const had = root.activeElement === fold;
    if (pv.collapsedSegs.has(s)) pv.collapsedSegs.delete(s);
    else pv.collapsedSegs.add(s);
    render(pv);
    if (had) refocus(pv, `[data-fold="${s}"]`);
    return;
  }
  const more = t.closest?.("[data-expand]");
  if (more) {
    const i = Number(more.getAttribute("data-expand"));
    const had = root.activeElement === more;
    toggleExpand(pv, i);
    if (had) refocus(pv, `[data-expand="${i}"]`);
  }
}

/** keyboard: arrows move between rows, Enter expands, Home/End */
export function onKey(pv, e) {
  const n = pv.rows.length;
  if (!n) return;
  let r = pv.focusRow;
  if (e.key === "ArrowDown" || e.key === "j") r = Math.min(n - 1, r + 1);
  else if (e.key === "ArrowUp" || e.key === "k") r = Math.max(0, r - 1);
  else if (e.key === "Home") r = 0;
  else if (e.key === "End") r = n - 1;
  else if (e.key === "PageDown") r = Math.min(n - 1, r + 8);
  else if (e.key === "PageUp") r = Math.max(0, r - 8);
  else if (e.key === "Enter" || e.key === " ") {
    if (/** @type {Element} */ (e.target).closest?.("button")) return; // the button's own click (onClick)
    const m = pv.rows[r];
    if (m >= 0) toggleExpand(pv, m);
    else {
      const s = -1 - m;
      if (pv.collapsedSegs.has(s)) pv.collapsedSegs.delete(s);
      else pv.collapsedSegs.add(s);
      render(pv);
    }
    e.preventDefault();
    // The row was drawn again: focus back on it, so the arrow keys keep working.
    requestAnimationFrame(() => {
      paintRows(pv);
      const el = pv.rowCache.get(r);
      el?.setAttribute("aria-current", "true");
      el?.focus({ preventScroll: true });
    });
    return;
  } else return;
  e.preventDefault();
  pv.focusRow = r;
  pv.virtualizer.scrollToIndex(r, { align: "auto" });
  requestAnimationFrame(() => {
    paintRows(pv);
    for (const el of pv.rowCache.values()) el.classList.remove("focused");
    const el = pv.rowCache.get(r);
    el?.setAttribute("aria-current", "true");
    el?.focus({ preventScroll: true });
  });
}

/** Copying from the messages: the exact text selected (the
 * browser's own copy drops NUL and other controls). */
export function onCopy(pv, e) {
  const root = /** @type {any} */ (pv.root);
  const sel = typeof root.getSelection === "function" ? root.getSelection() : document.getSelection();
  if (!sel || sel.rangeCount === 0 || !e.clipboardData) return;
  const text = sel.getRangeAt(0).toString();
  if (!text) return;
  e.clipboardData.setData("text/plain", text);
  e.preventDefault();
}

/**
 * A new result (the worker's RESULT, ok): what it brings replaces what the
 * last one brought, all at once, and the view is drawn from it.
 * @param {import("./state.js").State} pv @param {any} m
 */
export function showResult(pv, m) {
  const first = !pv.view;
  Object.assign(pv, { shownGen: m.gen, view: m.columns, viewGen: m.gen, trajectoryInfo: m.trajectory, lastError: null });
  if (m.marks) pv.marks = { gen: m.gen, ...m.marks };
  if (first) pv.focusRow = 0;
  setState(pv, "ok");
  render(pv);
}

/**
 * A rejected request (or a worker that failed): the error, over the last
 * result shown (stale) or alone; fires `polyloop-error`.
 * @param {import("./state.js").State} pv @param {number} gen @param {any} error
 */
export function showError(pv, gen, error) {
  pv.lastError = error;
  setState(pv, pv.view ? "stale" : "error");
  renderError(pv);
  pv.emit("polyloop-error", { gen, ...error });
}

/**
 * The cache breakpoints of result `m.gen` (the worker's MARKS): drawn when
 * they are of the result shown and differ from those it carried.
 * @param {import("./state.js").State} pv @param {any} m
 */
export function showMarks(pv, m) {
  if (!pv._cacheBreakpoints || m.gen !== pv.viewGen) return;
  // The breakpoints the result carried, confirmed: nothing to draw again.
  const shown = pv.marks?.gen === m.gen ? pv.marks : null;
  pv.marks = m;
  if (shown && JSON.stringify([shown.breakpoints, shown.error]) === JSON.stringify([m.breakpoints, m.error])) return;
  const drawn = pv.bpAt.size;
  indexMarks(pv);
  pv.frame = frameOf(pv);
  renderMarks(pv.ui, pv.frame);
  // Rows drawn again only when they gain or lose a marker (a 16 MB prompt gets none: no long task).
  if (drawn || pv.bpAt.size) repaintRows(pv);
}

/** Searches the messages shown, marks every hit and goes to the first (the element's `search`). @param {any} pv @param {string} query */
export function search(pv, query) {
  pv.queryText = query;
  findHits(pv);
  if (pv.hits.length) showHit(pv, 0);
  else repaintRows(pv);
  return pv.hits.length;
}

/** Goes to the next hit (`dir` 1) or the previous one (-1), wrapping. @param {any} pv @param {1 | -1} dir */
export function nextHit(pv, dir) {
  const n = pv.hits.length;
  if (n) showHit(pv, (((pv.hit + dir) % n) + n) % n);
}

/** The list's keyboard, copy and clicks. @param {any} pv */
export function listen(pv) {
  pv.ui.list.addEventListener("keydown", (e) => onKey(pv, e));
  pv.ui.list.addEventListener("copy", (e) => onCopy(pv, /** @type {ClipboardEvent} */ (e)));
  pv.ui.rows.addEventListener("click", (e) => onClick(pv, e));
}
