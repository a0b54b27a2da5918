/**
 * @polyloop/assembly for browsers (and any host with fetch): fetches
 * assembly.wasm with streaming compilation, once per page, and returns an
 * {@link Assembler}.
 *
 * @module
 */

import { Assembler } from "./assembler.js";

export { Assembler, Prompt, MAX_REQUEST_BYTES } from "./assembler.js";
export { AssemblyError, ERROR_CODES } from "./wire.js";

/** Where the module is fetched from by default: beside the package root. */
export const DEFAULT_WASM_URL = new URL("../assembly.wasm", import.meta.url);

/** @type {Map<string, Promise<WebAssembly.Module>>} */
const compiled = new Map();

/**
 * Fetches and compiles the module at `url` once per page. Uses
 * WebAssembly.compileStreaming when the server sends `application/wasm`, and
 * compiles the downloaded bytes otherwise.
 *
 * @param {string | URL} url
 * @returns {Promise<WebAssembly.Module>}
 */
export function compileModule(url = DEFAULT_WASM_URL) {
  const key = new URL(url, globalThis.location?.href).href;
  let p = compiled.get(key);
  if (!p) {
    p = (async () => {
      const resp = await fetch(key);
      if (!resp.ok) throw new Error(`cannot fetch the assembly module at ${key}: HTTP ${resp.status}; pass loadAssembler({url}) where your server serves assembly.wasm`);
      const type = resp.headers.get("content-type") ?? "";
      if (typeof WebAssembly.compileStreaming === "function" && type.split(";")[0].trim() === "application/wasm") {
        return WebAssembly.compileStreaming(resp);
      }
      return WebAssembly.compile(await resp.arrayBuffer());
    })();
    p.catch(() => compiled.delete(key));
    compiled.set(key, p);
  }
  return p;
}

/**
 * Loads the assembler.
 *
 * @param {import("./index.js").AssemblerOptions} [options]
 *   `url`: where assembly.wasm is served (default: beside the package);
 *   `module`: an already compiled WebAssembly.Module (for workers);
 *   `poolSize`, `retireAboveBytes`: see README.
 * @returns {Promise<Assembler>}
 */
export async function loadAssembler(options = {}) {
  const module = options.module ?? (await compileModule(options.url ?? DEFAULT_WASM_URL));
  return new Assembler(module, options).warm();
}
