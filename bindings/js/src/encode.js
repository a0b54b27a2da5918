/**
 * The codec's writing half: JavaScript values to msgpack request bytes. The
 * binding validates nothing; every value is encoded faithfully, or as a value
 * the core rejects at its path (an opaque ext value; a value whose reading
 * throws as the ExtUnreadable value, docs/SPEC.md §7.6), so a mistake gets the
 * core's own code and path. The mapping is docs/JS.md, "JavaScript values".
 * @module
 */

import { Encoder } from "@msgpack/msgpack";
import { EXT_UNREADABLE, MAX_REQUEST_BYTES, MAX_VALUE_DEPTH, SHARED_TEXT_SECTIONS } from "./consts.js";
import { AssemblyError } from "./errors.js";
import {
  CACHE_MAX_UNITS,
  cacheEpoch,
  encodeWtf8Into,
  encodedStrings,
  forgetWriteView,
  holdsReplacement,
  isWellFormed,
  remember,
  writeUtf8,
  wtf8Length,
} from "./strings.js";

// Deeper values are the opaque value (a valid request is 5 deep; a cycle ends). Past the depth a value the core passes
// through may nest (an export's body field, at depth 3 of the call's arguments): the core's verdict, too deep.
export const MAX_ENCODE_DEPTH = MAX_VALUE_DEPTH + 8;
const SHORT_STRING = 50; // units: the library's loop writes WTF-8 already
const OPAQUE = Uint8Array.of(0xd4, 0x7f, 0x00); // fixext 1, type 0x7f: what msgpack cannot carry
const UINT64_END = 1n << 64n;
const INT64_MIN = -(1n << 63n);
const INITIAL_BUFFER_BYTES = 64 * 1024;
export const KEEP_BUFFER_BYTES = 8 * 1024 * 1024; // a buffer grown past it is dropped after its call
const MET_MAX_UNITS = 8 * 1024 * 1024; // of new strings remembered for the next request
// The sections of the request's texts by its key, numbered in the order the answer numbers them (docs/SPEC.md §7.11).
const SECTIONS = new Map(SHARED_TEXT_SECTIONS.map((key, i) => [key, i]));
const INJECTIONS = SECTIONS.get("injections");
const STEPS = SECTIONS.get("steps");
const UNREADABLE = Object.freeze({}); // a value whose reading threw
/** @type {Map<string, Uint8Array>} the bytes of property names met before */
const keyBytes = new Map();
const KEY_CACHE_SIZE = 512;

/** @param {number} n bytes: the size of the shortest str header */
const strHeaderSize = (n) => (n < 32 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5);

/** Thrown when the request would be over the limit: `size` is its exact size. */
export class RequestTooLarge extends Error {
  constructor(size) {
    super(`the request is ${size} bytes`);
    this.size = size;
  }
}

/**
 * @msgpack/msgpack's Encoder with that mapping. An agent loop's next request is cheap: a long string the request
 * before wrote at the same place stays (sameAsLast), one met in two requests in a row is copied from the cache
 * (src/strings.js). Past the limit (1 GiB) nothing is written, only counted.
 */
export class RequestEncoder extends Encoder {
  /** @param {number} [limit] the most bytes written (tests use less than 1 GiB) */
  constructor(limit = MAX_REQUEST_BYTES) {
    super({ initialBufferSize: Math.min(INITIAL_BUFFER_BYTES, limit + 8), ignoreUndefined: true, maxDepth: Infinity });
    this.limit = limit;
    this.capacity = this.bytes.byteLength; // the buffer's, kept (a typed array's byteLength costs)
    // The long strings written (string, start, length, … flat) and their units; the same of the request before,
    // the buffer its bytes are in and the cache's epoch then; whether this pass may leave them in place.
    this.strings = [];
    this.nStrings = 0;
    this.recordUnits = 0;
    this.last = [];
    this.nLast = 0;
    this.lastBytes = null;
    this.lastEpoch = -1;
    this.skipping = false;
    this.busy = false; // held by a call, from encoding to the end of decoding
    this.counted = 0; // bytes counted, not written, once over the limit
    this.counting = false;
    // The strings written fresh (string, start, length, met before: flat); those new in the request before.
    this.fresh = [];
    this.unsure = []; // the strings written that were not ASCII: string, start, length (flat)
    this.met = [];
    this.nMet = 0;
    this.metAt = 0;
    this.metEpoch = -1;
    this.thrown = undefined; // what reading a property threw last
    /** @type {string[][]} the request's texts by section; the section being written; the step's number */
    this.textLists = SHARED_TEXT_SECTIONS.map(() => []);
    this.section = -1;
    this.step = -1;
  }

