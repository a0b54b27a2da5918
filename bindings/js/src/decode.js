/**
 * Response bytes (canonical msgpack from the core) to JavaScript values.
 * Every string keeps every code point (a leading U+FEFF included); integers
 * beyond 2^53 come back as bigint; strings of the request whose bytes come
 * back unchanged are reused (src/strings.js).
 *
 * @module
 */

import { MAX_STRING_UNITS } from "./consts.js";
import { NO_STRINGS, compareView, decodeUtf8Long, textDecoder } from "./strings.js";

/**
 * The longest string the engine can make, in UTF-16 units. V8's limit
 * (Node, Chromium): 2^29 − 24. Other engines allow more (SpiderMonkey 2^30 − 2,
 * JavaScriptCore 2^31 − 1); the decoder catches the engine's own failure too.
 */
export { MAX_STRING_UNITS };

/**
 * Thrown while decoding a response when one of its strings cannot be a
 * JavaScript string. `path` names the value in the response
 * (`messages[5].content[0].text`), filled in as the decoder unwinds.
 */
export class StringCeiling extends Error {
  /** @param {number} bytes */
  constructor(bytes) {
    super(`a string of ${bytes} UTF-8 bytes is longer than this JavaScript engine allows`);
    this.bytes = bytes;
    this.path = "";
  }
}

/** Short strings met again and again (keys, roles, "text"): decoded once. */
const SHORT_CACHE_BYTES = 16;
/** @type {{bytes: Uint8Array, s: string}[][]} */
const shortCache = Array.from({ length: SHORT_CACHE_BYTES + 1 }, () => []);
const shortCacheNext = new Uint32Array(SHORT_CACHE_BYTES + 1);

/** Strings up to this many bytes are decoded in JavaScript. */
const SHORT_UTF8 = 32;
const units = new Uint16Array(SHORT_UTF8);

/** What a decoder holds between calls. */
const NO_BYTES = new Uint8Array(0);
const NO_VIEW = new DataView(NO_BYTES.buffer);

/**
 * A msgpack decoder for responses: the formats the core writes (and every
 * other msgpack format, for robustness), strings decoded without losing a
 * byte-order mark, integers beyond 2^53 as bigint (never rounded), and a
 * string over the engine's limit reported with its path.
 */
class ResponseDecoder {
  /** @param {number} maxStringUnits */
  constructor(maxStringUnits) {
    this.maxStringUnits = maxStringUnits;
    /** @type {Uint8Array} */
    this.bytes = NO_BYTES;
    /** @type {DataView} */
    this.view = NO_VIEW;
    this.pos = 0;
  }

  /**
   * @param {Uint8Array} bytes
   * @param {RequestStrings} source
   */
  decode(bytes, source) {
    this.source = source;
    this.compareBytes = source === NO_STRINGS ? null : compareView(bytes);
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = 0;
    try {
      const v = this.value();
      if (this.pos !== bytes.length) throw new Error(`${bytes.length - this.pos} bytes after the response`);
      return v;
    } finally {
      // Nothing of the response is held after the call.
      this.bytes = NO_BYTES;
      this.view = NO_VIEW;
      this.source = NO_STRINGS;
      this.compareBytes = null;
    }
  }

  /** @param {number} n */
  need(n) {
    if (this.pos + n > this.bytes.length) throw new Error("truncated msgpack");
  }

  u8() {
    this.need(1);
    return this.bytes[this.pos++];
  }

  /** @returns {any} */
  value() {
    const b = this.u8();
    if (b < 0x80) return b;
    if (b < 0x90) return this.map(b & 0x0f);
    if (b < 0xa0) return this.array(b & 0x0f);
    if (b < 0xc0) return this.str(b & 0x1f);
    if (b >= 0xe0) return b - 0x100;
    return b < 0xcc ? this.scalar(b) : b < 0xd9 ? this.int(b) : this.sized(b);
  }

