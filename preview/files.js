/**
 * The preview's files as requests, read as the command-line tool reads them:
 * msgpack (one request, or a stream of values), JSON lines (one request a
 * line, blank lines counted as --batch counts them) or JSON text (one
 * request), each judged by the module from the file's own bytes.
 *
 * @module
 */

import { MAX_STRING_UNITS } from "./element/binding.js";
import { fmt } from "./element/text.js";

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lossy = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * One JSON request of a file as the page holds it: its text, decoded
 * strictly and keeping a BOM (which the module then rejects at byte 0, as
 * the CLI does); bytes that are not valid UTF-8 are kept as bytes for the
 * module to judge (`invalid_utf8` at the string's path, the CLI's verdict),
 * with a lossy text for the editor to show.
 * @param {string} label @param {Uint8Array} bytes
 */
export function jsonRequest(label, bytes, line = 1) {
  const where = { line, size: bytes.length, raw: bytes };
  let text;
  try {
    text = strict.decode(bytes);
  } catch {
    const shown = lossy.decode(bytes);
    // U+FFFD the file itself holds (EF BF BD), not replacements.
    const fffd = bytes.length < 3 ? 0 : countFFFD(bytes);
    return { label: `${label} (not UTF-8)`, text: shown, bytes, json: true, invalid: true, fffd, ...where };
  }
  const breaks = lineBreaksOf(text);
  // Mixed line breaks (or a lone CR): the editor cannot keep them, so the
  // view judges the file's bytes until the first edit.
  if (breaks === "mixed") return { label, text, bytes, json: true, mixed: true, ...where };
  return { label, text, crlf: breaks === "crlf", ...where };
}

/** How many times the bytes hold U+FFFD (EF BF BD). @param {Uint8Array} b */
export function countFFFD(b) {
  let n = 0;
  for (let i = b.indexOf(0xef); i >= 0 && i + 2 < b.length; i = b.indexOf(0xef, i + 1)) if (b[i + 1] === 0xbf && b[i + 2] === 0xbd) n++;
  return n;
}

/**
 * A text's line breaks: "lf" (none, or LF only), "crlf" (CRLF only) or
 * "mixed" (a lone CR, or both kinds).
 * @param {string} text
 */
export function lineBreaksOf(text) {
  if (!text.includes("\r")) return "lf";
  const crs = text.split("\r").length - 1;
  const crlfs = text.split("\r\n").length - 1;
  const lfs = text.split("\n").length - 1;
  return crs === crlfs && lfs === crlfs ? "crlf" : "mixed";
}

const isSpace = (b) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/** The lines of bytes (split at LF), each with its number. @param {Uint8Array} bytes */
export function linesOf(bytes) {
  const out = [];
  for (let from = 0, k = 0; from <= bytes.length; k++) {
    let to = bytes.indexOf(0x0a, from);
    if (to < 0) to = bytes.length;
    out.push({ k, line: bytes.subarray(from, to) });
    from = to + 1;
  }
  return out;
}

/** Whether a line, spaces aside, starts with `{` and ends with `}`. @param {Uint8Array} l */
export function objectLine(l) {
  let a = 0;
  let b = l.length - 1;
  while (a <= b && isSpace(l[a])) a++;
  while (b >= a && isSpace(l[b])) b--;
  return a < b && l[a] === 0x7b && l[b] === 0x7d;
}

/** How long a slice of work on the page's thread may run before it yields (ms): well under a frame. */
export const SLICE_MS = 8;

/** Resolves in a new task (the page paints and takes input between slices): scheduler.yield where the
 * browser has it (the continuation keeps its place in the queue), else a timer. */
export const nextTask = () =>
  /** @type {any} */ (globalThis).scheduler?.yield
    ? /** @type {Promise<void>} */ (/** @type {any} */ (globalThis).scheduler.yield())
    : new Promise((r) => setTimeout(r, 0));

/**
 * How a file is read (requestsOfFile's rule): its requests, or the lines
 * of a JSON-lines file, each to be one request (jsonLine).
 * @param {Uint8Array} bytes @param {string} name @param {{lines?: boolean}} opts
 * @returns {{requests: any[]} | {lines: {k: number, line: Uint8Array}[]}}
 */
function reading(bytes, name, { lines }) {
  if (bytes.length > MAX_STRING_UNITS) return { requests: [{ label: name, error: tooLargeText(bytes.length) }] };
  let i = 0;
  while (i < bytes.length && isSpace(bytes[i])) i++;
  const b = bytes[i];
  if (b !== 0x7b && b !== 0x5b && ((b >= 0x80 && b <= 0x8f) || b === 0xde || b === 0xdf)) {
    const values = lines ? msgpackValues(bytes) : null;
    if (!values) return { requests: [{ label: `${name} (msgpack)`, bytes, line: 1, size: bytes.length }] };
    return {
      requests: values.map(([from, to], k) => {
        const one = bytes.subarray(from, to);
        return { label: `value ${k + 1} (msgpack)`, bytes: one, raw: one, msgpack: true, line: k + 1, size: one.length };
      }),
    };
  }
  const jsonl = lines ?? /\.(jsonl|ndjson)$/i.test(name);
  if (!jsonl) return { requests: [jsonRequest(name, bytes)] };
  // Every line is a request, as --batch reads them: a blank or whitespace-only one is an error (counted,
  // never dropped); only the empty piece after the file's last LF is no line.
  const all = linesOf(bytes);
  if (all.length && all[all.length - 1].line.length === 0) all.pop();
  return { lines: all };
}

/** Line k of a JSON-lines file as its request. @param {{k: number, line: Uint8Array}} l */
const jsonLine = ({ k, line }) => jsonRequest(`line ${k + 1}`, line, k + 1);

