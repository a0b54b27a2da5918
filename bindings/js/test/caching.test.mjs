// Assembler#cacheReport and Assembler#export: facades of the contract table's
// cache_report and export calls (docs/SPEC.md §7.12, §7.13). Expected values
// are written from the spec, not from the module's output.

import test from "node:test";
import assert from "node:assert/strict";
import { AssemblyError, PROVIDERS } from "@polyloop/assembly";
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

test("PROVIDERS: every provider export writes, and the ones its refusal names", () => {
  const goal = [{ role: "user", content: [block("Find x.")] }];
  const request = { observation_template: "Obs: {observation}", run_messages: run, goal_messages: goal, steps: [step(0)] };
  // the docs' list (docs/SPEC.md §7.13), written out here as the oracle
  const documented = ["anthropic", "openai-chat", "openai-responses", "openrouter", "bedrock-converse", "gemini", "gemini-cache"];
  assert.deepEqual([...PROVIDERS], documented);
  for (const p of PROVIDERS) assert.equal(typeof asm.export(request, p), "object", p);
  const e = errorOf(() => asm.export(request, "claude"));
  assert.equal(e.code, "malformed_request");
  const named = e.message.slice(e.message.indexOf("use ") + 4).split(/, | or /);
  assert.deepEqual(named, documented);
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

test("export: a body field nested 64 deep is kept whole; deeper is the core's error at the value 65 deep, as on every host", () => {
  const nest = (n) => {
    let v = "leaf";
    for (let i = 0; i < n; i++) v = [v];
    return v;
  };
  const req = { observation_template: T, run_messages: run, steps: [step(0)] };
  assert.ok(JSON.stringify(asm.export(req, "openai-chat", { body: { x: nest(64) } })).includes(JSON.stringify(nest(64))));
  for (const n of [33, 40, 64]) assert.deepEqual(asm.export(req, "openai-chat", { body: { x: nest(n) } }).x, nest(n));
  for (const n of [65, 70, 100, 200]) {
    const e = errorOf(() => asm.export(req, "openai-chat", { body: { x: nest(n) } }));
    assert.deepEqual(
      [e.code, e.path, e.message],
      ["malformed_request", "options.body.x" + "[0]".repeat(65), "this value nests deeper than 64 levels"],
    );
  }
});

test("export: a body field named ok, false or true, is the body's like any other (the answer is judged by error only)", () => {
  const req = { observation_template: T, run_messages: run, steps: [step(0)] };
  for (const ok of [false, true, null, 0]) {
    const out = asm.export(req, "openai-chat", { body: { model: "m", ok } });
    assert.deepEqual(Object.keys(out).slice(0, 2), ["model", "ok"]);
    assert.equal(out.ok, ok);
  }
  const p = asm.prompt(req);
  assert.equal(p.export("anthropic", { body: { ok: false, max_tokens: 8 } }).ok, false);
});

test("cacheReport: a usage that cannot be read is that call's invalid_usage; counts up to 2^53 - 1 come back exactly", () => {
  const requests = [0, 1, 2].map((k) => ({
    observation_template: T,
    run_messages: run,
    steps: Array.from({ length: k }, (_, i) => step(i)),
  }));
  const over =
    "a count of tokens over 2^53 − 1 (9007199254740991), more than any provider records and more than every host holds exactly; " +
    "give the provider's recorded usage as it is";
  for (const [usage, path, message] of [
    [{ cache_read_input_tokens: 2n ** 64n - 1n }, "usage.cache_read_input_tokens", over],
    [{ cache_read_input_tokens: 2n ** 53n }, "usage.cache_read_input_tokens", over],
    [{ usage: { input_tokens_details: { cached_tokens: 2n ** 62n + 1n } } }, "usage.usage.input_tokens_details.cached_tokens", over],
    [
      new Map([
        [1, 2],
        ["cache_read_input_tokens", 5],
      ]),
      "usage",
      "object keys must be strings, found an integer",
    ],
    [{ x: JSON.parse("[".repeat(65) + "0" + "]".repeat(65)) }, "usage.x" + "[0]".repeat(65), "this value nests deeper than 64 levels"],
  ]) {
    const report = asm.cacheReport(requests, [null, usage, { cache_read_input_tokens: 7 }]);
    assert.deepEqual(report.calls[1].usage, {
      cached_tokens: null,
      written_tokens: null,
      class: "invalid_usage",
      error: { code: "malformed_request", message, path },
    });
    assert.deepEqual(report.calls[2].usage, { cached_tokens: 7, written_tokens: null, class: "hit" });
    assert.equal(report.totals.usage_errors, 1);
  }
  for (const n of [2n ** 53n - 1n, Number.MAX_SAFE_INTEGER, 2 ** 40 + 1]) {
    const report = asm.cacheReport(requests.slice(0, 2), [null, { cache_read_input_tokens: n }]);
    assert.deepEqual(report.calls[1].usage, { cached_tokens: Number(n), written_tokens: null, class: "hit" });
  }
});

test("cacheReport: one request where the run's list belongs is the core's malformed_request at requests, never its keys read as requests", () => {
  const req = { observation_template: T, run_messages: run, steps: [step(0)] };
  for (const usage of [undefined, null, [null]]) {
    const e = errorOf(() => asm.cacheReport(req, usage));
    assert.ok(e instanceof AssemblyError, String(e));
    assert.deepEqual([e.code, e.path], ["malformed_request", "requests"]);
    assert.match(e.message, /an object/);
  }
});
