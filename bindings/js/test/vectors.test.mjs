// The shared vectors (testdata/vectors, rules in testdata/vectors/README.md)
// through assembleBytes, then the same vectors through assemble() wherever
// JavaScript can express the request. An ok case gives the vector's response
// bytes exactly; an error case the AssemblyError (read by the binding's own
// decoder) with the vector's code, path and offset. The canonical shape of
// error responses is the Go runner's check (core/vectors_test.go); host-test
// proves every engine gives its bytes.

import test from "node:test";
import assert from "node:assert/strict";
import { ERROR_CODES } from "@polyloop/assembly";
import { assembler, errorOf } from "./common.mjs";
import { checkError, describeMismatch, errorOfResponse, loadCases } from "./vectorsets.mjs";
import { requestToJs, Unrepresentable } from "./jsvalue.mjs";
import { encodeRequest } from "../src/encode.js";

const asm = await assembler();
const vectors = loadCases("vectors");

// Rules 2-4, through assembleBytes.
for (const lv of vectors) {
  test(`vector ${lv.id} (assembleBytes)`, () => {
    const got = asm.assembleBytes(lv.request);
    if (lv.error === undefined) {
      assert.ok(Buffer.from(got).equals(Buffer.from(lv.response)), `${lv.description}\n${describeMismatch(got, lv.response)}`);
      return;
    }
    checkError(errorOfResponse(asm, got), lv.error, lv.description);
  });
}

// Rule 5: the codes of the vectors are declared codes and cover all but
// too_large and internal.
test("vectors cover every error code", () => {
  const covered = new Set();
  for (const lv of vectors) {
    if (lv.error) {
      assert.ok(ERROR_CODES.includes(lv.error.code), `${lv.file}/${lv.name}: code ${lv.error.code} is not in ERROR_CODES`);
      covered.add(lv.error.code);
    }
  }
  for (const code of ERROR_CODES) {
    if (code === "too_large" || code === "internal") continue;
    assert.ok(covered.has(code), `no vector has error code ${code}`);
  }
});

// Rule 6: the three empty-injection forms.
test("vectors: empty injections give identical bytes", () => {
  const names = ["injections-empty-absent", "injections-empty-map", "injections-empty-channels"];
  const byName = new Map(vectors.map((lv) => [lv.name, lv]));
  let first;
  for (const [i, n] of names.entries()) {
    const lv = byName.get(n);
    assert.ok(lv && lv.response, `vector ${n} missing or not an ok case`);
    assert.deepEqual(lv.response, byName.get(names[0]).response, `vectors ${names[0]} and ${n} expect different responses`);
    const got = asm.assembleBytes(lv.request);
    if (i === 0) first = got;
    else assert.deepEqual(got, first, `${names[0]} and ${n} give different bytes`);
  }
});

// The same vectors through assemble(): the request as the JavaScript value a
// user would write (when one exists) must give the same response object, the
// same bytes when re-encoded, or an AssemblyError with the vector's code and
// path.
const stats = { ok: 0, err: 0, skipped: [] };
for (const lv of vectors) {
  let js;
  try {
    js = requestToJs(lv.request);
  } catch (e) {
    if (!(e instanceof Unrepresentable)) throw e;
    stats.skipped.push(`${lv.name}: ${e.message}`);
    continue;
  }
  test(`vector ${lv.id} (assemble)`, () => {
    if (lv.error === undefined) {
      stats.ok++;
      // The expected response read by the suite's own msgpack reader: the
      // binding's decoding library must not be the judge of its own output.
      assert.deepEqual(asm.assemble(js), requestToJs(lv.response));
      assert.deepEqual(asm.assembleBytes(encodeRequest(js)), lv.response);
      return;
    }
    stats.err++;
    checkError(
      errorOf(() => asm.assemble(js)),
      lv.error,
      lv.description,
    );
  });
}

test("assemble() ran every ok vector and most error vectors", (t) => {
  const okTotal = vectors.filter((lv) => lv.error === undefined).length;
  const errTotal = vectors.length - okTotal;
  assert.equal(stats.ok, okTotal, `ok vectors not representable in JavaScript:\n${stats.skipped.join("\n")}`);
  assert.ok(stats.err >= errTotal * 0.6, `only ${stats.err} of ${errTotal} error vectors ran; skipped:\n${stats.skipped.join("\n")}`);
  t.diagnostic(`assemble(): ${stats.ok} ok + ${stats.err} error vectors; ${stats.skipped.length} not expressible in JavaScript`);
});
