/**
 * What the preview takes from the binding beyond the Assembler, all from its public API ("@polyloop/assembly"):
 * the generated constants, its msgpack decoder, and two helpers the core made one-liners.
 *
 * @module
 */

export { INVISIBLE_RANGES, MAX_STRING_UNITS, PROVIDERS, decodeMsgpack } from "@polyloop/assembly";

/**
 * A compare side given as the bytes of JSON text: the bytes as they are (the core reads bytes that are no msgpack value as JSON
 * text, as the command-line tool reads a file, docs/SPEC.md §7.9).
 * @param {Uint8Array} bytes
 */
export const jsonBytesSide = (bytes) => bytes;

/**
 * The byte a JSON syntax error names, from the error's location (`at`, docs/SPEC.md §7.8), or null.
 * @param {{at?: {byte: number | null}}} err
 */
export const syntaxByte = (err) => err.at?.byte ?? null;
