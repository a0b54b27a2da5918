// The loop API: a Prompt wherever a request goes (export, cacheReport,
// compare), prompt.export, and assembler.cacheRun() (docs/SPEC.md §7.12–7.15).
// The oracle of each is the same call over the request with the same steps,
// which the loop keeps beside its Prompt, and hand-written literals: where the
// run breaks, each call's class, the wire each call sends.

import test from "node:test";
import assert from "node:assert/strict";
import { AssemblyError, CacheRun } from "@polyloop/assembly";
import { assembler, errorOf } from "./common.mjs";

const asm = await assembler();
const text = (role, t) => ({ role, content: [{ type: "text", text: t }] });
const step = (k) => ({ raw_output: `call tool ${k} é`, observation: `result ${k} 🙂` });
const notes = (content) => ({ notes: [{ entry_id: "n1", content }] });
/** The loop's request with `steps` (and the notes' text). */
const requestOf = (steps, note = "Use small steps.") => ({
  observation_template: "Observation: {observation}",
  run_messages: [text("system", "You are a careful agent.")],
  injections: notes(note),
  goal_messages: [text("user", "Find the bug.")],
  steps,
});
const PROVIDERS = [
  ["anthropic", { ttl: "1h" }],
  ["openai-chat", { prompt_cache_key: "loop-1", body: { model: "m" } }],
  ["openai-responses", null],
];

/** Runs `f` with every cache_call's arguments recorded. */
function recordingCacheCalls(f) {
  const sent = [];
  const call = asm.call;
  asm.call = function (name, ...args) {
    if (name === "cache_call") sent.push({ prompt: args[1], previous: args[2], usage: args[3] });
    return call.call(this, name, ...args);
  };
  try {
    f();
  } finally {
    delete asm.call; // the prototype's again
  }
  return sent;
}

test("a 40-call loop: cacheRun's verdicts are cacheReport's over the same requests, breaks at 20 and 30", () => {
  const run = asm.cacheRun();
  assert.ok(run instanceof CacheRun);
  const requests = []; // each call's request, as the loop would have written it
  const usages = [];
  const entries = [];
  let steps = [];
  let note = "Use small steps.";
  let prompt = asm.prompt(requestOf(steps, note));
  const sent = recordingCacheCalls(() => {
    for (let k = 0; k < 40; k++) {
      if (k === 20) {
        // The history condensed: a summary step stands for steps 0–15.
        steps = [{ raw_output: "summary", observation: "steps 0 to 15 found nothing" }, ...steps.slice(16)];
        prompt = asm.prompt(requestOf(steps, note));
      }
      if (k === 30) {
        note = "Use small steps; test each.";
        prompt = asm.prompt(requestOf(steps, note));
      }
      steps = [...steps, step(k)];
      prompt.addStep(step(k).raw_output, step(k).observation);
      // The provider read its cache but on call 0 (nothing yet), call 30 (the injection changed) and
      // call 35 (a planted miss: the prefix is kept); call 12's usage was not recorded.
      const usage = k === 12 ? null : { input_tokens: 50, cache_read_input_tokens: k === 0 || k === 30 || k === 35 ? 0 : 40 };
      requests.push(requestOf(steps, note));
      usages.push(usage);
      entries.push(run.call(prompt, usage));
    }
  });
  const report = asm.cacheReport(requests, usages);
  for (let k = 0; k < 40; k++) assert.deepEqual(entries[k], report.calls[k], `call ${k}`);
  assert.deepEqual(run.report(), report);

  const breaks = entries.flatMap((c, k) => (c.break === null ? [] : [[k, c.break.segment, c.break.cause]]));
  assert.deepEqual(breaks, [
    [20, "history", "history_rewritten"],
    [30, "injections", "injections_changed"],
  ]);
  const classes = entries.map((c) => c.usage.class);
  const expected = Array.from({ length: 40 }, (_, k) =>
    k === 0 ? "first" : k === 12 ? "no_usage" : k === 30 ? "prefix_break" : k === 35 ? "provider_miss" : "hit",
  );
  assert.deepEqual(classes, expected);
  assert.deepEqual(
    entries.map((c) => c.previous),
    Array.from({ length: 40 }, (_, k) => (k === 0 ? null : k - 1)),
  );
  assert.equal(report.totals.breaks, 2);

  // The wire: a grown Prompt sends its new messages alone; a new Prompt sends its prompt form with the last
  // call's prompt (the old Prompt's messages then) as previous.
  const whole = [0, 20, 30];
  sent.forEach((s, k) => {
    assert.equal(s.usage, usages[k], `call ${k}'s usage`);
    if (whole.includes(k)) {
      assert.ok(Array.isArray(s.prompt.messages) && s.prompt.segments, `call ${k} sends its prompt form`);
      assert.equal(s.prompt.messages.length, 3 + 2 * requests[k].steps.length);
      if (k === 0) assert.equal(s.previous, null);
      else assert.equal(s.previous.messages.length, 3 + 2 * requests[k - 1].steps.length, `call ${k}'s previous`);
    } else {
      assert.deepEqual(Object.keys(s.prompt), ["extends", "messages"], `call ${k} sends an extension`);
      assert.equal(s.prompt.extends, 3 + 2 * requests[k - 1].steps.length);
      assert.equal(s.prompt.messages.length, 2);
      assert.equal(s.previous, null);
    }
  });
});

