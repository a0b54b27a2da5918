/**
 * The codec's reading half: answer bytes to values. Every code point is kept (a leading U+FEFF too), an int beyond 2^53 is a bigint, and
 * a text the answer names by number (docs/SPEC.md §7.11) is the caller's own string.
 * @module
 */

import { EXT_REQUEST_TEXT, MAX_STRING_UNITS } from "./consts.js";
import { decodeUtf8Long, forgetReadView, textDecoder, wtf8Length } from "./strings.js";

/** A string of the answer the engine cannot make; `path`: its keys and indexes, for the core to spell (docs/SPEC.md §7.10). */
export class StringCeiling extends Error {
  /** @param {number} bytes its size in UTF-8 */
  constructor(bytes) {
    super(`a string of ${bytes} UTF-8 bytes is longer than this JavaScript engine allows`);
    this.bytes = bytes;
    this.path = [];
  }
}

/** Short strings met again and again (keys, roles, "text"), decoded once; up to 32 bytes in JavaScript. */
const SHORT_CACHE_BYTES = 16;
const SHORT_SLOT_BITS = 9;
const SHORT_SLOTS = 1 << SHORT_SLOT_BITS;
const shortLength = new Uint8Array(SHORT_SLOTS);
const shortHead = new Uint32Array(SHORT_SLOTS);
const shortBytes = new Uint8Array(SHORT_SLOTS * SHORT_CACHE_BYTES);
const shortStrings = new Array(SHORT_SLOTS).fill("");
const SHORT_UTF8 = 32;
const units = new Uint16Array(SHORT_UTF8);
const NO_BYTES = new Uint8Array(0);
const SAFE = BigInt(Number.MAX_SAFE_INTEGER); // beyond it, an int stays a bigint
/** The fixed-size numbers from format 0xca on, by their DataView getter (its width in its name). */
const NUMBERS = "Float32 Float64 - - - BigUint64 Int8 Int16 Int32 BigInt64".split(" ");

/** A msgpack decoder of the core's answers (and of any other msgpack, for robustness). */
class AnswerDecoder {
  constructor(maxStringUnits) {
    this.maxStringUnits = maxStringUnits;
    this.bytes = NO_BYTES;
    this.view = new DataView(NO_BYTES.buffer);
    this.pos = 0;
    this.end = 0;
    this.texts = undefined;
  }

