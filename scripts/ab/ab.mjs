// The Node half of scripts/ab/run: the old and the new binding imported into
// ONE process (--old and --new are bindings/js directories) and timed in
// interleaved, paired batches, so both meet the same load. Each round times a
// batch of the old side and one of the new (the order alternates) and keeps
// their ratio; a case's figure is the median ratio over the rounds and each
// side's median time per call. Prints one JSON object per case, one per line.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const arg = (k, d) => (process.argv.includes(k) ? process.argv[process.argv.indexOf(k) + 1] : d);
const reqs = arg("--reqs");
const rounds = Number(arg("--rounds", 21));
const seconds = Number(arg("--seconds", 0.02));
const load = async (dir) => (await import(pathToFileURL(resolve(dir, "src/node.js")).href)).loadAssembler();
const asmOld = await load(arg("--old"));
const asmNew = await load(arg("--new"));

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
function batch(fn, n) {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) fn();
  return (performance.now() - t0) / 1000 / n;
}
function sizeBatch(fn) {
  let n = 1;
  while (batch(fn, n) * n < seconds / 4) n *= 2;
  return Math.max(1, Math.floor((n * seconds) / Math.max(batch(fn, n) * n, 1e-9)));
}
function paired(kase, old, nu) {
  const to = [];
  const tn = [];
  const ratios = [];
  for (let r = 0; r < rounds; r++) {
    let a, b;
    if (r % 2) [b, a] = [nu(), old()];
    else [a, b] = [old(), nu()];
    to.push(a);
    tn.push(b);
    ratios.push(b / a);
  }
  console.log(JSON.stringify({ host: "node", case: kase, old: median(to), new: median(tn), ratio: median(ratios) }));
}

for (const name of ["tiny", "typical", "1MB"]) {
  const req = JSON.parse(readFileSync(join(reqs, name + ".json"), "utf8"));
  const fo = () => asmOld.assemble(req);
  const fn = () => asmNew.assemble(req);
  const n = sizeBatch(fn);
  paired(
    "assemble " + name,
    () => batch(fo, n),
    () => batch(fn, n),
  );
}
const base = JSON.parse(readFileSync(join(reqs, "addstep.json"), "utf8"));
const { raw_output: raw, observation: obs } = base.step;
delete base.step;
// add_step grows the prompt: each batch adds 200 steps to a fresh prompt of h steps.
function timed(asm, h) {
  const p = asm.prompt(base);
  for (let i = 0; i < h; i++) p.addStep(raw, obs);
  const t0 = performance.now();
  for (let i = 0; i < 200; i++) p.addStep(raw, obs);
  return (performance.now() - t0) / 1000 / 200;
}
(timed(asmOld, 3000), timed(asmNew, 3000)); // warm-up (the JIT)
for (const h of [10, 1000, 10000]) {
  paired(
    `add_step at ${h}`,
    () => timed(asmOld, h),
    () => timed(asmNew, h),
  );
}