  /** For a re-entrant call (a getter of the request encodes another). @override */
  clone() {
    return new RequestEncoder(this.limit);
  }

  /** A view of the encoder's buffer, valid until its next encode; done() after the call. @param {unknown} value @returns {Uint8Array} */
  encodeShared(value) {
    if (this.entered) return this.clone().encodeShared(value);
    const last = this.strings;
    this.strings = this.last;
    this.strings.fill(undefined, 0, this.nLast);
    this.last = last;
    this.nLast = this.nStrings;
    this.skipping = this.lastBytes === this.bytes && this.lastEpoch === cacheEpoch;
    this.lastBytes = null;
    const out = this.encodePass(value);
    if (this.recordUnits <= MET_MAX_UNITS) {
      this.lastBytes = this.bytes;
      this.lastEpoch = cacheEpoch;
    }
    return out;
  }

  /** @param {unknown} value @returns {Uint8Array} */
  encodePass(value) {
    this.counted = 0;
    this.counting = false;
    this.nStrings = 0;
    this.recordUnits = 0;
    if (this.fresh.length > 0) this.fresh.length = 0;
    if (this.unsure.length > 0) this.unsure.length = 0;
    this.forgetTexts();
    const out = this.encodeSharedRef(value);
    if (this.counting || this.pos > this.limit) {
      const size = this.counted + this.pos;
      this.counting = false;
      this.counted = 0;
      if (size > this.limit) {
        this.release();
        throw new RequestTooLarge(size);
      }
      // Within a header's slack of the limit: it fits after all.
      const limit = this.limit;
      this.limit += 8;
      this.skipping = false;
      try {
        return this.encodePass(value);
      } finally {
        this.limit = limit;
      }
    }
    this.fixLoneSurrogates();
    this.rememberFresh();
    return out;
  }

  /** The call is over: the texts, a huge buffer and a record no request can use are let go. */
  done() {
    this.busy = false;
    this.thrown = undefined;
    this.forgetTexts();
    this.release();
    if (this.lastBytes !== this.bytes) {
      this.strings.fill(undefined, 0, this.nStrings);
      this.nStrings = 0;
    }
  }

  /** The request's texts numbered as docs/SPEC.md §7.11 numbers them. @returns {string[]} */
  texts() {
    return [].concat(...this.textLists);
  }

  /** @param {string} key @param {string} v @param {number} depth the string `v` of entry `key`, when it is a text */
  noteText(key, v, depth) {
    const section = this.section;
    if (section === STEPS) {
      if (depth === 3 && (key === "raw_output" || key === "observation"))
        this.textLists[STEPS][2 * this.step + (key === "raw_output" ? 0 : 1)] = v;
    } else if (section === INJECTIONS ? depth === 4 && key === "content" : depth === 5 && key === "text") {
      this.textLists[section].push(v);
    }
  }

  forgetTexts() {
    for (const list of this.textLists) if (list.length > 0) list.length = 0; // setting length costs even when 0
    this.section = -1;
    this.step = -1;
  }

  /** Drops a buffer grown past KEEP_BUFFER_BYTES. */
  release() {
    if (this.bytes.byteLength > KEEP_BUFFER_BYTES) {
      const buf = new ArrayBuffer(Math.min(INITIAL_BUFFER_BYTES, this.limit + 8));
      this.bytes = new Uint8Array(buf);
      this.capacity = buf.byteLength;
      this.view = new DataView(buf);
      this.pos = 0;
      forgetWriteView();
    }
  }

  /** Whether `n` more bytes stay within the limit. @param {number} n */
  fits(n) {
    return !this.counting && this.counted + this.pos + n <= this.limit;
  }

