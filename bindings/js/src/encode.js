/**
 * How JavaScript values become msgpack request bytes.
 *
 * The binding never validates a request itself. It encodes every JavaScript
 * value faithfully (or, when msgpack has no equivalent, as a value the core
 * always rejects) and lets the core decide, so that a bad JavaScript value gets
 * exactly the code and path the core gives the same mistake on the wire, found
 * in the core's own forward-pass order. The mapping:
 *
 * | JavaScript value | msgpack | so the core says |
 * |---|---|---|
 * | string | str, UTF-8; a lone surrogate as its WTF-8 bytes (ED A0 80 for U+D800) | `invalid_utf8` at its path for a lone surrogate |
 * | number, a safe integer (−0 included) | int, shortest form | — |
 * | number, any other (fraction, NaN, ±Infinity, beyond ±(2^53−1)) | float64 | `malformed_request` |
 * | bigint in [−2^63, 2^64) | int64 / uint64 | — |
 * | bigint outside that | float64 | `malformed_request` |
 * | boolean, null | bool, nil | `malformed_request` where a str/int belongs (nil = absent for `max_prompt_chars`) |
 * | undefined as an object property or Map value | the entry is left out (as JSON.stringify does) | `missing_field` if it was required |
 * | undefined as an array element | nil | `malformed_request` |
 * | Array | array | — |
 * | plain object (prototype Object.prototype or null) | map of its own enumerable string keys, in JavaScript property order | — |
 * | Map | map of its entries in insertion order; keys encoded by these rules | `malformed_request` for a non-string key |
 * | ArrayBuffer view (Uint8Array, Buffer, DataView…) | bin | `malformed_request` |
 * | anything else: Set, Date, class instances, functions, symbols, boxed primitives | an opaque ext value | `malformed_request` at its path |
 * | a value whose reading throws (a getter, a Proxy trap, a Map's iteration) | the ExtUnreadable ext value (docs/SPEC.md §7.6): its type, the error's name and message | `malformed_request` at its path, the core's message |
 * | a value nested deeper than {@link MAX_ENCODE_DEPTH} (a cycle, say) | replaced by the opaque ext value | no change: a valid request is 5 levels deep, so the core rejects an enclosing container first |
 *
 * @module
 */

import { Encoder } from "@msgpack/msgpack";
import { EXT_UNREADABLE, MAX_REQUEST_BYTES } from "./consts.js";
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

/**
 * Depth below which values are encoded as they are. A valid request nests at
 * most 5 levels (request → run_messages → message → content → block → text),
 * and the core rejects a container of the wrong type at its header, before its
 * content; so values deeper than this can never change the core's answer, and
 * replacing them keeps cyclic objects from recursing forever.
 */
export const MAX_ENCODE_DEPTH = 32;

/** Strings up to this many UTF-16 units go through the library's JavaScript
 * loop (which already writes WTF-8); longer ones through TextEncoder. */
const SHORT_STRING = 50;

/** The fixext 1 value written for JavaScript values msgpack cannot carry.
 * Type 0x7f (application-defined), payload 0x00. */
const OPAQUE = Uint8Array.of(0xd4, 0x7f, 0x00);

const UINT64_END = 1n << 64n;
const INT64_MIN = -(1n << 63n);

/** Size of the shortest msgpack str header for a payload of n bytes. */
function strHeaderSize(n) {
  return n < 32 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
}

/** @param {object} o */
function isPlainObject(o) {
  const proto = Object.getPrototypeOf(o);
  if (proto === null || proto === Object.prototype) return true;
  // A plain object of another realm (an iframe, a vm context).
  return Object.getPrototypeOf(proto) === null && Object.prototype.toString.call(o) === "[object Object]";
}

/** The largest request the core decodes (docs/SPEC.md §4): 1 GiB. */
export { MAX_REQUEST_BYTES };

/** The encoder's buffer starts this big, and a buffer grown past
 * {@link KEEP_BUFFER_BYTES} is dropped after its call (issue: one huge request
 * must not pin its buffer for the life of the process). */
const INITIAL_BUFFER_BYTES = 64 * 1024;
export const KEEP_BUFFER_BYTES = 8 * 1024 * 1024;

/**
 * Thrown by {@link encodeRequestShared} when the encoded request would be over
 * {@link MAX_REQUEST_BYTES}: the encoder stops writing at the limit and only
 * counts the rest, so `size` is the exact size the request would have had.
 */
