/**
 * Chromium for the binding's own browser tests: a static server and a
 * headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core)
 * with the flags every browser test of the project uses. A page error, a
 * console error or an HTTP error fails the page.
 *
 * @module
 */

import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, resolve } from "node:path";

export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const TYPES = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".json": "application/json",
  ".wasm": "application/wasm",
};

/**
 * Serves the files under `root` on 127.0.0.1 (application/wasm for .wasm);
 * `pages` maps extra paths to HTML.
 *
 * @param {string} root
 * @param {Record<string, string>} [pages]
 * @returns {Promise<{url: string, close: () => void}>}
 */
export function serve(root, pages = {}) {
  root = resolve(root);
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    if (pages[path] !== undefined) {
      res.writeHead(200, { "content-type": "text/html" }).end(pages[path]);
      return;
    }
    let file = resolve(join(root, path));
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, "index.html");
    if (!file.startsWith(root) || !existsSync(file)) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
  });
  return new Promise((ok) =>
    server.listen(0, "127.0.0.1", () =>
      ok({ url: `http://127.0.0.1:${/** @type {any} */ (server.address()).port}/`, close: () => server.close() }),
    ),
  );
}

/**
 * Opens `url` in a fresh headless Chromium, runs `use(page)` and closes it.
 * Fails on any page error, console error or HTTP error status.
 *
 * @template T
 * @param {string} url
 * @param {(page: import("playwright-core").Page) => Promise<T>} use
 * @returns {Promise<T>}
 */
export async function withPage(url, use) {
  const { chromium } = await import("playwright-core");
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: run \`make js.chromium\` (apt-get install chromium)`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
  /** @type {string[]} */
  const problems = [];
  try {
    const page = await browser.newPage();
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
    page.on("response", (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()} for ${r.url()}`));
    await page.goto(url);
    const out = await use(page);
    assert.deepEqual(problems, []);
    return out;
  } catch (e) {
    if (problems.length) /** @type {any} */ (e).message += `\n(page: ${problems.join("; ")})`;
    throw e;
  } finally {
    await browser.close();
  }
}
