// The package's types (docs/SPEC.md §7): a user's file
// (test/types/user.ts) type-checks with `tsc --strict --noEmit` in a
// Node-only project (`--lib es2022 --types node`, no DOM: the WebAssembly
// namespace is not declared there) and in a browser project (DOM, bundler
// resolution). The installed tarball gets the same check in dist.test.mjs.

import test from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { readFileSync } from "node:fs";
import { tsc } from "./tsc.mjs";

for (const kind of ["node", "browser"]) {
  test(`tsc --strict --noEmit: a user's file in a ${kind} project`, () => {
    const r = tsc(fileURLToPath(new URL(`types/${kind}`, import.meta.url)));
    assert.equal(r.status, 0, r.output);
  });
}

test("tsc --strict --noEmit: the generated wire types are the hand-written ones of 0.2, both ways", () => {
  const r = tsc(fileURLToPath(new URL("types/shapes", import.meta.url)));
  assert.equal(r.status, 0, r.output);
});

test("tsc --strict --noEmit: each mistake with the cache report and the export is its line's error", () => {
  const dir = fileURLToPath(new URL("types/mistakes", import.meta.url));
  const r = tsc(dir);
  assert.notEqual(r.status, 0, "the mistakes type-checked");
  const want = new Map();
  readFileSync(`${dir}/mistakes.ts`, "utf8")
    .split("\n")
    .forEach((line, i) => {
      const m = / E: (TS\d+)$/.exec(line);
      if (m) want.set(i + 1, m[1]);
    });
  const got = new Map();
  for (const m of r.output.matchAll(/mistakes\.ts\((\d+),\d+\): error (TS\d+)/g)) {
    got.set(Number(m[1]), [...(got.get(Number(m[1])) ?? []), m[2]]);
  }
  assert.deepEqual(
    [...got.keys()].sort((a, b) => a - b),
    [...want.keys()].sort((a, b) => a - b),
    r.output,
  );
  for (const [line, code] of want) assert.ok(got.get(line).includes(code), `line ${line}: want ${code}\n${r.output}`);
});
