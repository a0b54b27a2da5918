// The bounded-resources family (docs/SPEC.md §4 and §6) on the Node binding.
//
// The requests come from internal/testing/limitreq (`go run ./internal/testing/limitreq/gen`),
// with the native core's answer (size and SHA-256) for each: assembleBytes
// must answer the same bytes, the expected code and path, error responses of
// a few KB, within the memory budget (peak RSS of a child process, measured
// by GNU time). `make test` runs the family at 1 MiB; `make test.limits`
// (POLYLOOP_LIMITS=full) at full size, with the time budget.
//
// The JavaScript cases of items 10.4 (assemble() of a response over V8's
// string length is a coded too_large), 10.5 (a request of just under 4 GiB is
// too_large before it is copied), 10.6 (addStep past the 1.5 GiB response
// limit is too_large as assemble() of the same steps) and 10.7 (the encoder
// gives its large buffer back) fail when the fix regresses; they are skipped
// only below full size (make test.limits sets POLYLOOP_LIMITS=full).

import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { REPO, decode, errorOf } from "./common.mjs";

const FULL = process.env.POLYLOOP_LIMITS === "full";
const GNU_TIME = "/usr/bin/time";
const MAX_ERROR_BYTES = 4096;
// Memory budget: peak RSS <= MEM_PER_BYTE × (request + response) + MEM_CONST.
const MEM_PER_BYTE = 4;
const MEM_CONST = 192 * 2 ** 20;
// Time budget (full size only): seconds <= 1 + rate × MB of request and response.
const SEC_PER_MB = 10;
const BINDING_DIR = fileURLToPath(new URL("../", import.meta.url));

// The child: one call in a fresh process; prints what the parent checks.
// Modes: file PATH (assembleBytes of a request file), zeros N (assembleBytes
// of N zero bytes), object PATH (assemble() of the request file's object),
// shrink (10.7: one 100 M-character request, then 1,000 small ones).
const CHILD = `
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { loadAssembler, AssemblyError } from "@polyloop/assembly";
import { Decoder } from "@msgpack/msgpack";
const [mode, arg] = process.argv.slice(1); // node -e CODE mode arg
const asm = await loadAssembler();
const out = {};
try {
  if (mode === "file" || mode === "zeros") {
    const req = mode === "file" ? new Uint8Array(readFileSync(arg)) : new Uint8Array(Number(arg));
    const resp = asm.assembleBytes(req);
    out.n = resp.length;
    out.sha256 = createHash("sha256").update(resp).digest("hex");
    if (resp.length <= 65536) out.resp = Buffer.from(resp).toString("base64");
  } else if (mode === "object") {
    const req = new Decoder({ useBigInt64: true }).decode(readFileSync(arg));
    const r = asm.assemble(req);
    out.ok = r.ok;
  } else if (mode === "shrink") {
    const before = process.memoryUsage().arrayBuffers;
    try { asm.assemble({ observation_template: "{observation}", steps: [{ raw_output: "", observation: "x".repeat(100_000_000) }] }); } catch {}
    for (let i = 0; i < 1000; i++) asm.assemble({ observation_template: "{observation}", steps: [{ raw_output: "a", observation: "b" }] });
    globalThis.gc?.();
    out.arrayBuffers = process.memoryUsage().arrayBuffers - before;
  }
} catch (e) {
  if (!(e instanceof AssemblyError)) throw e;
  out.raised = [e.code, e.path, e.message.length];
}
console.log(JSON.stringify(out));
`;

function runChild(mode, arg = "") {
  const dir = mkdtempSync(join(tmpdir(), "polyloop-rss-"));
  const rssFile = join(dir, "rss");
  let argv = [process.execPath, "--expose-gc", "--input-type=module", "-e", CHILD, mode, arg];
  if (existsSync(GNU_TIME)) argv = [GNU_TIME, "-f", "%M", "-o", rssFile, ...argv];
  const start = performance.now();
  const p = spawnSync(argv[0], argv.slice(1), { cwd: BINDING_DIR, encoding: "utf8", maxBuffer: 1 << 20 });
  const seconds = (performance.now() - start) / 1000;
  assert.equal(p.status, 0, p.stderr.slice(-2000));
  const out = JSON.parse(p.stdout.trim().split("\n").pop());
  out.seconds = seconds;
  out.rss = existsSync(rssFile) ? Number(readFileSync(rssFile, "utf8").trim().split(/\s+/).pop()) * 1024 : -1;
  rmSync(dir, { recursive: true, force: true });
  return out;
}

function hasGo() {
  return spawnSync("go", ["version"]).status === 0;
}