  /** Room for `size` more bytes; past the limit, counting (bytes land at the start, never read). @override @param {number} size */
  ensureBufferSizeToWrite(size) {
    const need = this.pos + size;
    if (need <= this.capacity) return;
    if (this.counting || this.counted + need > this.limit) {
      this.countOnly(0);
      if (size <= this.capacity) return;
    }
    this.resizeBuffer(Math.max(need, Math.min(need * 2, this.limit + 8)));
    this.capacity = this.bytes.byteLength;
  }

  /** Counts `n` bytes without writing them. @param {number} n */
  countOnly(n) {
    this.counting = true;
    this.counted += this.pos + n;
    this.pos = 0;
  }

  /** @override @param {ArrayBufferView} object */
  encodeBinary(object) {
    const size = object.byteLength;
    if (!this.fits(5 + size)) this.countOnly((size < 0x100 ? 2 : size < 0x10000 ? 3 : 5) + size);
    else super.encodeBinary(object);
  }

  /** @override @param {unknown} object @param {number} depth */
  doEncode(object, depth) {
    if (depth > MAX_ENCODE_DEPTH) return this.writeOpaque();
    switch (typeof object) {
      case "string":
        return this.encodeString(object);
      case "number":
        return this.encodeNumber(object); // safe integers as int, everything else as float64
      case "boolean":
        return this.encodeBoolean(object);
      case "undefined":
        return this.encodeNil();
      case "bigint":
        return object < UINT64_END && object >= INT64_MIN ? this.encodeBigInt64(object) : this.encodeNumberAsFloat(Number(object));
      case "object":
        return object === null ? this.encodeNil() : this.encodeObject(object, depth);
    }
    this.writeOpaque(); // function, symbol
  }

  /** An object by its kind; one whose kind cannot be read (a Proxy's trap throws) is unreadable. @override @param {object} object @param {number} depth */
  encodeObject(object, depth) {
    let kind;
    try {
      kind = Array.isArray(object) ? 1 : ArrayBuffer.isView(object) ? 2 : object instanceof Map ? 3 : isPlainObject(object) ? 4 : 0;
    } catch (e) {
      return this.writeUnreadable(typeName(object), e);
    }
    if (kind === 1) this.encodeArray(/** @type {unknown[]} */ (object), depth);
    else if (kind === 2) this.encodeBinary(/** @type {ArrayBufferView} */ (object));
    else if (kind === 3) this.encodeMapObject(/** @type {Map<unknown, unknown>} */ (object), depth);
    else if (kind === 4) this.encodeMap(/** @type {Record<string, unknown>} */ (object), depth);
    else this.writeOpaque();
  }

  /** An array, its length and each element read once. @override @param {unknown[]} array @param {number} depth */
  encodeArray(array, depth) {
    let n;
    try {
      n = array.length;
    } catch (e) {
      return this.writeUnreadable("Array", e);
    }
    this.writeContainerHeader(n, 0x90, 0xdc);
    for (let i = 0; i < n; i++) {
      let item;
      try {
        item = array[i];
      } catch (e) {
        this.writeUnreadable("Array element", e);
        continue;
      }
      this.doEncode(item, depth + 1);
    }
  }

  /** Own enumerable keys in order, each value read once, undefined left out. @override @param {Record<string, unknown>} object @param {number} depth */
  encodeMap(object, depth) {
    let keys;
    try {
      keys = Object.keys(object);
    } catch (e) {
      return this.writeUnreadable(typeName(object), e);
    }
    const n = keys.length;
    if (depth === 3 && this.section === STEPS) this.step++;
    const values = n < 16 ? undefined : keys.map((k) => [this.readProperty(object, k), this.thrown]);
    if (values !== undefined) this.writeContainerHeader(values.filter(([v]) => v !== undefined).length, 0x80, 0xde);
    // A fixmap's one-byte header is written when the entries are.
    else this.ensureBufferSizeToWrite(1);
    const at = values === undefined ? this.pos++ : -1;
    let size = 0;
    for (let i = 0; i < n; i++) {
      const v = values === undefined ? this.readProperty(object, keys[i]) : values[i][0];
      if (v === undefined) continue;
      size++;
      this.writeEntry(keys[i], v, values === undefined ? this.thrown : values[i][1], depth);
    }
    if (at >= 0) this.bytes[at] = 0x80 + size;
  }

