/**
 * Where things are in a request's JSON text, for linking an error to its place
 * in an editor: the value at a wire path (`steps[3].observation`,
 * `injections["tools"][0].entry_id`), the code point of a template error
 * inside the JSON string literal that holds the template, and the UTF-16
 * position of a byte offset. Positions are UTF-16 indexes into the text (what
 * editors use).
 *
 * This is no JSON reader: the verdict on the text is the module's
 * (`assemble_json`); these functions only run on text the module has judged,
 * to point at what it named, and give up (null) on anything they do not
 * understand.
 *
 * @module
 */

/**
 * Splits a wire path into keys and indexes: `steps[3].observation` →
 * `["steps", 3, "observation"]`; `injections["a.b"][0]` → `["injections", "a.b", 0]`.
 *
 * @param {string} path
 * @returns {(string | number)[] | null} null when the path is not in that form
 */
export function parsePath(path) {
  const out = [];
  let i = 0;
  while (i < path.length) {
    const c = path[i];
    if (c === ".") {
      i++;
      continue;
    }
    if (c === "[") {
      if (path[i + 1] === '"') {
        // A JSON string up to its closing quote.
        let j = i + 2;
        while (j < path.length && path[j] !== '"') j += path[j] === "\\" ? 2 : 1;
        try {
          out.push(JSON.parse(path.slice(i + 1, j + 1)));
        } catch {
          return null;
        }
        if (path[j + 1] !== "]") return null;
        i = j + 2;
      } else {
        const j = path.indexOf("]", i);
        if (j < 0) return null;
        const n = Number(path.slice(i + 1, j));
        if (!Number.isInteger(n) || n < 0) return null;
        out.push(n);
        i = j + 1;
      }
      continue;
    }
    let j = i;
    while (j < path.length && path[j] !== "." && path[j] !== "[") j++;
    out.push(path.slice(i, j));
    i = j;
  }
  return out;
}

const WS = new Set([" ", "\t", "\n", "\r"]);

function skipWs(text, i) {
  while (i < text.length && WS.has(text[i])) i++;
  return i;
}

/** End (exclusive) of the string literal starting at the quote at `i`
 * (indexOf finds each quote; an odd run of backslashes before it escapes it). */
function stringEnd(text, i) {
  let j = i;
  for (;;) {
    j = text.indexOf('"', j + 1);
    if (j < 0) return -1;
    let k = j - 1;
    while (text.charCodeAt(k) === 0x5c) k--;
    if ((j - 1 - k) % 2 === 0) return j + 1;
  }
}

/** End (exclusive) of the JSON value starting at `i`, or -1. */
function valueEnd(text, i) {
  const c = text[i];
  if (c === '"') return stringEnd(text, i);
  if (c === "{" || c === "[") {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text[j];
      if (d === '"') {
        j = stringEnd(text, j) - 1;
        if (j < 0) return -1;
      } else if (d === "{" || d === "[") depth++;
      else if (d === "}" || d === "]") {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }
  let j = i;
  while (j < text.length && !WS.has(text[j]) && text[j] !== "," && text[j] !== "}" && text[j] !== "]") j++;
  return j > i ? j : -1;
}

/**
 * The range of the value at `path` in the JSON text; when the path leads
 * somewhere that does not exist (a missing field), the range of the deepest
 * value that does, with `exact: false`. `key` is the range of the member's
 * name when the last step was an object key.
 *
 * @param {string} text
 * @param {string | (string | number)[]} path a wire path ("" is the whole
 *   request), or its keys and indexes as the core gives them (an error's `at.path`)
 * @returns {{from: number, to: number, exact: boolean} | null}
 */
export function locatePath(text, path) {
  const steps = typeof path === "string" ? parsePath(path) : path;
  if (!steps) return null;
  let at = skipWs(text, 0);
  let end = valueEnd(text, at);
  if (end < 0) return null;
  for (const step of steps) {
    const found = typeof step === "number" ? element(text, at, step) : member(text, at, step);
    if (!found) return { from: at, to: end, exact: false };
    [at, end] = found;
  }
  return { from: at, to: end, exact: true };
}

/**
 * @param {(name: string, from: number, to: number) => void} [each] called for every member
 * @returns {[number, number] | null} the value of `key` in the object at `i`
 */
function member(text, i, key, each) {
  if (text[i] !== "{") return null;
  let j = skipWs(text, i + 1);
  let found = null;
  while (j < text.length && text[j] === '"') {
    const kEnd = stringEnd(text, j);
    if (kEnd < 0) return null;
    let name;
    try {
      name = JSON.parse(text.slice(j, kEnd));
    } catch {
      return null;
    }
    j = skipWs(text, kEnd);
    if (text[j] !== ":") return null;
    j = skipWs(text, j + 1);
    const vEnd = valueEnd(text, j);
    if (vEnd < 0) return null;
    // The first occurrence: a repeated key is the module's duplicate_key,
    // whose path names the key, and the first one is where a reader looks.
    if (name === key && !found) found = /** @type {[number, number]} */ ([j, vEnd]);
    each?.(name, j, vEnd);
    j = skipWs(text, vEnd);
    if (text[j] !== ",") break;
    j = skipWs(text, j + 1);
  }
  return found;
}

/** @returns {[number, number] | null} the n-th element of the array at `i` */
function element(text, i, n) {
  if (text[i] !== "[") return null;
  let j = skipWs(text, i + 1);
  for (let k = 0; j < text.length && text[j] !== "]"; k++) {
    const vEnd = valueEnd(text, j);
    if (vEnd < 0) return null;
    if (k === n) return [j, vEnd];
    j = skipWs(text, vEnd);
    if (text[j] !== ",") return null;
    j = skipWs(text, j + 1);
  }
  return null;
}

const SIMPLE_ESCAPE = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

/**
 * The UTF-16 range, inside the JSON string literal `text.slice(from, to)`
 * (quotes included), of the code point at `offset` of the string it denotes
 * (an escape such as `\n` or a `\ud83d\ude00` pair is one code point); the
 * closing quote when `offset` is the string's length.
 *
 * @param {string} text
 * @param {number} from index of the opening quote
 * @param {number} to index after the closing quote
 * @param {number} offset code points into the denoted string
 * @returns {{from: number, to: number} | null}
 */
export function codePointInLiteral(text, from, to, offset) {
  if (text[from] !== '"') return null;
  let i = from + 1;
  for (let k = 0; i < to - 1; k++) {
    const start = i;
    if (text[i] === "\\") {
      const e = text[i + 1];
      if (e === "u") {
        const hi = parseInt(text.slice(i + 2, i + 6), 16);
        i += 6;
        if (hi >= 0xd800 && hi < 0xdc00 && text[i] === "\\" && text[i + 1] === "u") {
          const lo = parseInt(text.slice(i + 2, i + 6), 16);
          if (lo >= 0xdc00 && lo < 0xe000) i += 6;
        }
      } else if (SIMPLE_ESCAPE.has(e)) i += 2;
      else return null;
    } else {
      const c = text.charCodeAt(i);
      i += c >= 0xd800 && c < 0xdc00 && i + 1 < to - 1 ? 2 : 1;
    }
    if (k === offset) return { from: start, to: i };
  }
  return { from: to - 1, to };
}

/**
 * The UTF-16 index in `text` of the byte at `byteOffset` of its UTF-8
 * encoding (a JSON syntax error's "at byte N").
 *
 * @param {string} text
 * @param {number} byteOffset
 */
export function utf16Index(text, byteOffset) {
  let bytes = 0;
  let i = 0;
  for (; i < text.length && bytes < byteOffset; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return i;
}
