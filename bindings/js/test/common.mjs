/**
 * Shared helpers of the Node suite: the assembler (loaded once per test file
 * through the package's own name, so the exports map is exercised) and small
 * decoding helpers (the shared vectors: vectorsets.mjs).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { Decoder } from "@msgpack/msgpack";
import { loadAssembler } from "@polyloop/assembly";

export const REPO = fileURLToPath(new URL("../../../", import.meta.url));

/** @type {Promise<import("../src/index.js").Assembler> | undefined} */
let loading;
/** The assembler shared by a test file. */
export function assembler() {
  loading ??= loadAssembler();
  return loading;
}

/**
 * The library's decoder with Node's own UTF-8 decoding of strings: the
 * library's TextDecoder drops a leading U+FEFF (a lost code point),
 * which made this oracle agree with the binding's old decoder.
 */
class OracleDecoder extends Decoder {
  decodeUtf8String(byteLength, headerOffset) {
    const offset = this.pos + headerOffset;
    if (this.bytes.byteLength < offset + byteLength) throw new RangeError("truncated msgpack str");
    const s = Buffer.from(this.bytes.buffer, this.bytes.byteOffset + offset, byteLength).toString("utf8");
    this.pos += headerOffset + byteLength;
    return s;
  }
}

const decoder = new OracleDecoder();
/** Decodes response bytes with the library decoder (strings by Node's Buffer). */
export function decode(bytes) {
  return decoder.decode(bytes);
}

/** Compares strings by Unicode code point (the order docs/SPEC.md §3 asks for),
 * written without any sort of the engine: code point by code point. */
export function compareCodePoints(a, b) {
  const x = [...a].map((c) => c.codePointAt(0));
  const y = [...b].map((c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** The error of a call, or null if it did not throw. */
export function errorOf(f) {
  try {
    f();
    return null;
  } catch (e) {
    return e;
  }
}

export const hex = (b) => Buffer.from(b).toString("hex");