  /** `object[key]`, or {@link UNREADABLE} with what it threw in `thrown`. @param {Record<string, unknown>} object @param {string} key */
  readProperty(object, key) {
    try {
      return object[key];
    } catch (e) {
      this.thrown = e;
      return UNREADABLE;
    }
  }

  /** One entry of a map. @param {string} key @param {unknown} v @param {unknown} error @param {number} depth */
  writeEntry(key, v, error, depth) {
    if (depth === 1) this.section = SECTIONS.get(key) ?? -1;
    else if (typeof v === "string" && this.section >= 0) this.noteText(key, v, depth);
    this.encodeKey(key);
    if (v === UNREADABLE) this.writeUnreadable("Object property", error);
    else this.doEncode(v, depth + 1);
  }

  /** A property name, its bytes from the cache of names met before. @param {string} k */
  encodeKey(k) {
    let b = keyBytes.get(k);
    if (b === undefined) {
      if (k.length > SHORT_STRING || keyBytes.size >= KEY_CACHE_SIZE) return this.encodeString(k);
      const n = wtf8Length(k);
      b = new Uint8Array(strHeaderSize(n) + n);
      b[0] = n < 32 ? 0xa0 + n : 0xd9;
      if (n >= 32) b[1] = n;
      encodeWtf8Into(k, b, b.length - n);
      keyBytes.set(k, b);
    }
    const len = b.length;
    this.ensureBufferSizeToWrite(len);
    const bytes = this.bytes;
    const pos = this.pos;
    for (let i = 0; i < len; i++) bytes[pos + i] = b[i];
    this.pos = pos + len;
  }

  /** @param {number} n entries @param {number} fix 0x90 (array) or 0x80 (map) @param {number} wide its 16-bit form */
  writeContainerHeader(n, fix, wide) {
    this.writeU8(n < 16 ? fix + n : n < 0x10000 ? wide : wide + 1);
    if (n >= 0x10000) this.writeU32(n);
    else if (n >= 16) this.writeU16(n);
  }

  /** The ExtUnreadable value of a value whose reading threw `e` (the core says where). @param {string} type @param {unknown} e */
  writeUnreadable(type, e) {
    this.encodeExtension({ type: EXT_UNREADABLE, data: unreadableData(type, e) });
  }

  writeOpaque() {
    this.writeU8a(OPAQUE);
  }

  /** A Map: its entries in insertion order, keys by the same rules, undefined values left out. @param {Map<unknown, unknown>} map @param {number} depth */
  encodeMapObject(map, depth) {
    let entries;
    try {
      entries = Array.from(map).filter(([, v]) => v !== undefined);
    } catch (e) {
      return this.writeUnreadable(typeName(map), e);
    }
    this.writeContainerHeader(entries.length, 0x80, 0xde);
    if (depth === 3 && this.section === STEPS) this.step++;
    for (const [k, v] of entries) {
      if (typeof k === "string") {
        this.writeEntry(k, v, undefined, depth);
      } else {
        this.doEncode(k, depth + 1);
        this.doEncode(v, depth + 1);
      }
    }
  }

  /** A long string: left in place, copied from the cache, or written (WTF-8 for a lone surrogate). @override @param {string} s */
  encodeString(s) {
    const n = s.length;
    if (n <= SHORT_STRING) return super.encodeString(s);
    if (this.skipping && this.sameAsLast(s)) return;
    const cached = n <= CACHE_MAX_UNITS ? encodedStrings.get(s) : undefined;
    if (cached !== undefined && this.fits(strHeaderSize(cached.length) + cached.length)) return this.place(s, cached.length, cached);
    let max = 3 * n;
    if (!this.fits(5 + max)) {
      max = wtf8Length(s); // near or past the limit: the exact size decides
      if (!this.fits(strHeaderSize(max) + max)) return this.countOnly(strHeaderSize(max) + max);
    }
    this.ensureBufferSizeToWrite(5 + max);
    // The header's size as if the string were ASCII (most are): moved when not.
    const guess = strHeaderSize(n);
    const start = this.pos + guess;
    const written = writeUtf8(s, this.bytes, start, max);
    const real = strHeaderSize(written);
    if (real !== guess) this.bytes.copyWithin(this.pos + real, start, start + written);
    this.writeStringHeader(written);
    if (written !== n) this.unsure.push(s, this.pos, written);
    this.record(s, written);
    if (n <= CACHE_MAX_UNITS) this.fresh.push(s, this.pos, written, this.metBefore(s));
    this.pos += written;
  }

