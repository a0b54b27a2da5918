// The preview's never-frozen figures (issue 43, item 2), measured in headless
// Chromium by bench/preview.mjs beside the paths of preview-paths.mjs, each
// with the main thread's long tasks (PerformanceObserver "longtask": every
// task over 50 ms) seen while it ran:
//
// - a keystroke in the editor with a 5 MB observation in the request: from
//   the edit until the next frame is painted (the editor's own paint), the
//   long tasks counted until the prompt of the edit is painted;
// - opening a 2,000-line, ~5 MB JSON-lines file: until its list of entries
//   is painted, the long tasks counted until the run's cache report is
//   filled and drawn;
// - a 300-call run (one run, each call the one before plus a step): from
//   opening it until its cache report is filled and drawn.
//
// Speed is a figure here, never a timed test (2 noisy cores): make bench
// reports these rows (tools/benchreport/preview.go).

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { asText, jsonLines2000, trajectory } from "./preview-requests.mjs";

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Starts counting the page's long tasks (window.__long: their count and the longest). */
const watchLongTasks = (page) =>
  page.evaluate(() => {
    window.__long = { count: 0, max: 0 };
    window.__longObserver?.disconnect();
    window.__longObserver = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        window.__long.count++;
        window.__long.max = Math.max(window.__long.max, e.duration);
      }
    });
    window.__longObserver.observe({ type: "longtask" });
  });
const longTasks = (page) => page.evaluate(() => ({ ...window.__long }));

/** A figure of samples, with the long tasks seen over all of them. */
const figure = (ms, long) => ({
  ms,
  median_ms: median(ms),
  min_ms: Math.min(...ms),
  max_ms: Math.max(...ms),
  long_tasks: long.reduce((n, l) => n + l.count, 0),
  long_task_max_ms: Math.max(0, ...long.map((l) => l.max)),
});
const line = (name, f) =>
  console.log(
    `${name}: median ${f.median_ms.toFixed(0)} ms (spread ${f.min_ms.toFixed(0)}–${f.max_ms.toFixed(0)}); ` +
      `${f.long_tasks} long task(s), the longest ${f.long_task_max_ms.toFixed(0)} ms`,
  );

/** Keystrokes in a request with a 5 MB observation: until the next frame; long tasks until the prompt is painted. */
async function keystrokeTimes(page, n) {
  const req = trajectory(3, 200);
  req.steps[1].observation = "x".repeat(5_000_000);
  const text = asText(req);
  const pos = text.indexOf('"raw_output": "') + '"raw_output": "'.length;
  await page.evaluate(async (t) => await window.preview.setText(t), text);
  await page.waitForTimeout(500);
  const ms = [];
  const long = [];
  for (let i = 0; i < n; i++) {
    await watchLongTasks(page);
    ms.push(
      await page.evaluate(
        async ({ pos, i }) => {
          const p = window.preview;
          const t0 = performance.now();
          const rendered = p.edit(pos, pos, i % 2 ? "a" : "b");
          await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
          const painted = performance.now() - t0;
          await rendered;
          return painted;
        },
        { pos, i },
      ),
    );
    await page.waitForTimeout(100);
    long.push(await longTasks(page));
  }
  return figure(ms, long);
}

/** Opens `path` through the file input: until the list is painted; long tasks until the report is drawn. */
async function openRun(page, path, entries, until) {
  await watchLongTasks(page);
  await page.evaluate(
    ({ entries, until }) => {
      window.__opened = null;
      const p = window.preview;
      let t0 = 0;
      const listed = () => p.browser.paintedAt > t0 && p.browser.entries.length === entries;
      const reported = () => p.browser.paintedAt > t0 && p.report.calls.length === entries && p.report.done;
      window.addEventListener(
        "change",
        async () => {
          t0 = performance.now();
          while (!(until === "list" ? listed() : reported())) await new Promise((r) => requestAnimationFrame(r));
          await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
          window.__opened = performance.now() - t0;
        },
        { capture: true, once: true },
      );
    },
    { entries, until },
  );
  await page.setInputFiles("#file", path);
  await page.waitForFunction(() => window.__opened !== null, null, { timeout: 120_000 });
  const ms = await page.evaluate(() => window.__opened);
  await page.waitForFunction(() => window.preview.report.done, null, { timeout: 120_000 });
  await page.waitForTimeout(150);
  return { ms, long: await longTasks(page) };
}

/**
 * Measures the three figures; the page is the preview, loaded.
 * @param {import("playwright-core").Page} page @param {string} url @param {string} dir @param {boolean} quick
 */
export async function measureLongTasks(page, url, dir, quick) {
  const out = {};
  out.keystroke_5mb = await keystrokeTimes(page, quick ? 5 : 9);
  line("keystroke with a 5 MB observation → painted in the editor", out.keystroke_5mb);
  // 2,000 lines of about 2.5 KB (5 MB), read as one run's calls (the page's default).
  const big = [0, 1].map((k) => join(dir, `runs-2000-${k}.jsonl`));
  for (const [k, path] of big.entries()) writeFileSync(path, jsonLines2000(k));
  const runs = [0, 1].map((k) => join(dir, `run-300-${k}.jsonl`));
  for (const [k, path] of runs.entries())
    writeFileSync(path, Array.from({ length: 300 }, (_, i) => JSON.stringify(trajectory(1 + i, 80 + k))).join("\n") + "\n");
  const opened = [];
  const reported = [];
  for (let i = 0; i < (quick ? 2 : 4); i++) {
    opened.push(await openRun(page, big[i % 2], 2000, "list"));
    reported.push(await openRun(page, runs[i % 2], 300, "report"));
  }
  out.open_jsonl_2000 = {
    ...figure(
      opened.map((o) => o.ms),
      opened.map((o) => o.long),
    ),
    lines: 2000,
  };
  line("open a 2,000-line, 5 MB JSONL → list painted (long tasks until its report is drawn)", out.open_jsonl_2000);
  out.report_300 = figure(
    reported.map((o) => o.ms),
    reported.map((o) => o.long),
  );
  line("a 300-call run → its cache report filled and drawn", out.report_300);
  return out;
}
