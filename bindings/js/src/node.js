/**
 * @polyloop/assembly for Node (≥ 20): loads the packaged assembly.wasm from
 * beside this package, compiles it once per process and returns an
 * {@link Assembler}.
 *
 * @module
 */

import { readFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { Assembler } from "./assembler.js";
import { DEFAULT_MEMORY_LIMIT_BYTES, limitModuleMemory, poolOptions } from "./instance.js";
import { useNodeBuffer } from "./strings.js";

export { Assembler, MAX_REQUEST_BYTES, INTERNAL_MESSAGES } from "./assembler.js";
export { Prompt } from "./prompt.js";
export { AssemblyError, ERROR_CODES } from "./errors.js";
export { version, moduleSha256 } from "./version.js";

useNodeBuffer(Buffer);

/** The module packaged with this binding. */
export const DEFAULT_WASM_URL = new URL("../assembly.wasm", import.meta.url);

/** @type {Map<string, Promise<WebAssembly.Module>>} */
const compiled = new Map();

/**
 * Compiles the module at `source` once per process (later calls with the same
 * source and memory limit share the compiled module).
 *
 * @param {string | URL} source a file path or file: URL
 * @param {{memoryLimitBytes?: number}} [options] a cap on each instance's
 *   linear memory (default 4 GiB, all a 32-bit module can address)
 * @returns {Promise<WebAssembly.Module>}
 */
export function compileModule(source = DEFAULT_WASM_URL, options = {}) {
  const limit = options.memoryLimitBytes ?? DEFAULT_MEMORY_LIMIT_BYTES;
  const key = `${limit} ${source}`;
  let p = compiled.get(key);
  if (!p) {
    p = readFile(source).then(
      // A view of the file's bytes, not a copy (4 MB, about 2 ms at start-up).
      (bytes) => WebAssembly.compile(limitModuleMemory(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), limit)),
      (e) => {
        throw new Error(
          `cannot read the assembly module at ${source} (${e.code ?? e.message}); ` +
            "an installed package ships it beside src/; a checkout must run `make js.wasm` (or `make dist` for a package) first",
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
 * @param {import("./index.js").AssemblerOptions} [options]
 *   `wasm` (or `url`): a path or file: URL of assembly.wasm (default: the
 *   packaged one); `module`: an already compiled WebAssembly.Module (for
 *   worker threads); `maxInstances`, `recycleAboveBytes`, `memoryLimitBytes`:
 *   see README.
 * @returns {Promise<Assembler>}
 */
export async function loadAssembler(options = {}) {
  const o = poolOptions({ maxInstances: availableParallelism(), ...options });
  const module =
    options.module ?? (await compileModule(options.wasm ?? options.url ?? DEFAULT_WASM_URL, { memoryLimitBytes: o.memoryLimitBytes }));
  return new Assembler(module, { ...options, ...o }).warm();
}