  /** A lone surrogate was written as U+FFFD, as long as its WTF-8: such strings are written again in place. */
  fixLoneSurrogates() {
    const u = this.unsure;
    if (u.length > 0 && holdsReplacement(this.bytes, u[1], this.pos)) {
      for (let i = 0; i < u.length; i += 3) {
        if (holdsReplacement(this.bytes, u[i + 1], u[i + 1] + u[i + 2]) && !isWellFormed(u[i])) encodeWtf8Into(u[i], this.bytes, u[i + 1]);
      }
    }
    if (u.length > 0) u.length = 0;
  }

  /** Strings met in the request before go into the cache; new ones are remembered (a one-off request pays no copy). */
  rememberFresh() {
    const fresh = this.fresh;
    const met = this.met;
    let m = 0;
    let units = 0;
    for (let i = 0; i < fresh.length; i += 4) {
      if (fresh[i + 3]) remember(fresh[i], this.bytes, fresh[i + 1], fresh[i + 2]);
      else if (units <= MET_MAX_UNITS) {
        met[m++] = fresh[i];
        units += fresh[i].length;
      }
    }
    met.fill(undefined, m, this.nMet);
    this.nMet = m;
    this.metAt = 0;
    this.metEpoch = cacheEpoch;
    if (fresh.length > 0) fresh.length = 0;
  }

  /** Whether `s` was new in the request before: one of the next few, by value. @param {string} s */
  metBefore(s) {
    if (this.metEpoch !== cacheEpoch) return false;
    const end = Math.min(this.metAt + 4, this.nMet);
    for (let j = this.metAt; j < end; j++) {
      if (this.met[j] === s) {
        this.metAt = j + 1;
        return true;
      }
    }
    return false;
  }

  /** Records that the long string `s` of `n` bytes starts here. @param {string} s @param {number} n */
  record(s, n) {
    const k = this.nStrings;
    this.strings[k] = s;
    this.strings[k + 1] = this.pos;
    this.strings[k + 2] = n;
    this.nStrings = k + 3;
    this.recordUnits += s.length;
  }

  /** Only the header of `s`, when the request before left its bytes here. @param {string} s */
  sameAsLast(s) {
    const k = this.nStrings;
    const last = this.last;
    if (k >= this.nLast || last[k] !== s) return false;
    const n = last[k + 2];
    const header = strHeaderSize(n);
    if (this.pos + header !== last[k + 1] || !this.fits(header + n)) return false;
    this.place(s, n);
    return true;
  }

  /** The header of `s` (`n` bytes), its bytes copied `from` the cache or left where they are. @param {string} s @param {number} n @param {Uint8Array} [from] */
  place(s, n, from) {
    this.ensureBufferSizeToWrite(strHeaderSize(n) + n);
    this.writeStringHeader(n);
    if (from) this.bytes.set(from, this.pos);
    this.record(s, n);
    this.pos += n;
  }
}

/** @param {object} o a plain object, of this realm or another (an iframe, a vm context) */
function isPlainObject(o) {
  const proto = Object.getPrototypeOf(o);
  if (proto === null || proto === Object.prototype) return true;
  return Object.getPrototypeOf(proto) === null && Object.prototype.toString.call(o) === "[object Object]";
}

/** JavaScript's name for the type of `v`, without letting a trap or a getter escape. @param {unknown} v */
function typeName(v) {
  try {
    if (Array.isArray(v)) return "Array";
    const name = Object.getPrototypeOf(v)?.constructor?.name;
    if (typeof name === "string" && name !== "") return name;
  } catch {
    // a trap that throws: the type goes by typeof
  }
  return typeof v === "object" ? "Object" : typeof v;
}