let casesDir;
function cases() {
  if (!casesDir) {
    casesDir = mkdtempSync(join(tmpdir(), "polyloop-limits-"));
    execFileSync("go", ["run", "./internal/testing/limitreq/gen", casesDir, FULL ? "full" : String(2 ** 20)], {
      cwd: REPO,
      stdio: "inherit",
    });
  }
  return JSON.parse(readFileSync(join(casesDir, "cases.json"), "utf8")).map((c) => ({ ...c, file: join(casesDir, c.file) }));
}
test.after(() => casesDir && rmSync(casesDir, { recursive: true, force: true }));

function checkBudgets(name, reqBytes, out) {
  const inout = reqBytes + (out.n ?? 0);
  if (out.rss >= 0) {
    const budget = MEM_PER_BYTE * inout + MEM_CONST;
    assert.ok(out.rss <= budget, `${name}: peak RSS ${out.rss >> 20} MB for ${inout >> 20} MB in and out, over ${budget >> 20} MB`);
  }
  const mb = inout / 2 ** 20;
  if (FULL) assert.ok(out.seconds <= 1 + SEC_PER_MB * mb, `${name}: ${out.seconds.toFixed(1)} s for ${mb.toFixed(1)} MB`);
  console.log(
    `${name.padEnd(16)} node     request ${String(reqBytes).padStart(11)} B  response ${String(out.n ?? 0).padStart(11)} B  ` +
      `${out.seconds.toFixed(2).padStart(7)} s  ${(out.seconds / Math.max(mb, 1e-9)).toFixed(3).padStart(8)} s/MB  ` +
      `peak ${String(Math.round(out.rss / 2 ** 20)).padStart(6)} MB  ${(out.rss / Math.max(inout, 1)).toFixed(2)} B/B`,
  );
}

test(
  "every case: the native core's bytes, code and path; small errors; the budgets",
  { skip: !hasGo() && "go is not on PATH (the family is generated by go run ./internal/testing/limitreq/gen)" },
  () => {
    const cs = cases();
    for (const name of ["bad-role", "bad-block-type", "unknown-key", "repeated-channel", "template", "fields-steps", "wide-response"]) {
      assert.ok(
        cs.some((c) => c.name === name),
        name,
      );
    }
    for (const c of cs) {
      const out = runChild("file", c.file);
      assert.equal(out.raised, undefined, `${c.name}: raised ${out.raised}`);
      assert.deepEqual(
        [out.n, out.sha256],
        [c.response_bytes, c.response_sha256],
        `${c.name}: ${out.n} bytes unlike the native core's ${c.response_bytes}`,
      );
      if (c.code) {
        assert.ok(out.n <= MAX_ERROR_BYTES, `${c.name}: a ${out.n}-byte error response`);
        const e = decode(Buffer.from(out.resp, "base64")).error;
        assert.deepEqual([e.code, e.path], [c.code, c.path], c.name);
      }
      checkBudgets(c.name, c.bytes, out);
    }
  },
);

test(
  "10.4: assemble() of a response over V8's string length is a coded too_large; assembleBytes works",
  { skip: (!FULL && "a 629 MB response: run by make test.limits (POLYLOOP_LIMITS=full)") || (!hasGo() && "go is not on PATH") },
  () => {
    const c = cases().find((x) => x.name === "wide-response");
    const bytes = runChild("file", c.file);
    assert.deepEqual([bytes.n, bytes.sha256], [c.response_bytes, c.response_sha256]);
    const obj = runChild("object", c.file);
    assert.equal(obj.raised?.[0], "too_large", `assemble() of a ${c.response_bytes}-byte response: ${JSON.stringify(obj)}`);
    assert.match(obj.raised[1], /^messages\[\d+\]\.content\[0\]\.text$/, "the path of the string over the ceiling");
    console.log(
      `10.4 wide-response node  assemble() too_large at ${obj.raised[1]}  ${obj.seconds.toFixed(2)} s  peak ${Math.round(obj.rss / 2 ** 20)} MB`,
    );
  },
);

test(
  "10.5: a request of 4 GiB - 1 byte is too_large, checked before it is copied",
  { skip: !FULL && "a 4 GiB request: run by make test.limits (POLYLOOP_LIMITS=full)" },
  () => {
    const n = 4 * 2 ** 30 - 1;
    const out = runChild("zeros", String(n));
    let code, path;
    if (out.raised) [code, path] = out.raised;
    else ({ code, path } = decode(Buffer.from(out.resp, "base64")).error);
    assert.deepEqual([code, path], ["too_large", ""], `a request of ${n} bytes (peak ${Math.round(out.rss / 2 ** 20)} MB)`);
    assert.ok(out.rss < 0 || out.rss <= n + 512 * 2 ** 20, `peak RSS ${out.rss >> 20} MB: the request was copied`);
    console.log(`10.5 4GiB-1      node     too_large  ${out.seconds.toFixed(2)} s  peak ${Math.round(out.rss / 2 ** 20)} MB`);
  },
);

