#!/usr/bin/env node
// Reading `prompt.messages` after each of 4,000 steps, as an agent loop
// does every turn (issue 34: the read costs O(new messages), not the
// history): `node bench/messages.mjs [--steps 4000] [--rounds 5] [--json PATH]`.
// Each round grows a new prompt by `steps` steps and times the first read
// after every step; its figures are the median read over the first 20 steps
// (around step 10) and over the last 20. `make bench` (tools/benchreport,
// datasets.go) takes the raw figures with --json; without it, one line.

import { writeFileSync } from "node:fs";
import { loadAssembler } from "../src/node.js";

function opt(name, dflt) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

const steps = Number(opt("--steps", "4000"));
const rounds = Number(opt("--rounds", "5"));
const window = 20;
const asm = await loadAssembler();
const request = {
  goal_messages: [{ role: "user", content: [{ type: "text", text: "go" }] }],
  observation_template: "{observation}",
};

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** One round: [median read around step 10, median read around the last step], in seconds. */
function round() {
  const p = asm.prompt(request);
  const reads = new Float64Array(steps);
  let held = 0;
  for (let k = 1; k <= steps; k++) {
    p.addStep(`raw output ${k}`, `observation ${k}`);
    const t0 = process.hrtime.bigint();
    const m = p.messages;
    reads[k - 1] = Number(process.hrtime.bigint() - t0) / 1e9;
    held += m.length; // the read is used, so it cannot be optimised away
  }
  if (held === 0) throw new Error("prompt.messages read nothing");
  return [median(reads.subarray(0, window)), median(reads.subarray(steps - window))];
}

round(); // warm-up: V8 tiers the binding up
const out = { steps, window, step_10_s: [], step_n_s: [] };
for (let r = 0; r < rounds; r++) {
  const [a, b] = round();
  out.step_10_s.push(a);
  out.step_n_s.push(b);
}
const path = opt("--json", "");
if (path) {
  writeFileSync(path, JSON.stringify(out));
} else {
  const ratio = median(out.step_n_s) / median(out.step_10_s);
  console.log(
    `prompt.messages read: step 10 ${(median(out.step_10_s) * 1e6).toFixed(2)} µs, ` +
      `step ${steps} ${(median(out.step_n_s) * 1e6).toFixed(2)} µs, ratio ${ratio.toFixed(2)}`,
  );
}
