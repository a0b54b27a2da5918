/**
 * @polyloop/assembly for Node (≥ 20): compiles the packaged assembly.wasm once per process and returns an
 * {@link Assembler}. The API is the browser entry's; compileModule (a file read) and loadAssembler are Node's own.
 * @module
 */

// First: starts compiling the packaged module while the rest is evaluated.
import { compileModule, dropEarlyCompile } from "./node-module.js";
import { availableParallelism } from "node:os";
import { Assembler } from "./assembler.js";
import { poolOptions } from "./instance.js";
import { useNodeBuffer } from "./strings.js";

export * from "./browser.js";
export { compileModule } from "./node-module.js";

useNodeBuffer(Buffer);

/** Loads the assembler (index.d.ts). @param {import("./index.js").AssemblerOptions} [options] @returns {Promise<Assembler>} */
export async function loadAssembler(options = {}) {
  const o = poolOptions({ maxInstances: availableParallelism(), ...options });
  if (options.module) dropEarlyCompile();
  const module = options.module ?? (await compileModule(options.wasm ?? options.url, { memoryLimitBytes: o.memoryLimitBytes }));
  return new Assembler(module, { ...options, ...o }).warm();
}
