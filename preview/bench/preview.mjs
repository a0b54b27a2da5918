#!/usr/bin/env node
// The prompt preview in headless Chromium (its speed budgets): for each request
// of bench/preview-requests.mjs, "edit → painted" (a one-character edit in
// the editor until the next frame shows its result), the longest main-thread
// task while it happens (PerformanceObserver "longtask": tasks over 50 ms),
// and "page load → first assembled prompt painted" with a warm HTTP cache;
// then the paths of bench/preview-paths.mjs (opening files, 100 elements, a
// cold load).
//
//   node bench/preview.mjs [--legacy] [--quick] [--paths-only] [--json PATH]
//
// --legacy measures the earlier preview (a textarea and a full
// re-render; its update() is called directly, without its typing debounce),
// checked out with `git worktree add /tmp/old <commit>`; run it from there.
// --paths-only measures only bench/preview-paths.mjs's paths.
// --json writes the figures for tools/benchreport (`make bench`).

import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { startServer } from "../serve.mjs";
import { CHROMIUM, CHROMIUM_FLAGS } from "../../bindings/js/test/chromium.mjs";
import { SIZES, asText, trajectory } from "./preview-requests.mjs";
import { measurePaths } from "./preview-paths.mjs";
import { measureLongTasks } from "./preview-longtasks.mjs";

const args = process.argv.slice(2);
const legacy = args.includes("--legacy");
const quick = args.includes("--quick");
const pathsOnly = args.includes("--paths-only");
const jsonPath = args.includes("--json") ? args[args.indexOf("--json") + 1] : null;
const EDITS = quick || legacy ? 3 : 7;

if (!existsSync(CHROMIUM)) {
  console.error(`${CHROMIUM} is missing: run \`make js.chromium\``);
  process.exit(2);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

// In the page: the longest task seen since the last reset, and (legacy page)
// the time its first render reached the screen.
const INIT = () => {
  window.__bench = { longest: 0, longtasks: 0, firstPaint: null };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      window.__bench.longtasks++;
      window.__bench.longest = Math.max(window.__bench.longest, e.duration);
    }
  }).observe({ type: "longtask", buffered: true });
};

const server = await startServer({ port: 0 });
const profile = mkdtempSync(join(tmpdir(), "polyloop-bench-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  args: CHROMIUM_FLAGS,
  viewport: { width: 1280, height: 800 },
});
const results = { legacy, sizes: [], load: null, paths: null, loadavg_start: loadavg()[0], loadavg_end: 0 };
try {
  const page = context.pages()[0] ?? (await context.newPage());
  await page.addInitScript(INIT);
  page.on("pageerror", (e) => console.error(`pageerror: ${e.message}`));
  await page.goto(server.url);
  await page.evaluate(() => window.preview.ready);

  // The legacy page builds DOM for every message: the 16 MB request takes it
  // minutes and gigabytes, so it is left out there.
  const sizes = pathsOnly ? [] : quick ? SIZES.filter((s) => s.steps <= 1000) : legacy ? SIZES.slice(0, 4) : SIZES;
  for (const size of sizes) {
    const text = asText(trajectory(size.steps, size.stepChars));
    // Load the request, then edit one character of the last observation,
    // back and forth, each time waiting for its result on screen.
    const pos = text.lastIndexOf('"observation": "') + '"observation": "'.length;
    const times = await page.evaluate(
      async ({ text, pos, edits, legacy }) => {
        const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
        const p = window.preview;
        if (legacy) {
          const ed = document.getElementById("request");
          ed.value = text;
          p.update();
          await frame();
        } else {
          await p.setText(text);
          await frame();
        }
        window.__bench.longest = 0;
        window.__bench.longtasks = 0;
        const out = [];
        const worker = [];
        for (let i = 0; i < edits; i++) {
          const ch = i % 2 ? "x" : "y";
          const t0 = performance.now();
          if (legacy) {
            const ed = document.getElementById("request");
            ed.value = ed.value.slice(0, pos) + ch + ed.value.slice(pos + 1);
            p.update();
          } else {
            await p.edit(pos, pos + 1, ch);
          }
          await frame();
          out.push(performance.now() - t0);
          if (!legacy) worker.push(p.view.lastTiming.worker);
          await new Promise((r) => setTimeout(r, 100));
        }
        return {
          out,
          worker,
          longest: window.__bench.longest,
          longtasks: window.__bench.longtasks,
          shown: legacy ? document.body.dataset.state : p.state,
        };
      },
      { text, pos, edits: EDITS, legacy },
    );
    const row = {
      name: size.name,
      bytes: Buffer.byteLength(text),
      edit_ms: times.out,
      median_ms: median(times.out),
      worker_median_ms: times.worker.length ? median(times.worker) : 0,
      longest_task_ms: times.longest,
      long_tasks: times.longtasks,
      state: times.shown,
    };
    results.sizes.push(row);
    console.log(
      `${size.name.padEnd(30)} ${(row.bytes / 1e6).toFixed(2).padStart(6)} MB  edit→painted median ${row.median_ms.toFixed(1)} ms (${times.out.map((x) => x.toFixed(0)).join(", ")}; worker ${row.worker_median_ms.toFixed(0)} ms)  longest task ${row.longest_task_ms.toFixed(0)} ms (${row.long_tasks} over 50 ms)  state ${row.state}`,
    );
  }

  // Page load → first assembled prompt painted, warm HTTP cache: the example
  // request, loaded three times to warm the HTTP and code caches, then timed.
  const loads = [];
  await page.evaluate(() => localStorage.clear());
  for (let i = 0; i < (pathsOnly ? 0 : quick ? 3 : 6); i++) {
    await page.goto(server.url + "?bench-load");
    const t = await page.evaluate(async (legacy) => {
      await window.preview.ready;
      if (legacy) {
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
        return performance.now();
      }
      return window.preview.firstPainted;
    }, legacy);
    if (i >= 2) loads.push(t);
  }
  if (loads.length) {
    results.load = { ms: loads, median_ms: median(loads) };
    console.log(
      `page load → first prompt painted (warm cache): median ${results.load.median_ms.toFixed(0)} ms (${loads.map((x) => x.toFixed(0)).join(", ")})`,
    );
  }
  if (!legacy) {
    await page.goto(server.url);
    await page.evaluate(() => window.preview.ready);
    const dir = mkdtempSync(join(tmpdir(), "polyloop-bench-files-"));
    try {
      results.paths = await measurePaths(page, server.url, dir, quick);
      await page.goto(server.url);
      await page.evaluate(() => window.preview.ready);
      Object.assign(results.paths, await measureLongTasks(page, server.url, dir, quick));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
} finally {
  await context.close();
  await server.close();
  rmSync(profile, { recursive: true, force: true });
}
results.loadavg_end = loadavg()[0];
console.log(`machine load average (1 min): ${results.loadavg_start.toFixed(1)} at the start, ${results.loadavg_end.toFixed(1)} at the end`);
if (jsonPath) writeFileSync(jsonPath, JSON.stringify(results, null, 2) + "\n");
