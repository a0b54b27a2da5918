// Assembler#cacheReport and Assembler#export: facades of the contract table's
// cache_report and export calls (docs/SPEC.md §7.12, §7.13). Expected values
// are written from the spec, not from the module's output.

import test from "node:test";
import assert from "node:assert/strict";
import { AssemblyError } from "@polyloop/assembly";
import { assembler, errorOf } from "./common.mjs";

const asm = await assembler();
const T = "{observation}";
const block = (text) => ({ type: "text", text });
const run = [{ role: "system", content: [block("You are terse.")] }];
const step = (k) => ({ raw_output: `r${k}`, observation: `o${k}` });

test("cacheReport: a run that grows by a step each call extends the prompt before it", () => {
  const requests = [0, 1, 2].map((k) => ({
    observation_template: T,
    run_messages: run,
    steps: Array.from({ length: k }, (_, i) => step(i)),
  }));
  const report = asm.cacheReport(requests, [null, { cache_read_input_tokens: 7 }, { cache_read_input_tokens: 0 }]);
  assert.deepEqual(report, asm.call("cache_report", requests, [null, { cache_read_input_tokens: 7 }, { cache_read_input_tokens: 0 }]));
  // "You are terse." is 14 code points; each step adds two messages of 2.
  assert.deepEqual(
    report.calls.map((c) => [c.previous, c.extends, c.break, c.prompt_chars, c.cacheable_prefix_chars, c.new_chars]),
    [
      [null, false, null, 14, 0, 14],
      [0, true, null, 18, 14, 4],
      [1, true, null, 22, 18, 4],
    ],
  );
  assert.deepEqual(
    report.calls.map((c) => c.usage),
    [
      { cached_tokens: null, written_tokens: null, class: "no_usage" },
      { cached_tokens: 7, written_tokens: null, class: "hit" },
      { cached_tokens: 0, written_tokens: null, class: "provider_miss" },
    ],
  );
  assert.equal(report.totals.calls, 3);
  const bad = asm.cacheReport([requests[0], { observation_template: "none" }]);
  assert.equal(bad.calls[1].error.code, "invalid_template");
});

test("export: the provider's body, every text as given, cache breakpoints on the prompt's end and the run's", () => {
  const request = { observation_template: "Obs: {observation}", run_messages: run, steps: [step(0)] };
  assert.deepEqual(asm.export(request, "anthropic"), {
    system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }],
    messages: [
      { role: "assistant", content: [{ type: "text", text: "r0" }] },
      // The last block of the prompt, then the run's.
      { role: "user", content: [{ type: "text", text: "Obs: o0", cache_control: { type: "ephemeral" } }] },
    ],
  });
  const chat = asm.export(request, "openai-chat", { prompt_cache_key: "k1" });
  assert.deepEqual(chat, {
    messages: [
      { role: "system", content: [{ type: "text", text: "You are terse." }] },
      { role: "assistant", content: [{ type: "text", text: "r0" }] },
      { role: "user", content: [{ type: "text", text: "Obs: o0" }] },
    ],
    prompt_cache_key: "k1",
  });
  const e = errorOf(() => asm.export(request, "anthropic", { body: { messages: [] } }));
  assert.ok(e instanceof AssemblyError, String(e));
  assert.equal(e.path, "options.body.messages");
});

test("cacheReport: one request where the list belongs is refused at requests, never read as a list", () => {
  const one = { run_messages: run, observation_template: T };
  for (const requests of [one, new Map([["observation_template", T]]), JSON.stringify(one)]) {
    const e = errorOf(() => asm.cacheReport(requests));
    assert.ok(e instanceof AssemblyError);
    assert.deepEqual([e.code, e.path], ["malformed_request", "requests"]);
  }
  assert.equal(
    errorOf(() => asm.cacheReport(one)).message,
    "expected a list of requests (an array), found one request (an object): give the run's requests in a list, in call order",
  );
});
