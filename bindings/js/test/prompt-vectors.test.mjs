// The prompt vectors (testdata/prompt-vectors, rules in its README.md) on the
// binding's Prompt, whose incremental rules (overflow, the steps[k] path of a
// refused step, the prompt unchanged after it) are the binding's own: each
// step's expected response is the reference's answer to one request holding
// all the steps so far. Chromium runs the same file in browser.test.mjs.

import test from "node:test";
import assert from "node:assert/strict";
import { assembler, errorOf } from "./common.mjs";
import { checkError, loadCases } from "./vectorsets.mjs";
import { requestToJs } from "./jsvalue.mjs";

const asm = await assembler();
const cases = loadCases("prompt-vectors");
// The expected responses are decoded by the suite's own msgpack reader, not by
// the library the binding uses (a shared decoder would hide its changes).

for (const c of cases) {
  test(`prompt vector ${c.name}`, () => {
    const p = asm.prompt(c.request);
    let want = requestToJs(c.response);
    assert.deepEqual(p.response(), want, "the first response");
    for (const [i, s] of c.steps.entries()) {
      if (s.error) {
        checkError(
          errorOf(() => p.addStep(s.raw_output, s.observation)),
          s.error,
          `step ${i}`,
        );
      } else {
        p.addStep(s.raw_output, s.observation);
        want = requestToJs(s.response);
      }
      assert.deepEqual(p.response(), want, `after step ${i} (${JSON.stringify(s.raw_output)}, ${JSON.stringify(s.observation)})`);
    }
  });
}

test("the prompt vectors hold refused steps and overflow turning on", () => {
  assert.ok(cases.length >= 8);
  assert.ok(cases.flatMap((c) => c.steps).filter((s) => s.error).length >= 5);
  const overflow = new Set(
    cases
      .flatMap((c) => c.steps)
      .filter((s) => s.response)
      .map((s) => requestToJs(s.response).context_overflow),
  );
  assert.deepEqual([...overflow].sort(), [false, true]);
});
