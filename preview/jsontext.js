// Text helpers of the preview page for JSON requests as the editor holds
// them: a JSON syntax error's place as line and column, and a pretty-printer
// that changes whitespace only (every number, string and key is copied as
// written: an integer beyond 2^53 stays exact, an escape stays an escape).

/**
 * Where UTF-16 index `index` of `text` is: its line (1-based, lines split
 * at LF, as the editor holds them) and its column (1-based, in code points,
 * as a person counts characters).
 *
 * @param {string} text
 * @param {number} index
 * @returns {{index: number, line: number, column: number}}
 */
export function lineColumnAt(text, index) {
  let line = 1;
  let start = 0;
  for (let nl = text.indexOf("\n"); nl >= 0 && nl < index; nl = text.indexOf("\n", nl + 1)) {
    line++;
    start = nl + 1;
  }
  let column = 1;
  for (let i = start; i < index; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < index) i++;
    column++;
  }
  return { index, line, column };
}

const WS = new Set([" ", "\t", "\n", "\r"]);
const STOP = new Set([" ", "\t", "\n", "\r", "{", "}", "[", "]", ",", ":", '"']);

/** The index just past the string literal that opens at `i`. @param {string} text @param {number} i */
function stringEnd(text, i) {
  let q = i;
  for (;;) {
    q = text.indexOf('"', q + 1);
    if (q < 0) return text.length;
    let back = 0;
    while (text[q - 1 - back] === "\\") back++;
    if (back % 2 === 0) return q + 1;
  }
}

/** The index of the first character at or after `i` that is not JSON whitespace. */
function skipSpace(text, i) {
  while (i < text.length && WS.has(text[i])) i++;
  return i;
}

/**
 * JSON text pretty-printed (two spaces a level, `"key": value`, an empty
 * object or array kept as `{}` / `[]`): only whitespace outside strings
 * changes; every token is copied as written (never parsed into a number or
 * a string and written back).
 *
 * @param {string} text JSON text (its tokens are kept, valid or not)
 * @param {string} [indent]
 */
export function formatJSON(text, indent = "  ") {
  const out = [];
  let depth = 0;
  const pad = () => "\n" + indent.repeat(depth);
  for (let i = skipSpace(text, 0); i < text.length; i = skipSpace(text, i)) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      out.push(text.slice(i, end));
      i = end;
    } else if (c === "{" || c === "[") {
      const next = skipSpace(text, i + 1);
      if (text[next] === (c === "{" ? "}" : "]")) {
        out.push(c, text[next]);
        i = next + 1;
        continue;
      }
      depth++;
      out.push(c, pad());
      i++;
    } else if (c === "}" || c === "]") {
      depth = Math.max(0, depth - 1);
      out.push(pad(), c);
      i++;
    } else if (c === ",") {
      out.push(",", pad());
      i++;
    } else if (c === ":") {
      out.push(": ");
      i++;
    } else {
      let j = i + 1;
      while (j < text.length && !STOP.has(text[j])) j++;
      out.push(text.slice(i, j));
      i = j;
    }
  }
  return out.join("");
}
