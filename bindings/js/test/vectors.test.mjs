// The shared vectors (testdata/vectors, rules in testdata/vectors/README.md):
// a 1:1 port of core/vectors_test.go through assembleBytes, then the same
// vectors through assemble() wherever JavaScript can express the request.

import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { AssemblyError, ERROR_CODES } from "@polyloop/assembly";
import { VECTORS_DIR, assembler, errorOf } from "./common.mjs";
import { decodeErrorResponse } from "./strict.mjs";
import { requestToJs, Unrepresentable } from "./jsvalue.mjs";
import { encodeRequest } from "../src/wire.js";

const FILE_KEYS = ["description", "cases"];
const CASE_KEYS = ["name", "description", "request", "response", "error"];
const ERROR_KEYS = ["code", "path", "offset"]; // offset: invalid_template only

/** Strict standard base64 (RFC 4648, with padding). */
function b64(s, what) {
  if (typeof s !== "string" || !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s)) {
    throw new Error(`${what}: not standard base64`);
  }
  return new Uint8Array(Buffer.from(s, "base64"));
}

function checkKeys(obj, allowed, where) {
  for (const k of Object.keys(obj)) if (!allowed.includes(k)) throw new Error(`${where}: unknown key ${JSON.stringify(k)}`);
}

/** Rule 1: read every file; unknown keys, duplicate names and cases without
 * exactly one of response / error are errors. */
function loadVectors() {
  const files = readdirSync(VECTORS_DIR).filter((f) => f.endsWith(".json")).sort();
  if (files.length === 0) throw new Error(`no vector files in ${VECTORS_DIR}: run \`make vectors\``);
  const seen = new Map();
  const out = [];
  for (const f of files) {
    const vf = JSON.parse(readFileSync(`${VECTORS_DIR}/${f}`, "utf8"));
    checkKeys(vf, FILE_KEYS, f);
    if (!Array.isArray(vf.cases) || vf.cases.length === 0) throw new Error(`${f}: no cases`);
    for (const c of vf.cases) {
      checkKeys(c, CASE_KEYS, `${f}/${c.name}`);
      if (seen.has(c.name)) throw new Error(`${f}: case name ${JSON.stringify(c.name)} also in ${seen.get(c.name)}`);
      seen.set(c.name, f);
      if ((c.response === undefined) === (c.error === undefined)) {
        throw new Error(`${f}/${c.name}: a case has exactly one of response and error`);
      }
      if (c.error !== undefined) checkKeys(c.error, ERROR_KEYS, `${f}/${c.name}.error`);
      out.push({
        file: f,
        c,
        request: b64(c.request, `${f}/${c.name}: request`),
        response: c.response === undefined ? undefined : b64(c.response, `${f}/${c.name}: response`),
      });
    }
  }
  return out;
}

/** Where two byte strings first differ, for the failure message. */
function describeMismatch(got, want) {
  let i = 0;
  while (i < got.length && i < want.length && got[i] === want[i]) i++;
  const from = Math.max(i - 16, 0);
  const hx = (b) => Buffer.from(b.subarray(Math.min(from, b.length), from + 48)).toString("hex").replace(/(..)/g, "$1 ");
  return `responses differ at byte ${i} (got ${got.length} bytes, want ${want.length})\n got  ...${hx(got)}\n want ...${hx(want)}`;
}

const asm = await assembler();
const vectors = loadVectors();

// Rules 2-4, through assembleBytes.
for (const lv of vectors) {
  test(`vector ${lv.file.replace(/\.json$/, "")}/${lv.c.name} (assembleBytes)`, () => {
    const got = asm.assembleBytes(lv.request);
    if (lv.c.error === undefined) {
      assert.ok(Buffer.from(got).equals(Buffer.from(lv.response)), `${lv.c.description}\n${describeMismatch(got, lv.response)}`);
      return;
    }
    let e;
    try {
      e = decodeErrorResponse(got);
    } catch (err) {
      assert.fail(`${lv.c.description}\nwant error ${lv.c.error.code} at ${JSON.stringify(lv.c.error.path)}; ` +
        `the response is not a canonical error response: ${err.message}\n${Buffer.from(got.subarray(0, 200)).toString("hex")}`);
    }
    const seen = { code: e.code, path: e.path };
    if (e.offset !== undefined) seen.offset = e.offset;
    assert.deepEqual(seen, lv.c.error, `${lv.c.description} (message ${JSON.stringify(e.message)})`);
    assert.notEqual(e.message, "", `${lv.c.description}: empty error message`);
  });
}

// Rule 5: the codes of the vectors are declared codes and cover all but
// too_large and internal.
test("vectors cover every error code", () => {
  const covered = new Set();
  for (const lv of vectors) {
    if (lv.c.error) {
      assert.ok(ERROR_CODES.includes(lv.c.error.code), `${lv.file}/${lv.c.name}: code ${lv.c.error.code} is not in ERROR_CODES`);
      covered.add(lv.c.error.code);
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
  const byName = new Map(vectors.map((lv) => [lv.c.name, lv]));
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
    stats.skipped.push(`${lv.c.name}: ${e.message}`);
    continue;
  }
  test(`vector ${lv.file.replace(/\.json$/, "")}/${lv.c.name} (assemble)`, () => {
    if (lv.c.error === undefined) {
      stats.ok++;
      // The expected response read by the suite's own msgpack reader: the
      // binding's decoding library must not be the judge of its own output.
      assert.deepEqual(asm.assemble(js), requestToJs(lv.response));
      assert.deepEqual(asm.assembleBytes(encodeRequest(js)), lv.response);
      return;
    }
    stats.err++;
    const e = errorOf(() => asm.assemble(js));
    assert.ok(e instanceof AssemblyError, `expected an AssemblyError, got ${e}`);
    assert.deepEqual({ code: e.code, path: e.path }, { code: lv.c.error.code, path: lv.c.error.path }, lv.c.description);
    assert.notEqual(e.message, "");
    // AssemblyError.offset: the template error's offset (undefined for other codes).
    if (lv.c.error.offset !== undefined) assert.equal(e.offset, lv.c.error.offset, lv.c.description);
  });
}

test("assemble() ran every ok vector and most error vectors", (t) => {
  const okTotal = vectors.filter((lv) => lv.c.error === undefined).length;
  const errTotal = vectors.length - okTotal;
  assert.equal(stats.ok, okTotal, `ok vectors not representable in JavaScript:\n${stats.skipped.join("\n")}`);
  assert.ok(stats.err >= errTotal * 0.6, `only ${stats.err} of ${errTotal} error vectors ran; skipped:\n${stats.skipped.join("\n")}`);
  t.diagnostic(`assemble(): ${stats.ok} ok + ${stats.err} error vectors; ${stats.skipped.length} not expressible in JavaScript`);
});
