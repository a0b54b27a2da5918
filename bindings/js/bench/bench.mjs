#!/usr/bin/env node
// Node end to end for the tiny, typical (20-step ReAct) and 1 MB requests of
// bench/requests.mjs, split into encode / wasm / decode.
// One run: `make bench.js` (or `node bench/bench.mjs`). Prints one table.
// The 1 MB request comes twice: mixed UTF-8 text (about 15% non-ASCII
// characters) and ASCII only.
//
// - encode: JavaScript request object → msgpack bytes (the binding's encoder)
// - wasm:   copy in + call + copy out (one export call, one module instance)
// - decode: response bytes → JavaScript object
// - e2e:    assembler.assemble(object), all of the above plus error checks
// Times are medians of N iterations after a warm-up; MB/s is request bytes
// per second (MB = 10^6 bytes). addStep is one incremental step on a prompt
// that already holds the request.

import { loadAssembler } from "../src/node.js";
import { CALL_ASSEMBLE } from "../src/consts.js";
import { sharedRequestEncoder } from "../src/encode.js";
import { decodeResponse } from "../src/decode.js";
import { tinyRequest, typicalRequest, largeRequest, largeAsciiRequest } from "./requests.mjs";

// `bench.mjs --requests DIR --json PATH` is the machine-readable mode of
// `make bench` (tools/benchreport): the shared request files, raw samples.
if (process.argv.includes("--json")) {
  const { jsonMain } = await import("./bench-json.mjs");
  await jsonMain(process.argv.slice(2));
  process.exit(0);
}

const asm = await loadAssembler();

function median(f, n) {
  const t = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    f();
    t[i] = performance.now() - t0;
  }
  t.sort();
  return t[n >> 1];
}

const rows = [];
for (const [name, make, n] of [
  ["tiny", tinyRequest, 3000],
  ["typical (20-step ReAct)", typicalRequest, 400],
  ["1 MB (mixed UTF-8)", largeRequest, 40],
  ["1 MB (ASCII)", largeAsciiRequest, 40],
]) {
  const req = make();
  const reqBytes = sharedRequestEncoder.encodeShared(req).slice();
  const inst = asm.pool.acquire();
  const respBytes = inst.invoke(reqBytes, CALL_ASSEMBLE).slice();
  asm.pool.release(inst);
  const resp = decodeResponse(respBytes);
  if (!resp.ok) throw new Error(`${name}: ${JSON.stringify(resp.error)}`);
  // Warm-up.
  for (let i = 0; i < Math.min(n, 30); i++) asm.assemble(req);

  const enc = median(() => sharedRequestEncoder.encodeShared(req), n);
  const wasm = median(() => {
    const i = asm.pool.acquire();
    i.invoke(reqBytes, CALL_ASSEMBLE).slice();
    asm.pool.release(i);
  }, n);
  const dec = median(() => decodeResponse(respBytes), n);
  const e2e = median(() => asm.assemble(req), n);
  const wire = median(() => asm.assembleBytes(reqBytes), n);
  const p = asm.prompt(req);
  const step = median(() => p.addStep("Thought: next.\nAction: read_page(1)", "x".repeat(500)), Math.min(n, 200));

  const mbps = (ms) => (reqBytes.length / 1e6 / (ms / 1e3)).toFixed(0);
  rows.push({
    request: name,
    "request KB": (reqBytes.length / 1024).toFixed(1),
    "response KB": (respBytes.length / 1024).toFixed(1),
    "encode ms": enc.toFixed(3),
    "wasm ms": wasm.toFixed(3),
    "decode ms": dec.toFixed(3),
    "e2e ms": e2e.toFixed(3),
    "e2e MB/s": mbps(e2e),
    "assembleBytes MB/s": mbps(wire),
    "addStep ms": step.toFixed(3),
  });
}

console.log(`@polyloop/assembly bench — Node ${process.version}, ${process.arch}; medians`);
console.table(rows);
