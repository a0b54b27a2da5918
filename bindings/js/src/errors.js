/** The error type of the binding (docs/SPEC.md §6 and §7.5). @module */

/** The error of every failed call: the wire's code, path, message and offset, and for `internal` the host's `detail` (index.d.ts). */
export class AssemblyError extends Error {
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
