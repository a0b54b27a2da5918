// The hostile vectors (testdata/hostile-vectors/hostile.json, written by
// testdata/gen/gen_hostile_vectors.py, their verdicts by hand from the spec):
// arguments no typed API can make (a key twice, the byte 0xc1, counts past
// 2^53), sent as they are to the module Node runs; each gets its verdict,
// code and path, as on every other host (host-test, Python).
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { assembler, decode } from "./common.mjs";
import { CALL_CACHE_REPORT, CALL_COMPARE, CALL_EXPORT } from "../src/consts.js";

const file = new URL("../../../testdata/hostile-vectors/hostile.json", import.meta.url);
const { cases } = JSON.parse(readFileSync(file, "utf8"));
const asm = await assembler();

function raw(bytes, op) {
  const inst = asm.pool.acquire();
  try {
    return inst.invoke(bytes, op).slice();
  } finally {
    asm.pool.release(inst);
  }
}

const pick = (e) => (e ? { code: e.code, path: e.path } : null);

test("hostile vectors: every case's verdict", () => {
  assert.ok(cases.length >= 141); // issue 44: the adversarial matrix holds 141 cases at least
  for (const c of cases) {
    const args = Buffer.from(c.args, "base64");
    const op = { export: CALL_EXPORT, cache_report: CALL_CACHE_REPORT, compare: CALL_COMPARE }[c.call];
    const ans = c.call === "export" ? decode(raw(args, op)) : JSON.parse(new TextDecoder().decode(raw(args, op)));
    if (c.error) {
      assert.deepEqual(pick(ans.error), c.error, c.name);
      continue;
    }
    if (c.ok) {
      assert.equal(ans.error, undefined, `${c.name}: ${JSON.stringify(ans.error)}`);
      continue;
    }
    assert.equal(ans.error, undefined, c.name);
    assert.equal(ans.calls.length, c.calls.length, c.name);
    c.calls.forEach((want, i) => {
      const got = ans.calls[i];
      if (want.ok) assert.ok(!got.error && !got.usage?.error, `${c.name}: call ${i}`);
      if (want.error) assert.deepEqual(pick(got.error), want.error, `${c.name}: call ${i}`);
      if (want.usage_error) assert.deepEqual(pick(got.usage?.error), want.usage_error, `${c.name}: call ${i}`);
    });
  }
});

test("counts past 2^53 are that call's invalid_usage, never rounded or clamped", () => {
  const req = { observation_template: "{observation}", steps: [{ raw_output: "a", observation: "b" }] };
  for (const n of [2n ** 53n, 2n ** 53n + 1n, 2n ** 62n + 1n, 2n ** 64n - 1n, 2 ** 53]) {
    const [first, second] = asm.cacheReport([req, req], [{ cache_read_input_tokens: n }, { cache_read_input_tokens: 3 }]).calls;
    assert.equal(first.usage.class, "invalid_usage", String(n));
    assert.deepEqual(pick(first.usage.error), { code: "malformed_request", path: "usage.cache_read_input_tokens" }, String(n));
    assert.equal(second.usage.cached_tokens, 3);
  }
  const body = asm.export(req, "openai-chat", { body: { model: "m", seed: 2n ** 64n - 1n, n: 2n ** 62n + 1n } });
  assert.deepEqual([body.seed, body.n], [2n ** 64n - 1n, 2n ** 62n + 1n]); // passed through exactly
});
