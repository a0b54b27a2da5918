/**
 * Reading and compiling the packaged assembly.wasm in Node, once per process.
 * node.js imports this module before anything else, so that the compile of
 * the packaged module starts while the rest of the binding and its
 * dependencies are still being evaluated (V8 decodes and validates the module
 * on background threads), not after.
 *
 * @module
 */

import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { DEFAULT_MEMORY_LIMIT_BYTES, limitModuleMemory } from "./instance.js";

/** The module packaged with this binding. */
export const DEFAULT_WASM_URL = new URL("../assembly.wasm", import.meta.url);

/** @type {Map<string, Promise<WebAssembly.Module>>} */
const compiled = new Map();

/** The cache key of the compile started at import, and whether anyone has asked for it yet. */
const EARLY = `${DEFAULT_MEMORY_LIMIT_BYTES} ${DEFAULT_WASM_URL}`;
let earlyClaimed = false;

/** A view of a file's bytes, not a copy (4 MB, about 2 ms at start-up). */
const view = (bytes) => new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);

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
  if (key === EARLY) earlyClaimed = true;
  let p = compiled.get(key);
  if (!p) {
    p = readFile(source).then(
      (bytes) => WebAssembly.compile(limitModuleMemory(view(bytes), limit)),
      (e) => {
        throw new Error(
          `cannot read the assembly module at ${source} (${e.code ?? e.message}); ` +
            "an installed package ships it beside src/; a checkout must run `make js.wasm` (or `make dist` for a package) first",
        );
      },
    );
    remember(key, p);
  }
  return p;
}

/** @param {string} key @param {Promise<WebAssembly.Module>} p */
function remember(key, p) {
  p.catch(() => compiled.delete(key));
  compiled.set(key, p);
}

/**
 * Lets the compile started at import go (to the garbage collector) if no one
 * asked for it: loadAssembler({module}) calls this, as a worker thread handed
 * the compiled module does.
 */
export function dropEarlyCompile() {
  if (!earlyClaimed) compiled.delete(EARLY);
  earlyClaimed = true;
}

/**
 * Starts compiling the packaged module for the default memory limit, which
 * is what loadAssembler() asks for. The file is read synchronously: an
 * asynchronous read would not progress until the synchronous evaluation of
 * the rest of the binding is over. A file that cannot be read or compiled is
 * left to compileModule, which reads it again and says why.
 */
function compileEarly() {
  let bytes;
  try {
    bytes = readFileSync(DEFAULT_WASM_URL);
  } catch {
    return;
  }
  remember(EARLY, WebAssembly.compile(view(bytes)));
}

compileEarly();
