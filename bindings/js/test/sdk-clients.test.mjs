// The providers' official clients (@anthropic-ai/sdk, openai; exact devDependencies), no network: every
// export vector's body goes through client.messages.create(body), client.chat.completions.create(body) or
// client.responses.create(body) with a custom fetch, and the JSON the SDK puts on the wire is the export's
// (docs/SPEC.md §7.13); the fetch answers recorded responses (testdata/provider-responses/), and the SDK's
// answers, their usage, their JSON text, given to cacheReport, give what the recorded JSON gives (§7.12).
// Expected classes are written by hand.

import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { AssemblyError } from "@polyloop/assembly";
import { REPO, assembler } from "./common.mjs";

const asm = await assembler();
const readJSON = (path) => JSON.parse(readFileSync(REPO + path, "utf8"));
const recorded = (name) => readJSON(`testdata/provider-responses/${name}.json`);
// The fields an SDK's create() requires that a vector's body may lack (the export writes only what it is given).
const REQUIRED = {
  anthropic: { model: "claude-sonnet-4-5", max_tokens: 1024 },
  "openai-chat": { model: "gpt-4.1" },
  "openai-responses": { model: "gpt-4.1" },
};
const VECTORS = ["export.json", "export-long.json"]
  .flatMap((name) => readJSON(`testdata/export-vectors/${name}`).cases)
  .filter((c) => c.answer !== undefined); // an error case has no body to send

/** A custom fetch: what the SDK sent (its JSON text), answered with `answers` in turn. */
function wire(answers) {
  const sent = [];
  const fetch = async (url, init) => {
    sent.push(init.body);
    const body = answers[(sent.length - 1) % answers.length];
    return new Response(JSON.stringify(body), {
      status: 200,
      headers: { "content-type": "application/json", "request-id": "req_test", "x-request-id": "req_test" },
    });
  };
  return { sent, fetch };
}

/** The create() of the provider's client over `fetch`. */
function create(provider, fetch, baseURL) {
  const options = { apiKey: "test-key", maxRetries: 0, fetch, ...(baseURL ? { baseURL } : {}) };
  if (provider === "anthropic") {
    const client = new Anthropic(options);
    return (body) => client.messages.create(body);
  }
  const client = new OpenAI(options);
  return provider === "openai-chat" ? (body) => client.chat.completions.create(body) : (body) => client.responses.create(body);
}

/** Every string of a JSON value, keys and values. */
function* strings(value) {
  if (typeof value === "string") yield value;
  else if (Array.isArray(value)) for (const v of value) yield* strings(v);
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      yield k;
      yield* strings(v);
    }
  }
}

for (const provider of Object.keys(REQUIRED)) {
  test(`every ${provider} export goes on the wire as exported`, async () => {
    const cases = VECTORS.filter((c) => c.provider === provider);
    assert.ok(cases.length >= 100, "the vectors of the provider with a body were read");
    const { sent, fetch } = wire(recorded(provider));
    const send = create(provider, fetch);
    for (const c of cases) {
      const body = JSON.parse(c.answer);
      const added = Object.fromEntries(Object.entries(REQUIRED[provider]).filter(([k]) => !(k in body)));
      await send({ ...body, ...added });
      const onWire = JSON.parse(sent.at(-1));
      assert.deepStrictEqual(onWire, { ...body, ...added }, c.name);
      assert.deepStrictEqual([...strings(onWire)].sort(), [...strings(body), ...strings(added)].sort(), c.name); // each text, exactly
    }
  });
}

// A run of four calls: each extends the one before, the last changes its system message (a break).
const block = (text) => ({ type: "text", text });
const run = [0, 1, 2, 3].map((i) => ({
  run_messages: [{ role: "system", content: [block("You are a careful agent." + (i === 3 ? " Answer briefly." : ""))] }],
  goal_messages: [{ role: "user", content: [block("Find the build command.")] }],
  steps: Array.from({ length: i + 1 }, (_, s) => ({ raw_output: `Thought ${s}.\nAction: look(${s})`, observation: `result ${s}: café ✓` })),
  observation_template: "Observation: {observation}",
}));
// The recorded answers of the four calls (first, hit, miss, miss) and the classes they get, by hand.
const ANSWERS = [0, 1, 2, 2];
const CLASSES = ["first", "hit", "provider_miss", "prefix_break"];
const SHAPES = [
  // [recorded responses, export provider, base URL, the hit's cached tokens]
  ["anthropic", "anthropic", "", 1910],
  ["openai-chat", "openai-chat", "", 1920],
  ["openai-responses", "openai-responses", "", 1920],
  ["deepseek-chat", "openai-chat", "https://api.deepseek.com", 1920], // its own usage fields
];