export class RequestTooLarge extends Error {
  /** @param {number} size */
  constructor(size) {
    super(`the request is ${size} bytes`);
    this.size = size;
  }
}

/**
 * The request encoder: @msgpack/msgpack's Encoder with the JavaScript value
 * mapping of this module (see the table above), a faster path for long
 * strings, and the 1 GiB limit: past it nothing more is written (a request
 * that big is `too_large` whatever it holds), only counted.
 */
export class RequestEncoder extends Encoder {
  /** @param {number} [limit] the most bytes written (tests use less than 1 GiB) */
  constructor(limit = MAX_REQUEST_BYTES) {
    // The buffer never exceeds the limit by more than a header's slack (8
    // bytes), so a write that fits the buffer is within that slack of it.
    super({ initialBufferSize: Math.min(INITIAL_BUFFER_BYTES, limit + 8), ignoreUndefined: true, maxDepth: Infinity });
    this.limit = limit;
    /**
     * The long strings of the last request, with where their bytes are:
     * string, start, length, … (flat). The response decoder reuses a string
     * whose bytes come back unchanged (see {@link decodeResponse}).
     * @type {any[]}
     */
    this.strings = [];
    /** The number of entries of {@link RequestEncoder#strings} in use, and their strings' units. */
    this.nStrings = 0;
    this.recordUnits = 0;
    /**
     * The record of the request before (as {@link RequestEncoder#strings}),
     * the buffer its bytes are in (null when they may not be there any
     * more) and the cache's epoch then; see {@link RequestEncoder#sameAsLast}.
     * @type {any[]}
     */
    this.last = [];
    this.nLast = 0;
    /** @type {Uint8Array | null} */
    this.lastBytes = null;
    this.lastEpoch = -1;
    /** Whether this pass may write a string as {@link RequestEncoder#sameAsLast}. */
    this.skipping = false;
    /** Held by a call (between encoding and the end of decoding). */
    this.busy = false;
    /** Bytes counted (not written) once over the limit; see {@link RequestTooLarge}. */
    this.counted = 0;
    this.counting = false;
    /**
     * The long strings of the last request encoded here, not copied from the
     * cache: string, start, length, what the cache does with it (flat); see
     * {@link RequestEncoder#rememberFresh}.
     * @type {any[]}
     */
    this.fresh = [];
    /** The number of entries of {@link RequestEncoder#fresh} in use. */
    this.nFresh = 0;
    /**
     * The long strings that were new in the request encoded before (in its
     * order, up to {@link MET_MAX_UNITS} units), how many, where the next is
     * looked for, and the cache's epoch then; see {@link RequestEncoder#metBefore}.
     * @type {string[]}
     */
    this.met = [];
    this.nMet = 0;
    this.metAt = 0;
    this.metEpoch = -1;
    /** Whether a long string of the last request was not ASCII. */
    this.unsure = false;
    /** Each long string checked for a lone surrogate as it is written. */
    this.strict = false;
    /** What reading a property threw last ({@link RequestEncoder#readProperty}). */
    this.thrown = undefined;
    /** The request's texts by section, the section of the entry being written and the step's number ({@link RequestEncoder#noteText}). @type {string[][]} */
    this.textLists = [[], [], [], []];
    this.section = -1;
    this.step = -1;
  }

  /** A fresh encoder of this class, for a re-entrant call (a getter of the
   * request that encodes another request).
   * @override */
  clone() {
    return new RequestEncoder(this.limit);
  }

