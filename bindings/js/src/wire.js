/**
 * Wire layer of the JavaScript binding: how JavaScript values become msgpack
 * request bytes, how response bytes become JavaScript values, and the error
 * type.
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
 * | a value nested deeper than {@link MAX_ENCODE_DEPTH} (a cycle, say) | replaced by the opaque ext value | no change: a valid request is 5 levels deep, so the core rejects an enclosing container first |
 *
 * @module
 */

import { Encoder } from "@msgpack/msgpack";
import { ERROR_CODES, MAX_REQUEST_BYTES, MAX_STRING_UNITS } from "./consts.js";

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

const textEncoder = new TextEncoder();

/** The fixext 1 value written for JavaScript values msgpack cannot carry.
 * Type 0x7f (application-defined), payload 0x00. */
const OPAQUE = Uint8Array.of(0xd4, 0x7f, 0x00);

const UINT64_END = 1n << 64n;
const INT64_MIN = -(1n << 63n);

/** A lone surrogate anywhere in a string (fallback where
 * String.prototype.isWellFormed is missing). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** @type {(s: string) => boolean} */
const isWellFormed = typeof String.prototype.isWellFormed === "function" ? (s) => s.isWellFormed() : (s) => !LONE_SURROGATE.test(s);

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

/** Size of the shortest msgpack str header for a payload of n bytes. */
function strHeaderSize(n) {
  return n < 32 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
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
    /** Held by a call (between encoding and the end of decoding). */
    this.busy = false;
    /** Bytes counted (not written) once over the limit; see {@link RequestTooLarge}. */
    this.counted = 0;
    this.counting = false;
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
    this.counted = 0;
    this.counting = false;
    this.strings.length = 0;
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
        try {
          return this.encodeShared(value);
        } finally {
          this.limit = limit;
        }
      }
      this.release();
      throw new RequestTooLarge(size);
    }
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
    this.strings.length = 0;
    this.release();
  }

  /**
   * The strings of the request this encoder encoded last, with its bytes
   * (valid until {@link RequestEncoder#done}).
   *
   * @param {Uint8Array} bytes what encodeShared returned
   * @param {unknown} template the request's observation_template
   */
  requestStrings(bytes, template) {
    return new RequestStrings(bytes, this.strings, template);
  }

  /** Drops a buffer that grew past {@link KEEP_BUFFER_BYTES}, once the bytes
   * of the last call are no longer needed. */
  release() {
    if (this.bytes.byteLength > KEEP_BUFFER_BYTES) {
      const buf = new ArrayBuffer(Math.min(INITIAL_BUFFER_BYTES, this.limit + 8));
      this.bytes = new Uint8Array(buf);
      this.view = new DataView(buf);
      this.pos = 0;
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
        if (object === null) {
          this.encodeNil();
        } else if (Array.isArray(object)) {
          this.encodeArray(object, depth);
        } else if (ArrayBuffer.isView(object)) {
          this.encodeBinary(object);
        } else if (object instanceof Map) {
          this.encodeMapObject(object, depth);
        } else if (isPlainObject(object)) {
          this.encodeMap(object, depth);
        } else {
          this.writeOpaque();
        }
        return;
      default: // function, symbol
        this.writeOpaque();
    }
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
    let size = 0;
    for (const v of map.values()) if (v !== undefined) size++;
    this.ensureBufferSizeToWrite(5);
    if (size < 16) {
      this.writeU8(0x80 + size);
    } else if (size < 0x10000) {
      this.writeU8(0xde);
      this.writeU16(size);
    } else {
      this.writeU8(0xdf);
      this.writeU32(size);
    }
    for (const [k, v] of map) {
      if (v === undefined) continue;
      this.doEncode(k, depth + 1);
      this.doEncode(v, depth + 1);
    }
  }

  /**
   * Strings: short ones through the library's loop (WTF-8 already); long
   * well-formed ones through TextEncoder.encodeInto straight into the buffer
   * (it neither adds nor strips a byte-order mark); long ones with a lone
   * surrogate through {@link encodeWtf8Into}, because TextEncoder would
   * replace the surrogate with U+FFFD.
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
    if (n <= CACHE_MAX_UNITS && !this.counting) {
      const cached = encodedStrings.get(s);
      if (cached !== undefined && this.counted + this.pos + 5 + cached.length <= this.limit) {
        this.ensureBufferSizeToWrite(5 + cached.length);
        this.writeStringHeader(cached.length);
        this.bytes.set(cached, this.pos);
        this.strings.push(s, this.pos, cached.length);
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
    const guess = strHeaderSize(max);
    const start = this.pos + guess;
    let written = textEncoder.encodeInto(s, this.bytes.subarray(start, start + max)).written;
    // TextEncoder writes a lone surrogate as U+FFFD, so only a string whose
    // bytes hold U+FFFD can have one: the scan of the string is skipped for
    // all others (WTF-8 takes the same 3 bytes, so `max` holds either).
    const wellFormed = !holdsReplacement(this.bytes, start, start + written) || isWellFormed(s);
    if (!wellFormed) written = encodeWtf8Into(s, this.bytes, start);
    const real = strHeaderSize(written);
    if (real !== guess) this.bytes.copyWithin(this.pos + real, start, start + written);
    this.writeStringHeader(written);
    if (wellFormed) {
      this.strings.push(s, this.pos, written);
      if (n <= CACHE_MAX_UNITS) remember(s, this.bytes, this.pos, written);
    }
    this.pos += written;
  }
}

/**
 * The UTF-8 of recently encoded long strings: an agent loop sends the same
 * history (the same strings) again with every step, and copying their bytes
 * costs a fraction of encoding them. Only strings up to
 * {@link CACHE_MAX_UNITS} units (V8 hashes longer strings by length alone, so
 * a lookup would compare contents); {@link CACHE_MAX_BYTES} in all, then the
 * cache starts over. Keys are string values, so a hit is exact by definition.
 * The bytes are copied into chunks of {@link CACHE_CHUNK_BYTES} (a copy of
 * its own per string would cost an allocation each); a string's value is a
 * view of its bytes there.
 *
 * @type {Map<string, Uint8Array>}
 */
