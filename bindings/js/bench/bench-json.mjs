// The machine-readable mode of bench.mjs for `make bench`
// (tools/benchreport): `node bench/bench.mjs --requests DIR --json PATH
// [--names tiny,typical,1MB,16MB] [--histories 10,1000] [--samples N]
// [--sample-seconds S]`. It runs the shared request files of
// internal/testing/benchreq (not requests.mjs) and writes raw samples: per request
// assembleBytes and assemble(object) side by side, the encode / wasm / decode
// split, add_step against history length, and the first call in a new
// process. There is no pure-JavaScript reference of the spec to compare with.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { decode } from "@msgpack/msgpack";
import { loadAssembler } from "../src/node.js";
import { CALL_ASSEMBLE, CALL_ASSEMBLE_SHARED, WORDS_JS } from "../src/consts.js";
import { sharedRequestEncoder } from "../src/encode.js";
import { decodeResponse } from "../src/decode.js";
import { forgetEncodedStrings, writeUtf8 } from "../src/strings.js";

function opt(argv, name, dflt) {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
}

/** Times each fn side by side; returns batch sizes and per-fn samples (s per call). */
function samples(fns, n, sampleS) {
  const calls = fns.map((f) => {
    // Warm up (V8 tiers the module and the binding up) for about a sample.
    const w0 = performance.now();
    for (let i = 0; i < 5 || performance.now() - w0 < sampleS * 1e3; i++) f();
    const t0 = performance.now();
    f();
    return Math.max(1, Math.floor(sampleS / Math.max((performance.now() - t0) / 1e3, 1e-7)));
  });
  const out = fns.map(() => []);
  for (let r = 0; r < n; r++) {
    fns.forEach((f, k) => {
      const t0 = performance.now();
      for (let i = 0; i < calls[k]; i++) f();
      out[k].push((performance.now() - t0) / 1e3 / calls[k]);
    });
  }
  return { calls, out };
}

const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];

const CHILD = `
const t0 = performance.now();
const { loadAssembler } = await import(process.argv[1]);
const asm = await loadAssembler();
const r = asm.assembleBytes(new Uint8Array(Buffer.from(process.argv[2], "base64")));
const t1 = performance.now();
process.stdout.write(JSON.stringify([(t1 - t0) / 1e3, r.length]));
`;

