/**
 * The shared vector sets of testdata/ for the JavaScript tests: one loader for
 * every set and the error check through the binding's own decoder.
 *
 * The files' shape is checked once, where they are written and committed
 * (testdata/gen/schema.py, run by the generators and the reference suite), so
 * the loader only decodes them; and host-test proves that every engine gives
 * native Go's bytes, so an error response is read here as users read it: the
 * AssemblyError the API throws for it. (The msgpack-to-JavaScript reader of
 * requests and expected responses is jsvalue.mjs.)
 *
 * @module
 */

import { readFileSync, readdirSync, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { AssemblyError } from "@polyloop/assembly";

const TESTDATA = fileURLToPath(new URL("../../../testdata/", import.meta.url));
/** Base64 wherever they are strings (the formats' READMEs). */
const BASE64_KEYS = ["request", "response", "msgpack"];

const decoded = (obj) =>
  Object.fromEntries(
    Object.entries(obj).map(([k, v]) => [
      k,
      BASE64_KEYS.includes(k) && typeof v === "string" ? new Uint8Array(Buffer.from(v, "base64")) : v,
    ]),
  );

/**
 * Every case of testdata/<set>/*.json (`vectors`, `json-vectors`,
 * `prompt-vectors`), files in name order, base64 values as bytes; `[]` when
 * the set is missing.
 *
 * @param {string} set
 * @returns {{file: string, id: string, name: string, description: string, request: any, response?: Uint8Array,
 *   error?: {code: string, path: string, offset?: number}, msgpack?: Uint8Array, syntax: boolean,
 *   steps: {raw_output: string, observation: string, response?: Uint8Array, error?: {code: string, path: string}}[]}[]}
 */
export function loadCases(set) {
  const dir = `${TESTDATA}${set}`;
  if (!existsSync(dir)) return [];
  const out = [];
  for (const file of readdirSync(dir)
    .filter((n) => n.endsWith(".json"))
    .sort()) {
    for (const c of JSON.parse(readFileSync(`${dir}/${file}`, "utf8")).cases) {
      const id = `${file.replace(/\.json$/, "")}/${c.name}`;
      out.push({ ...decoded(c), file, id, syntax: c.syntax === true, steps: (c.steps ?? []).map(decoded) });
    }
  }
  return out;
}

/**
 * The AssemblyError the binding throws for these response bytes (its own
 * decoder, as assemble() reads them).
 * @param {import("../src/assembler.js").Assembler} asm
 * @param {Uint8Array} bytes
 */
export function errorOfResponse(asm, bytes) {
  try {
    asm.crossing.read(bytes);
  } catch (e) {
    return e;
  }
  assert.fail(`an ok response where an error was expected: ${Buffer.from(bytes.subarray(0, 200)).toString("hex")}`);
}

/**
 * The error is an AssemblyError with the vector's code, path and offset
 * (undefined unless the vector gives one) and a message.
 */
export function checkError(e, want, what) {
  assert.ok(e instanceof AssemblyError, `${what}: expected an AssemblyError, got ${e}`);
  const got = { code: e.code, path: e.path, offset: e.offset };
  assert.deepEqual(got, { code: want.code, path: want.path, offset: want.offset }, `${what} (message ${JSON.stringify(e.message)})`);
  assert.notEqual(e.message, "", `${what}: empty error message`);
}

/** Where two byte strings first differ, for the failure message. */
export function describeMismatch(got, want) {
  let i = 0;
  while (i < got.length && i < want.length && got[i] === want[i]) i++;
  const from = Math.max(i - 16, 0);
  const hx = (b) =>
    Buffer.from(b.subarray(Math.min(from, b.length), from + 48))
      .toString("hex")
      .replace(/(..)/g, "$1 ");
  return `responses differ at byte ${i} (got ${got.length} bytes, want ${want.length})\n got  ...${hx(got)}\n want ...${hx(want)}`;
}
