// Instances, concurrency and failures: many concurrent async callers, worker
// threads sharing the compiled module, a trap (out of memory inside the
// module) that fails one call and not the next, instance retirement, and the
// quiet WASI shim.

import test from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import { spawnSync } from "node:child_process";
import { AssemblyError, INTERNAL_MESSAGES, loadAssembler, MAX_REQUEST_BYTES } from "@polyloop/assembly";
import { assembler, decode, errorOf } from "./common.mjs";
import * as W from "./hand.mjs";
import { KEEP_BUFFER_BYTES, encodeRequest, sharedRequestEncoder } from "../src/encode.js";

const asm = await assembler();
const T = "Obs {observation}";

function requestFor(i) {
  return {
    observation_template: T,
    goal_messages: [{ role: "user", content: [{ type: "text", text: `task ${i} ` + "😀".repeat(i % 7) }] }],
    steps: Array.from({ length: i % 5 }, (_, k) => ({ raw_output: `r${i}.${k}`, observation: "o".repeat(k * 100 + i) })),
  };
}

/** What the response of requestFor(i) must hold, written from the request. */
function checkResponse(i, r) {
  const req = requestFor(i);
  assert.equal(r.messages[0].content[0].text, req.goal_messages[0].content[0].text);
  assert.equal(r.messages.length, 1 + 2 * req.steps.length);
  for (const [k, s] of req.steps.entries()) {
    assert.equal(r.messages[1 + 2 * k].content[0].text, s.raw_output);
    assert.equal(r.messages[2 + 2 * k].content[0].text, "Obs " + s.observation);
  }
}

test("many concurrent async callers each get their own answer", async () => {
  const created = asm.instancesCreated;
  const tick = () => new Promise((r) => setImmediate(r));
  const tasks = Array.from({ length: 300 }, async (_, i) => {
    await tick();
    const r = asm.assemble(requestFor(i));
    await tick();
    checkResponse(i, r);
    // Interleave incremental prompts of different tasks.
    const p = asm.prompt({ observation_template: T });
    for (let k = 0; k < 3; k++) {
      await tick();
      p.addStep(`t${i}s${k}`, `${i}`);
    }
    assert.deepEqual(
      p.messages.map((m) => m.content[0].text),
      [`t${i}s0`, `Obs ${i}`, `t${i}s1`, `Obs ${i}`, `t${i}s2`, `Obs ${i}`],
    );
    return i;
  });
  const done = await Promise.all(tasks);
  assert.equal(done.length, 300);
  // JavaScript runs each call to completion: one instance served them all.
  assert.equal(asm.instancesCreated, created);
  assert.equal(asm.pool.idle.length, 1);
});

test("a re-entrant call (a getter that assembles) is answered correctly", () => {
  const inner = requestFor(3);
  const outer = {
    observation_template: T,
    get goal_messages() {
      checkResponse(3, asm.assemble(inner));
      return [{ role: "user", content: [{ type: "text", text: "outer" }] }];
    },
  };
  assert.equal(asm.assemble(outer).messages[0].content[0].text, "outer");
});

test("maxInstances: one instance alive per Assembler, and re-entrant calls never wait, even at maxInstances 1 (docs/SPEC.md §7.4)", async () => {
  const a = await loadAssembler({ module: asm.module, maxInstances: 1 });
  const p = a.prompt({ observation_template: T });
  // Three levels of getters, each calling the assembler (an assemble of the
  // next level, an addStep) while the request holding it is being encoded.
  const nested = (depth) => ({
    observation_template: T,
    get goal_messages() {
      if (depth > 0) assert.equal(a.assemble(nested(depth - 1)).messages[0].content[0].text, `depth ${depth - 1}`);
      p.addStep(`d${depth}`, "o");
      return [{ role: "user", content: [{ type: "text", text: `depth ${depth}` }] }];
    },
  });
  assert.equal(a.assemble(nested(2)).messages[0].content[0].text, "depth 2");
  assert.deepEqual(
    p.messages.filter((m) => m.role === "assistant").map((m) => m.content[0].text),
    ["d0", "d1", "d2"],
  );
  assert.equal(a.instancesCreated, 1, "one instance served every call");
  const many = await loadAssembler({ module: asm.module, maxInstances: 8 });
  await Promise.all(Array.from({ length: 50 }, async (_, i) => checkResponse(i, many.assemble(requestFor(i)))));
  assert.equal(many.instancesCreated, 1, "a bound of 8 still keeps one alive");
});