  /**
   * A value of format 0xc0–0xcb: nil, bool, bin, float.
   * @param {number} b the format byte
   * @returns {any}
   */
  scalar(b) {
    const v = this.view;
    let r;
    switch (b) {
      case 0xc0:
        return null;
      case 0xc2:
        return false;
      case 0xc3:
        return true;
      case 0xc4:
        this.need(1);
        return this.bin(this.bytes[this.pos++]);
      case 0xc5:
        this.need(2);
        r = v.getUint16(this.pos);
        this.pos += 2;
        return this.bin(r);
      case 0xc6:
        this.need(4);
        r = v.getUint32(this.pos);
        this.pos += 4;
        return this.bin(r);
      case 0xca:
        this.need(4);
        r = v.getFloat32(this.pos);
        this.pos += 4;
        return r;
      case 0xcb:
        this.need(8);
        r = v.getFloat64(this.pos);
        this.pos += 8;
        return r;
      default:
        throw new Error(`msgpack format 0x${b.toString(16)} is not in a response`);
    }
  }

  /**
   * An int of format 0xcc–0xd8 (beyond 2^53: a bigint, never rounded).
   * @param {number} b the format byte
   * @returns {number | bigint}
   */
  int(b) {
    const v = this.view;
    let r;
    switch (b) {
      case 0xcc:
        this.need(1);
        return this.bytes[this.pos++];
      case 0xcd:
        this.need(2);
        r = v.getUint16(this.pos);
        this.pos += 2;
        return r;
      case 0xce:
        this.need(4);
        r = v.getUint32(this.pos);
        this.pos += 4;
        return r;
      case 0xcf:
        this.need(8);
        r = v.getBigUint64(this.pos);
        this.pos += 8;
        return r <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(r) : r;
      case 0xd0:
        this.need(1);
        r = v.getInt8(this.pos);
        this.pos += 1;
        return r;
      case 0xd1:
        this.need(2);
        r = v.getInt16(this.pos);
        this.pos += 2;
        return r;
      case 0xd2:
        this.need(4);
        r = v.getInt32(this.pos);
        this.pos += 4;
        return r;
      case 0xd3:
        this.need(8);
        r = v.getBigInt64(this.pos);
        this.pos += 8;
        return r >= BigInt(Number.MIN_SAFE_INTEGER) && r <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(r) : r;
      default:
        throw new Error(`msgpack format 0x${b.toString(16)} is not in a response`);
    }
  }

  /**
   * A str, array or map with a size of 8, 16 or 32 bits (0xd9–0xdf).
   * @param {number} b the format byte
   * @returns {any}
   */
  sized(b) {
    const v = this.view;
    let r;
    switch (b) {
      case 0xd9:
        this.need(1);
        return this.str(this.bytes[this.pos++]);
      case 0xda:
        this.need(2);
        r = v.getUint16(this.pos);
        this.pos += 2;
        return this.str(r);
      case 0xdb:
        this.need(4);
        r = v.getUint32(this.pos);
        this.pos += 4;
        return this.str(r);
      case 0xdc:
        this.need(2);
        r = v.getUint16(this.pos);
        this.pos += 2;
        return this.array(r);
      case 0xdd:
        this.need(4);
        r = v.getUint32(this.pos);
        this.pos += 4;
        return this.array(r);
      case 0xde:
        this.need(2);
        r = v.getUint16(this.pos);
        this.pos += 2;
        return this.map(r);
      case 0xdf:
        this.need(4);
        r = v.getUint32(this.pos);
        this.pos += 4;
        return this.map(r);
      default:
        throw new Error(`msgpack format 0x${b.toString(16)} is not in a response`);
    }
  }