test("cacheRun: previous is the last valid call's prompt as it was, a Prompt that grew since or a request changed since", () => {
  const p = asm.prompt(requestOf([step(0)]));
  const run = asm.cacheRun();
  run.call(p, { cache_read_input_tokens: 0 });
  p.addStep("unreported", "step"); // grows after its call, then the loop reports another prompt
  const other = requestOf([step(0), step(1)]);
  const second = run.call(other, null);
  other.steps.push(step(2)); // changed after its call
  const third = run.call(requestOf([step(5)]), { cache_read_input_tokens: 0 });
  const expected = asm.cacheReport(
    [requestOf([step(0)]), requestOf([step(0), step(1)]), requestOf([step(5)])],
    [{ cache_read_input_tokens: 0 }, null, { cache_read_input_tokens: 0 }],
  );
  assert.deepEqual([second, third], expected.calls.slice(1));
  assert.equal(second.extends, true); // of p with step 0 alone, not of p as it is now
  assert.equal(third.break.cause, "history_rewritten");
  assert.deepEqual(run.report(), expected);
});

test("cacheRun: an invalid request leaves the last valid call; requests, JSON text and bytes mix with a Prompt", () => {
  const p = asm.prompt(requestOf([]));
  const bad = { ...requestOf([]), observation_template: "no field" };
  const run = asm.cacheRun();
  const calls = [];
  const sent = recordingCacheCalls(() => {
    calls.push(run.call(p));
    calls.push(run.call(bad, { cache_read_input_tokens: 3 }));
    p.addStep("a", "b");
    calls.push(run.call(p, { cache_read_input_tokens: 3 }));
    calls.push(run.call(JSON.stringify(requestOf([{ raw_output: "a", observation: "b" }])), null));
    calls.push(run.call(p, { cache_read_input_tokens: -1 }));
  });
  assert.deepEqual(Object.keys(sent[2].prompt), ["extends", "messages"], "the invalid call between leaves p the last valid call");
  assert.equal(sent[0].usage, null, "a call without usage sends nil");
  const same = requestOf([{ raw_output: "a", observation: "b" }]);
  const expected = asm.cacheReport(
    [requestOf([]), bad, same, JSON.stringify(same), same],
    [null, { cache_read_input_tokens: 3 }, { cache_read_input_tokens: 3 }, null, { cache_read_input_tokens: -1 }],
  );
  assert.deepEqual(calls, expected.calls);
  assert.deepEqual(run.report(), expected);
  assert.equal(calls[1].error.code, "invalid_template");
  assert.equal(calls[2].previous, 0);
  assert.equal(calls[4].usage.class, "invalid_usage");
  assert.equal(run.report().totals.usage_errors, 1);
  // Entries and reports are the caller's.
  calls[0].prompt_chars = -1;
  run.report().calls[0].prompt_chars = -1;
  assert.deepEqual(run.report(), expected);
});

test("cacheRun: a run with no call reports as cacheReport of none", () => {
  assert.deepEqual(asm.cacheRun().report(), asm.cacheReport([], []));
  assert.deepEqual(asm.cacheRun().report().totals.calls, 0);
});

