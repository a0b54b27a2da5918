// The preview outside a browser: importing @polyloop/preview in
// Node (server-side rendering, Node test runners) does not throw, and the
// dev server answers a malformed percent-encoding with 400 and a foreign
// Host header (DNS rebinding) with 421.

import test from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { startServer } from "../serve.mjs";

/**
 * GET path with this Host header (fetch() cannot set one).
 * @param {string} url
 * @param {string | undefined} host
 * @returns {Promise<number>} the status
 */
function statusWithHost(url, host) {
  return new Promise((resolve, reject) => {
    const headers = host === undefined ? {} : { host };
    const r = request(url, { headers, setHost: host !== undefined }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    r.on("error", reject);
    r.end();
  });
}

test("import of @polyloop/preview in Node", async () => {
  assert.equal(globalThis.HTMLElement, undefined, "Node has no DOM");
  const m = await import("@polyloop/preview");
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

test("the dev server answers only its own loopback names in the Host header (DNS rebinding)", async () => {
  const server = await startServer({ port: 0 });
  try {
    const port = new URL(server.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
      assert.equal(await statusWithHost(server.url, host), 200, host);
    }
    for (const host of [`attacker.example:${port}`, "attacker.example", `127.0.0.1:${Number(port) + 1}`, `localhost`]) {
      assert.equal(await statusWithHost(server.url, host), 421, JSON.stringify(host));
    }
    assert.equal(await statusWithHost(server.url, undefined), 400, "no Host header: Node's own 400");
  } finally {
    await server.close();
  }
});
