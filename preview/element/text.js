/**
 * The text of the prompt view as DOM: the element factory `h` (strings become
 * text nodes, never markup), invisible characters marked with their code
 * point, line breaks marked, search hits wrapped, long texts collapsed; and
 * the words and numbers the view writes. Used by the element's render
 * modules and by the page (caching.js, report.js, compare.js); `svg` is `h`
 * for SVG elements (the report's chart).
 *
 * @module
 */

import { INVISIBLE_RANGES } from "./binding.js";

/** The most hits a search marks. */
export const MAX_HITS = 10_000;

/** Texts longer than this (UTF-16 units) or with more lines are collapsed. */
export const COLLAPSE_CHARS = 1200;
export const COLLAPSE_LINES = 14;

export const SEGMENTS = /** @type {const} */ (["run", "injection", "goal", "history"]);
export const SEGMENT_TITLES = { run: "Run messages", injection: "Injection slot", goal: "Goal messages", history: "History" };

export const fmt = new Intl.NumberFormat("en-US");
export const plural = (n, one, many = one + "s") => `${fmt.format(n)} ${n === 1 ? one : many}`;

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

/**
 * Creates an SVG element (in the SVG namespace), its attributes set with
 * setAttribute; text goes in as textContent, never markup.
 *
 * @param {string} tag
 * @param {Record<string, string | number>} [attrs]
 * @returns {SVGElement}
 */
export function svg(tag, attrs = {}) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return /** @type {SVGElement} */ (e);
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
export function textBlock(text) {
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
export function collapsed(text) {
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

export const quote = (s) => JSON.stringify(s);

/** The UTF-16 index of code point `cp` of `text` (its length past the end). @param {string} text @param {number} cp */
export function utf16At(text, cp) {
  let i = 0;
  for (let k = 0; k < cp && i < text.length; k++) i += text.codePointAt(i) > 0xffff ? 2 : 1;
  return i;
}
