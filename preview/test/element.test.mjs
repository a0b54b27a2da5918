// <polyloop-prompt-view> embedded in a web app: the app in
// test/vite/ imports `@polyloop/preview` as its users would
// (the package is linked into a temporary project's node_modules, so its
// `exports` map is what resolves it), Vite builds it (the element's worker
// and the module become assets), and Chromium runs the built app:
// - a request set as a property assembles (in the worker) into the
//   virtualised view; `polyloop-result` carries the totals, equal to Node's;
// - a request set as an attribute (JSON text) too;
// - a rejected request fires `polyloop-error` with the core's code and path;
// - hostile text stays text;
// - under the app's strict Content-Security-Policy (no inline scripts or
//   styles): any violation is a console error, which fails the test.
// UPDATE_DOCS_SCREENSHOT=1 rewrites docs/prompt-view.png for the README.

import test from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { assembler } from "../../bindings/js/test/common.mjs";
import { serve } from "../../bindings/js/test/chromium.mjs";
import { ARTIFACTS, CHROMIUM, FLAGS, skip } from "./harness.mjs";

const PKG = fileURLToPath(new URL("../../bindings/js/", import.meta.url));
const PREVIEW = fileURLToPath(new URL("..", import.meta.url));
const APP = fileURLToPath(new URL("./vite/", import.meta.url));
test("<polyloop-prompt-view> in a Vite app, in Chromium", { skip, timeout: 180_000 }, async (t) => {
  const asm = await assembler();
  const dir = mkdtempSync(join(tmpdir(), "polyloop-vite-app-"));
  const profile = mkdtempSync(join(tmpdir(), "polyloop-chromium-"));
  let server;
  let context;
  try {
    cpSync(APP, dir, { recursive: true });
    mkdirSync(join(dir, "node_modules", "@polyloop"), { recursive: true });
    symlinkSync(PKG, join(dir, "node_modules", "@polyloop", "assembly"), "dir");
    symlinkSync(PREVIEW, join(dir, "node_modules", "@polyloop", "preview"), "dir");
    const { build } = await import("vite");
    await build({ root: dir, configFile: join(dir, "vite.config.mjs"), build: { outDir: join(dir, "dist") } });
    server = await serve(join(dir, "dist"));

    await t.test("the build holds one worker, bundled (no unused unbundled copy)", () => {
      const assets = readdirSync(join(dir, "dist", "assets"));
      const workers = assets.filter((f) => /^worker.*\.js$/.test(f));
      assert.equal(workers.length, 1, `workers among ${assets.join(", ")}`);
      const src = readFileSync(join(dir, "dist", "assets", workers[0]), "utf8");
      assert.doesNotMatch(src, /from\s*["']\.\/[\w.-]+\.js["']/, "the worker imports no module of its own folder");
    });
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport: { width: 900, height: 700 },
      deviceScaleFactor: 1,
    });
    const page = context.pages()[0] ?? (await context.newPage());
    const problems = [];
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
    await page.goto(server.url);
    await page.waitForFunction(() => window.app?.events.filter((e) => e.type === "result").length >= 2, null, { timeout: 60_000 });

    await t.test("a request set as a property: result event, virtualised view, text stays text", async () => {
      const request = await page.evaluate(() => window.app.view.request);
      const r = asm.assemble(request);
      const ev = await page.evaluate(() => window.app.events.find((e) => e.id === "by-property" && e.type === "result").detail);
      assert.equal(ev.messages, r.messages.length);
      assert.equal(ev.promptChars, r.prompt_chars);
      assert.equal(ev.contextOverflow, r.context_overflow);
      const dom = await page.evaluate(() => {
        const root = document.getElementById("by-property").shadowRoot;
        return {
          rows: root.querySelectorAll(".row[data-message]").length,
          imgs: root.querySelectorAll("img").length,
          xss: window.__xss,
          first: root.querySelector(".row[data-message] .block")?.textContent,
        };
      });
      assert.ok(dom.rows > 0 && dom.rows < r.messages.length, `${dom.rows} of ${r.messages.length} messages in the DOM`);
      assert.equal(dom.imgs, 0);
      assert.equal(dom.xss, undefined);
      assert.equal(dom.first, "You are helpful.");
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}prompt-view-vite.png` });
      if (process.env.UPDATE_DOCS_SCREENSHOT) await page.locator("#by-property").screenshot({ path: join(PKG, "docs", "prompt-view.png") });
    });

    await t.test("a request set as an attribute (JSON text)", async () => {
      const ev = await page.evaluate(() => window.app.events.find((e) => e.id === "by-attribute" && e.type === "result").detail);
      const r = asm.assemble({ observation_template: "Obs: {observation}", steps: [{ raw_output: "a <b>", observation: "b" }] });
      assert.equal(ev.promptChars, r.prompt_chars);
      const texts = await page.evaluate(() =>
        [...document.getElementById("by-attribute").shadowRoot.querySelectorAll(".row[data-message] .block")].map((b) => b.textContent),
      );
      assert.deepEqual(
        texts,
        r.messages.map((m) => m.content[0].text),
      );
    });

    await t.test("a rejected request: an error event with the core's code and path; the view is marked stale", async () => {
      await page.evaluate(() => {
        window.app.view.request = { observation_template: "{observation}", steps: [{ raw_output: "x", observation: 42 }] };
      });
      await page.waitForFunction(() => window.app.events.some((e) => e.type === "error"));
      const ev = await page.evaluate(() => window.app.events.find((e) => e.type === "error").detail);
      let expected;
      try {
        asm.assemble({ observation_template: "{observation}", steps: [{ raw_output: "x", observation: 42 }] });
      } catch (e) {
        expected = e;
      }
      assert.deepEqual(ev, { code: expected.code, path: expected.path, message: expected.message });
      assert.equal(await page.evaluate(() => window.app.view.state), "stale");
    });

    assert.deepEqual(problems, [], "the app logged errors");
  } finally {
    await context?.close();
    server?.close();
    rmSync(profile, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
});