  decode(bytes, texts) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = 0;
    this.end = bytes.length;
    this.texts = texts;
    try {
      const v = this.value();
      if (this.pos !== bytes.length) throw new Error(`${bytes.length - this.pos} bytes after the answer`);
      return v;
    } finally {
      this.bytes = NO_BYTES; // nothing of the answer is held
      this.view = new DataView(NO_BYTES.buffer);
      this.end = 0;
      forgetReadView();
      this.texts = undefined;
    }
  }

  /** Moves past `n` bytes; where they start. @param {number} n */
  take(n) {
    const p = this.pos;
    if (p + n > this.end) throw new Error("truncated msgpack");
    this.pos = p + n;
    return p;
  }

  /** A big-endian unsigned size of 1, 2 or 4 bytes. @param {number} n */
  size(n) {
    const p = this.take(n);
    const b = this.bytes;
    return n === 1 ? b[p] : n === 2 ? (b[p] << 8) | b[p + 1] : b[p] * 0x1000000 + ((b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]);
  }

  value() {
    const b = this.bytes[this.take(1)];
    if (b >= 0xa0 && b < 0xc0) return this.str(b & 0x1f);
    if (b < 0x80) return b;
    if (b < 0x90) return this.map(b & 0x0f);
    if (b < 0xa0) return this.array(b & 0x0f);
    if (b === 0xd6 && this.texts !== undefined && this.bytes[this.take(1)] === EXT_REQUEST_TEXT) return this.text(this.size(4));
    if (b >= 0xe0) return b - 0x100;
    if (b >= 0xd9 && b <= 0xdb) return this.str(this.size(1 << (b - 0xd9)));
    if (b >= 0xcc && b <= 0xce) return this.size(1 << (b - 0xcc));
    if (b === 0xdc || b === 0xdd) return this.array(this.size(2 << (b - 0xdc)));
    if (b === 0xde || b === 0xdf) return this.map(this.size(2 << (b - 0xde)));
    if (b === 0xc0 || b === 0xc2 || b === 0xc3) return b === 0xc0 ? null : b === 0xc3;
    if (b >= 0xc4 && b <= 0xc6) return this.bytes.slice(this.take(this.size(1 << (b - 0xc4))), this.pos);
    const number = b >= 0xca ? NUMBERS[b - 0xca] : undefined;
    if (number === undefined || number === "-") throw new Error(`msgpack format 0x${b.toString(16)} is not in an answer`);
    const r = /** @type {any} */ (this.view)[`get${number}`](this.take(Number(number.replace(/\D+/, "")) / 8));
    return typeof r === "bigint" ? (r >= -SAFE && r <= SAFE ? Number(r) : r) : r;
  }

  /** The request's text `k`. @param {number} k */
  text(k) {
    const s = /** @type {string[]} */ (this.texts)[k];
    if (typeof s !== "string") throw new Error(`the answer names text ${k} of a request of ${this.texts?.length} texts`);
    if (s.length > this.maxStringUnits) throw new StringCeiling(wtf8Length(s));
    return s;
  }

  str(n) {
    const start = this.take(n);
    if (n <= SHORT_CACHE_BYTES) return this.cachedShort(start, n);
    if (n <= SHORT_UTF8) return this.short(start, n);
    // A string cannot have fewer UTF-16 units than a third of its UTF-8 bytes.
    if (n / 3 > this.maxStringUnits) throw new StringCeiling(n);
    let s;
    try {
      s = decodeUtf8Long(this.bytes, start, start + n);
    } catch (e) {
      if (n > 1 << 28) throw new StringCeiling(n); // the engine's "Invalid string length"
      throw e;
    }
    if (s.length > this.maxStringUnits) throw new StringCeiling(n);
    return s;
  }

  /** A short string from the cache: one slot per hash of its bytes, the newest kept. @param {number} start @param {number} n */
  cachedShort(start, n) {
    if (n === 0) return "";
    const bytes = this.bytes;
    // Its first four bytes, or all three, two or one (the length tells them apart).
    const head = n >= 4 ? this.view.getUint32(start) : (bytes[start] << 16) | (bytes[start + (n >> 1)] << 8) | bytes[start + n - 1];
    const slot = Math.imul(head ^ (bytes[start + n - 1] << 8) ^ n, 0x9e3779b1) >>> (32 - SHORT_SLOT_BITS);
    if (shortLength[slot] === n && shortHead[slot] === head) {
      const at = slot * SHORT_CACHE_BYTES;
      let i = n < 4 ? n : 4;
      while (i < n && shortBytes[at + i] === bytes[start + i]) i++;
      if (i === n) return shortStrings[slot];
    }
    const s = this.short(start, n);
    shortLength[slot] = n;
    shortHead[slot] = head;
    shortBytes.set(bytes.subarray(start, start + n), slot * SHORT_CACHE_BYTES);
    shortStrings[slot] = s;
    return s;
  }

  /** ASCII in JavaScript, anything else by TextDecoder. @param {number} start @param {number} n */
  short(start, n) {
    const bytes = this.bytes;
    for (let i = 0; i < n; i++) {
      const c = bytes[start + i];
      if (c >= 0x80) return textDecoder.decode(bytes.subarray(start, start + n));
      units[i] = c;
    }
    return String.fromCharCode.apply(null, /** @type {any} */ (units.subarray(0, n)));
  }

  array(n) {
    if (n > this.end - this.pos) throw new Error("truncated msgpack");
    const out = new Array(n);
    let i = 0;
    try {
      for (; i < n; i++) out[i] = this.value();
    } catch (e) {
      if (e instanceof StringCeiling) e.path.unshift(i);
      throw e;
    }
    return out;
  }

  map(n) {
    if (2 * n > this.end - this.pos) throw new Error("truncated msgpack");
    if (n === 2) {
      const k1 = this.key();
      const v1 = this.entry(k1);
      const k2 = this.key();
      const v2 = this.entry(k2);
      // A message's and a block's shape made at once; a computed key is an own one, "__proto__" too.
      if (k1 === "role" && k2 === "content") return { role: v1, content: v2 };
      return k1 === "type" && k2 === "text" ? { type: v1, text: v2 } : { [k1]: v1, [k2]: v2 };
    }
    const out = {};
    for (let i = 0; i < n; i++) {
      const k = this.key();
      const v = this.entry(k);
      if (k === "__proto__") Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      else out[k] = v;
    }
    return out;
  }

  key() {
    const k = this.value();
    if (typeof k !== "string") throw new Error("a map key in an answer is not a string");
    return k;
  }

  /** A rendering's `n` pieces joined by `+` (a rope; join would copy). @param {number} n */
  joined(n) {
    let s = "";
    for (let i = 0; i < n; i++) {
      const piece = this.value();
      if (typeof piece !== "string") throw new Error("a piece of a text is not a string");
      s += piece;
    }
    if (s.length > this.maxStringUnits) throw new StringCeiling(wtf8Length(s));
    return s;
  }

  /** The value of the entry of key `k`. @param {string} k */
  entry(k) {
    try {
      const b = this.bytes[this.pos];
      // A rendering in pieces (docs/SPEC.md §7.11), joined.
      if (k !== "text" || this.texts === undefined || !(b >>> 4 === 9 || b === 0xdc || b === 0xdd)) return this.value();
      this.pos++;
      return this.joined(b < 0xa0 ? b & 0x0f : this.size(2 << (b - 0xdc)));
    } catch (e) {
      if (e instanceof StringCeiling) e.path.unshift(k);
      throw e;
    }
  }
}

const sharedDecoder = new AnswerDecoder(MAX_STRING_UNITS);

/**
 * Decodes answer bytes (`texts`: the request's, for an answer that names them; `maxStringUnits`: for tests).
 * @param {Uint8Array} bytes @param {{maxStringUnits?: number, texts?: string[]}} [options] @returns {any}
 */
export function decodeResponse(bytes, options) {
  const max = options?.maxStringUnits ?? MAX_STRING_UNITS;
  return (max === MAX_STRING_UNITS ? sharedDecoder : new AnswerDecoder(max)).decode(bytes, options?.texts);
}
