// The page's reading of files (files.js) in Node: a JSON-lines file read in
// slices (requestsOfFileInSlices, the page's way of opening a big file
// without holding its thread) gives the very requests of the reading in one
// go (requestsOfFile), blank and whitespace-only lines included as --batch
// counts them; looksLikeLines, which now looks at each line's ends only,
// still tells a file of object lines from others. The expected values are
// written by hand.

import test from "node:test";
import assert from "node:assert/strict";
import { looksLikeLines, requestsOfFile, requestsOfFileInSlices } from "../files.js";

const bytes = (s) => new TextEncoder().encode(s);

test("a JSON-lines file read in slices: the requests of the reading in one go", async () => {
  // Line 2 blank, line 3 whitespace-only, line 4 CRLF-ended, line 5 not UTF-8 (0xff); the last LF ends line 5.
  const file = new Uint8Array([...bytes('{"a":1}\n\n \t \n{"b":2}\r\n{"c":"'), 0xff, ...bytes('"}\n')]);
  const whole = requestsOfFile(file, "f.jsonl");
  assert.deepEqual(
    whole.map((r) => [r.label, r.line, r.size]),
    [
      ["line 1", 1, 7],
      ["line 2", 2, 0],
      ["line 3", 3, 3],
      ["line 4", 4, 8],
      ["line 5 (not UTF-8)", 5, 9],
    ],
  );
  // Yielding after every line (a slice of 0 ms): the same requests, in order.
  const sliced = await requestsOfFileInSlices(file, "f.jsonl", {}, 0);
  assert.deepEqual(sliced, whole);
  // 2,000 lines, in slices of 0 ms: still the same.
  const many = bytes(Array.from({ length: 2000 }, (_, i) => (i % 7 === 3 ? "  " : `{"i":${i}}`)).join("\n"));
  const manyWhole = requestsOfFile(many, "m.ndjson");
  assert.equal(manyWhole.length, 2000);
  assert.deepEqual(await requestsOfFileInSlices(many, "m.ndjson", {}, 0), manyWhole);
  // Not JSON lines (a .json name): one request, read in one go.
  assert.deepEqual(await requestsOfFileInSlices(file, "f.json", {}, 0), requestsOfFile(file, "f.json"));
});

test("looksLikeLines: two or more lines, each an object, blank lines aside", () => {
  assert.equal(looksLikeLines(bytes('{"a":1}\n{"b":2}\n')), true);
  assert.equal(looksLikeLines(bytes(' {"a":1} \n\n \t\n{"b":2}')), true);
  assert.equal(looksLikeLines(bytes('{"a":1}\n')), false, "one line");
  assert.equal(looksLikeLines(bytes('{"a":1}\n[1]\n')), false, "a line that is no object");
  assert.equal(looksLikeLines(bytes('{"a":\n1}\n')), false, "an object over two lines");
  assert.equal(looksLikeLines(bytes("\n \n")), false, "blank lines only");
});
