/**
 * The prompt view's state and the questions asked of it: the result shown
 * (the worker's compact view of a response, below), how many of its
 * messages are shown (the step), where a message comes from, its segment,
 * the breakpoints and the "new since the previous call" of the result shown.
 * Every function takes the element's state `pv` (see element.js, `State`)
 * and changes nothing but indexes.
 *
 * @module
 */

import { segStart } from "./columns.js";

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

/**
 * The element's state: one object, made with the element, read and drawn by
 * the render modules; what a result brings (view, trajectoryInfo, marks…)
 * is set together when it arrives (element.js, the RESULT message).
 * @typedef {ReturnType<typeof newState>} State
 */

/**
 * @param {HTMLElement} host the element @param {ShadowRoot} root its shadow root
 * @param {ReturnType<typeof import("./panes.js").build>} ui its parts (panes.js)
 */
export function newState(host, root, ui) {
  return {
    host,
    root,
    ui,
    /** Fires `type` on the element (bubbling, across shadow roots). @param {string} type @param {any} detail */
    emit: (type, detail) => host.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true })),
    /** "loading" | "ok" | "stale" | "error" | "empty" */
    state: "empty",
    /** the generation of the newest request sent, and of the result shown */
    gen: 0,
    shownGen: -1,
    // ---- the result shown
    /** @type {View | null} */
    view: null,
    /** the generation of the ok result shown (-1: none) */
    viewGen: -1,
    /** where each step starts (with `trajectory` on) @type {any} */
    trajectoryInfo: null,
    /** @type {any} */
    lastError: null,
    /** @type {{gen: number, breakpoints?: [number, number][], error?: any, reason?: string} | null} the cache breakpoints of result `gen` */
    marks: null,
    /** @type {{gen: number, chars: number} | null} "new since the previous call" from code point `chars` of result `gen` */
    since: null,
    /** what is shown, as last drawn (frameOf) @type {Frame} */
    frame: /** @type {any} */ (null),
    /** @type {any} timing of the last result (ms): in the worker, and rendering here */
    lastTiming: null,
    // ---- what the user chose
    /** @type {number | null} */
    _step: null,
    _trajectory: false,
    _cacheBreakpoints: false,
    /** @type {Set<number>} messages expanded */
    expanded: new Set(),
    /** @type {Set<number>} segments folded */
    collapsedSegs: new Set(),
    // ---- the list
    /** the rows: a message, or -1 - s for the head of segment s */
    rows: new Int32Array(0),
    /** @type {Map<number, HTMLElement>} */
    rowCache: new Map(),
    focusRow: 0,
    /** @type {import("@tanstack/virtual-core").Virtualizer<HTMLElement, HTMLElement>} */
    virtualizer: /** @type {any} */ (null),
    /** whether the next render scrolls to what the step added */
    stepScroll: false,
    painting: false,
    repaint: false,
    /** @type {Map<number, Map<number, number>>} message → block → breakpoint index (of the marks shown) */
    bpAt: new Map(),
    /** the result whose invisible characters hiddenCounts holds @type {View | null} */
    hiddenOf: null,
    /** @type {Map<number, {count: number, tags: number}>} */
    hiddenCounts: new Map(),
    // ---- the search
    /** the search's text ("" for none) */
    queryText: "",
    /** @type {{message: number, block: number, from: number, to: number}[]} the search's hits, in order */
    hits: [],
    /** @type {Map<number, number[]>} message → indexes into hits */
    hitsByMessage: new Map(),
    /** the current hit, -1 for none */
    hit: -1,
    /** the result and limit the hits are of */
    hitsOf: "",
  };
}

/** messages shown: all, or those before step `step`. */
export function limit(pv) {
  const v = pv.view;
  if (!v) return 0;
  const t = pv.trajectoryInfo;
  if (pv._step === null || !t) return v.count;
  return t.stepStart[Math.min(pv._step, t.steps)];
}

export function prefixChars(pv, n) {
  let s = 0;
  const c = /** @type {View} */ (pv.view).chars;
  for (let i = 0; i < n; i++) s += c[i];
  return s;
}

