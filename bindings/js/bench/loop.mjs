#!/usr/bin/env node
// The agent loop's two speed lines (issue 41), measured side by side in rounds for `make bench`:
// `prompt.export` at step 1,000 against building the same Anthropic body by hand from `prompt.messages` and
// against `export` of the equivalent request; the verdict (`CacheRun.call`) at call 1,000 of a run against call 10.
// `node bench/loop.mjs [--json PATH] [--quick]`: each figure [min, median, max] of b's time over a's per round.

import { writeFileSync } from "node:fs";
import { loadAssembler } from "../src/node.js";

const quick = process.argv.includes("--quick");
const out = process.argv.includes("--json") ? process.argv[process.argv.indexOf("--json") + 1] : null;
const rounds = quick ? 5 : 15;
const asm = await loadAssembler();

const request = (steps) => ({
  run_messages: [{ role: "system", content: [{ type: "text", text: "You are a careful agent. ".repeat(40) }] }],
  injections: { memory: [{ entry_id: "m1", content: "Prefer metric units." }] },
  goal_messages: [{ role: "user", content: [{ type: "text", text: "Count the files in /data." }] }],
  steps,
  observation_template: "Output:\n{observation}",
});
const STEPS = Array.from({ length: 1050 }, (_, i) => ({
  raw_output: `Thought ${i}: list it.\nAction: ls -la /data/${i}`,
  observation: `${i * 7} files ✓\n`.repeat(8),
}));

/** The Anthropic body a user writes from prompt.messages: system, messages, the last block marked. */
function byHand(prompt) {
  const messages = [...prompt.messages];
  const system = [];
  let i = 0;
  for (; i < messages.length && messages[i].role === "system"; i++) {
    for (const b of messages[i].content) system.push({ type: "text", text: b.text });
  }
  const out = messages.slice(i).map((m) => ({ role: m.role, content: m.content.map((b) => ({ type: "text", text: b.text })) }));
  const last = out.at(-1).content;
  last[last.length - 1].cache_control = { type: "ephemeral" };
  return { system, messages: out };
}

/** b's time over a's per round (each run k times), alternating which goes first: [min, median, max]. */
function paired(a, b, k = 1) {
  a();
  b();
  const ratios = [];
  for (let r = 0; r < rounds; r++) {
    const times = [];
    for (const f of r % 2 === 0 ? [a, b] : [b, a]) {
      const t = process.hrtime.bigint();
      for (let j = 0; j < k; j++) f();
      times.push(Number(process.hrtime.bigint() - t));
    }
    const [ta, tb] = r % 2 === 0 ? times : times.reverse();
    ratios.push(tb / ta);
  }
  ratios.sort((x, y) => x - y);
  return [ratios[0], ratios[ratios.length >> 1], ratios.at(-1)];
}

const VERDICT_CALLS = 50; // the calls timed from call 10 and from call 1,000, the Prompt one step longer at each

/** A side that builds a run up to call `start` (untimed), then times `run.call` alone over the next VERDICT_CALLS calls. */
const verdicts = (start) => () => {
  const prompt = asm.prompt(request([]));
  const run = asm.cacheRun();
  const usage = { cache_read_input_tokens: 100 };
  for (const s of STEPS.slice(0, start)) {
    prompt.addStep(s.raw_output, s.observation);
    run.call(prompt, usage);
  }
  let took = 0;
  for (const s of STEPS.slice(start, start + VERDICT_CALLS)) {
    prompt.addStep(s.raw_output, s.observation);
    const t = process.hrtime.bigint();
    run.call(prompt, usage);
    took += Number(process.hrtime.bigint() - t);
  }
  return took;
};

/** b's time over a's per round, each side timing itself, alternating which goes first: [min, median, max]. */
function pairedTimed(a, b) {
  const ratios = [];
  for (let r = 0; r < rounds; r++) {
    let ta, tb;
    if (r % 2 === 0) [ta, tb] = [a(), b()];
    else [tb, ta] = [b(), a()];
    ratios.push(tb / ta);
  }
  ratios.sort((x, y) => x - y);
  return [ratios[0], ratios[ratios.length >> 1], ratios.at(-1)];
}

const prompt = asm.prompt(request([]));
for (const s of STEPS.slice(0, 1000)) prompt.addStep(s.raw_output, s.observation);
const equivalent = request(STEPS.slice(0, 1000));
const result = {
  export_over_hand: paired(
    () => byHand(prompt),
    () => prompt.export("anthropic"),
    5,
  ),
  export_over_request: paired(
    () => asm.export(equivalent, "anthropic"),
    () => prompt.export("anthropic"),
    5,
  ),
  verdict_1000_over_10: pairedTimed(verdicts(10), verdicts(1000)),
};
if (out) writeFileSync(out, JSON.stringify(result));
console.error(`loop.mjs: ${JSON.stringify(result)}`);
