// The preview outside a browser: importing @polyloop/assembly/preview in
// Node (server-side rendering, Node test runners) does not throw, and the
// dev server answers a malformed percent-encoding with 400.

import test from "node:test";
import assert from "node:assert/strict";
import { startServer } from "../preview/serve.mjs";

test("import of @polyloop/assembly/preview in Node", async () => {
  assert.equal(globalThis.HTMLElement, undefined, "Node has no DOM");
  const m = await import("@polyloop/assembly/preview");
  assert.equal(typeof m.PromptView, "function");
  assert.equal(typeof m.definePromptView, "function");
  assert.throws(() => m.definePromptView(), /needs a browser DOM/);
});

test("the dev server answers a malformed percent-encoding with 400", async () => {
  const server = await startServer({ port: 0 });
  try {
    const bad = await fetch(new URL("/preview/%E0%A4%A", server.url));
    assert.equal(bad.status, 400);
    const missing = await fetch(new URL("/preview/no-such-file.js", server.url));
    assert.equal(missing.status, 404);
    const page = await fetch(new URL("/preview/", server.url));
    assert.equal(page.status, 200);
  } finally {
    await server.close();
  }
});