const encodedStrings = new Map();
const CACHE_MAX_UNITS = 16383;
const CACHE_MAX_BYTES = 8 * 1024 * 1024;
const CACHE_CHUNK_BYTES = 1024 * 1024;
let cachedBytes = 0;
let chunk = new Uint8Array(0);
let chunkUsed = 0;

/** Empties the cache of encoded strings (benchmarks measure the cold path with it). */
export function forgetEncodedStrings() {
  encodedStrings.clear();
  cachedBytes = 0;
  chunkUsed = 0; // the views into the chunk went with the map
}

/** @param {string} s @param {Uint8Array} bytes @param {number} start @param {number} n */
function remember(s, bytes, start, n) {
  if (cachedBytes + n > CACHE_MAX_BYTES) forgetEncodedStrings();
  if (chunkUsed + n > chunk.length) {
    chunk = new Uint8Array(Math.max(CACHE_CHUNK_BYTES, n));
    chunkUsed = 0;
  }
  const view = chunk.subarray(chunkUsed, chunkUsed + n);
  view.set(bytes.subarray(start, start + n));
  chunkUsed += n;
  encodedStrings.set(s, view);
  cachedBytes += n;
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
let holdsReplacement = holdsReplacementScan;

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

// ---- responses ----

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

/** UTF-8 decoding of a long string: TextDecoder without `ignoreBOM` would
 * drop a leading U+FEFF (a lost code point); this one keeps it. */
const textDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** @type {(bytes: Uint8Array, start: number, end: number) => string} */
let decodeUtf8Long = (bytes, start, end) => textDecoder.decode(bytes.subarray(start, end));

/**
 * Node's entry point hands its Buffer here: Buffer#toString("utf8") is about
 * a third faster than TextDecoder there, and keeps a U+FEFF too.
 *
 * @param {any} Buffer
 */
export function useNodeBuffer(Buffer) {
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
let compareView = (u8) => u8;

/**
 * Whether `n` bytes of `a` from `aStart` equal those of `b` from `bStart`
 * (both made by {@link compareView}).
 * @type {(a: any, aStart: number, b: any, bStart: number, n: number) => boolean}
 */
let bytesEqual = (a, aStart, b, bStart, n) => {
  for (let i = 0; i < n; i++) if (a[aStart + i] !== b[bStart + i]) return false;
  return true;
};

/** Short strings met again and again (keys, roles, "text"): decoded once. */
const SHORT_CACHE_BYTES = 16;
/** @type {{bytes: Uint8Array, s: string}[][]} */
const shortCache = Array.from({ length: SHORT_CACHE_BYTES + 1 }, () => []);
const shortCacheNext = new Uint32Array(SHORT_CACHE_BYTES + 1);

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
   * @param {unknown} template the request's observation_template
   */
  constructor(bytes, strings, template) {
    this.bytes = compareView(bytes);
    /** @type {Map<number, number[]>} byte length → indices into strings */
    this.byLength = new Map();
    for (let i = 0; i < strings.length; i += 3) {
      const list = this.byLength.get(strings[i + 2]);
      if (list) list.push(i);
      else this.byLength.set(strings[i + 2], [i]);
    }
    this.strings = strings;
    /** @type {Map<number, number>} byte length → where the last match was */
    this.cursor = new Map();
    /** Bytes around `{observation}` in the rendered template, when it is plain. */
    this.around = null;
    if (typeof template === "string") {
      const at = template.indexOf("{observation}");
      if (at >= 0) {
        const literal = (t) => (/[{}]/.test(t.replace(/\{\{|\}\}/g, "")) ? null : t.replace(/\{\{/g, "{").replace(/\}\}/g, "}"));
        const pre = literal(template.slice(0, at));
        const suf = literal(template.slice(at + "{observation}".length));
        if (pre !== null && suf !== null && (pre || suf)) this.around = [wtf8Length(pre), wtf8Length(suf)];
      }
    }
  }

  /**
   * A request string whose bytes equal `n` bytes of `resp` from `start`.
   * @param {Uint8Array} resp @param {number} start @param {number} n
   * @returns {string | undefined}
   */
  find(resp, start, n) {
    // resp: the response bytes as compareView made them
    const list = this.byLength.get(n);
    if (list === undefined) return undefined;
    const strings = this.strings;
    const from = this.cursor.get(n) ?? 0;
    // The response mostly follows the request's order: try from the last
    // match on, a few candidates at most.
    for (let k = 0; k < list.length && k < 4; k++) {
      const j = (from + k) % list.length;
      const i = list[j];
      if (bytesEqual(resp, start, this.bytes, strings[i + 1], n)) {
        this.cursor.set(n, j + 1);
        return strings[i];
      }
    }
    return undefined;
  }
}

const NO_STRINGS = new RequestStrings(new Uint8Array(0), [], undefined);

/** Strings up to this many bytes are decoded in JavaScript. */
const SHORT_UTF8 = 32;
const units = new Uint16Array(SHORT_UTF8);

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
    this.bytes = new Uint8Array(0);
    /** @type {DataView} */
    this.view = new DataView(this.bytes.buffer);
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
      this.bytes = new Uint8Array(0);
      this.view = new DataView(this.bytes.buffer);
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
    if (n >= 64 && n <= this.maxStringUnits) {
      const found = source.find(this.compareBytes, start, n);
      if (found !== undefined) return found;
      const around = source.around;
      if (around !== null && n > around[0] + around[1]) {
        const [pre, suf] = around;
        const mid = source.find(this.compareBytes, start + pre, n - pre - suf);
        if (mid !== undefined)
          return (
            (pre <= SHORT_CACHE_BYTES ? this.cachedShort(start, pre) : this.short(start, pre)) +
            mid +
            (suf <= SHORT_CACHE_BYTES ? this.cachedShort(end - suf, suf) : this.short(end - suf, suf))
          );
      }
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

/** Every error code of the wire format (docs/SPEC.md §6), in its order. */
export { ERROR_CODES };

/**
 * The error of every failed assembly: `code` is one of the wire codes of docs/SPEC.md
 * §6 (`malformed_request`, `invalid_utf8`, `invalid_template`, …, `internal`),
 * `path` names the offending value (`steps[3].observation`; empty for the whole
 * request) and `message` is the core's message, unchanged. `offset` is the
 * code-point offset of an `invalid_template` error in its template (from the
 * wire's `offset` key; undefined when the response has none). `detail` is
 * what the host knows beyond the message of an `internal` error (the engine's
 * trap, the end of the module's stderr); never part of the message, so the
 * message is the same on every host and every run.
 */
export class AssemblyError extends Error {
  /**
   * @param {string} code
   * @param {string} path
   * @param {string} message
   * @param {{offset?: number, detail?: string}} [options]
   */
  constructor(code, path, message, options = {}) {
    super(message);
    this.name = "AssemblyError";
    /** @type {string} */
    this.code = code;
    /** @type {string} */
    this.path = path;
    /** @type {number | undefined} */
    this.offset = options.offset;
    /** @type {string | undefined} */
    this.detail = options.detail;
  }

  toString() {
    return `AssemblyError [${this.code}${this.path ? " at " + this.path : ""}]: ${this.message}`;
  }
}
