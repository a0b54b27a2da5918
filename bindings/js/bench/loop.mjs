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
const STEPS = Array.from({ length: 1000 }, (_, i) => ({
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

/** The verdict of call `call`, a Prompt one step longer than at the call before, answered again from the state that call left. */
function verdictCost(call, calls) {
  const prompt = asm.prompt(request([]));
  const run = asm.cacheRun();
  const usage = { cache_read_input_tokens: 100 };
  for (const s of STEPS.slice(0, call - 1)) {
    prompt.addStep(s.raw_output, s.observation);
    run.call(prompt, usage);
  }
  const { state, last } = run;
  prompt.addStep(STEPS[call - 1].raw_output, STEPS[call - 1].observation);
  return () => {
    for (let j = 0; j < calls; j++) {
      Object.assign(run, { state, last, entries: [] });
      run.call(prompt, usage);
    }
  };
}

const prompt = asm.prompt(request([]));
for (const s of STEPS) prompt.addStep(s.raw_output, s.observation);
const equivalent = request(STEPS);
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
  verdict_1000_over_10: paired(verdictCost(10, 200), verdictCost(1000, 200)),
};
if (out) writeFileSync(out, JSON.stringify(result));
console.error(`loop.mjs: ${JSON.stringify(result)}`);
