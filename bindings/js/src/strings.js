/**
 * The strings the request encoder and the response decoder share: WTF-8
 * (how a JavaScript string with a lone surrogate goes on the wire), the cache
 * of the UTF-8 of recently encoded long strings, the request's strings a
 * response decoder reuses, and the byte helpers Node's entry point swaps for
 * native ones ({@link useNodeBuffer}).
 *
 * @module
 */

/** A lone surrogate anywhere in a string (fallback where
 * String.prototype.isWellFormed is missing). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** @type {(s: string) => boolean} */
export const isWellFormed = typeof String.prototype.isWellFormed === "function" ? (s) => s.isWellFormed() : (s) => !LONE_SURROGATE.test(s);

/**
 * Encodes `s` as WTF-8: UTF-8 for every code point, and each lone surrogate as
 * the three bytes UTF-8 would give its code unit (so U+D800 is ED A0 80). The
 * output needs at most 3 bytes per UTF-16 unit.
 *
 * @param {string} s
 * @param {Uint8Array} out
 * @param {number} pos where to start writing
 * @returns {number} the number of bytes written
 */
export function encodeWtf8Into(s, out, pos) {
  const start = pos;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      out[pos++] = c;
    } else if (c < 0x800) {
      out[pos++] = 0xc0 | (c >> 6);
      out[pos++] = 0x80 | (c & 0x3f);
    } else {
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
          out[pos++] = 0xf0 | (c >> 18);
          out[pos++] = 0x80 | ((c >> 12) & 0x3f);
          out[pos++] = 0x80 | ((c >> 6) & 0x3f);
          out[pos++] = 0x80 | (c & 0x3f);
          continue;
        }
      }
      out[pos++] = 0xe0 | (c >> 12);
      out[pos++] = 0x80 | ((c >> 6) & 0x3f);
      out[pos++] = 0x80 | (c & 0x3f);
    }
  }
  return pos - start;
}

/**
 * The number of bytes {@link encodeWtf8Into} writes for `s`.
 *
 * @param {string} s
 * @returns {number}
 */
export function wtf8Length(s) {
  const n = s.length;
  let len = n;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) {
      len += 1;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      len += 2; // a pair: two units, four bytes
      i++;
    } else {
      len += 2;
    }
  }
  return len;
}

/**
 * The UTF-8 of recently encoded long strings: an agent loop sends the same
 * history (the same strings) again with every step, and copying their bytes
 * costs a fraction of encoding them. A string's bytes are kept when the
 * encoder meets it a second time, in the request after the one it was new
 * in (src/encode.js): a one-off request pays neither a copy nor an entry.
 * Only strings up to {@link CACHE_MAX_UNITS} units (V8 hashes longer strings
 * by length alone, so a lookup would compare contents);
 * {@link CACHE_MAX_BYTES} in all, then the cache starts over. Keys are string values, so a hit is
 * exact by definition. The bytes are copied into chunks of
 * {@link CACHE_CHUNK_BYTES} (a copy of its own per string would cost an
 * allocation each), which the cache reuses when it starts over; a string's
 * value is a view of its bytes there.
 *
 * @type {Map<string, Uint8Array>}
 */
export const encodedStrings = new Map();
export const CACHE_MAX_UNITS = 16383;
const CACHE_MAX_BYTES = 8 * 1024 * 1024;
const CACHE_CHUNK_BYTES = 1024 * 1024;
let cachedBytes = 0;
/** @type {Uint8Array[]} */
const chunks = [];
let chunkIndex = -1;
let chunk = new Uint8Array(0);
let chunkUsed = 0;

/** How many times the cache started over (encoders forget the strings they met before then). */
export let cacheEpoch = 0;

/** Empties the cache of encoded strings (benchmarks measure the cold path with it). */
export function forgetEncodedStrings() {
  encodedStrings.clear();
  cacheEpoch++;
  cachedBytes = 0;
  // The views into the chunks went with the map: they are written again.
  chunkIndex = -1;
  chunk = new Uint8Array(0);
  chunkUsed = 0;
}

