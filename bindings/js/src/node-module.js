/**
 * Compiling assembly.wasm in Node, once per process. node.js imports this first, so the packaged module
 * compiles (on V8's background threads) while the rest of the binding is evaluated.
 * @module
 */

import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { DEFAULT_MEMORY_LIMIT_BYTES } from "./consts.js";
import { DEFAULT_WASM_URL, compileOnce, forgetCompile, limitModuleMemory } from "./instance.js";

/** The compile started at import, and whether anyone asked for it. */
const EARLY = `${DEFAULT_MEMORY_LIMIT_BYTES} ${DEFAULT_WASM_URL}`;
let earlyClaimed = false;

/** A view of a file's bytes, not a copy (copying the module would cost start-up time). */
const view = (bytes) => new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** Compiles the module at `source`, a file path or file: URL, once per process and memory limit (index.d.ts). */
export function compileModule(source = DEFAULT_WASM_URL, options = {}) {
  const limit = options.memoryLimitBytes ?? DEFAULT_MEMORY_LIMIT_BYTES;
  const key = `${limit} ${source}`;
  if (key === EARLY) earlyClaimed = true;
  return compileOnce(key, () =>
    readFile(source).then(
      (bytes) => WebAssembly.compile(limitModuleMemory(view(bytes), limit)),
      (e) => {
        throw new Error(
          `cannot read the assembly module at ${source} (${e.code ?? e.message}); ` +
            "an installed package ships it beside src/; a checkout must run `make js.wasm` (or `make dist` for a package) first",
        );
      },
    ),
  );
}

/** Lets the compile started at import go if no one asked for it (loadAssembler({module}) in a worker). */
export function dropEarlyCompile() {
  if (!earlyClaimed) forgetCompile(EARLY);
  earlyClaimed = true;
}

// The packaged module's compile for the default limit, started now; read synchronously (an asynchronous read would wait).
try {
  const bytes = readFileSync(DEFAULT_WASM_URL);
  compileOnce(EARLY, () => WebAssembly.compile(view(bytes)));
} catch {
  // no packaged module: compileModule says why when it is asked for
}