test("a re-entrant call while a huge request is being encoded leaves the outer request whole", () => {
  const big = "b".repeat(9e6) + "é"; // the outer buffer passes 8 MiB before the getter runs
  const inner = { observation_template: T, steps: [{ raw_output: "x".repeat(100), observation: "y".repeat(100) }] };
  let innerResponse;
  const outer = {
    observation_template: T,
    steps: [{ raw_output: big, observation: "z".repeat(100) }],
    get goal_messages() {
      innerResponse = asm.assemble(inner);
      encodeRequest(inner);
      return [{ role: "user", content: [{ type: "text", text: "x".repeat(100) }] }];
    },
  };
  const r = asm.assemble(outer);
  assert.deepEqual(
    r.messages.map((m) => m.content[0].text),
    ["x".repeat(100), big, "Obs " + "z".repeat(100)],
  );
  assert.deepEqual(
    innerResponse.messages.map((m) => m.content[0].text),
    ["x".repeat(100), "Obs " + "y".repeat(100)],
  );
});

test("worker threads share the compiled module and answer byte for byte", async () => {
  const requests = Array.from({ length: 20 }, (_, i) => encodeRequest(requestFor(i)));
  const expected = requests.map((b) => asm.assembleBytes(b));
  const src = `
    const { parentPort, workerData } = require("node:worker_threads");
    import(workerData.pkg).then(async ({ loadAssembler }) => {
      const asm = await loadAssembler({ module: workerData.module });
      parentPort.postMessage(workerData.requests.map((b) => asm.assembleBytes(b)));
    });`;
  const pkg = new URL("../src/node.js", import.meta.url).href;
  const outs = await Promise.all(
    [0, 1].map(
      () =>
        new Promise((resolve, reject) => {
          const w = new Worker(src, { eval: true, workerData: { module: asm.module, requests, pkg } });
          w.once("message", (m) => {
            resolve(m);
            w.terminate();
          });
          w.once("error", reject);
        }),
    ),
  );
  for (const out of outs)
    assert.deepEqual(
      out.map((b) => Buffer.from(b).toString("hex")),
      expected.map((b) => Buffer.from(b).toString("hex")),
    );
});

test("out of memory inside the module: internal, the host-independent message, detail apart; the next call runs on a fresh instance", async () => {
  // memoryLimitBytes caps each instance's linear memory: a 20 MB request
  // cannot be allocated inside a 16 MiB instance, and the Go runtime dies.
  const a = await loadAssembler({ memoryLimitBytes: 16 * 1024 * 1024, maxInstances: 1 });
  const small = encodeRequest(requestFor(4));
  const before = a.assembleBytes(small);
  const created = a.instancesCreated;
  const huge = encodeRequest({ observation_template: T, steps: [{ raw_output: "x".repeat(20e6), observation: "" }] });
  const e = errorOf(() => a.assembleBytes(huge));
  assert.ok(e instanceof AssemblyError, String(e));
  assert.deepEqual([e.code, e.path, e.message], ["internal", "", INTERNAL_MESSAGES.outOfMemory]);
  assert.equal(e.message, "the assembly module ran out of memory; the instance was discarded and the next call gets a fresh one");
  assert.match(e.detail, /out of memory/, "the Go runtime's words are in detail");
  assert.doesNotMatch(e.message, /goroutine|0x[0-9a-f]{6}/);
  // The same request through assemble(): the same error.
  const e2 = errorOf(() => a.assemble(decode(huge)));
  assert.deepEqual([e2.code, e2.path, e2.message], ["internal", "", INTERNAL_MESSAGES.outOfMemory]);
  // The next call works, on a new instance, with the same bytes as before.
  assert.deepEqual(a.assembleBytes(small), before);
  assert.equal(a.instancesCreated, created + 2);
  checkResponse(4, a.assemble(requestFor(4)));
  // Without the cap the same request is fine.
  assert.equal(decode(asm.assembleBytes(huge)).ok, true);
});