/** ExtUnreadable's data: [the value's type, the error's type, its text]. @param {string} type @param {unknown} e */
function unreadableData(type, e) {
  let name = typeName(e);
  let text = "";
  try {
    if (e instanceof Error) name = String(e.name);
    text = e instanceof Error ? String(e.message) : String(e);
  } catch {
    // an error whose name or message cannot be read: its type alone
  }
  return new Encoder().encode([type, name, text].map((t) => t.toWellFormed?.() ?? t));
}

const USAGE_EXPECTED = "expected a usage object, a response, its JSON text, or an object with toJSON()";
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * One call's recorded usage as the core reads it (docs/SPEC.md §7.12): null or undefined as null; a plain object (a usage, or a whole
 * response, as the providers' SDKs answer it), an array, a Map, a number or a boolean as it is, for the core to judge; JSON text (a
 * string, or UTF-8 in a Uint8Array) parsed; an object with toJSON() (a class instance) read as JSON.stringify reads it. Anything
 * else (a Promise: a call not awaited; a class instance without toJSON(); a function) throws, as does text that is not JSON.
 * @param {unknown} value @param {string} path its path in the call's arguments (`usage[i]`) @returns {unknown}
 */
export function usageValue(value, path) {
  if (value === undefined || value === null) return null;
  const type = typeof value;
  if (type === "number" || type === "boolean" || type === "bigint") return value;
  if (type === "string" || value instanceof Uint8Array) {
    try {
      return JSON.parse(type === "string" ? /** @type {string} */ (value) : strictUtf8.decode(/** @type {Uint8Array} */ (value)));
    } catch (e) {
      throw usageError(path, "found text that is not JSON", e);
    }
  }
  if (type === "object") {
    const object = /** @type {object} */ (value);
    if (Array.isArray(object) || object instanceof Map) return object;
    let text;
    let plain = false;
    try {
      if (typeof (/** @type {any} */ (object).toJSON) === "function") text = JSON.stringify(object) ?? "";
      else if (isPlainObject(object)) plain = true;
      else if (typeof (/** @type {any} */ (object).then) === "function") {
        throw usageError(path, `found a ${typeName(object)}, not awaited: await the client's call and pass its result`);
      }
    } catch (e) {
      if (e instanceof AssemblyError) throw e;
      throw usageError(path, `found a ${typeName(object)} whose toJSON() raised ${errorText(e)}`, e);
    }
    if (plain) return object;
    if (text !== undefined) {
      if (text === "") throw usageError(path, `found a ${typeName(object)} whose toJSON() answered no JSON value`);
      return JSON.parse(text);
    }
  }
  throw usageError(path, `found a ${typeName(value)}`);
}

/** @param {string} path @param {string} found @param {unknown} [cause] */
function usageError(path, found, cause) {
  const error = new AssemblyError("malformed_request", path, `${USAGE_EXPECTED}; ${found}`);
  if (cause !== undefined) error.cause = cause;
  return error;
}

/** "Name: message" of a thrown value, without letting a getter escape. @param {unknown} e */
function errorText(e) {
  try {
    return e instanceof Error ? `${e.name}: ${e.message}` : `${typeName(e)}: ${String(e)}`;
  } catch {
    return typeName(e);
  }
}

/** The encoder of every call's request (its buffer is kept between calls). */
export const sharedRequestEncoder = new RequestEncoder();

/** The shared encoder, or a fresh one when it is busy (a getter makes a call). @returns {RequestEncoder} */
export function acquireEncoder() {
  if (sharedRequestEncoder.entered || sharedRequestEncoder.busy) return new RequestEncoder();
  sharedRequestEncoder.busy = true;
  return sharedRequestEncoder;
}

/** A request value's bytes, fresh. @param {unknown} value */
export function encodeRequest(value) {
  const encoder = acquireEncoder();
  try {
    return encoder.encodeShared(value).slice();
  } finally {
    encoder.done();
  }
}
