// <polyloop-prompt-view> in an app bundled by esbuild (issue 33, item 5), in
// Chromium, the package linked into a temporary project's node_modules (its
// `exports` map resolves it, as for a user):
// - the app bundled with esbuild alone (which does not emit the element's
//   worker): a `polyloop-error` with code `worker_failed` whose message
//   names the URL tried and `worker-url`, never "unknown error";
// - the app built by the README's recipe (the worker as a second entry
//   point, its URL and the module's given to definePromptView): the prompt,
//   its totals equal to Node's assemble().

import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { assembler } from "../../bindings/js/test/common.mjs";
import { serve } from "../../bindings/js/test/chromium.mjs";
import { CHROMIUM, FLAGS, skip } from "./harness.mjs";

const PKG = fileURLToPath(new URL("../../bindings/js/", import.meta.url));
const PREVIEW = fileURLToPath(new URL("..", import.meta.url));
const ESBUILD = join(PREVIEW, "node_modules", ".bin", "esbuild");

const REQUEST = {
  observation_template: "Observation: {observation}",
  steps: Array.from({ length: 20 }, (_, i) => ({ raw_output: `step ${i}`, observation: `result ${i}` })),
  max_prompt_chars: 500,
};

const HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>esbuild app</title><link rel="icon" href="data:,">
<script type="module" src="./main.js"></script></head>
<body><polyloop-prompt-view id="view"></polyloop-prompt-view></body></html>`;

/** The app's script: `register` is how it defines the element. */
const main = (imports, register) => `${imports}
${register}
const view = document.getElementById("view");
window.events = [];
view.addEventListener("polyloop-result", (e) => window.events.push({ type: "result", promptChars: e.detail.promptChars, messages: e.detail.messages }));
view.addEventListener("polyloop-error", (e) => window.events.push({ type: "error", code: e.detail.code, message: e.detail.message }));
view.request = ${JSON.stringify(REQUEST)};
`;

/** Builds an app in `dir` with esbuild's command line; returns its out dir. */
function build(dir, script, args) {
  writeFileSync(join(dir, "main.js"), script);
  execFileSync(ESBUILD, [...args, "--bundle", "--format=esm", "--loader:.wasm=file", "--outdir=out", "--log-level=error"], { cwd: dir });
  writeFileSync(join(dir, "out", "index.html"), HTML);
  return join(dir, "out");
}

test("<polyloop-prompt-view> bundled by esbuild, in Chromium", { skip, timeout: 180_000 }, async (t) => {
  const asm = await assembler();
  const dir = mkdtempSync(join(tmpdir(), "polyloop-esbuild-app-"));
  const profile = mkdtempSync(join(tmpdir(), "polyloop-chromium-"));
  let context;
  const servers = [];
  try {
    mkdirSync(join(dir, "node_modules", "@polyloop"), { recursive: true });
    symlinkSync(PKG, join(dir, "node_modules", "@polyloop", "assembly"), "dir");
    symlinkSync(PREVIEW, join(dir, "node_modules", "@polyloop", "preview"), "dir");
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS });
    const page = context.pages()[0] ?? (await context.newPage());
    const events = async (out) => {
      const server = await serve(out);
      servers.push(server);
      await page.goto(server.url);
      await page.waitForFunction(() => window.events?.length > 0, null, { timeout: 60_000 });
      return page.evaluate(() => window.events);
    };

    await t.test("esbuild alone: worker_failed, naming the URL and worker-url", async () => {
      const out = build(dir, main('import { definePromptView } from "@polyloop/preview";', "definePromptView();"), ["main.js"]);
      const [ev] = await events(out);
      assert.equal(ev.type, "error");
      assert.equal(ev.code, "worker_failed");
      assert.match(ev.message, /worker-url/);
      assert.match(ev.message, /worker\.js/);
      assert.doesNotMatch(ev.message, /unknown error/);
    });

    await t.test("the README's recipe: the worker as a second entry point", async () => {
      const out = build(
        dir,
        main(
          'import { definePromptView } from "@polyloop/preview";\nimport wasmUrl from "@polyloop/assembly/assembly.wasm";',
          'definePromptView("polyloop-prompt-view", { workerUrl: new URL("./worker.js", import.meta.url), wasmUrl: new URL(wasmUrl, import.meta.url) });',
        ),
        ["main.js", "worker=node_modules/@polyloop/preview/element/worker.js"],
      );
      const evs = await events(out);
      const r = asm.assemble(REQUEST);
      assert.deepEqual(evs[0], { type: "result", promptChars: r.prompt_chars, messages: r.messages.length });
    });
  } finally {
    await context?.close();
    for (const s of servers) s.close();
    rmSync(profile, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
});
