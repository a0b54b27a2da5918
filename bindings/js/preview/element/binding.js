/**
 * What the preview needs from the binding that its public API (the package's
 * "." export, src/index.d.ts) does not offer yet, in one file, so that the
 * rest of the preview imports only `@polyloop/assembly`. Everything here
 * reaches into the binding's private modules and is to go (docs/PREVIEW.md,
 * "The binding's API"): the view call and the decoding become the binding's
 * generic call (`asm.call("assemble_view_json", text)`: the response and
 * its view, or the AssemblyError it carries), the constants its exports, and
 * a side of JSON text in bytes the core's (a bin side that is no msgpack map
 * or array is JSON text, as the command-line tool reads a file).
 *
 * @module
 */

import { AssemblyError, INTERNAL_MESSAGES } from "@polyloop/assembly";
import { CALL_ASSEMBLE_VIEW, CALL_ASSEMBLE_VIEW_JSON, INVISIBLE_RANGES, MAX_STRING_UNITS } from "../../src/consts.js";
import { decodeResponse } from "../../src/decode.js";
import { encodeRequest } from "../../src/encode.js";
import { encodeWtf8Into } from "../../src/strings.js";

export { INVISIBLE_RANGES, MAX_STRING_UNITS };

/**
 * The module's `assemble_view_json` (a string or the bytes of JSON text) or
 * `assemble_view` (a request object or msgpack bytes) through the binding's
 * call path (pool, traps): the response bytes (a copy) and the core's view
 * of them (docs/SPEC.md §7.8).
 *
 * @param {any} asm an Assembler
 * @param {"assemble_view" | "assemble_view_json"} name
 * @param {unknown} input
 * @returns {{response: Uint8Array, view: any}}
 * @throws {import("@polyloop/assembly").AssemblyError} the error response's, or `internal`
 */
export function callView(asm, name, input) {
  const json = name === "assemble_view_json";
  const bytes = typeof input === "string" ? wtf8(input) : input instanceof Uint8Array ? input : encodeRequest(input);
  const answer = asm.run(bytes, json ? CALL_ASSEMBLE_VIEW_JSON : CALL_ASSEMBLE_VIEW, (/** @type {Uint8Array} */ r) => r.slice());
  const n = answer.length < 4 ? answer.length : new DataView(answer.buffer, answer.byteOffset, 4).getUint32(0, true);
  const response = answer.subarray(4, 4 + n);
  let view = null;
  try {
    if (4 + n <= answer.length) view = JSON.parse(new TextDecoder().decode(answer.subarray(4 + n)));
  } catch {
    view = null;
  }
  if (view === null) {
    asm.read(response); // throws the AssemblyError an error response carries
    throw new AssemblyError("internal", "", INTERNAL_MESSAGES.notAResponse);
  }
  return { response, view };
}

/** The request or response in msgpack `bytes` as a JavaScript value (bigint beyond 2^53). @param {Uint8Array} bytes */
export const decodeMsgpack = (bytes) => decodeResponse(bytes);

/** @param {string} s UTF-8 bytes of s, a lone surrogate as WTF-8 (the module rejects it, as every host does). */
function wtf8(s) {
  const out = new Uint8Array(s.length * 3);
  return out.subarray(0, encodeWtf8Into(s, out, 0));
}

/**
 * A compare side given as the bytes of JSON text, judged as they are (bytes
 * that are not UTF-8 get the module's verdict, as the CLI gives): the msgpack
 * str of exactly those bytes.
 * @param {Uint8Array} bytes
 */
export function jsonBytesSide(bytes) {
  const n = bytes.length;
  const head =
    n < 32
      ? [0xa0 | n]
      : n < 256
        ? [0xd9, n]
        : n < 65536
          ? [0xda, n >> 8, n & 255]
          : [0xdb, n >>> 24, (n >> 16) & 255, (n >> 8) & 255, n & 255];
  const out = new Uint8Array(head.length + n);
  out.set(head);
  out.set(bytes, head.length);
  return out;
}

/**
 * The byte a JSON syntax error names (`invalid JSON at byte N: …`, the
 * core's message), or null.
 * @param {{code: string, path: string, message: string}} err
 */
export function syntaxByte(err) {
  const m = /^invalid JSON at byte (\d+)/.exec(err.message);
  return err.code === "malformed_request" && err.path === "" && m ? Number(m[1]) : null;
}