test("memoryLimitBytes is checked, and 4 GiB (the default) leaves the module as it is", async () => {
  await assert.rejects(loadAssembler({ memoryLimitBytes: 1024 * 1024 }), /at least the module's initial memory/);
  await assert.rejects(loadAssembler({ memoryLimitBytes: 5 * 2 ** 30 }), TypeError);
  await assert.rejects(loadAssembler({ memoryLimitBytes: 1.5 }), TypeError);
  assert.equal(asm.options.memoryLimitBytes, 2 ** 32);
});

test("any other trap: internal with the trap message; the engine's words in detail", () => {
  const a = asm;
  const inst = a.pool.acquire();
  const real = inst.exports;
  inst.exports = {
    ...real,
    call: () => {
      throw new WebAssembly.RuntimeError("unreachable executed");
    },
  };
  a.pool.idle.push(inst);
  const created = a.instancesCreated;
  const e = errorOf(() => a.assemble(requestFor(2)));
  assert.deepEqual([e.code, e.path, e.message], ["internal", "", INTERNAL_MESSAGES.trapped]);
  assert.equal(e.message, "the assembly module trapped; the instance was discarded and the next call gets a fresh one");
  assert.match(e.detail, /RuntimeError: unreachable executed/);
  checkResponse(2, a.assemble(requestFor(2)));
  assert.equal(a.instancesCreated, created + 1);
  assert.ok(!a.pool.idle.includes(inst), "the broken instance is not reused");
});

test("out of memory is named however long the Go runtime's trace after it (the first STDERR_KEEP bytes are kept)", () => {
  const a = asm;
  const inst = a.pool.acquire();
  const real = inst.exports;
  const enc = new TextEncoder();
  inst.exports = {
    ...real,
    call: () => {
      // What the module's Go runtime writes on its stderr when it dies of
      // out of memory: why first, then ~20 KB of goroutine traces.
      inst.stderr.write(enc.encode("runtime: out of memory: cannot allocate 8192-byte block\nfatal error: out of memory\n\n"));
      for (let k = 0; k < 400; k++)
        inst.stderr.write(enc.encode(`goroutine ${k} [running]:\nmain.f(0x${k.toString(16)})\n\t/src/x.go:${k} +0x1f\n`));
      throw new WebAssembly.RuntimeError("unreachable executed");
    },
  };
  a.pool.idle.push(inst);
  const e = errorOf(() => a.assemble(requestFor(2)));
  assert.deepEqual([e.code, e.path, e.message], ["internal", "", INTERNAL_MESSAGES.outOfMemory]);
  assert.match(e.detail, /fatal error: out of memory/);
  assert.doesNotMatch(e.detail, /goroutine 399/, "the tail past the kept bytes is dropped");
  checkResponse(2, a.assemble(requestFor(2)));
});

test("bytes that are not a response: internal, its message, detail apart", () => {
  const a = asm;
  const inst = a.pool.acquire();
  const real = inst.exports;
  // The module answers 3 bytes of garbage (a view of its own memory: the
  // request buffer's first bytes).
  const ptr = real.buffer(0) >> 32n;
  inst.exports = { ...real, call: () => (ptr << 32n) | 3n };
  a.pool.idle.push(inst);
  const e = errorOf(() => a.assemble(requestFor(2)));
  assert.deepEqual([e.code, e.path, e.message], ["internal", "", INTERNAL_MESSAGES.notAResponse]);
  assert.match(e.detail, /3 bytes/);
  inst.exports = real;
});

test("a request over 1 GiB is the core's too_large, answered before anything is copied into the module", () => {
  const created = asm.instancesCreated;
  for (const size of [MAX_REQUEST_BYTES + 1, 2 ** 32]) {
    // Lazily zeroed memory, never touched.
    const r = asm.assembleBytes(new Uint8Array(size));
    const message = `the request is ${size} bytes, over the 1 GiB limit; split it into smaller requests`;
    // The core's bytes (core/check.go's message, core/encode.go encodeError), written by hand.
    assert.deepEqual(
      r,
      W.map(
        ["v", W.int(1)],
        ["ok", [0xc2]],
        ["error", W.map(["code", W.str("too_large")], ["message", W.str(message)], ["path", W.str("")])],
      ),
    );
  }
  assert.equal(asm.instancesCreated, created, "no instance was involved");
});

test(
  "assemble(object) of a request over 1 GiB: too_large with the exact size, the encoder stops writing at the limit",
  { skip: !process.env.POLYLOOP_HEAVY_TESTS && "set POLYLOOP_HEAVY_TESTS=1 (1.1 GB of memory; make test.limits)" },
  () => {
    // Two strings of 600 MB: the second is only counted. (Built from one
    // repeated character, so V8 holds them flat at one byte per character.)
    const big = "é".repeat(3e8); // 600,000,000 UTF-8 bytes
    const req = { observation_template: T, steps: [{ raw_output: big, observation: big }] };
    const e = errorOf(() => asm.assemble(req));
    const size = 1200000000 + encodeRequest({ observation_template: T, steps: [{ raw_output: "", observation: "" }] }).length + 2 * 4;
    assert.deepEqual(
      [e.code, e.path, e.message],
      ["too_large", "", `the request is ${size} bytes, over the 1 GiB limit; split it into smaller requests`],
    );
    assert.ok(sharedRequestEncoder.bytes.byteLength <= KEEP_BUFFER_BYTES, "the big buffer was dropped after the call");
  },
);

test("the encoder's buffer is given back after a huge request (never kept for the life of the process)", () => {
  const big = { observation_template: T, steps: [{ raw_output: "x".repeat(50e6), observation: "" }] };
  assert.equal(asm.assemble(big).messages[0].content[0].text.length, 50e6);
  assert.ok(sharedRequestEncoder.bytes.byteLength <= KEEP_BUFFER_BYTES, `${sharedRequestEncoder.bytes.byteLength} bytes kept`);
  for (let i = 0; i < 100; i++) asm.assemble(requestFor(i));
  assert.ok(sharedRequestEncoder.bytes.byteLength <= KEEP_BUFFER_BYTES);
  // A typical request keeps its buffer (no reallocation per call).
  const kept = sharedRequestEncoder.bytes;
  asm.assemble(requestFor(7));
  assert.equal(sharedRequestEncoder.bytes, kept);
});

test("instances whose memory grew past recycleAboveBytes are not reused", async () => {
  const a = await loadAssembler({ recycleAboveBytes: 1 });
  const n = a.instancesCreated;
  const b = encodeRequest(requestFor(2));
  const first = a.assembleBytes(b);
  assert.deepEqual(a.assembleBytes(b), first);
  assert.equal(a.instancesCreated, n + 1); // the warm one was retired after call 1
  const keep = await loadAssembler({ maxInstances: 1 });
  const m = keep.instancesCreated;
  for (let i = 0; i < 5; i++) keep.assembleBytes(b);
  assert.equal(keep.instancesCreated, m);
});

test("maxInstances is checked; the old option names say their new names", async () => {
  await assert.rejects(loadAssembler({ maxInstances: 0 }), TypeError);
  await assert.rejects(loadAssembler({ poolSize: 1 }), /renamed maxInstances/);
  await assert.rejects(loadAssembler({ retireAboveBytes: 1 }), /renamed recycleAboveBytes/);
});

test("the module prints nothing, even when it dies or the shim's debug log is on", () => {
  // A separate process, so that only the module's output could appear.
  const script = `
    import { loadAssembler } from "@polyloop/assembly";
    import { WASI } from "@bjorn3/browser_wasi_shim";
    // Another user of the shim turns its global debug log on, before and
    // while an instance is being made (between the imports and _initialize).
    new WASI([], [], []);
    const first = await loadAssembler({ maxInstances: 1 });
    const loading = loadAssembler({ module: first.module, maxInstances: 1 });
    new WASI([], [], []);
    const a = await loading;
    a.assemble({ observation_template: "{observation}", steps: [{ raw_output: "a", observation: "b" }] });
    const capped = await loadAssembler({ memoryLimitBytes: 16 * 1024 * 1024 });
    try { capped.assembleBytes(new Uint8Array(20e6)); process.exit(4); } catch (e) { if (e.code !== "internal") process.exit(3); }
    a.assemble({ observation_template: "{observation}" });`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: new URL("..", import.meta.url), encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr, "");
});

