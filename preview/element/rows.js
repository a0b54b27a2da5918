/**
 * The message list: a virtualised list of rows (segment heads and messages),
 * only the rows in view in the DOM, each row drawn from the element's state
 * `pv` (its texts with their invisible characters, search hits, breakpoints,
 * "new" marks and badges).
 *
 * @module
 */

import { Virtualizer, elementScroll, observeElementOffset, observeElementRect, measureElement } from "@tanstack/virtual-core";
import { SEGMENTS, SEGMENT_TITLES, collapsed, countInvisible, fmt, h, markHits, plural, textBlock, utf16At } from "./text.js";
import { segOf, textsOf, where } from "./columns.js";

/** A new key function (the virtualizer recomputes its
 * measurements when it changes): a row's key is its message or segment and
 * whether it is expanded. */
export function rowKeys(pv) {
  const marked = pv.bpAt;
  const since = pv.frame.since;
  return (/** @type {number} */ i) => {
    const r = pv.rows[i];
    return `${r}:${pv.expanded.has(r) ? 1 : 0}:${marked.has(r) ? 1 : 0}:${since !== null && r >= since[0] ? 1 : 0}`;
  };
}

/** Puts the visible rows (only those) into the DOM: new rows are
 * added and measured, rows out of view removed, the others moved. Calls
 * made while painting (the virtualizer reacting to a measurement) repaint
 * once more instead of recursing. */
export function paintRows(pv) {
  if (!pv.view) return;
  if (pv.painting) {
    pv.repaint = true;
    return;
  }
  pv.painting = true;
  try {
    for (let pass = 0; pass < 4; pass++) {
      pv.repaint = false;
      const items = pv.virtualizer.getVirtualItems();
      const height = `${pv.virtualizer.getTotalSize()}px`;
      if (pv.ui.rows.style.height !== height) pv.ui.rows.style.height = height;
      const keep = new Set();
      const fresh = [];
      for (const it of items) {
        keep.add(it.index);
        let el = pv.rowCache.get(it.index);
        if (!el) {
          el = rowElement(pv, it.index);
          pv.rowCache.set(it.index, el);
          pv.ui.rows.append(el);
          fresh.push(el);
        }
        const tr = `translateY(${it.start}px)`;
        if (el.style.transform !== tr) el.style.transform = tr;
      }
      for (const [i, el] of pv.rowCache) {
        if (!keep.has(i)) {
          el.remove();
          pv.rowCache.delete(i);
        }
      }
      for (const el of fresh) pv.virtualizer.measureElement(el);
      if (!pv.repaint) break;
    }
  } finally {
    pv.painting = false;
  }
}

