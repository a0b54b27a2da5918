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
}
