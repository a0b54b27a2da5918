// Instances, concurrency and failures: many concurrent async callers, worker
// threads sharing the compiled module, a trap (out of memory inside the
// module) that fails one call and not the next, instance retirement, and the
// quiet WASI shim.

import test from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import { spawnSync } from "node:child_process";
import { AssemblyError, loadAssembler, MAX_REQUEST_BYTES } from "@polyloop/assembly";
import { assembler, decode, errorOf } from "./common.mjs";
import { encodeRequest } from "../src/wire.js";

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
    assert.deepEqual(p.messages.map((m) => m.content[0].text), [`t${i}s0`, `Obs ${i}`, `t${i}s1`, `Obs ${i}`, `t${i}s2`, `Obs ${i}`]);
    return i;
  });
  const done = await Promise.all(tasks);
  assert.equal(done.length, 300);
  // JavaScript runs each call to completion: one instance served them all.
  assert.ok(asm.pool.idle.length <= asm.pool.size);
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
  for (const out of outs) assert.deepEqual(out.map((b) => Buffer.from(b).toString("hex")), expected.map((b) => Buffer.from(b).toString("hex")));
});

test("a trap fails that call with internal and the next call runs on a fresh instance", () => {
  const a = asm;
  const before = a.assembleBytes(encodeRequest(requestFor(4)));
  const created = a.instancesCreated;
  // 4 GiB − 16 bytes: the module cannot allocate the request buffer, the Go
  // runtime dies (out of memory) and the engine traps. The array is lazily
  // zeroed memory, never touched.
  const huge = new Uint8Array(0xfffffff0);
  const e = errorOf(() => a.assembleBytes(huge));
  assert.ok(e instanceof AssemblyError, String(e));
  assert.equal(e.code, "internal");
  assert.equal(e.path, "");
  assert.match(e.message, /out of memory/);
  assert.match(e.message, /fresh/);
  // The next call works, on a new instance, with the same bytes as before.
  const after = a.assembleBytes(encodeRequest(requestFor(4)));
  assert.deepEqual(after, before);
  assert.equal(a.instancesCreated, created + 1);
  checkResponse(4, a.assemble(requestFor(4)));
});

test("a request the 32-bit module cannot address is too_large before the module", () => {
  const e = errorOf(() => asm.assembleBytes(new Uint8Array(2 ** 32)));
  assert.ok(e instanceof AssemblyError, String(e));
  assert.equal(e.code, "too_large");
  assert.equal(e.path, "");
});

test("a request over 1 GiB is the core's too_large", { skip: !process.env.POLYLOOP_HEAVY_TESTS && "set POLYLOOP_HEAVY_TESTS=1 (copies 1 GiB into the module)" }, async () => {
  const a = await loadAssembler({ poolSize: 1 });
  const r = decode(a.assembleBytes(new Uint8Array(MAX_REQUEST_BYTES + 1)));
  assert.equal(r.ok, false);
  assert.deepEqual([r.error.code, r.error.path], ["too_large", ""]);
  // The instance that grew past retireAboveBytes is not kept.
  assert.equal(a.pool.idle.length, 0);
});

test("instances whose memory grew past retireAboveBytes are not reused", async () => {
  const a = await loadAssembler({ retireAboveBytes: 1 });
  const n = a.instancesCreated;
  const b = encodeRequest(requestFor(2));
  const first = a.assembleBytes(b);
  assert.deepEqual(a.assembleBytes(b), first);
  assert.equal(a.instancesCreated, n + 1); // the warm one was retired after call 1
  const keep = await loadAssembler({ poolSize: 1 });
  const m = keep.instancesCreated;
  for (let i = 0; i < 5; i++) keep.assembleBytes(b);
  assert.equal(keep.instancesCreated, m);
});

test("poolSize is checked", async () => {
  await assert.rejects(loadAssembler({ poolSize: 0 }), TypeError);
});

test("the module prints nothing, even when it dies or the shim's debug log is on", () => {
  // A separate process, so that only the module's output could appear.
  const script = `
    import { loadAssembler } from "@polyloop/assembly";
    import { WASI } from "@bjorn3/browser_wasi_shim";
    // Another user of the shim turns its global debug log on, before and
    // while an instance is being made (between the imports and _initialize).
    new WASI([], [], []);
    const first = await loadAssembler({ poolSize: 1 });
    const loading = loadAssembler({ module: first.module, poolSize: 1 });
    new WASI([], [], []);
    const a = await loading;
    a.assemble({ observation_template: "{observation}", steps: [{ raw_output: "a", observation: "b" }] });
    try { a.assembleBytes(new Uint8Array(0xfffffff0)); } catch (e) { if (e.code !== "internal") process.exit(3); }
    a.assemble({ observation_template: "{observation}" });`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: new URL("..", import.meta.url), encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr, "");
});