/** Keeps a copy of the `n` bytes of `s` at `bytes[start]`. @param {string} s @param {Uint8Array} bytes @param {number} start @param {number} n */
export function remember(s, bytes, start, n) {
  if (cachedBytes + n > CACHE_MAX_BYTES) forgetEncodedStrings();
  if (chunkUsed + n > chunk.length) {
    chunkIndex++;
    if (chunkIndex < chunks.length && chunks[chunkIndex].length >= n) chunk = chunks[chunkIndex];
    else chunk = chunks[chunkIndex] = new Uint8Array(Math.max(CACHE_CHUNK_BYTES, n));
    chunkUsed = 0;
  }
  const view = chunk.subarray(chunkUsed, chunkUsed + n);
  view.set(bytes.subarray(start, start + n));
  chunkUsed += n;
  encodedStrings.set(s, view);
  cachedBytes += n;
}

const textEncoder = new TextEncoder();

/**
 * Writes `s` as UTF-8 into `bytes` from `start` (at most `max` bytes, which
 * the caller makes enough: 3 per unit) and returns the number written; a
 * lone surrogate becomes U+FFFD. TextEncoder.encodeInto; Node's entry point
 * swaps in Buffer#utf8Write ({@link useNodeBuffer}), which needs no view per
 * string.
 *
 * @type {(s: string, bytes: Uint8Array, start: number, max: number) => number}
 */
export let writeUtf8 = (s, bytes, start, max) => textEncoder.encodeInto(s, bytes.subarray(start, start + max)).written;

/** @type {Uint8Array | null} the buffer Node's {@link writeUtf8} wrote into last */
let writeBytes = null;
/** @type {any} its Buffer view */
let writeBuffer = null;

/** Lets go of the buffer {@link writeUtf8} wrote into last (a huge one is dropped). */
export function forgetWriteView() {
  writeBytes = null;
  writeBuffer = null;
}

/** U+FFFD in UTF-8. */
const REPLACEMENT = Uint8Array.of(0xef, 0xbf, 0xbd);

/**
 * Whether bytes[start, end) hold U+FFFD (what TextEncoder makes of a lone
 * surrogate). Node's entry point swaps in Buffer#indexOf (a native search)
 * for {@link holdsReplacement}.
 *
 * @param {Uint8Array} bytes @param {number} start @param {number} end
 */
export function holdsReplacementScan(bytes, start, end) {
  const v = bytes.subarray(start, end);
  for (let i = v.indexOf(0xef); i >= 0 && i + 2 < v.length; i = v.indexOf(0xef, i + 1)) {
    if (v[i + 1] === 0xbf && v[i + 2] === 0xbd) return true;
  }
  return false;
}
export let holdsReplacement = holdsReplacementScan;

/** UTF-8 decoding of a long string: TextDecoder without `ignoreBOM` would
 * drop a leading U+FEFF (a lost code point); this one keeps it. */
export const textDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** @type {(bytes: Uint8Array, start: number, end: number) => string} */
export let decodeUtf8Long = (bytes, start, end) => textDecoder.decode(bytes.subarray(start, end));

/**
 * Node's entry point hands its Buffer here: Buffer#toString("utf8") is about
 * a third faster than TextDecoder there, and keeps a U+FEFF too.
 *
 * @param {any} Buffer
 */
export function useNodeBuffer(Buffer) {
  writeUtf8 = (s, bytes, start, max) => {
    if (bytes !== writeBytes) {
      writeBuffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      writeBytes = bytes;
    }
    return writeBuffer.utf8Write(s, start, max);
  };
  decodeUtf8Long = (bytes, start, end) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8", start, end);
  compareView = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
  bytesEqual = (a, aStart, b, bStart, n) => a.compare(b, bStart, bStart + n, aStart, aStart + n) === 0;
  const replacement = Buffer.from(REPLACEMENT);
  holdsReplacement = (bytes, start, end) => Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).indexOf(replacement) >= 0;
}

/**
 * A view of bytes for {@link bytesEqual} (a Buffer in Node, whose compare is
 * native).
 * @type {(u8: Uint8Array) => any}
 */
export let compareView = (u8) => u8;

/**
 * Whether `n` bytes of `a` from `aStart` equal those of `b` from `bStart`
 * (both made by {@link compareView}).
 * @type {(a: any, aStart: number, b: any, bStart: number, n: number) => boolean}
 */
