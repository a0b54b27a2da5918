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

import { Encoder, Decoder } from "@msgpack/msgpack";

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
const isWellFormed =
  typeof String.prototype.isWellFormed === "function"
    ? (s) => s.isWellFormed()
    : (s) => !LONE_SURROGATE.test(s);

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

/** @param {object} o */
function isPlainObject(o) {
  const proto = Object.getPrototypeOf(o);
  if (proto === null || proto === Object.prototype) return true;
  // A plain object of another realm (an iframe, a vm context).
  return Object.getPrototypeOf(proto) === null && Object.prototype.toString.call(o) === "[object Object]";
}

/**
 * The request encoder: @msgpack/msgpack's Encoder with the JavaScript value
 * mapping of this module (see the table above) and a faster path for long
 * strings.
 */
export class RequestEncoder extends Encoder {
  constructor() {
    super({ initialBufferSize: 64 * 1024, ignoreUndefined: true, maxDepth: Infinity });
  }

  /** A fresh encoder of this class, for a re-entrant call (a getter of the
   * request that encodes another request).
   * @override */
  clone() {
    return new RequestEncoder();
  }

  /**
   * Encodes `value` and returns a view of the encoder's own buffer, valid
   * until the next call (copy it if you keep it).
   *
   * @param {unknown} value
   * @returns {Uint8Array}
   */
  encodeShared(value) {
    return this.encodeSharedRef(value);
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
   * well-formed ones through TextEncoder.encodeInto straight into the buffer;
   * long ones with a lone surrogate through {@link encodeWtf8Into}, because
   * TextEncoder would replace the surrogate with U+FFFD.
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
    const max = 3 * n;
    this.ensureBufferSizeToWrite(5 + max);
    const guess = strHeaderSize(max);
    const start = this.pos + guess;
    const written = isWellFormed(s)
      ? textEncoder.encodeInto(s, this.bytes.subarray(start, start + max)).written
      : encodeWtf8Into(s, this.bytes, start);
    const real = strHeaderSize(written);
    if (real !== guess) this.bytes.copyWithin(this.pos + real, start, start + written);
    this.writeStringHeader(written);
    this.pos += written;
  }
}

const sharedEncoder = new RequestEncoder();
const sharedDecoder = new Decoder();

/**
 * Encodes a request value by the mapping of this module. The returned view
 * belongs to a shared buffer that the next encode overwrites.
 *
 * @param {unknown} value
 * @returns {Uint8Array}
 */
export function encodeRequestShared(value) {
  return sharedEncoder.encodeShared(value);
}

/**
 * Encodes a request value into fresh bytes.
 *
 * @param {unknown} value
 * @returns {Uint8Array}
 */
export function encodeRequest(value) {
  return sharedEncoder.encodeShared(value).slice();
}

/**
 * Decodes response bytes (canonical msgpack from the core).
 *
 * @param {Uint8Array} bytes
 * @returns {any}
 */
export function decodeResponse(bytes) {
  return sharedDecoder.decode(bytes);
}

/**
 * Every error code of the wire format (SPEC §6), in its order.
 * @type {readonly string[]}
 */
export const ERROR_CODES = Object.freeze([
  "malformed_request",
  "unsupported_version",
  "unknown_field",
  "missing_field",
  "duplicate_key",
  "invalid_utf8",
  "invalid_role",
  "unknown_block_type",
  "invalid_entry_id",
  "invalid_budget",
  "invalid_template",
  "too_large",
  "internal",
]);

/**
 * The error of every failed assembly: `code` is one of the wire codes of SPEC
 * §6 (`malformed_request`, `invalid_utf8`, `invalid_template`, …, `internal`),
 * `path` names the offending value (`steps[3].observation`; empty for the whole
 * request) and `message` is the core's message, unchanged.
 */
export class AssemblyError extends Error {
  /**
   * @param {string} code
   * @param {string} path
   * @param {string} message
   */
  constructor(code, path, message) {
    super(message);
    this.name = "AssemblyError";
    /** @type {string} */
    this.code = code;
    /** @type {string} */
    this.path = path;
  }

  toString() {
    return `AssemblyError [${this.code}${this.path ? " at " + this.path : ""}]: ${this.message}`;
  }
}
