// The generic call (Assembler#call: a row of the contract table, consts.js
// CALLS) and the shared texts of assemble() (docs/SPEC.md §7.11): the
// answers are checked against assembleBytes decoded by the msgpack library
// (common.mjs), an independent decoder.

import test from "node:test";
import assert from "node:assert/strict";
import { AssemblyError } from "@polyloop/assembly";
import { assembler, decode, errorOf } from "./common.mjs";
import { encodeRequest } from "../src/encode.js";

const asm = await assembler();
const T = "{observation}";
const block = (text) => ({ type: "text", text });
// Over 2 KiB, so assemble() takes the shared answer (a smaller request's is decoded whole).
const padding = { role: "user", content: Array.from({ length: 12 }, (_, i) => block(`${i}: ` + "padding text ".repeat(18))) };
const request = {
  observation_template: "Result: {observation}",
  run_messages: [{ role: "system", content: [block("You are a careful agent. ".repeat(4)), block("Tools: search(q), open(url).")] }],
  goal_messages: [{ role: "user", content: [block("Find the answer to the question asked below.")] }],
  steps: [{ raw_output: "Thought: search first.\nAction: search('x')", observation: "three pages of results, each long enough" }],
};

test("call(name, ...args) forwards by the contract table: the answer of each shape", () => {
  const bytes = encodeRequest(request);
  const wire = decode(asm.assembleBytes(bytes));
  assert.deepEqual(asm.call("assemble", bytes), wire);
  assert.deepEqual(asm.call("assemble", request), wire);
  assert.deepEqual(asm.call("assemble_json", JSON.stringify(request)), wire);
  const { response, view } = asm.call("assemble_view_json", JSON.stringify(request));
  assert.deepEqual(response, asm.assembleBytes(bytes));
  assert.equal(view.steps, 1);
  assert.deepEqual(asm.call("compare", request, wire.messages), asm.compare(request, wire.messages));
  assert.equal(asm.call("compare", request, wire.messages).identical, true);
  const e = errorOf(() => asm.call("compare", request, { observation_template: 7 }));
  assert.ok(e instanceof AssemblyError, String(e));
  assert.deepEqual([e.code, e.path], ["malformed_request", "b.observation_template"]);
  const bad = errorOf(() => asm.call("assemble_view", { observation_template: "no field" }));
  assert.deepEqual([bad.code, bad.path], ["invalid_template", "observation_template"]);
  for (const name of ["nope", "error", "batch"]) assert.throws(() => asm.call(name), /the calls are assemble, /);
});

test("errors only the host saw are the core's answers, in the shape of the call (docs/SPEC.md §7.10)", () => {
  // A JSON text over the module buffer cannot be made here; a request over
  // 1 GiB can (lazily zeroed memory): the error answer of assemble_json's shape.
  const e = errorOf(() => asm.call("assemble", new Uint8Array(2 ** 30 + 5)));
  assert.deepEqual([e.code, e.path], ["too_large", ""]);
  assert.equal(e.message, `the request is ${2 ** 30 + 5} bytes, over the 1 GiB limit; split it into smaller requests`);
  const c = errorOf(() => asm.compare(new Uint8Array(2 ** 30 + 5), []));
  assert.deepEqual([c.code, c.path], ["too_large", ""], "compare's JSON answer carries it too");
});

test("assemble(): texts come back as the request's, whatever the order of its keys and its Maps", () => {
  const steps = [
    { observation: "second key first: " + "o".repeat(80), raw_output: "r".repeat(90) },
    new Map([
      ["raw_output", "a Map step " + "x".repeat(60)],
      ["observation", "é😀".repeat(40)],
    ]),
  ];
  const injections = new Map([
    ["zeta", [{ entry_id: "z1", content: "zeta's entry, pasted after alpha's " + "z".repeat(50) }]],
    ["alpha", [{ content: "alpha's " + "a".repeat(70), entry_id: "a1" }]],
  ]);
  const mapBlock = new Map([
    ["text", "\uFEFFa leading BOM " + "b".repeat(60)],
    ["type", "text"],
  ]);
  const cases = [
    { steps, goal_messages: request.goal_messages, injections, run_messages: [...request.run_messages, padding], observation_template: T },
    new Map([
      ["observation_template", "<obs>{observation}</obs> {{literal}}"],
      ["steps", steps],
      [
        "run_messages",
        [
          new Map([
            ["content", [mapBlock]],
            ["role", "system"],
          ]),
          padding,
        ],
      ],
    ]),
    { ...request, goal_messages: [padding], observation_template: "{observation!r:>120} then {observation}" },
    { ...request, goal_messages: [padding], observation_template: "{observation}{observation}" },
    { ...request, goal_messages: [padding], observation_template: "<{observation}>".repeat(9) }, // 19 pieces: an array16
    { ...request, goal_messages: [padding], steps: [{ raw_output: "", observation: "" }] },
  ];
  for (const req of cases) {
    const got = asm.assemble(req);
    assert.deepEqual(got, decode(asm.assembleBytes(encodeRequest(req))));
    got.messages[0].content[0].text = "edited";
    assert.notEqual(asm.assemble(req).messages[0].content[0].text, "edited", "a fresh value each call");
  }
});

test("a text the engine cannot make, shared or in pieces: too_large at its path, by the core", async () => {
  const { loadAssembler } = await import("@polyloop/assembly");
  const a = await loadAssembler({ module: asm.module, maxInstances: 1 });
  a.crossing.maxStringUnits = 300; // the error's message (~210 units) still fits
  const long = "x".repeat(301);
  const shared = errorOf(() =>
    a.assemble({ observation_template: T, run_messages: [{ role: "user", content: [block("a"), block(long)] }, padding] }),
  );
  assert.deepEqual([shared.code, shared.path], ["too_large", "messages[0].content[1].text"]);
  assert.match(shared.message, /a string of 301 UTF-8 bytes at messages\[0\]\.content\[1\]\.text/);
  const pieces = errorOf(() =>
    a.assemble({
      observation_template: "Obs: {observation}",
      run_messages: [padding],
      steps: [{ raw_output: "r", observation: "é".repeat(300) }],
    }),
  );
  assert.deepEqual([pieces.code, pieces.path], ["too_large", "messages[2].content[0].text"]);
  assert.match(pieces.message, /a string of 605 UTF-8 bytes/);
});
