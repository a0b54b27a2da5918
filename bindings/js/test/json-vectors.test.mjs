// The shared JSON-text vectors (testdata/json-vectors, rules in its README)
// through assembleJSON: JSON text gets the same verdict in Node as in the
// command-line tool and the Go engines (docs/SPEC.md §2.3). For each case, the
// module's response bytes for the text (the `assemble_json` export, as
// assembleJSON calls it) must equal the vector's (ok), or be an error
// response with its code and path, read by the binding's own decoder (and
// "invalid JSON at byte " for a syntax error); assembleJSON must return the decoded response or throw that
// error, for the bytes and, when the text is valid UTF-8, for the string.

import test from "node:test";
import assert from "node:assert/strict";
import { assembler, decode, errorOf } from "./common.mjs";
import { checkError, errorOfResponse, loadCases } from "./vectorsets.mjs";
import { CALL_ASSEMBLE_JSON } from "../src/consts.js";

const asm = await assembler();
const vectors = loadCases("json-vectors");
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The module's response bytes for JSON text, through the path assembleJSON uses. */
const responseBytes = (text) => asm.crossing.run({ request: text, op: CALL_ASSEMBLE_JSON, read: (r) => r.slice() });

test("the JSON-text vectors are there", { skip: vectors.length === 0 && "testdata/json-vectors is missing" }, () => {
  assert.ok(vectors.length >= 100, `only ${vectors.length} JSON vectors`);
});

test(
  "every JSON-text vector: the same verdict as the command-line tool",
  { skip: vectors.length === 0 && "testdata/json-vectors is missing" },
  (t) => {
    let strings = 0;
    const notUtf8 = [];
    for (const v of vectors) {
      const where = `${v.file}/${v.name}`;
      const bytes = responseBytes(v.request);
      let text;
      try {
        text = utf8.decode(v.request);
      } catch {
        notUtf8.push(v.name);
      }
      const inputs = text === undefined ? [v.request] : [v.request, text];
      if (v.response) {
        assert.deepEqual(Buffer.from(bytes).toString("base64"), Buffer.from(v.response).toString("base64"), `${where}: response bytes`);
        for (const input of inputs) assert.deepEqual(asm.assembleJSON(input), decode(v.response), `${where}: assembleJSON`);
      } else {
        const e = errorOfResponse(asm, bytes);
        checkError(e, v.error, `${where}: code and path`);
        if (v.syntax) assert.match(e.message, /^invalid JSON at byte \d+/, where);
        for (const input of inputs) {
          const thrown = errorOf(() => asm.assembleJSON(input));
          checkError(thrown, v.error, `${where}: assembleJSON's error`);
          assert.equal(thrown.message, e.message, `${where}: assembleJSON's message`);
        }
      }
      if (text !== undefined) strings++;
    }
    t.diagnostic(
      `${vectors.length} JSON vectors; ${strings} also as strings; not valid UTF-8, so given as bytes only: ${notUtf8.join(", ") || "none"}`,
    );
  },
);
