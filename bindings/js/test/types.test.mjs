// The package's types (issue 9 item 13, issue 11 item 5): a user's file
// (test/types/user.ts) type-checks with `tsc --strict --noEmit` in a
// Node-only project (`--lib es2022 --types node`, no DOM: the WebAssembly
// namespace is not declared there) and in a browser project (DOM, bundler
// resolution). The installed tarball gets the same check in dist.test.mjs.

import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const TSC = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));

/** Runs tsc on a project directory; returns its output. */
export function tsc(project) {
  const r = spawnSync(process.execPath, [TSC, "-p", project], { encoding: "utf8" });
  return { status: r.status, output: (r.stdout + r.stderr).trim() };
}

for (const kind of ["node", "browser"]) {
  test(`tsc --strict --noEmit: a user's file in a ${kind} project`, () => {
    const r = tsc(fileURLToPath(new URL(`types/${kind}`, import.meta.url)));
    assert.equal(r.status, 0, r.output);
  });
}