test('a request costs one export call (wasm/README.md "ABI"): call, and buffer only when the request outgrows the buffer', async () => {
  const a = await loadAssembler({ maxInstances: 1 });
  const inst = a.pool.acquire();
  const real = inst.exports;
  /** @type {string[]} */
  const calls = [];
  // Every export, each function counting its calls.
  inst.exports = Object.fromEntries(
    Object.entries(real).map(([name, v]) => [
      name,
      typeof v !== "function"
        ? v
        : (...args) => {
            calls.push(name);
            return v(...args);
          },
    ]),
  );
  a.pool.release(inst);
  const small = encodeRequest(requestFor(3));
  a.assembleBytes(small); // the first asks for the buffer
  calls.length = 0;
  const before = a.assembleBytes(small);
  checkResponse(3, a.assemble(requestFor(3)));
  const p = a.prompt({ observation_template: T });
  p.addStep("r", "o");
  a.compare(requestFor(1), requestFor(2));
  a.assembleJSON('{"observation_template": "{observation}"}');
  assert.deepEqual(calls, ["call", "call", "call", "call", "call", "call"]);
  // A request longer than the buffer's capacity asks for a bigger one first,
  // and the answers are the same afterwards.
  calls.length = 0;
  const big = encodeRequest({ observation_template: T, steps: [{ raw_output: "x".repeat(300_000), observation: "" }] });
  assert.equal(decode(a.assembleBytes(big)).messages[0].content[0].text.length, 300_000);
  assert.deepEqual(calls, ["buffer", "call"]);
  assert.deepEqual(a.assembleBytes(small), before);
  assert.equal(a.instancesCreated, 1);
});