/** A user's class whose JSON form is its toJSON(). */
class Recorded {
  constructor(json) {
    this.json = json;
  }
  toJSON() {
    return this.json;
  }
}

for (const [name, provider, baseURL, cached] of SHAPES) {
  test(`${name}: the SDK's answer as the user holds it`, async () => {
    const answers = ANSWERS.map((k) => recorded(name)[k]);
    const { sent, fetch } = wire(answers);
    const send = create(provider, fetch, baseURL);
    const objects = [];
    for (const request of run) {
      const body = asm.export(request, provider, { body: REQUIRED[provider] });
      objects.push(await send(body));
      assert.deepStrictEqual(JSON.parse(sent.at(-1)), body);
    }
    const want = asm.cacheReport(run, answers);
    assert.deepEqual(
      want.calls.map((c) => c.usage.class),
      CLASSES,
    );
    assert.deepEqual(
      want.calls.map((c) => c.usage.cached_tokens),
      [0, cached, 0, 0],
    );
    for (const given of [
      objects, // the SDK's own objects
      objects.map((o) => o.usage), // the usage alone
      objects.map((o) => JSON.stringify(o)), // JSON text
      objects.map((o) => new TextEncoder().encode(JSON.stringify(o))), // its UTF-8
      objects.map((o) => new Recorded(o)), // a class instance with toJSON()
      answers.map((a) => JSON.stringify(a)),
    ]) {
      assert.deepStrictEqual(asm.cacheReport(run, given), want);
    }
  });
}

test("cacheReport: a usage that is none of these is a coded error at usage[i]", async () => {
  const expected = "expected a usage object, a response, its JSON text, or an object with toJSON()";
  const { fetch } = wire(recorded("anthropic"));
  const pending = create("anthropic", fetch)({ ...REQUIRED.anthropic, messages: [{ role: "user", content: "hi" }] });
  class Usage {
    constructor() {
      this.cache_read_input_tokens = 5;
    }
  }
  const cases = [
    [0, new Usage(), "found a Usage"],
    [1, new Set([1]), "found a Set"],
    [2, "cached: 4", "found text that is not JSON"],
    [3, Uint8Array.of(0xff, 0x7b, 0x7d), "found text that is not JSON"],
    [1, () => 1, "found a Function"],
    [
      2,
      {
        toJSON() {
          throw new RangeError("no fields");
        },
      },
      "found a Object whose toJSON() raised RangeError: no fields",
    ],
    [0, pending, `found a ${pending.constructor.name}, not awaited: await the client's call and pass its result`],
  ];
  for (const [i, value, found] of cases) {
    const usage = [null, null, null, null];
    usage[i] = value;
    assert.throws(
      () => asm.cacheReport(run, usage),
      (e) => {
        assert.ok(e instanceof AssemblyError);
        assert.deepEqual([e.code, e.path, e.message], ["malformed_request", `usage[${i}]`, `${expected}; ${found}`]);
        return true;
      },
    );
  }
  await pending;
});

test("cacheReport: the core still judges a JSON value that is no usage", () => {
  const report = asm.cacheReport(run.slice(0, 3), [[1, 2], "7", { usage: { prompt_tokens_details: { cached_tokens: "12" } } }]);
  assert.deepEqual(
    report.calls.map((c) => [c.usage.class, c.usage.error.code, c.usage.error.path]),
    [
      ["invalid_usage", "malformed_request", "usage"],
      ["invalid_usage", "malformed_request", "usage"],
      ["invalid_usage", "malformed_request", "usage.usage.prompt_tokens_details.cached_tokens"],
    ],
  );
});
