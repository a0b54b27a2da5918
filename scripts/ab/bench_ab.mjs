// One side of the A/B benchmark (scripts/ab/run) for Node: imports the binding
// of --src (a bindings/js directory) and prints one JSON object: the best sample of
// each call, in seconds (load only ever adds time). The runner alternates old and new processes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const arg = (k) => (process.argv.includes(k) ? process.argv[process.argv.indexOf(k) + 1] : undefined);
const src = arg("--src");
const reqs = arg("--reqs");
const seconds = Number(arg("--seconds") ?? 0.4);
const { loadAssembler } = await import(pathToFileURL(join(src, "src/node.js")).href);
const asm = await loadAssembler();

function perCall(fn, samples = 5) {
  fn();
  let n = 1;
  let dt;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn();
    dt = (performance.now() - t0) / 1000;
    if (dt >= seconds / samples / 4) break;
    n *= 2;
  }
  n = Math.max(1, Math.floor((n * (seconds / samples)) / Math.max(dt, 1e-9)));
  const out = [];
  for (let s = 0; s < samples; s++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn();
    out.push((performance.now() - t0) / 1000 / n);
  }
  return Math.min(...out); // the best sample: load only ever adds time
}

const out = {};
for (const name of ["tiny", "typical", "1MB"]) {
  const req = JSON.parse(readFileSync(join(reqs, name + ".json"), "utf8"));
  out["assemble " + name] = perCall(() => asm.assemble(req));
}
const base = JSON.parse(readFileSync(join(reqs, "addstep.json"), "utf8"));
const step = base.step;
delete base.step;
{
  // Warm-up (the JIT): a throwaway prompt of 3,000 steps before any timing.
  const w = asm.prompt(base);
  for (let i = 0; i < 3000; i++) w.addStep(step.raw_output, step.observation);
}
for (const h of [10, 1000, 10000]) {
  const samples = [];
  for (let s = 0; s < 7; s++) {
    const p = asm.prompt(base);
    for (let i = 0; i < h; i++) p.addStep(step.raw_output, step.observation);
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) p.addStep(step.raw_output, step.observation);
    samples.push((performance.now() - t0) / 1000 / 200);
  }
  out[`add_step at ${h}`] = Math.min(...samples);
}
console.log(JSON.stringify(out));
