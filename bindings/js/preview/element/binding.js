/**
 * What the preview needs from the binding that its public API (the package's
 * "." export, src/index.d.ts) does not offer yet, in one file, so that the
 * rest of the preview imports only `@polyloop/assembly`. Everything here is
 * to go (docs/PREVIEW.md, "The binding's API"): the two constants and the
 * msgpack decoder once the binding exports them, the JSON-bytes side and the
 * syntax error's byte once the core gives them.
 *
 * @module
 */

import { INVISIBLE_RANGES, MAX_STRING_UNITS } from "../../src/consts.js";
import { decodeResponse } from "../../src/decode.js";

export { INVISIBLE_RANGES, MAX_STRING_UNITS };

/**
 * msgpack `bytes` (a request the module accepted, or a response) as a
 * JavaScript value, every code point kept, bigint beyond 2^53: the
 * binding's decoder.
 * @param {Uint8Array} bytes
 */
export const decodeMsgpack = (bytes) => decodeResponse(bytes);

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