/** @param {number} row */
export function rowElement(pv, row) {
  const v = /** @type {View} */ (pv.view);
  const r = pv.rows[row];
  if (r < 0) {
    const s = -1 - r;
    const name = SEGMENTS[s];
    const folded = pv.collapsedSegs.has(s);
    const n = pv.frame.segCounts[s];
    const detail =
      s === 3
        ? plural(pv.frame.stepsShown, "step")
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
  const seg = SEGMENTS[segOf(v, i)];
  const texts = textsOf(v, i) ?? [];
  const t = pv.trajectoryInfo;
  const lim = pv.frame.lim;
  const isNew = pv._step !== null && t && pv._step > 0 && i >= t.stepStart[Math.min(pv._step, t.steps) - 1];
  const firstOver = v.firstOver >= 0 && v.firstOver < lim ? v.firstOver : -1;
  const isOver = i === firstOver;
  const isChanged = pv._step === null && v.changedFrom === i && v.changedFrom >= 0;
  const open = pv.expanded.has(i);
  const since = pv.frame.since;
  // What is new since the previous call: all of this message (0), or from code point `sinceAt` of its text.
  const sinceAt = since === null || i < since[0] ? -1 : i === since[0] ? since[1] : 0;
  let cpBefore = 0;
  const bps = pv.bpAt.get(i);
  const blocks = [];
  let long = false;
  const hitsHere = pv.hitsByMessage.get(i);
  texts.forEach((text, b) => {
    const cut = open ? null : collapsed(text);
    if (cut !== null) long = true;
    const block = textBlock(cut ?? text);
    if (hitsHere) {
      const shownLength = (cut ?? text).length;
      /** @type {[number, number, boolean][]} */
      const ranges = [];
      for (const k of hitsHere) {
        const hit = pv.hits[k];
        if (hit.block === b && hit.to <= shownLength) ranges.push([hit.from, hit.to, k === pv.hit]);
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
      const n = /** @type {any} */ (pv.marks).breakpoints.length;
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
  const hidden = invisibleIn(pv, i, texts);
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
        h("span", { class: "where" }, `#${i} · ${where(v, i)}`),
        seg === "injection" ? h("span", { class: "entry", title: "entry_id" }, `entry ${v.injected[i - v.segEnds[0]].entry_id}`) : null,
        isNew ? h("span", { class: "badge new", title: `added by step ${pv._step}` }, `new at step ${pv._step}`) : null,
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

/** How many invisible characters (and tag characters) message
 * i's texts hold, counted once per result. @param {number} i @param {string[]} texts */
export function invisibleIn(pv, i, texts) {
  if (pv.hiddenOf !== pv.view) {
    pv.hiddenOf = pv.view;
    pv.hiddenCounts = new Map();
  }
  let got = pv.hiddenCounts.get(i);
  if (!got) {
    let count = 0;
    let tags = 0;
    for (const t of texts) {
      count += countInvisible(t);
      tags += t.match(/[\u{e0020}-\u{e007e}]/gu)?.length ?? 0;
    }
    got = { count, tags };
    pv.hiddenCounts.set(i, got);
  }
  return got;
}

/** Puts every row in view again (their marks changed). */
export function repaintRows(pv) {
  pv.rowCache.clear();
  pv.ui.rows.replaceChildren();
  pv.virtualizer.setOptions({ ...pv.virtualizer.options, getItemKey: rowKeys(pv) });
  pv.virtualizer._willUpdate();
  paintRows(pv);
}

export function toggleExpand(pv, i) {
  if (pv.expanded.has(i)) pv.expanded.delete(i);
  else pv.expanded.add(i);
  const row = pv.rows.indexOf(i);
  pv.rowCache.get(row)?.remove();
  pv.rowCache.delete(row);
  pv.virtualizer.setOptions({ ...pv.virtualizer.options });
  paintRows(pv);
}

/** Focus back on the control `selector` names (its row was drawn again, so the element that had
 * focus is gone): now if it is in the DOM, else once the rows are painted. */
export function refocus(pv, selector) {
  const root = /** @type {ShadowRoot} */ (pv.root);
  const focus = () => {
    const el = /** @type {HTMLElement | null} */ (root.querySelector(selector));
    el?.focus({ preventScroll: true });
    return el !== null;
  };
  if (!focus()) requestAnimationFrame(() => (paintRows(pv), focus()));
}

/** Scrolls message `i` into view and focuses its row. */
export function scrollToMessage(pv, i) {
  const row = pv.rows.indexOf(i);
  if (row < 0) return;
  pv.focusRow = row;
  pv.virtualizer.scrollToIndex(row, { align: "start" });
  requestAnimationFrame(() => pv.rowCache.get(row)?.focus());
}

/** Scrolls to step `k` (1-based) and focuses it; false when there is no such step shown. @param {any} pv @param {number} k */
export function goToStep(pv, k) {
  const v = pv.view;
  if (!v || !Number.isInteger(k) || k < 1 || k > v.steps) return false;
  const i = v.stepStart[k - 1];
  if (i >= pv.frame.lim || pv.rows.indexOf(i) < 0) return false;
  scrollToMessage(pv, i);
  return true;
}

/** The list's virtualizer: rows measured as drawn, only those in view (and 4 more) in the DOM. @param {any} pv */
export function newVirtualizer(pv) {
  return new Virtualizer({
    count: 0,
    getScrollElement: () => pv.ui.list,
    estimateSize: () => 90,
    overscan: 4,
    observeElementRect,
    observeElementOffset,
    scrollToFn: elementScroll,
    measureElement,
    onChange: () => paintRows(pv),
  });
}

/** Starts the list's observers (the element is in the page); returns what stops them. @param {any} pv */
export function mountList(pv) {
  const unmount = pv.virtualizer._didMount();
  pv.virtualizer._willUpdate();
  return unmount;
}
