/** The error type of the binding (docs/SPEC.md §6 and §7.5). @module */

/**
 * The error of every failed call (index.d.ts): the wire's `code`, `path`, `message` and `offset` (docs/SPEC.md §6), and for `internal`
 * the `detail` the host knows (the engine's trap, the module's stderr), never in the message.
 */
export class AssemblyError extends Error {
  /** @param {string} code @param {string} path @param {string} message @param {{offset?: number, detail?: string}} [options] */
  constructor(code, path, message, options = {}) {
    super(message);
    this.name = "AssemblyError";
    this.code = code;
    this.path = path;
    this.offset = options.offset;
    this.detail = options.detail;
  }

  toString() {
    return `AssemblyError [${this.code}${this.path ? " at " + this.path : ""}]: ${this.message}`;
  }
}
