// Shared by the preview's Chromium tests (preview/test/*.test.mjs) and usable
// by hand: starts preview/serve.mjs and Debian's Chromium (playwright-core,
// a fresh profile), collects page errors, and cleans up.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { startServer } from "../serve.mjs";
import { REPO } from "../../bindings/js/test/common.mjs";
import { CHROMIUM, CHROMIUM_FLAGS as FLAGS } from "../../bindings/js/test/chromium.mjs";

export { CHROMIUM, FLAGS };
export const skip = process.env.POLYLOOP_SKIP_BROWSER ? "POLYLOOP_SKIP_BROWSER is set" : false;
export const ARTIFACTS = `${REPO}artifacts/`;

/**
 * Starts the server and a browser context; `run(ctx)` gets {context, page,
 * url, problems}; everything is closed afterwards.
 *
 * @param {(ctx: {context: import("playwright-core").BrowserContext, page: import("playwright-core").Page, url: string, origin: string, problems: string[]}) => Promise<void>} run
 * @param {{viewport?: {width: number, height: number}, colorScheme?: "light" | "dark"}} [opts]
 */
export async function withPreview(run, opts = {}) {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run \`make js.chromium\` (apt-get install chromium)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  const server = await startServer({ port: 0 });
  const profile = mkdtempSync(join(tmpdir(), "polyloop-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: opts.viewport ?? { width: 1280, height: 800 },
    deviceScaleFactor: 1,
    colorScheme: opts.colorScheme ?? "light",
  });
  const problems = [];
  try {
    const origin = new URL(server.url).origin;
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    const page = context.pages()[0] ?? (await context.newPage());
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message} ${e.stack}`));
    page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
    await run({ context, page, url: server.url, origin, problems });
  } finally {
    await context.close();
    await server.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

/** Loads the page and waits for its first prompt (and its page-thread assembler). */
export async function open(page, url) {
  await page.goto(url);
  await page.evaluate(() => window.preview.ready);
}

/** Sets the editor's whole text; resolves with the view's state once rendered. */
export async function setText(page, request) {
  const text = typeof request === "string" ? request : JSON.stringify(request, null, 2);
  return page.evaluate(async (t) => {
    await window.preview.setText(t);
    return window.preview.state;
  }, text);
}

/** What the view shows: its state, the rows in the DOM, the error panel. */
export function shown(page) {
  return page.evaluate(() => {
    const v = window.preview.view;
    const r = v.shadowRoot;
    const q = (s) => r.querySelector(s);
    return {
      state: v.state,
      rows: r.querySelectorAll(".row").length,
      messages: [...r.querySelectorAll(".row[data-message]")].map((e) => Number(e.dataset.message)),
      blocks: [...r.querySelectorAll(".row[data-message] .block")].map((b) => b.textContent),
      totals: q(".totals").textContent,
      gauge: { cls: q(".gauge").className, label: q(".gauge .label").textContent },
      banner: q(".stale-banner").hidden ? null : q(".stale-banner").textContent,
      error: q(".error").hidden
        ? null
        : { code: q(".error .code")?.textContent, path: q(".error .path")?.textContent ?? "", message: q(".error .message")?.textContent },
      cache: q(".cache").textContent,
      summary: v.summary,
    };
  });
}

/** Picks entry k (0-based) of the open file in the page's list of entries. */
export async function pickEntry(page, k) {
  await page.locator(`#browser-rows [data-entry="${k}"]`).click();
}

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** axe-core's violations on the page (shadow DOM included). */
export async function axe(page) {
  return page.evaluate(async (src) => {
    if (!window.axe) (0, eval)(src);
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
  }, AXE);
}