test("prompt.export at 10, 100 and 1,000 steps is export of the request with those steps, for every provider", () => {
  const p = asm.prompt(requestOf([]));
  const steps = [];
  for (const n of [10, 100, 1000]) {
    while (steps.length < n) {
      const s = step(steps.length);
      steps.push(s);
      p.addStep(s.raw_output, s.observation);
    }
    for (const [provider, options] of PROVIDERS) {
      const body = p.export(provider, options);
      assert.equal(JSON.stringify(body), JSON.stringify(asm.export(requestOf(steps), provider, options)), `${provider} at ${n}`);
      assert.deepEqual(asm.export(p, provider, options), body);
    }
  }
  // The body is the caller's: changing it changes neither the prompt nor the next export.
  const body = p.export("openai-chat");
  body.messages[0].content[0].text = "changed";
  body.messages.length = 1;
  assert.equal(p.messages[0].content[0].text, "You are a careful agent.");
  assert.equal(p.export("openai-chat").messages.length, 3 + 2 * 1000);
});

test("prompt.export: a hand-written body, and an error as the request's (code, path, message)", () => {
  const p = asm.prompt(requestOf([])).addStep("ls", "a b");
  assert.deepEqual(p.export("openai-responses", { prompt_cache_key: "k" }), {
    input: [
      { role: "system", content: [{ type: "input_text", text: "You are a careful agent." }] },
      { role: "user", content: [{ type: "input_text", text: "Use small steps." }] },
      { role: "user", content: [{ type: "input_text", text: "Find the bug." }] },
      { role: "assistant", content: [{ type: "output_text", text: "ls" }] },
      { role: "user", content: [{ type: "input_text", text: "Observation: a b" }] },
    ],
    prompt_cache_key: "k",
  });
  const late = { ...requestOf([step(0)]), goal_messages: [text("user", "Find it."), text("system", "Late.")] };
  const lp = asm.prompt(late);
  for (const [f, g] of [
    [() => lp.export("anthropic"), () => asm.export(late, "anthropic")],
    [
      () => p.export("anthropic", { body: { messages: [] } }),
      () => asm.export(requestOf([{ raw_output: "ls", observation: "a b" }]), "anthropic", { body: { messages: [] } }),
    ],
  ]) {
    const e = errorOf(f);
    const want = errorOf(g);
    assert.ok(e instanceof AssemblyError && want instanceof AssemblyError, String(e));
    assert.deepEqual([e.code, e.path, e.message], [want.code, want.path, want.message]);
  }
  assert.equal(errorOf(() => lp.export("anthropic")).path, "request.goal_messages[1]");
});

test("cacheReport and compare take a Prompt as the request with its steps", () => {
  const p = asm.prompt(requestOf([step(0)]));
  const then = requestOf([step(0)]);
  const before = requestOf([]);
  const usage = [null, { cache_read_input_tokens: 5 }, { cache_read_input_tokens: 0 }];
  const report = asm.cacheReport([before, p, requestOf([step(0), step(1)], "edited")], usage);
  assert.deepEqual(report, asm.cacheReport([before, then, requestOf([step(0), step(1)], "edited")], usage));
  assert.equal(report.calls[1].extends, true);
  assert.equal(report.calls[2].break.cause, "injections_changed");

  const q = asm.prompt(requestOf([], "edited")).addStep(step(0).raw_output, step(0).observation);
  assert.deepEqual(asm.compare(p, before), asm.compare(then, before));
  assert.deepEqual(asm.compare(before, p), asm.compare(before, then));
  assert.deepEqual(asm.compare(p, q), asm.compare(then, requestOf([step(0)], "edited")));
  assert.equal(asm.compare(p, then).identical, true);
  p.addStep("more", "steps");
  // A Prompt goes as it is at the call.
  assert.deepEqual(asm.compare(p, then), asm.compare(requestOf([step(0), { raw_output: "more", observation: "steps" }]), then));
});

test("examples/caching/loop.mjs, the twin of loop.py, runs on the anthropic SDK and names each break", async () => {
  const { main } = await import("../../../examples/caching/loop.mjs");
  const log = console.log;
  console.log = () => {};
  let calls;
  try {
    calls = await main();
  } finally {
    console.log = log;
  }
  const breaks = calls.flatMap((c, i) => (c.break ? [[i, c.break.cause]] : []));
  assert.deepEqual(breaks, [
    [6, "injections_changed"],
    [9, "history_rewritten"],
  ]);
  assert.deepEqual(
    calls.flatMap((c, i) => (c.usage.class !== "hit" ? [i] : [])),
    [0, 11],
  );
});

test("a Prompt where the run's list belongs is refused at requests, as one request", () => {
  const e = errorOf(() => asm.cacheReport(asm.prompt({ observation_template: "{observation}" })));
  assert.ok(e instanceof AssemblyError);
  assert.deepEqual([e.code, e.path], ["malformed_request", "requests"]);
  assert.match(e.message, /found one request/);
});