export async function jsonMain(argv) {
  const dir = opt(argv, "--requests");
  const path = opt(argv, "--json");
  const names = opt(argv, "--names", "tiny,typical,1MB,16MB").split(",");
  const histories = opt(argv, "--histories", "10,100,1000,10000").split(",").map(Number);
  const n = Number(opt(argv, "--samples", "7"));
  const sampleS = Number(opt(argv, "--sample-seconds", "0.15"));
  const asm = await loadAssembler({ maxInstances: 1 });
  const out = {
    versions: { Node: process.version, V8: process.versions.v8 },
    assemble: [],
    add_step: [],
    startup: [],
    stages: [],
    peak_memory: [],
  };
  for (const name of names) {
    const wire = new Uint8Array(readFileSync(join(dir, `${name}.msgpack`)));
    const req = decode(wire);
    process.stderr.write(`bench.mjs: ${name}\n`);
    const resp = asm.assembleBytes(wire);
    // Side by side: the wire function, assemble() as an agent loop calls it
    // (the same history again: the encoder's string cache answers), and
    // assemble() cold (that cache emptied before every call).
    const cold = () => {
      forgetEncodedStrings();
      asm.assemble(req);
    };
    const fns = [() => asm.assembleBytes(wire), () => asm.assemble(req), cold];
    const engines = ["Node, assembleBytes(Uint8Array)", "Node, assemble(object)", "Node, assemble(object), cold string cache"];
    if (name === "1MB") {
      // The parts no cold assemble(object) can skip, in the same rounds: the
      // request's strings written as UTF-8 (what the encoder must do with a
      // string it has not seen) and the module's call assemble(object) makes (less
      // copying the request in, which the encoder could spare).
      const strings = [];
      const walk = (v) => {
        if (typeof v === "string") strings.push(v);
        else if (Array.isArray(v)) v.forEach(walk);
        else if (v && typeof v === "object") for (const k of Object.keys(v)) (strings.push(k), walk(v[k]));
      };
      walk(req);
      const shared = sharedRequestEncoder.encodeShared(req).slice(); // the request and call assemble(object) sends
      const to = new Uint8Array(3 * strings.reduce((a, x) => a + x.length, 0));
      const inModule = (f) => () => {
        const inst = asm.pool.acquire();
        f(inst);
        asm.pool.release(inst);
      };
      fns.push(
        () => strings.reduce((at, x) => at + writeUtf8(x, to, at, to.length - at), 0),
        inModule((inst) => inst.invoke(shared, CALL_ASSEMBLE_SHARED | WORDS_JS)),
        inModule(
          (inst) => inst.capacity >= shared.length && new Uint8Array(inst.exports.memory.buffer, inst.ptr, shared.length).set(shared),
        ),
      );
      engines.push(
        "Node, floor part: the request's strings written as UTF-8 alone",
        "Node, floor part: the module's call alone",
        "Node, floor part (subtracted): the request copied in alone",
      );
      // And the answer's message objects made from strings that already exist
      // (the values returned are the caller's to edit): less than any decoder does.
      const made = asm.assemble(req).messages.map((m) => (m.content.length === 1 ? [m.role, m.content[0].type, m.content[0].text] : null));
      if (made.every(Boolean)) {
        fns.push(() => {
          const out = new Array(made.length);
          for (let i = 0; i < made.length; i++) out[i] = { role: made[i][0], content: [{ type: made[i][1], text: made[i][2] }] };
          return out;
        });
        engines.push("Node, floor part: the answer's message objects alone, from existing strings");
        // The texts the request does not hold (rendered observations) are new
        // strings; the least that makes one: joining the request's string it
        // holds with the text around it, given.
        const held = new Set(strings);
        const pieces = made
          .map((m) => m[2])
          .filter((x) => !held.has(x))
          .map((x) => {
            const o = strings.filter((h) => h && x.includes(h)).reduce((a, h) => (h.length > a.length ? h : a), "");
            const i = o ? x.indexOf(o) : 0;
            return [x.slice(0, i), o, x.slice(i + o.length)];
          });
        fns.push(() => pieces.map(([a, o, c]) => a + o + c));
        engines.push("Node, floor part: the answer's new texts alone, joined from the request's");
      }
    }
    const { calls, out: s } = samples(fns, n, sampleS);
    engines.forEach((engine, k) => out.assemble.push({ engine, request: name, reference: false, calls: calls[k], samples_s: s[k] }));
    const inst = asm.pool.acquire();
    const st = samples(
      [() => sharedRequestEncoder.encodeShared(req), () => inst.invoke(wire, CALL_ASSEMBLE).slice(), () => decodeResponse(resp)],
      3,
      sampleS / 3,
    ).out;
    asm.pool.release(inst);
    // Peak memory: a fresh instance, one call.
    const fresh = await loadAssembler({ maxInstances: 1 });
    const fi = fresh.pool.acquire();
    fi.invoke(wire, CALL_ASSEMBLE);
    out.peak_memory.push({ request: name, bytes: fi.memoryBytes });
    out.stages.push({
      request: name,
      median_s: {
        "1 encode (object to msgpack)": median(st[0]),
        "2 wasm (copy in, call, copy out)": median(st[1]),
        "3 decode (msgpack to object)": median(st[2]),
        "all: assemble(object)": median(s[1]),
      },
    });
  }
  const base = decode(readFileSync(join(dir, "addstep.msgpack")));
  const step = base.steps[0];
  delete base.steps;
  // One prompt per history length, timed in the same rounds (samples), so a
  // burst of load meets every length alike: the flat goal is their ratio.
  const prompts = histories.map((h) => {
    const p = asm.prompt(base);
    for (let i = 0; i < h; i++) p.addStep(step.raw_output, step.observation);
    return p;
  });
  const { calls: stepCalls, out: stepSamples } = samples(
    prompts.map((p) => () => p.addStep(step.raw_output, step.observation)),
    n,
    sampleS / 4,
  );
  histories.forEach((h, k) => out.add_step.push({ history: h, calls: stepCalls[k], samples_s: stepSamples[k] }));
  // The first call in a new process, through the entry an installed package
  // gives Node (the bundle `make dist` stages in build/js-dist) and, in the
  // same rounds, through the source tree's src/node.js (not bundled).
  const bundled = fileURLToPath(new URL("../../../build/js-dist/src/node.bundle.js", import.meta.url));
  if (!existsSync(bundled)) throw new Error(`${bundled} is missing: run \`make dist.js\` (make bench does)`);
  const source = fileURLToPath(new URL("../src/node.js", import.meta.url));
  const tiny = readFileSync(join(dir, "tiny.msgpack")).toString("base64");
  const first = { bundled: [], source: [] };
  const wall = [];
  const child = (entry) => {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", CHILD, entry, tiny], { encoding: "utf8" });
    const s = (performance.now() - t0) / 1e3;
    if (r.status !== 0) throw new Error(`first-call child failed: ${r.stderr}`);
    return [JSON.parse(r.stdout)[0], s];
  };
  for (let i = 0; i < n; i++) {
    const [b, s] = child(bundled);
    first.bundled.push(b);
    wall.push(s);
    first.source.push(child(source)[0]);
  }
  out.startup.push({
    figure:
      "first call, warm cache (the installed package's entry, src/node.bundle.js; Node has no disk cache: import + compile + instantiate + tiny call, new process)",
    samples_s: first.bundled,
  });
  out.startup.push({
    figure: "the same from the source tree (src/node.js and its dependencies, not bundled), same rounds",
    samples_s: first.source,
  });
  out.startup.push({ figure: "new process to first answer (node start included)", samples_s: wall });
  writeFileSync(path, JSON.stringify(out));
}