  /** @param {number} n */
  bin(n) {
    this.need(n);
    const out = this.bytes.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** @param {number} n */
  str(n) {
    this.need(n);
    const bytes = this.bytes;
    const start = this.pos;
    const end = start + n;
    this.pos = end;
    if (n <= SHORT_CACHE_BYTES) return this.cachedShort(start, n);
    if (n <= SHORT_UTF8) return this.short(start, n);
    const source = this.source;
    if (n >= 64 && n <= this.maxStringUnits && source !== NO_STRINGS) {
      const found = this.requestString(source, start, end);
      if (found !== undefined) return found;
    }
    // A string cannot have fewer UTF-16 units than a third of its UTF-8 bytes.
    if (n / 3 > this.maxStringUnits) throw new StringCeiling(n);
    let s;
    try {
      s = decodeUtf8Long(bytes, start, end);
    } catch (e) {
      if (n > 1 << 28) throw new StringCeiling(n); // the engine's "Invalid string length"
      throw e;
    }
    if (s.length > this.maxStringUnits) throw new StringCeiling(n);
    return s;
  }

  /**
   * The string of bytes[start, end) made of a request string, when one is
   * there: the string itself, or (the template's rendering) the template's
   * literal prefix, a request string and its literal suffix. The request
   * string after the last one found is tried first, then any.
   * @param {RequestStrings} source @param {number} start @param {number} end
   * @returns {string | undefined}
   */
  requestString(source, start, end) {
    const bytes = this.compareBytes;
    const n = end - start;
    const around = source.around;
    const pre = around === null ? 0 : around[0];
    const suf = around === null ? 0 : around[1];
    const framed = around !== null && n > pre + suf;
    let s = source.following(bytes, start, n);
    if (s !== undefined) return s;
    let mid = framed ? source.following(bytes, start + pre, n - pre - suf) : undefined;
    if (mid === undefined) {
      s = source.find(bytes, start, n);
      if (s !== undefined) return s;
      if (framed) mid = source.find(bytes, start + pre, n - pre - suf);
      if (mid === undefined) return undefined;
    }
    return (
      (pre <= SHORT_CACHE_BYTES ? this.cachedShort(start, pre) : this.short(start, pre)) +
      mid +
      (suf <= SHORT_CACHE_BYTES ? this.cachedShort(end - suf, suf) : this.short(end - suf, suf))
    );
  }

  /**
   * A string of at most {@link SHORT_CACHE_BYTES} bytes, from the cache of
   * strings met before when its bytes are there.
   * @param {number} start @param {number} n
   */
  cachedShort(start, n) {
    const bytes = this.bytes;
    const bucket = shortCache[n];
    for (let k = 0; k < bucket.length; k++) {
      const e = bucket[k];
      if (bytesEqualShort(e.bytes, bytes, start, n)) return e.s;
    }
    const str = this.short(start, n);
    // Up to 16 strings per length; when full, the oldest gives way.
    const entry = { bytes: bytes.slice(start, start + n), s: str };
    if (bucket.length < 16) bucket.push(entry);
    else bucket[shortCacheNext[n]++ & 15] = entry;
    return str;
  }

  /**
   * Decodes a short stretch: ASCII in JavaScript, anything else by TextDecoder.
   * @param {number} start @param {number} n
   */
  short(start, n) {
    const bytes = this.bytes;
    if (n > SHORT_UTF8) return decodeUtf8Long(bytes, start, start + n);
    let i = 0;
    for (; i < n; i++) {
      const c = bytes[start + i];
      if (c >= 0x80) break;
      units[i] = c;
    }
    if (i === n) return String.fromCharCode.apply(null, /** @type {any} */ (units.subarray(0, n)));
    return textDecoder.decode(bytes.subarray(start, start + n));
  }

  /**
   * A map of two entries that is the core's message `{role, content}` or
   * block `{type, text}`, made as an object literal of one shape (faster to
   * make, and to read, than an object built key by key); undefined, with
   * nothing read, for any other map.
   * @returns {any}
   */
  knownPair() {
    const start = this.pos;
    const first = this.key4At(start, 0xa4);
    const message = first === ROLE;
    if (!message && first !== TYPE) return undefined;
    this.pos += 5;
    const a = this.entry(message ? "role" : "type");
    const p = this.pos;
    const bytes = this.bytes;
    const second = message
      ? this.key4At(p, 0xa7) === CONTENT && p + 8 <= bytes.length && bytes[p + 5] === 0x65 && bytes[p + 6] === 0x6e && bytes[p + 7] === 0x74 // "ent"
      : this.key4At(p, 0xa4) === TEXT;
    if (!second) {
      this.pos = start;
      return undefined;
    }
    this.pos += message ? 8 : 5;
    if (message) return { role: a, content: this.entry("content") };
    return { type: a, text: this.entry("text") };
  }

  /**
   * The four bytes after the format byte at `p` (little-endian), when that
   * byte is `format` (a fixstr of 4 or 7 bytes: "role", "type", "text",
   * "content"); -1 otherwise.
   * @param {number} p @param {number} format
   */
  key4At(p, format) {
    const bytes = this.bytes;
    if (p + 5 > bytes.length || bytes[p] !== format) return -1;
    return (bytes[p + 1] | (bytes[p + 2] << 8) | (bytes[p + 3] << 16) | (bytes[p + 4] << 24)) >>> 0;
  }

  /** The value of the entry `k` (a name), its path in a StringCeiling. @param {string} k */
  entry(k) {
    try {
      return this.value();
    } catch (e) {
      if (e instanceof StringCeiling) e.path = "." + k + e.path;
      throw e;
    }
  }

  /** @param {number} n */
  array(n) {
    if (n > this.bytes.length - this.pos) throw new Error("truncated msgpack");
    const out = new Array(n);
    let i = 0;
    try {
      for (; i < n; i++) out[i] = this.value();
    } catch (e) {
      if (e instanceof StringCeiling) e.path = `[${i}]` + e.path;
      throw e;
    }
    return out;
  }

  /** @param {number} n */
  map(n) {
    if (2 * n > this.bytes.length - this.pos) throw new Error("truncated msgpack");
    if (n === 2) {
      const pair = this.knownPair();
      if (pair !== undefined) return pair;
    }
    /** @type {any} */
    const out = {};
    for (let i = 0; i < n; i++) {
      const k = this.value();
      if (typeof k !== "string") throw new Error("a map key in a response is not a string");
      let v;
      try {
        v = this.value();
      } catch (e) {
        if (e instanceof StringCeiling) e.path = (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? "." + k : `[${JSON.stringify(k)}]`) + e.path;
        throw e;
      }
      if (k === "__proto__") Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      else out[k] = v;
    }
    return out;
  }
}

/** The first four characters of the keys of a message and of a block, as {@link ResponseDecoder#key4At} reads them. */
const key4 = (k) => (k.charCodeAt(0) | (k.charCodeAt(1) << 8) | (k.charCodeAt(2) << 16) | (k.charCodeAt(3) << 24)) >>> 0;
const ROLE = key4("role");
const CONTENT = key4("content");
const TYPE = key4("type");
const TEXT = key4("text");

/** @param {Uint8Array} a @param {Uint8Array} b @param {number} start @param {number} n */
function bytesEqualShort(a, b, start, n) {
  for (let i = 0; i < n; i++) if (a[i] !== b[start + i]) return false;
  return true;
}

const sharedDecoder = new ResponseDecoder(MAX_STRING_UNITS);

/**
 * Decodes response bytes (canonical msgpack from the core). Every string keeps
 * every code point (a leading U+FEFF included).
 *
 * @param {Uint8Array} bytes
 * @param {{maxStringUnits?: number, source?: RequestStrings}} [options]
 *   `maxStringUnits`: a lower string ceiling (tests); `source`: the strings
 *   of the request, reused where their bytes come back unchanged
 * @returns {any}
 * @throws {StringCeiling} when a string is longer than the engine allows;
 *   `path` (without a leading ".") names it
 */
export function decodeResponse(bytes, options) {
  const d = options?.maxStringUnits !== undefined ? new ResponseDecoder(options.maxStringUnits) : sharedDecoder;
  try {
    return d.decode(bytes, options?.source ?? NO_STRINGS);
  } catch (e) {
    if (e instanceof StringCeiling && e.path.startsWith(".")) e.path = e.path.slice(1);
    throw e;
  }
}
