/**
 * @polyloop/assembly for Node (≥ 20): compiles the packaged assembly.wasm once per process and returns an
 * {@link Assembler}.
 * @module
 */

// First: starts compiling the packaged module while the rest is evaluated.
import { DEFAULT_WASM_URL, compileModule, dropEarlyCompile } from "./node-module.js";
import { availableParallelism } from "node:os";
import { Assembler } from "./assembler.js";
import { poolOptions } from "./instance.js";
import { useNodeBuffer } from "./strings.js";

export { DEFAULT_WASM_URL, compileModule } from "./node-module.js";
export { Assembler, MAX_REQUEST_BYTES, INTERNAL_MESSAGES, ERROR_CODES } from "./assembler.js";
export { Prompt, chatMessages } from "./prompt.js";
export { AssemblyError } from "./errors.js";
export { INVISIBLE_RANGES, MAX_STRING_UNITS } from "./consts.js";
export { decodeResponse as decodeMsgpack } from "./decode.js";
export { version, moduleSha256 } from "./version.js";

useNodeBuffer(Buffer);

/** Loads the assembler (index.d.ts). @param {import("./index.js").AssemblerOptions} [options] @returns {Promise<Assembler>} */
export async function loadAssembler(options = {}) {
  const o = poolOptions({ maxInstances: availableParallelism(), ...options });
  if (options.module) dropEarlyCompile();
  const module =
    options.module ?? (await compileModule(options.wasm ?? options.url ?? DEFAULT_WASM_URL, { memoryLimitBytes: o.memoryLimitBytes }));
  return new Assembler(module, { ...options, ...o }).warm();
}
