/**
 * @polyloop/assembly for browsers (and any host with fetch): fetches assembly.wasm with streaming
 * compilation, once per page, and returns an {@link Assembler}.
 * @module
 */

import { Assembler } from "./assembler.js";
import { DEFAULT_MEMORY_LIMIT_BYTES } from "./consts.js";
import { DEFAULT_WASM_URL, compileOnce, limitModuleMemory, poolOptions } from "./instance.js";

export { Assembler } from "./assembler.js";
export { Prompt, chatMessages } from "./prompt.js";
export { CacheRun } from "./cache-run.js";
export { AssemblyError } from "./errors.js";
export { ERROR_CODES, INTERNAL_MESSAGES, INVISIBLE_RANGES, MAX_REQUEST_BYTES, MAX_STRING_UNITS, PROVIDERS } from "./consts.js";
export { decodeResponse as decodeMsgpack } from "./decode.js";
export { version, moduleSha256 } from "./version.js";
export { DEFAULT_WASM_URL } from "./instance.js";

/**
 * Fetches and compiles the module at `url` once per page and memory limit (index.d.ts):
 * streaming when the server sends `application/wasm` and no limit is asked for.
 */
export function compileModule(url = DEFAULT_WASM_URL, options = {}) {
  const limit = options.memoryLimitBytes ?? DEFAULT_MEMORY_LIMIT_BYTES;
  const href = new URL(url, globalThis.location?.href).href;
  return compileOnce(`${limit} ${href}`, async () => {
    const resp = await fetch(href);
    if (!resp.ok) {
      throw new Error(
        `cannot fetch the assembly module at ${href}: HTTP ${resp.status}; serve node_modules/@polyloop/assembly/assembly.wasm and pass its URL as loadAssembler({url}) (see the README's bundler section)`,
      );
    }
    const type = resp.headers.get("content-type") ?? "";
    if (
      limit >= DEFAULT_MEMORY_LIMIT_BYTES &&
      typeof WebAssembly.compileStreaming === "function" &&
      type.split(";")[0].trim() === "application/wasm"
    ) {
      return WebAssembly.compileStreaming(resp);
    }
    return WebAssembly.compile(limitModuleMemory(new Uint8Array(await resp.arrayBuffer()), limit));
  });
}

/** Loads the assembler (index.d.ts). @param {import("./index.js").AssemblerOptions} [options] @returns {Promise<Assembler>} */
export async function loadAssembler(options = {}) {
  const o = poolOptions(options);
  const module = options.module ?? (await compileModule(options.url ?? DEFAULT_WASM_URL, { memoryLimitBytes: o.memoryLimitBytes }));
  return new Assembler(module, { ...options, ...o }).warm();
}