/**
 * Splits a file into requests: msgpack (one request), JSON lines (one per
 * line, blank ones included, as --batch reads them) or JSON text (one request). The module judges each, from
 * the file's bytes: never a text the decoder changed (jsonRequest). A file
 * longer than the longest string the browser can make is one coded error,
 * never an empty document.
 *
 * JSON lines by the CLI's rule: a `.jsonl` or `.ndjson` name, or an explicit
 * choice (`lines: true`, the "Open as JSON lines" button); any other JSON
 * file is one request, as `polyloop-assemble FILE` reads it (two objects in
 * a `.json` file: the CLI's `unexpected data after the JSON value`).
 *
 * @param {Uint8Array} bytes
 * @param {string} name
 * @param {{lines?: boolean}} [opts]
 */
export function requestsOfFile(bytes, name, opts = {}) {
  const r = reading(bytes, name, opts);
  return "requests" in r ? r.requests : r.lines.map(jsonLine);
}

/**
 * requestsOfFile on the page's thread without holding it: the lines of a
 * JSON-lines file are decoded in slices of `sliceMs`, the page painting and
 * taking input between them (a 5 MB file of 2,000 lines is some 30 ms of
 * decoding). The same requests as requestsOfFile.
 * @param {Uint8Array} bytes @param {string} name @param {{lines?: boolean}} [opts] @param {number} [sliceMs]
 */
export async function requestsOfFileInSlices(bytes, name, opts = {}, sliceMs = SLICE_MS) {
  const r = reading(bytes, name, opts);
  if ("requests" in r) return r.requests;
  const out = [];
  let t0 = performance.now();
  for (const l of r.lines) {
    if (performance.now() - t0 >= sliceMs) {
      await nextTask();
      t0 = performance.now();
    }
    out.push(jsonLine(l));
  }
  return out;
}

/** Whether a file could be JSON lines (two or more lines, each one object)
 * or a msgpack stream (two or more maps): then the page offers to open it
 * so. Looks at each line's ends only (a 5 MB file costs its line breaks).
 * @param {Uint8Array} bytes */
export function looksLikeLines(bytes) {
  if ((bytes[0] >= 0x80 && bytes[0] <= 0x8f) || bytes[0] === 0xde || bytes[0] === 0xdf) {
    const values = msgpackValues(bytes);
    return values !== null && values.length > 1 && values.every(([from]) => isMapByte(bytes[from]));
  }
  let objects = 0;
  for (const { line } of linesOf(bytes)) {
    let a = 0;
    while (a < line.length && isSpace(line[a])) a++;
    if (a === line.length) continue; // blank
    if (!objectLine(line)) return false;
    objects++;
  }
  return objects > 1;
}

const isMapByte = (/** @type {number} */ b) => (b >= 0x80 && b <= 0x8f) || b === 0xde || b === 0xdf;

/** Bytes a msgpack head takes past its first byte, and the values it holds
 * (a map's pairs count twice); null for 0xc1. @param {Uint8Array} b @param {number} i */
export function msgpackHead(b, i) {
  const t = b[i];
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const u16 = () => dv.getUint16(i + 1);
  const u32 = () => dv.getUint32(i + 1);
  if (t <= 0x7f || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) return [1, 0];
  if (t <= 0x8f) return [1, 2 * (t & 15)];
  if (t <= 0x9f) return [1, t & 15];
  if (t <= 0xbf) return [1 + (t & 31), 0];
  /** @type {Record<number, () => [number, number]>} */
  const sized = {
    0xc4: () => [2 + b[i + 1], 0],
    0xc5: () => [3 + u16(), 0],
    0xc6: () => [5 + u32(), 0],
    0xc7: () => [3 + b[i + 1], 0],
    0xc8: () => [4 + u16(), 0],
    0xc9: () => [6 + u32(), 0],
    0xd9: () => [2 + b[i + 1], 0],
    0xda: () => [3 + u16(), 0],
    0xdb: () => [5 + u32(), 0],
    0xdc: () => [3, u16()],
    0xdd: () => [5, u32()],
    0xde: () => [3, 2 * u16()],
    0xdf: () => [5, 2 * u32()],
  };
  const fixed = {
    0xca: 5,
    0xcb: 9,
    0xcc: 2,
    0xcd: 3,
    0xce: 5,
    0xcf: 9,
    0xd0: 2,
    0xd1: 3,
    0xd2: 5,
    0xd3: 9,
    0xd4: 3,
    0xd5: 4,
    0xd6: 6,
    0xd7: 10,
    0xd8: 18,
  };
  if (fixed[t]) return [fixed[t], 0];
  return sized[t] ? sized[t]() : null;
}

/**
 * The byte ranges of the msgpack values a stream holds one after another
 * (what the CLI's --batch reads), or null when the bytes are not whole
 * values (cut short, a reserved byte).
 * @param {Uint8Array} b
 * @returns {[number, number][] | null}
 */
export function msgpackValues(b) {
  const out = [];
  let i = 0;
  while (i < b.length) {
    const from = i;
    let pending = 1;
    while (pending > 0) {
      if (i >= b.length) return null;
      let head;
      try {
        head = msgpackHead(b, i);
      } catch {
        return null; // a length past the end
      }
      if (!head) return null;
      i += head[0];
      if (!Number.isFinite(i)) return null;
      pending += head[1] - 1;
    }
    if (i > b.length) return null;
    out.push([from, i]);
  }
  return out;
}

/** The error for a file of `size` bytes past the string ceiling. */
export function tooLargeText(size) {
  return `too_large: this file is ${fmt.format(size)} bytes, longer than the longest text the browser can hold (${fmt.format(MAX_STRING_UNITS)} characters); assemble it with the CLI or a binding.`;
}
