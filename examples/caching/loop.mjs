#!/usr/bin/env node
// The JavaScript twin of loop.py: an agent loop end to end with the official `@anthropic-ai/sdk` client, no network.
// Each call's prompt is sent as the library exports it, and the verdict of the provider's cache is printed as the
// call happens: the injection edit at call 6, the condensed history at call 9, the provider's own miss at call 11.
//
//     node examples/caching/loop.mjs        (after make js.deps js.wasm: the SDK is a dev dependency of bindings/js)

import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { loadAssembler } from "../../bindings/js/src/node.js";

// The SDK is installed with the binding's dev dependencies, in bindings/js/node_modules.
const fromBinding = createRequire(
  new URL("../../bindings/js/package.json", import.meta.url),
);
const { default: Anthropic } = await import(
  pathToFileURL(fromBinding.resolve("@anthropic-ai/sdk")).href
);

/** The Messages API as a custom fetch: usage that reads, from cache, what this request shares with the previous one. */
function fakeAnthropic(forgetAt) {
  let previous = null;
  let calls = 0;
  return async (url, init) => {
    const body = JSON.parse(init.body);
    const sent = JSON.stringify([body.system ?? [], body.messages]);
    let shared = 0;
    if (previous !== null && calls !== forgetAt) {
      while (
        shared < Math.min(sent.length, previous.length) &&
        sent[shared] === previous[shared]
      )
        shared++;
    }
    previous = sent;
    calls++;
    const usage = {
      input_tokens: (sent.length - shared) >> 2,
      output_tokens: 9,
      cache_read_input_tokens: shared >> 2,
    };
    const message = {
      id: `msg_${calls}`,
      type: "message",
      role: "assistant",
      model: body.model,
      stop_reason: "end_turn",
    };
    const answer = {
      ...message,
      content: [{ type: "text", text: "Action: search" }],
      usage,
    };
    return new Response(JSON.stringify(answer), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  };
}

const request = (memo, steps) => ({
  run_messages: [
    {
      role: "system",
      content: [{ type: "text", text: "You are a careful research agent." }],
    },
  ],
  injections: { memory: [{ entry_id: "m1", content: memo }] },
  goal_messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "Find the boiling point of water in Lyon." },
      ],
    },
  ],
  steps,
  observation_template: "Observation: {observation}",
});
const observe = (response) => `page ${response.id}: 100 °C at sea level`;

export async function main() {
  const asm = await loadAssembler();
  let steps = [];
  const client = new Anthropic({
    apiKey: "no-network",
    fetch: fakeAnthropic(11),
    maxRetries: 0,
  }); // the official SDK
  let prompt = asm.prompt(request("The user prefers metric units.", steps));
  const run = asm.cacheRun();
  for (let call = 0; call < 14; call++) {
    if (call === 6)
      prompt = asm.prompt(request("The user prefers imperial units.", steps)); // a new Prompt: injections changed
    if (call === 9) {
      steps = [
        {
          raw_output: "Summary: searched 8 pages.",
          observation: "100 °C at sea level",
        },
      ]; // the history condensed
      prompt = asm.prompt(request("The user prefers imperial units.", steps));
    }
    const body = prompt.export("anthropic", {
      body: { model: "claude-x", max_tokens: 512 },
    });
    const response = await client.messages.create(body); // the SDK's own Message
    const verdict = run.call(prompt, response); // this call's entry of the cache report, now
    console.log(call, verdict.usage.class, verdict.break?.cause ?? null); // why it missed
    prompt.addStep(response.content[0].text, observe(response));
    steps = [
      ...steps,
      { raw_output: response.content[0].text, observation: observe(response) },
    ];
  }
  const { totals } = run.report();
  console.log(
    `${totals.calls} calls, ${totals.breaks} breaks: ${totals.cacheable_chars} of ${totals.prompt_chars} prompt chars cacheable`,
  );
  return run.report().calls;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main();
