// The package's types (docs/SPEC.md §7): a user's file
// (test/types/user.ts) type-checks with `tsc --strict --noEmit` in a
// Node-only project (`--lib es2022 --types node`, no DOM: the WebAssembly
// namespace is not declared there) and in a browser project (DOM, bundler
// resolution). The installed tarball gets the same check in dist.test.mjs.

import test from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
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
