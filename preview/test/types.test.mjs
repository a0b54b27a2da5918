// The element's types (preview/element/index.d.ts, the package's
// `./preview` export): a web app's file (types/user.ts) type-checks with
// `tsc --strict --noEmit` in a browser project, the package found by its
// own name as a user's bundler finds it.

import test from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { tsc } from "../../bindings/js/test/tsc.mjs";

test("tsc --strict --noEmit: a web app's use of the element", () => {
  const r = tsc(fileURLToPath(new URL("types", import.meta.url)));
  assert.equal(r.status, 0, r.output);
});
