// The prompt vectors (testdata/prompt-vectors, rules in its README.md) on the
// binding's Prompt, whose incremental rules (overflow, the steps[k] path of a
// refused step, the prompt unchanged after it) are the binding's own: each
// step's expected response is the reference's answer to one request holding
// all the steps so far. Chromium runs the same file in browser.test.mjs.

import test from "node:test";
import assert from "node:assert/strict";
import { AssemblyError } from "@polyloop/assembly";
import { assembler, errorOf, loadPromptVectors } from "./common.mjs";
import { requestToJs } from "./jsvalue.mjs";

const asm = await assembler();
const cases = loadPromptVectors();
// The expected responses are decoded by the suite's own msgpack reader, not by
// the library the binding uses (a shared decoder would hide its changes).
const fromB64 = (s) => requestToJs(new Uint8Array(Buffer.from(s, "base64")));

for (const c of cases) {
  test(`prompt vector ${c.name}`, () => {
    const p = asm.prompt(c.request);
    let want = fromB64(c.response);
    assert.deepEqual(p.toResponse(), want, "the first response");
    for (const [i, s] of c.steps.entries()) {
      if (s.error) {
        const e = errorOf(() => p.addStep(s.raw_output, s.observation));
        assert.ok(e instanceof AssemblyError, `step ${i}: expected an AssemblyError, got ${e}`);
        assert.deepEqual({ code: e.code, path: e.path }, s.error, `step ${i}`);
      } else {
        p.addStep(s.raw_output, s.observation);
        want = fromB64(s.response);
      }
      assert.deepEqual(p.toResponse(), want, `after step ${i} (${JSON.stringify(s.raw_output)}, ${JSON.stringify(s.observation)})`);
    }
  });
}

test("the prompt vectors hold refused steps and overflow turning on", () => {
  assert.ok(cases.length >= 8);
  assert.ok(cases.flatMap((c) => c.steps).filter((s) => s.error).length >= 5);
  const overflow = new Set(cases.flatMap((c) => c.steps).filter((s) => s.response).map((s) => fromB64(s.response).context_overflow));
  assert.deepEqual([...overflow].sort(), [false, true]);
});