  /**
   * Encodes `value` and returns a view of the encoder's own buffer, valid
   * until the next call (copy it if you keep it), then call
   * {@link RequestEncoder#release}.
   *
   * @param {unknown} value
   * @returns {Uint8Array}
   * @throws {RequestTooLarge} over the limit (1 GiB)
   */
  encodeShared(value) {
    if (this.entered) return this.clone().encodeShared(value); // a getter of the request encodes another
    // The record of the request before becomes `last`; its bytes are still
    // in the buffer (only encodes write it) unless the cache started over or
    // the buffer was replaced since.
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

  /**
   * One pass of {@link RequestEncoder#encodeShared} (a second one near the
   * limit, or for a lone surrogate).
   * @param {unknown} value
   * @returns {Uint8Array}
   */
  encodePass(value) {
    this.counted = 0;
    this.counting = false;
    this.nStrings = 0;
    this.recordUnits = 0;
    this.nFresh = 0;
    this.unsure = false;
    this.forgetTexts();
    const out = this.encodeSharedRef(value);
    if (this.counting || this.pos > this.limit) {
      const size = this.counted + this.pos;
      this.counting = false;
      this.counted = 0;
      if (size <= this.limit) {
        // Within a header's slack of the limit: room was asked for the
        // longest header and the request fits after all; write it again.
        const limit = this.limit;
        this.limit += 8;
        this.skipping = false;
        try {
          return this.encodePass(value);
        } finally {
          this.limit = limit;
        }
      }
      this.release();
      throw new RequestTooLarge(size);
    }
    if (!this.strict && this.hadLoneSurrogate(out)) {
      // Again, each long string checked as it is written (a getter of the
      // request runs again).
      this.strict = true;
      this.skipping = false;
      try {
        return this.encodePass(value);
      } finally {
        this.strict = false;
      }
    }
    this.rememberFresh();
    return out;
  }

  /** Marks the encoder as held by a call, until {@link RequestEncoder#done}. */
  take() {
    this.busy = true;
    return this;
  }

  /** The call is over: the recorded strings and a huge buffer are let go. */
  done() {
    this.busy = false;
    this.thrown = undefined;
    this.forgetTexts();
    this.release();
    if (this.lastBytes !== this.bytes) {
      // No request after this one can use the record: its strings are let go.
      this.strings.fill(undefined, 0, this.nStrings);
      this.nStrings = 0;
    }
  }

  /**
   * The texts of the request encoded last, numbered as docs/SPEC.md §7.11
   * numbers them: run blocks, injection contents, goal blocks, then each
   * step's raw_output and observation (valid until {@link RequestEncoder#done}).
   * @returns {string[]}
   */
  texts() {
    const [run, injections, goal, steps] = this.textLists;
    return run.concat(injections, goal, steps);
  }

  /**
   * Notes the string `v` of the entry `key` of a map at `depth` when it is
   * one of the request's texts (see {@link RequestEncoder#texts}).
   * @param {string} key @param {string} v @param {number} depth
   */
  noteText(key, v, depth) {
    const section = this.section;
    if (section === STEPS) {
      if (depth === 3 && (key === "raw_output" || key === "observation"))
        this.textLists[STEPS][2 * this.step + (key === "observation" ? 1 : 0)] = v;
    } else if (section === INJECTIONS ? depth === 4 && key === "content" : depth === 5 && key === "text") {
      this.textLists[section].push(v);
    }
  }

  /** Lets go of the texts of the last request. */
  forgetTexts() {
    for (const list of this.textLists) list.length = 0;
    this.section = -1;
    this.step = -1;
  }

  /** Drops a buffer that grew past {@link KEEP_BUFFER_BYTES}, once the bytes
   * of the last call are no longer needed. */
  release() {
    if (this.bytes.byteLength > KEEP_BUFFER_BYTES) {
      const buf = new ArrayBuffer(Math.min(INITIAL_BUFFER_BYTES, this.limit + 8));
      this.bytes = new Uint8Array(buf);
      this.view = new DataView(buf);
      this.pos = 0;
      forgetWriteView();
    }
  }

  /** Capacity of the buffer kept between calls (for tests). */
  get bufferBytes() {
    return this.bytes.byteLength;
  }

  /**
   * Makes room for `size` more bytes, up to the 1 GiB limit; past it the
   * encoder switches to counting: what is written from then on lands at the
   * start of the buffer, overwriting bytes nobody will read.
   * @override
   * @param {number} size
   */
  ensureBufferSizeToWrite(size) {
    const need = this.pos + size;
    if (need <= this.bytes.byteLength) return;
    if (this.counting || this.counted + need > this.limit) {
      this.counting = true;
      this.counted += this.pos;
      this.pos = 0;
      if (size <= this.bytes.byteLength) return;
    }
    this.resizeBuffer(Math.max(need, Math.min(need * 2, this.limit + 8)));
  }

  /**
   * Counts `n` bytes without writing them, switching to counting.
   * @param {number} n
   */
  countOnly(n) {
    this.counting = true;
    this.counted += this.pos + n;
    this.pos = 0;
  }

  /** @override @param {ArrayBufferView} object */
  encodeBinary(object) {
    const size = object.byteLength;
    if (this.counting || this.counted + this.pos + 5 + size > this.limit) {
      this.countOnly((size < 0x100 ? 2 : size < 0x10000 ? 3 : 5) + size);
      return;
    }
    super.encodeBinary(object);
  }

  /** @override */
  doEncode(object, depth) {
    if (depth > MAX_ENCODE_DEPTH) {
      this.writeOpaque();
      return;
    }
    switch (typeof object) {
      case "string":
        this.encodeString(object);
        return;
      case "number":
        this.encodeNumber(object); // safe integers as int, everything else as float64
        return;
      case "boolean":
        this.encodeBoolean(object);
        return;
      case "undefined":
        this.encodeNil();
        return;
      case "bigint":
        this.encodeBigInt(object);
        return;
      case "object":
        if (object === null) this.encodeNil();
        else this.encodeObject(object, depth);
        return;
      default: // function, symbol
        this.writeOpaque();
    }
  }

  /**
   * An object by its kind (see the table above); one whose kind cannot be
   * read (a Proxy whose trap throws) is written as unreadable.
   * @override
   * @param {object} object
   * @param {number} depth
   */
  encodeObject(object, depth) {
    let kind;
    try {
      kind = Array.isArray(object) ? 1 : ArrayBuffer.isView(object) ? 2 : object instanceof Map ? 3 : isPlainObject(object) ? 4 : 0;
    } catch (e) {
      this.writeUnreadable(typeName(object), e);
      return;
    }
    if (kind === 1) this.encodeArray(/** @type {unknown[]} */ (object), depth);
    else if (kind === 2) this.encodeBinary(/** @type {ArrayBufferView} */ (object));
    else if (kind === 3) this.encodeMapObject(/** @type {Map<unknown, unknown>} */ (object), depth);
    else if (kind === 4) this.encodeMap(/** @type {Record<string, unknown>} */ (object), depth);
    else this.writeOpaque();
  }

  /**
   * An array, element by element (its length and each element read once);
   * an element whose reading throws is written as unreadable in its place.
   * @override
   * @param {unknown[]} array
   * @param {number} depth
   */
  encodeArray(array, depth) {
    let n;
    try {
      n = array.length;
    } catch (e) {
      this.writeUnreadable("Array", e);
      return;
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

  /**
   * A plain object: its own enumerable string keys in property order, each
   * value read once; an entry whose value is undefined is left out, and a
   * value whose reading throws (a getter, a Proxy trap) is written as
   * unreadable in its place.
   * @override
   * @param {Record<string, unknown>} object
   * @param {number} depth
   */
  encodeMap(object, depth) {
    let keys;
    try {
      keys = Object.keys(object);
    } catch (e) {
      this.writeUnreadable(typeName(object), e);
      return;
    }
    const n = keys.length;
    if (depth === 3 && this.section === STEPS) this.step++;
    if (n >= 16) {
      this.encodeLargeMap(object, keys, depth);
      return;
    }
    // Fewer than 16 entries: a fixmap, whose one-byte header is written when
    // the entries are (each value read once, as it is written).
    this.ensureBufferSizeToWrite(1);
    const at = this.pos++;
    let size = 0;
    for (let i = 0; i < n; i++) {
      const v = this.readProperty(object, keys[i]);
      if (v === undefined) continue;
      size++;
      this.writeEntry(keys[i], v, this.thrown, depth);
    }
    this.bytes[at] = 0x80 + size;
  }

  /**
   * {@link RequestEncoder#encodeMap} of 16 entries or more: the values read
   * first (once each), for the header's size.
   * @param {Record<string, unknown>} object
   * @param {string[]} keys
   * @param {number} depth
   */
  encodeLargeMap(object, keys, depth) {
    const n = keys.length;
    const values = new Array(n);
    const errors = new Array(n);
    let size = 0;
    for (let i = 0; i < n; i++) {
      values[i] = this.readProperty(object, keys[i]);
      errors[i] = this.thrown;
      if (values[i] !== undefined) size++;
    }
    this.writeContainerHeader(size, 0x80, 0xde);
    for (let i = 0; i < n; i++) if (values[i] !== undefined) this.writeEntry(keys[i], values[i], errors[i], depth);
  }

  /**
   * `object[key]`, or {@link UNREADABLE} when reading it throws (a getter, a
   * Proxy trap), what it threw then in `this.thrown`.
   * @param {Record<string, unknown>} object @param {string} key
   */
  readProperty(object, key) {
    try {
      return object[key];
    } catch (e) {
      this.thrown = e;
      return UNREADABLE;
    }
  }

  /**
   * One entry of a map: its key, then its value (the unreadable value of
   * `error` for {@link UNREADABLE}).
   * @param {string} key @param {unknown} v @param {unknown} error @param {number} depth
   */
  writeEntry(key, v, error, depth) {
    if (depth === 1) this.section = SECTIONS[key] ?? -1;
    else if (typeof v === "string" && this.section >= 0) this.noteText(key, v, depth);
    this.encodeKey(key);
    if (v === UNREADABLE) this.writeUnreadable("Object property", error);
    else this.doEncode(v, depth + 1);
  }

  /**
   * A property name: its bytes (header included) from a small cache of the
   * names met before (a request repeats a few names many times).
   * @param {string} k
   */
  encodeKey(k) {
    let b = keyBytes.get(k);
    if (b === undefined) {
      if (k.length > SHORT_STRING || keyBytes.size >= KEY_CACHE_SIZE) {
        this.encodeString(k);
        return;
      }
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

  /**
   * A msgpack array or map header of `n` entries in its shortest form.
   * @param {number} n @param {number} fix 0x90 (array) or 0x80 (map) @param {number} wide its 16-bit form (the 32-bit one follows)
   */
  writeContainerHeader(n, fix, wide) {
    this.ensureBufferSizeToWrite(5);
    if (n < 16) {
      this.writeU8(fix + n);
    } else if (n < 0x10000) {
      this.writeU8(wide);
      this.writeU16(n);
    } else {
      this.writeU8(wide + 1);
      this.writeU32(n);
    }
  }

  /**
   * The ExtUnreadable value (docs/SPEC.md §7.6) of a value whose reading
   * threw `e`: the core answers malformed_request at its path, with its own
   * message, so the binding computes no path.
   * @param {string} type the value's type, as JavaScript names it
   * @param {unknown} e what reading it threw
   */
  writeUnreadable(type, e) {
    this.encodeExtension({ type: EXT_UNREADABLE, data: unreadableData(type, e) });
  }

  /** @param {bigint} n */
  encodeBigInt(n) {
    if (n >= 0n && n < UINT64_END) {
      this.ensureBufferSizeToWrite(9);
      this.writeU8(0xcf);
      this.writeBigUint64(n);
    } else if (n < 0n && n >= INT64_MIN) {
      this.ensureBufferSizeToWrite(9);
      this.writeU8(0xd3);
      this.writeBigInt64(n);
    } else {
      this.encodeNumberAsFloat(Number(n));
    }
  }

  /** Writes the opaque ext value the core rejects wherever it appears. */
  writeOpaque() {
    this.ensureBufferSizeToWrite(OPAQUE.length);
    this.writeU8a(OPAQUE);
  }

  /**
   * A Map as a msgpack map: its entries in insertion order, keys encoded by the
   * same rules as values; entries whose value is undefined are left out, as for
   * plain objects.
   *
   * @param {Map<unknown, unknown>} map
   * @param {number} depth
   */
  encodeMapObject(map, depth) {
    let entries;
    try {
      entries = Array.from(map);
    } catch (e) {
      this.writeUnreadable(typeName(map), e);
      return;
    }
    let size = 0;
    for (const [, v] of entries) if (v !== undefined) size++;
    this.writeContainerHeader(size, 0x80, 0xde);
    if (depth === 3 && this.section === STEPS) this.step++;
    for (const [k, v] of entries) {
      if (v === undefined) continue;
      if (typeof k === "string") {
        this.writeEntry(k, v, undefined, depth);
        continue;
      }
      this.doEncode(k, depth + 1);
      this.doEncode(v, depth + 1);
    }
  }

  /**
   * Strings: short ones through the library's loop (WTF-8 already); long
   * ones from the cache of encoded strings when there, else as UTF-8
   * straight into the buffer ({@link writeUtf8}: it neither adds nor strips a
   * byte-order mark). That writes a lone surrogate as U+FFFD, so the request
   * is checked once when it is done ({@link RequestEncoder#verifyStrings})
   * and encoded again strictly (here, through {@link encodeWtf8Into}) when a
   * string of it had one.
   *
   * @override
   * @param {string} s
   */
  encodeString(s) {
    const n = s.length;
    if (n <= SHORT_STRING) {
      super.encodeString(s);
      return;
    }
    // What the cache does with the string once the request is checked:
    // 0 nothing yet (new), 1 keep its bytes (met in the request before), 2
    // nothing (too long).
    if (this.skipping && !this.counting && this.sameAsLast(s)) return;
    let keep = n <= CACHE_MAX_UNITS ? 0 : 2;
    if (keep === 0 && !this.counting) {
      const cached = encodedStrings.get(s);
      if (cached === undefined) keep = this.metBefore(s) ? 1 : 0;
      else if (this.counted + this.pos + 5 + cached.length <= this.limit) {
        this.ensureBufferSizeToWrite(5 + cached.length);
        this.writeStringHeader(cached.length);
        this.bytes.set(cached, this.pos);
        this.record(s, cached.length);
        this.pos += cached.length;
        return;
      }
    }
    let max = 3 * n;
    if (this.counting || this.counted + this.pos + 5 + max > this.limit) {
      // Near or past the limit: the exact size decides.
      max = wtf8Length(s);
      if (this.counting || this.counted + this.pos + strHeaderSize(max) + max > this.limit) {
        this.countOnly(strHeaderSize(max) + max);
        return;
      }
    }
    this.ensureBufferSizeToWrite(5 + max);
    // The header's size as if the string were ASCII (most are): moved when not.
    const guess = strHeaderSize(n);
    const start = this.pos + guess;
    let written = writeUtf8(s, this.bytes, start, max);
    let wellFormed = true;
    if (this.strict) {
      // Only a string whose bytes hold U+FFFD can have had a lone surrogate.
      wellFormed = written === n || !holdsReplacement(this.bytes, start, start + written) || isWellFormed(s);
      if (!wellFormed) written = encodeWtf8Into(s, this.bytes, start);
    }
    const real = strHeaderSize(written);
    if (real !== guess) this.bytes.copyWithin(this.pos + real, start, start + written);
    this.writeStringHeader(written);
    if (wellFormed) {
      this.record(s, written);
      const fresh = this.fresh;
      const k = this.nFresh;
      fresh[k] = s;
      fresh[k + 1] = this.pos;
      fresh[k + 2] = written;
      fresh[k + 3] = keep;
      this.nFresh = k + 4;
      if (written !== n) this.unsure = true;
    }
    this.pos += written;
  }

  /**
   * Whether a long string of the request just encoded had a lone surrogate
   * (which {@link writeUtf8} wrote as U+FFFD): one search of the whole
   * request for U+FFFD, then, only when there is one, string by string.
   * @param {Uint8Array} out the request
   */
  hadLoneSurrogate(out) {
    if (!this.unsure || !holdsReplacement(out, 0, out.length)) return false;
    const fresh = this.fresh;
    for (let i = 0; i < this.nFresh; i += 4) {
      const s = fresh[i];
      const start = fresh[i + 1];
      const written = fresh[i + 2];
      if (written !== s.length && holdsReplacement(out, start, start + written) && !isWellFormed(s)) return true;
    }
    return false;
  }

  /**
   * The strings encoded (not copied from the cache) by the request just
   * encoded go into the cache of encoded strings, once it is known that
   * their bytes are theirs: those that were new in the request before (an
   * agent loop sends its history with every step); the new ones are
   * remembered for the next request (a one-off request pays no copy).
   */
  rememberFresh() {
    const fresh = this.fresh;
    const n = this.nFresh;
    const met = this.met;
    let m = 0;
    let units = 0;
    for (let i = 0; i < n; i += 4) {
      const keep = fresh[i + 3];
      if (keep === 1) remember(fresh[i], this.bytes, fresh[i + 1], fresh[i + 2]);
      else if (keep === 0 && units <= MET_MAX_UNITS) {
        met[m++] = fresh[i];
        units += fresh[i].length;
      }
    }
    met.fill(undefined, m, this.nMet);
    this.nMet = m;
    this.metAt = 0;
    this.metEpoch = cacheEpoch;
    fresh.fill(undefined, 0, n);
    this.nFresh = 0;
  }

  /**
   * Whether the long string `s`, not in the cache, was new in the request
   * this encoder encoded before: one of the next few of those strings, in
   * their order (an agent loop sends them again in the same order), compared
   * by value. No hashing, no entry for a string met once.
   * @param {string} s
   */
  metBefore(s) {
    if (this.metEpoch !== cacheEpoch) return false;
    const met = this.met;
    const end = Math.min(this.metAt + 4, this.nMet);
    for (let j = this.metAt; j < end; j++) {
      if (met[j] === s) {
        this.metAt = j + 1;
        return true;
      }
    }
    return false;
  }

  /**
   * Records where the long string `s` of `n` bytes starts (at the position).
   * @param {string} s @param {number} n
   */
  record(s, n) {
    const strings = this.strings;
    const k = this.nStrings;
    strings[k] = s;
    strings[k + 1] = this.pos;
    strings[k + 2] = n;
    this.nStrings = k + 3;
    this.recordUnits += s.length;
  }

  /**
   * Writes the long string `s` when the request before had it at the same
   * place in the same order, its bytes still in the buffer: only its header
   * is written (an agent loop sends the same history again, laid out the
   * same). False, with nothing written, otherwise.
   * @param {string} s
   */
  sameAsLast(s) {
    const k = this.nStrings;
    if (k >= this.nLast) return false;
    const last = this.last;
    if (last[k] !== s) return false;
    const n = last[k + 2];
    const header = strHeaderSize(n);
    if (this.pos + header !== last[k + 1] || this.counted + this.pos + header + n > this.limit) return false;
    this.ensureBufferSizeToWrite(header + n);
    this.writeStringHeader(n);
    this.record(s, n);
    this.pos += n;
    return true;
  }
}

/** The most UTF-16 units of new strings an encoder remembers for its next request. */
const MET_MAX_UNITS = 8 * 1024 * 1024;

/** The bytes of property names met before (a few hundred at most). @type {Map<string, Uint8Array>} */
const keyBytes = new Map();
const KEY_CACHE_SIZE = 512;

/** The sections of the request's texts, by the request's key (docs/SPEC.md §7.11). */
const SECTIONS = { __proto__: null, run_messages: 0, injections: 1, goal_messages: 2, steps: 3 };
const INJECTIONS = 1;
const STEPS = 3;

/** Marks, among the values of an object being encoded, one whose reading threw. */
const UNREADABLE = Object.freeze({});

/**
 * JavaScript's name for the type of `v` (its constructor's name), without
 * letting a Proxy's trap or a getter escape.
 * @param {unknown} v
 */
function typeName(v) {
  try {
    if (Array.isArray(v)) return "Array";
    const name = Object.getPrototypeOf(v)?.constructor?.name;
    if (typeof name === "string" && name !== "") return name;
  } catch {
    // a trap that throws: the type goes by typeof below
  }
  return typeof v === "object" ? "Object" : typeof v;
}

/**
 * The data of an ExtUnreadable value: a msgpack array of three str (the
 * value's type, the error's type, the error's text; docs/SPEC.md §7.6).
 * @param {string} type @param {unknown} e
 * @returns {Uint8Array}
 */
function unreadableData(type, e) {
  let name = typeName(e);
  let text = "";
  try {
    if (e instanceof Error) name = String(e.name);
    text = e instanceof Error ? String(e.message) : String(e);
  } catch {
    // an error whose name or message cannot be read: its type alone
  }
  const wellFormed = (t) => (typeof t.toWellFormed === "function" ? t.toWellFormed() : t);
  return new Encoder().encode([type, name, text].map(wellFormed));
}

const sharedEncoder = new RequestEncoder();

/**
 * The encoder for one call: the shared one, or a fresh one when the shared
 * one is busy (a getter of the request being encoded makes a call of its
 * own). Give it back with {@link RequestEncoder#done}.
 *
 * @returns {RequestEncoder}
 */
export function acquireEncoder() {
  return sharedEncoder.entered || sharedEncoder.busy ? new RequestEncoder() : sharedEncoder.take();
}

/**
 * Encodes a request value by the mapping of this module. The returned view
 * belongs to a shared buffer that the next encode overwrites.
 *
 * @param {unknown} value
 * @returns {Uint8Array}
 * @throws {RequestTooLarge}
 */
export function encodeRequestShared(value) {
  return sharedEncoder.encodeShared(value);
}

/** The shared encoder (for tests of its buffer). */
export const sharedRequestEncoder = sharedEncoder;

/**
 * Encodes a request value into fresh bytes.
 *
 * @param {unknown} value
 * @returns {Uint8Array}
 */
export function encodeRequest(value) {
  const encoder = acquireEncoder();
  try {
    return encoder.encodeShared(value).slice();
  } finally {
    encoder.done();
  }
}
