/**
 * The codec's strings: WTF-8 (a lone surrogate on the wire), the cache of long strings' UTF-8, and the
 * helpers Node's entry point swaps for native ones ({@link useNodeBuffer}).
 * @module
 */

/** A lone surrogate (where String.prototype.isWellFormed is missing). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** @type {(s: string) => boolean} */
export const isWellFormed = typeof String.prototype.isWellFormed === "function" ? (s) => s.isWellFormed() : (s) => !LONE_SURROGATE.test(s);

const LEAD = [0, 0xc0, 0xe0, 0xf0];

/**
 * Writes `s` as WTF-8 (a lone surrogate as the three bytes UTF-8 would give
 * its unit: U+D800 is ED A0 80) at `out[pos]`, at most 3 bytes per unit.
 * @param {string} s @param {Uint8Array} out @param {number} pos
 * @returns {number} the number of bytes written
 */
export function encodeWtf8Into(s, out, pos) {
  const start = pos;
  for (let i = 0; i < s.length; i++) {
    const c = /** @type {number} */ (s.codePointAt(i));
    if (c > 0xffff) i++;
    const n = c < 0x80 ? 0 : c < 0x800 ? 1 : c < 0x10000 ? 2 : 3; // continuation bytes
    out[pos++] = n ? LEAD[n] | (c >> (6 * n)) : c;
    for (let k = n - 1; k >= 0; k--) out[pos++] = 0x80 | ((c >> (6 * k)) & 0x3f);
  }
  return pos - start;
}

/** The number of bytes {@link encodeWtf8Into} writes for `s`. @param {string} s */
export function wtf8Length(s) {
  let len = 0;
  for (let i = 0; i < s.length; i++) {
    const c = /** @type {number} */ (s.codePointAt(i));
    if (c > 0xffff) i++;
    len += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return len;
}

/**
 * The UTF-8 of long strings met in two requests in a row (src/encode.js): an agent loop sends its history again with every step. Strings
 * up to CACHE_MAX_UNITS units (V8 hashes longer ones by length alone), 8 MiB in all, then it starts over; the bytes live in reused 1 MiB
 * chunks.
 * @type {Map<string, Uint8Array>}
 */
export const encodedStrings = new Map();
export const CACHE_MAX_UNITS = 16383;
const CACHE_MAX_BYTES = 8 * 1024 * 1024;
const CACHE_CHUNK_BYTES = 1024 * 1024;
let cachedBytes = 0;
const chunks = [];
let chunkIndex = -1;
let chunk = new Uint8Array(0);
let chunkUsed = 0;

/** How many times the cache started over. */
export let cacheEpoch = 0;

/** Empties the cache (benchmarks measure the cold path with it). */
export function forgetEncodedStrings() {
  encodedStrings.clear();
  cacheEpoch++;
  cachedBytes = 0;
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

/** `s` in UTF-8, a lone surrogate as WTF-8 (the core says invalid_utf8). @param {string} s */
export function wtf8(s) {
  if (isWellFormed(s)) return textEncoder.encode(s);
  const bytes = new Uint8Array(wtf8Length(s));
  encodeWtf8Into(s, bytes, 0);
  return bytes;
}

/** `s` as UTF-8 at `bytes[start]` (room for `max`), a lone surrogate as U+FFFD: the bytes written. @type {(s: string, bytes: Uint8Array, start: number, max: number) => number} */
export let writeUtf8 = (s, bytes, start, max) => textEncoder.encodeInto(s, bytes.subarray(start, start + max)).written;

/** @type {any} the buffer Node's {@link writeUtf8} wrote into last, and its Buffer */
let writeBytes = null;
let writeBuffer = null;
/** Lets go of that buffer (a huge one is dropped). */
export const forgetWriteView = () => (writeBytes = writeBuffer = null);

/** Whether bytes[start, end) hold U+FFFD (Node: Buffer#indexOf). @type {(bytes: Uint8Array, start: number, end: number) => boolean} */
export const holdsReplacementScan = (bytes, start, end) => {
  const v = bytes.subarray(start, end);
  for (let i = v.indexOf(0xef); i >= 0 && i + 2 < v.length; i = v.indexOf(0xef, i + 1))
    if (v[i + 1] === 0xbf && v[i + 2] === 0xbd) return true;
  return false;
};
export let holdsReplacement = holdsReplacementScan;

/** Keeps a leading U+FEFF (without ignoreBOM a code point is lost). */
export const textDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** @type {(bytes: Uint8Array, start: number, end: number) => string} */
export let decodeUtf8Long = (bytes, start, end) => textDecoder.decode(bytes.subarray(start, end));
/** Lets go of the answer {@link decodeUtf8Long} read last (its instance may be dropped). */
export let forgetReadView = () => {};

/** Node's entry point hands its Buffer here: faster than TextEncoder and TextDecoder there. @param {any} Buffer */
export function useNodeBuffer(Buffer) {
  writeUtf8 = (s, bytes, start, max) => {
    if (bytes !== writeBytes) writeBuffer = Buffer.from(bytes.buffer, bytes.byteOffset, (writeBytes = bytes).byteLength);
    return writeBuffer.utf8Write(s, start, max);
  };
  const replacement = Buffer.of(0xef, 0xbf, 0xbd);
  holdsReplacement = (bytes, start, end) => Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).indexOf(replacement) >= 0;
  let readBytes = null; // the answer read last, and its Buffer
  let readBuffer = null;
  decodeUtf8Long = (bytes, start, end) => {
    if (bytes !== readBytes) readBuffer = Buffer.from(bytes.buffer, bytes.byteOffset, (readBytes = bytes).byteLength);
    return readBuffer.toString("utf8", start, end);
  };
  forgetReadView = () => (readBytes = readBuffer = null);
}