test(
  "10.7: the encoder gives back the buffer of a 100 M-character request",
  { skip: !FULL && "a 100 M-character request: run by make test.limits (POLYLOOP_LIMITS=full)" },
  () => {
    const out = runChild("shrink");
    assert.ok(
      out.arrayBuffers <= 64 * 2 ** 20,
      `${out.arrayBuffers >> 20} MB of ArrayBuffers kept after a 100 M-character request and 1,000 small ones`,
    );
    console.log(
      `10.7 shrink      node     ${(out.arrayBuffers / 2 ** 20).toFixed(1)} MB of ArrayBuffers kept  ${out.seconds.toFixed(2)} s  peak ${Math.round(out.rss / 2 ** 20)} MB`,
    );
  },
);

test(
  "10.6: addStep past 1.5 GiB is too_large as assemble() of the same steps",
  { skip: !FULL && "holds about 1.6 GB of strings: run by make test.limits (POLYLOOP_LIMITS=full)" },
  async () => {
    const { loadAssembler, AssemblyError } = await import("@polyloop/assembly");
    const { encodeRequest } = await import("../src/encode.js");
    const asm = await loadAssembler({ maxInstances: 1 });
    // 300 fields of width 1,048,576: 315 MB per step (JS strings hold it);
    // five steps fit in 1.5 GiB, six do not.
    const template = "{observation:1048576}".repeat(300);
    const steps = (k) => Array.from({ length: k }, () => ({ raw_output: "", observation: "" }));
    const start = performance.now();
    const p = asm.prompt({ observation_template: template });
    for (let k = 0; k < 5; k++) p.addStep("", "");
    const e = errorOf(() => p.addStep("", ""));
    const whole = errorOf(() => asm.assemble({ observation_template: template, steps: steps(6) }));
    assert.ok(whole instanceof AssemblyError && whole.code === "too_large", `assemble() of six steps: ${whole}`);
    assert.ok(e instanceof AssemblyError, `the sixth addStep: ${e}`);
    assert.deepEqual([e.code, e.path, e.message], [whole.code, whole.path, whole.message], "the sixth addStep and assemble() of six steps");
    assert.deepEqual([p.messages.length, p.stepCount], [10, 5], "the prompt is unchanged");
    const kept = p.responseBytes;
    const seconds = (performance.now() - start) / 1000;
    // The size the prompt keeps is the length of the whole response.
    const n = asm.assembleBytes(encodeRequest({ observation_template: template, steps: steps(5) })).length;
    assert.equal(kept, n, "the prompt's size and assembleBytes of its five steps");
    console.log(`10.6 addStep     node     5 steps ${kept} B, the sixth too_large as assemble()  ${seconds.toFixed(2)} s`);
  },
);

test("10.6 without 1.5 GiB: addStep keeps the exact length of the response assemble() gives", async () => {
  const { loadAssembler, AssemblyError } = await import("@polyloop/assembly");
  const { Encoder } = await import("@msgpack/msgpack");
  const asm = await loadAssembler();
  const pack = (v) => new Encoder().encode(v);
  const req = {
    run_messages: [{ role: "system", content: [{ type: "text", text: "sys" }] }],
    injections: { a: [{ entry_id: "1", content: "x".repeat(300) }], ["b".repeat(40)]: [{ entry_id: "2", content: "y" }] },
    observation_template: "<{observation:^300}|{observation!r}>",
  };
  const p = asm.prompt(req);
  const steps = [];
  for (let i = 0; i < 260; i++) {
    // past 15 and 255 messages, prompt_chars past 65,535
    const step = { raw_output: "r".repeat(i % 7), observation: "\u00e9".repeat(i % 50) };
    p.addStep(step.raw_output, step.observation);
    steps.push(step);
    if ([0, 6, 7, 100, 126, 127, 200, 259].includes(i)) {
      assert.equal(p.responseBytes, asm.assembleBytes(pack({ ...req, steps })).length, `after ${i + 1} steps`);
    }
  }
  // A refused step changes nothing (the history made to stand in for nearly
  // 1.5 GiB through the size in the prompt's state, docs/SPEC.md §7.3.1).
  const before = [p.messages.length, p.prompt_chars];
  p.state.response_bytes = 3 * 2 ** 29 - 100;
  const at = p.responseBytes;
  assert.throws(
    () => p.addStep("r", "o"),
    (e) => e instanceof AssemblyError && e.code === "too_large" && e.path === "",
  );
  assert.deepEqual([p.messages.length, p.prompt_chars, p.responseBytes], [before[0], before[1], at]);
});