export let bytesEqual = (a, aStart, b, bStart, n) => {
  for (let i = 0; i < n; i++) if (a[aStart + i] !== b[bStart + i]) return false;
  return true;
};

/** The last template {@link aroundOf} read, and its answer (an agent loop sends one template). */
let lastTemplate = "";
/** @type {number[] | null} */
let lastAround = null;

/**
 * The UTF-8 sizes of the literal text before and after `{observation}` in an
 * observation template whose rendering is that text around the observation
 * (no other field, no format spec); null for any other template.
 * @param {unknown} template
 * @returns {number[] | null}
 */
function aroundOf(template) {
  if (typeof template !== "string") return null;
  if (template === lastTemplate) return lastAround;
  let around = null;
  const at = template.indexOf("{observation}");
  if (at >= 0) {
    const literal = (t) => (/[{}]/.test(t.replace(/\{\{|\}\}/g, "")) ? null : t.replace(/\{\{/g, "{").replace(/\}\}/g, "}"));
    const pre = literal(template.slice(0, at));
    const suf = literal(template.slice(at + "{observation}".length));
    if (pre !== null && suf !== null && (pre || suf)) around = [wtf8Length(pre), wtf8Length(suf)];
  }
  lastTemplate = template;
  lastAround = around;
  return around;
}

/**
 * Where the strings of the request are, for a response decoder to reuse a
 * string whose UTF-8 bytes come back unchanged (a run message, a raw output,
 * an observation inside `prefix{observation}suffix`). Reuse is decided by
 * comparing bytes, so the value is exactly the decoded one.
 */
export class RequestStrings {
  /**
   * @param {Uint8Array} bytes the encoded request
   * @param {any[]} strings string, start, length, … (flat), as the encoder recorded them
   * @param {number} count the number of entries of `strings` in use (3 per string)
   * @param {unknown} template the request's observation_template
   */
  constructor(bytes, strings, count, template) {
    this.bytes = compareView(bytes);
    this.strings = strings;
    this.count = count;
    /** Where the next request string is (the response mostly follows the request's order). */
    this.next = 0;
    /** @type {Map<number, number[]> | null} byte length → indices into strings (made when first needed) */
    this.byLength = null;
    /** @type {Map<number, number> | null} byte length → where the last match was (made with byLength) */
    this.cursor = null;
    /** Bytes around `{observation}` in the rendered template, when it is plain. */
    this.around = aroundOf(template);
  }

  /**
   * The request string after the last one found, when its bytes equal `n`
   * bytes of `resp` from `start` (one comparison).
   * @param {Uint8Array} resp the response bytes as compareView made them @param {number} start @param {number} n
   * @returns {string | undefined}
   */
  following(resp, start, n) {
    const i = this.next;
    const strings = this.strings;
    if (i < this.count && strings[i + 2] === n && bytesEqual(resp, start, this.bytes, strings[i + 1], n)) {
      this.next = i + 3;
      return strings[i];
    }
    return undefined;
  }

  /**
   * A request string whose bytes equal `n` bytes of `resp` from `start`.
   * @param {Uint8Array} resp the response bytes as compareView made them @param {number} start @param {number} n
   * @returns {string | undefined}
   */
  find(resp, start, n) {
    const strings = this.strings;
    if (this.byLength === null) {
      this.byLength = new Map();
      this.cursor = new Map();
      for (let i = 0; i < this.count; i += 3) {
        const list = this.byLength.get(strings[i + 2]);
        if (list) list.push(i);
        else this.byLength.set(strings[i + 2], [i]);
      }
    }
    const list = this.byLength.get(n);
    if (list === undefined) return undefined;
    const cursor = /** @type {Map<number, number>} */ (this.cursor);
    const from = cursor.get(n) ?? 0;
    // Try from the last match of this length on, a few candidates at most.
    for (let k = 0; k < list.length && k < 4; k++) {
      const j = (from + k) % list.length;
      const i = list[j];
      if (bytesEqual(resp, start, this.bytes, strings[i + 1], n)) {
        cursor.set(n, j + 1);
        this.next = i + 3;
        return strings[i];
      }
    }
    return undefined;
  }
}

export const NO_STRINGS = new RequestStrings(new Uint8Array(0), [], 0, undefined);