/** whether the first n messages exceed the budget: the running
 * sum first exceeds it at v.firstOver, and never falls back */
export function overflowAt(pv, n) {
  const v = /** @type {View} */ (pv.view);
  return v.firstOver >= 0 && v.firstOver < n;
}

/** messages of segment s (within the shown limit) */
export function segmentCount(pv, s) {
  const v = /** @type {View} */ (pv.view);
  const lim = limit(pv);
  return Math.max(0, Math.min(v.segEnds[s], lim) - segStart(v, s));
}

/** How many steps start before message n. */
export function stepsBefore(pv, n) {
  const v = /** @type {View} */ (pv.view);
  let k = 0;
  while (k < v.steps && v.stepStart[k] < n) k++;
  return k;
}

/** The cache breakpoints of the result shown, or null. */
export function shownMarks(pv) {
  const m = pv.marks;
  return m && pv._cacheBreakpoints && pv.view && m.gen === pv.viewGen ? m : null;
}

/** Indexes the breakpoints shown (none in step mode). */
export function indexMarks(pv) {
  pv.bpAt = new Map();
  const list = pv._step === null ? shownMarks(pv)?.breakpoints : null;
  list?.forEach(([i, b], k) => {
    const at = pv.bpAt.get(i) ?? new Map();
    at.set(b, k);
    pv.bpAt.set(i, at);
  });
}

/** Where "new since the previous call" starts in the result
 * shown: [message, code point in it], or null. */
export function sinceFrom(pv) {
  const s = pv.since;
  const v = pv.view;
  if (!s || !v || s.gen !== pv.viewGen || pv._step !== null) return null;
  let left = s.chars;
  for (let i = 0; i < v.count; i++) {
    if (left < v.chars[i]) return [i, left];
    left -= v.chars[i];
  }
  return null;
}

/** Summary of what is shown (the element's `summary`), null before a result. @param {State} pv */
export function summaryOf(pv) {
  if (!pv.view) return null;
  const lim = limit(pv);
  return { messages: lim, promptChars: prefixChars(pv, lim), contextOverflow: overflowAt(pv, lim), stale: pv.state === "stale" };
}

/**
 * What is shown, computed once from the state each time the view is drawn
 * (render.js keeps it as `pv.frame`): the frame the panes and the rows are
 * drawn from (panes.js, rows.js), so that none of them asks the state again.
 * @param {State} pv
 */
export function frameOf(pv) {
  const v = pv.view;
  const t = pv.trajectoryInfo;
  const lim = limit(pv);
  const step = pv._step !== null && t ? Math.min(pv._step, t.steps) : null;
  return {
    /** "loading" | "ok" | "stale" | "error" | "empty" */
    state: pv.state,
    view: v,
    /** messages shown, their characters, whether they pass the budget */
    lim,
    chars: v ? prefixChars(pv, lim) : 0,
    overflow: v ? overflowAt(pv, lim) : false,
    /** the step shown (null: the whole request), of `steps`; the characters before it added its messages */
    step,
    steps: t?.steps ?? 0,
    stepFrom: step ? prefixChars(pv, t.stepStart[step - 1]) : 0,
    /** the characters byte-identical since the previous result */
    sameChars: v && v.changedFrom >= 0 ? prefixChars(pv, v.changedFrom) : 0,
    /** the cache breakpoints: null (not drawn), "whole" (not step by step), "exporting", or the worker's answer */
    marks: !pv._cacheBreakpoints || !v ? null : pv._step !== null || pv._trajectory ? "whole" : (shownMarks(pv) ?? "exporting"),
    /** where "new since the previous call" starts: [message, code point in it], or null */
    since: sinceFrom(pv),
    /** the messages shown of each segment, and the steps they hold */
    segCounts: v ? [0, 1, 2, 3].map((s) => segmentCount(pv, s)) : [0, 0, 0, 0],
    stepsShown: v ? stepsBefore(pv, lim) : 0,
  };
}

/** @typedef {ReturnType<typeof frameOf>} Frame */
