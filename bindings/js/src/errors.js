/**
 * The error type of the binding (docs/SPEC.md §6 and §7.5).
 *
 * @module
 */

import { ERROR_CODES } from "./consts.js";

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
 * trap, the first 4 KiB of the module's stderr); never part of the message, so the
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
