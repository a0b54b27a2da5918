/**
 * @polyloop/assembly for Node (≥ 20): loads the packaged assembly.wasm from
 * beside this package, compiles it once per process and returns an
 * {@link Assembler}.
 *
 * @module
 */

import { readFile } from "node:fs/promises";
import { Assembler } from "./assembler.js";

export { Assembler, Prompt, MAX_REQUEST_BYTES } from "./assembler.js";
export { AssemblyError, ERROR_CODES } from "./wire.js";

/** The module packaged with this binding. */
export const DEFAULT_WASM_URL = new URL("../assembly.wasm", import.meta.url);

/** @type {Map<string, Promise<WebAssembly.Module>>} */
const compiled = new Map();

/**
 * Compiles the module at `source` once per process (later calls with the same
 * source share the compiled module).
 *
 * @param {string | URL} source a file path or file: URL
 * @returns {Promise<WebAssembly.Module>}
 */
export function compileModule(source = DEFAULT_WASM_URL) {
  const key = String(source);
  let p = compiled.get(key);
  if (!p) {
    p = readFile(source).then(
      (bytes) => WebAssembly.compile(bytes),
      (e) => {
        throw new Error(
          `cannot read the assembly module at ${key} (${e.code ?? e.message}); ` +
            "a checkout must run `make js.wasm` (or `make wasm`) first; an installed package ships it",
        );
      },
    );
    p.catch(() => compiled.delete(key));
    compiled.set(key, p);
  }
  return p;
}

/**
 * Loads the assembler.
 *
 * @param {import("./index.js").AssemblerOptions & {wasm?: string | URL}} [options]
 *   `wasm`: a path or file: URL of assembly.wasm (default: the packaged one);
 *   `module`: an already compiled WebAssembly.Module (for worker threads);
 *   `poolSize`, `retireAboveBytes`: see README.
 * @returns {Promise<Assembler>}
 */
export async function loadAssembler(options = {}) {
  const module = options.module ?? (await compileModule(options.wasm ?? options.url ?? DEFAULT_WASM_URL));
  return new Assembler(module, options).warm();
}
