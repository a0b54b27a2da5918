// The cache report's chart and table (issue 43: "the chart has no axes or
// call numbers, 4×5 px break marks, clicks above a short column and on
// table rows do nothing"; "chart and table update incrementally"), in
// Chromium. The oracles are the run's own construction: the planted run
// (bindings/js/test/planted-run.mjs: call k is line k + 1 of its file, its
// breaks at lines 51, 121 and 171) and a 300-call run whose line k + 1 has
// k + 1 steps. The numbering is the page's one numbering: a call is named by
// its line in the file, as the list's rows, the report and the address
// (#entry=L) name it.
//
// - the chart has an x axis numbered in lines, each tick under its line's
//   column, and a y axis in characters from 0 to at least the largest call;
// - a break mark is a pointer target of at least 24×24 px (WCAG 2.5.8) and
//   opens its call;
// - a click anywhere in a call's column (above a short column too) opens
//   that call; a click on a table row opens its call;
// - the keyboard reaches the chart (arrow keys, Enter), the break marks and
//   the table's rows;
// - no main-thread task over 50 ms of CPU while a 300-call file is opened
//   and its report fills (maintrace.mjs: the trace's thread time of each
//   task, which a loaded machine does not stretch as it stretches wall-clock
//   time; the best of three tries).

import test from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PLANTED, plantedRun } from "../../bindings/js/test/planted-run.mjs";
import { trajectory } from "../bench/preview-requests.mjs";
import { ARTIFACTS, open, skip, withPreview } from "./harness.mjs";
import { cpuMs, inside, traceMainThread } from "./maintrace.mjs";

const dir = mkdtempSync(join(tmpdir(), "polyloop-report-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

const PLANTED_JSONL = plantedRun()
  .map((r) => JSON.stringify(r))
  .join("\n")
  .concat("\n");
/** Lines of the planted run's breaks (call k is line k + 1). */
const BREAK_LINES = PLANTED.map(([k]) => k + 1);

/** Opens `jsonl` as file `name` through the page's file input; resolves once its report is done. */
async function openRun(page, name, jsonl) {
  const path = join(dir, name);
  writeFileSync(path, jsonl);
  await page.setInputFiles("#file", path);
  await page.waitForFunction((n) => window.preview.report.calls.length === n && window.preview.report.done, jsonl.split("\n").length - 1);
}

/** The line the report describes ("Line L (call …"), once it is `line`. */
async function shownLine(page, line) {
  await page.waitForFunction((l) => document.getElementById("run-call").textContent.startsWith(`Line ${l} (`), line, {
    timeout: 10_000,
  });
  return page.evaluate(() => window.preview.browser.selected);
}

const num = (s) => Number(s.replaceAll(",", ""));

test(
  "the report's chart: axes in lines, break marks as targets, columns and rows open their call",
  { skip, timeout: 300_000 },
  async (t) => {
    await withPreview(async ({ page, url, problems }) => {
      await open(page, url);
      await openRun(page, "planted.jsonl", PLANTED_JSONL);
      const plot = page.locator("#run-chart .plot");

      await t.test("an x axis numbered in lines under their columns, a y axis in characters", async () => {
        const box = await plot.boundingBox();
        assert.ok(box, "the chart has a plot area");
        const ticks = await page.$$eval("#run-chart .x-axis .tick", (ts) =>
          ts.map((e) => {
            const r = e.getBoundingClientRect();
            return { text: e.textContent, center: r.left + r.width / 2 };
          }),
        );
        assert.ok(ticks.length >= 4, `x ticks: ${JSON.stringify(ticks)}`);
        const lines = ticks.map((k) => num(k.text));
        assert.equal(lines[0], 1, "the first tick is line 1");
        assert.equal(lines.at(-1), 200, "the last tick is line 200");
        assert.ok(
          lines.every((l, i) => Number.isInteger(l) && (i === 0 || l > lines[i - 1])),
          `ticks are lines, ascending: ${lines}`,
        );
        const col = box.width / 200;
        for (const [i, l] of lines.entries()) {
          const want = box.x + (l - 0.5) * col;
          assert.ok(Math.abs(ticks[i].center - want) <= col / 2 + 1.5, `tick "line ${l}" at ${ticks[i].center}, its column at ${want}`);
        }
        assert.match(await page.textContent("#run-chart .x-axis"), /line/, "the x axis says what it counts");
        const y = await page.$$eval("#run-chart .y-axis .tick", (ts) => ts.map((e) => e.textContent));
        const rows = (await page.$$eval("#run-table tbody tr", (trs) => trs.map((tr) => tr.children[1].textContent))).map(num);
        assert.equal(num(y[0]), 0, `y ticks from 0: ${y}`);
        assert.ok(num(y.at(-1)) >= Math.max(...rows), `the y axis reaches the largest call (${y})`);
        assert.match(await page.textContent("#run-chart .y-axis"), /chars/, "the y axis says what it counts");
      });

      await t.test("break marks are 24×24 px pointer targets and open their call", async () => {
        const marks = await page.$$eval("#run-chart .break-mark", (ms) =>
          ms.map((m) => {
            const r = m.getBoundingClientRect();
            return { line: m.getAttribute("aria-label"), w: r.width, h: r.height, x: r.left + r.width / 2, y: r.top + r.height / 2 };
          }),
        );
        assert.equal(marks.length, 3, JSON.stringify(marks));
        for (const [i, m] of marks.entries()) {
          assert.ok(m.w >= 24 && m.h >= 24, `mark ${i} is ${m.w}×${m.h} px`);
          assert.match(m.line, new RegExp(`^line ${BREAK_LINES[i]}\\b`));
          // Its corner, not only its centre, is the target.
          await page.mouse.click(m.x - m.w / 2 + 2, m.y + m.h / 2 - 2);
          assert.equal(await shownLine(page, BREAK_LINES[i]), BREAK_LINES[i] - 1);
        }
      });

      await t.test("a click anywhere in a call's column opens it, above a short column too", async () => {
        const box = /** @type {NonNullable<Awaited<ReturnType<typeof plot.boundingBox>>>} */ (await plot.boundingBox());
        const col = box.width / 200;
        for (const line of [2, 40, 150]) {
          const x = box.x + (line - 0.5) * col;
          const y = box.y + 2;
          const top = await page.evaluate(
            (k) => document.querySelector(`#run-chart g[data-call="${k}"]`)?.getBoundingClientRect().top,
            line - 1,
          );
          assert.ok(top !== undefined && top > y + 4, `line ${line}'s column is shorter than the plot (top ${top}, click at ${y})`);
          await page.mouse.click(x, y);
          assert.equal(await shownLine(page, line), line - 1, `a click above line ${line}'s column`);
        }
      });

      await t.test("a click on a table row opens its call", async () => {
        await page.click(".run-table summary");
        for (const line of [121, 7]) {
          await page.locator(`#run-table tbody tr:nth-child(${line}) td:nth-child(3)`).click();
          assert.equal(await shownLine(page, line), line - 1);
        }
      });

      await t.test("the keyboard reaches the chart, its break marks and the table's rows", async () => {
        // From the run's split menu, Tab reaches the chart.
        await page.focus("#run-split");
        let on = "";
        for (let i = 0; i < 12 && on !== "plot"; i++) {
          await page.keyboard.press("Tab");
          on = await page.evaluate(() => (document.activeElement?.closest("#run-chart .plot") ? "plot" : ""));
        }
        assert.equal(on, "plot", "Tab reaches the chart");
        await page.keyboard.press("Home");
        await page.keyboard.press("ArrowRight");
        await page.keyboard.press("ArrowRight");
        assert.match(await plot.getAttribute("aria-valuetext"), /^line 3\b/);
        await page.keyboard.press("Enter");
        assert.equal(await shownLine(page, 3), 2);
        await page.keyboard.press("End");
        await page.keyboard.press("Enter");
        assert.equal(await shownLine(page, 200), 199);
        // Tab on: the break marks, each opened with Enter.
        await page.keyboard.press("Tab");
        assert.match(await page.evaluate(() => document.activeElement?.getAttribute("aria-label") ?? ""), /^line 51\b/);
        await page.keyboard.press("Enter");
        assert.equal(await shownLine(page, 51), 50);
        await page.locator("figure.run-chart").screenshot({ path: `${ARTIFACTS}preview-report-chart.png` });
        // A table row: its line's button.
        await page.focus("#run-table tbody tr:nth-child(171) button");
        await page.keyboard.press("Enter");
        assert.equal(await shownLine(page, 171), 170);
        await page.screenshot({ path: `${ARTIFACTS}preview-report-table.png` });
      });

      await t.test("at 390 px the chart fits, its ticks and marks inside it", async () => {
        await page.setViewportSize({ width: 390, height: 844 });
        const chart = page.locator("figure.run-chart");
        await chart.scrollIntoViewIfNeeded();
        const fit = await page.evaluate(() => {
          const f = document.querySelector("figure.run-chart").getBoundingClientRect();
          const parts = [...document.querySelectorAll("#run-chart .tick, #run-chart .break-mark")].map((e) => e.getBoundingClientRect());
          return parts.every((r) => r.left >= f.left - 1 && r.right <= f.right + 1) && document.documentElement.scrollWidth <= innerWidth;
        });
        assert.ok(fit, "ticks and marks inside the chart, no horizontal scrolling");
        await chart.screenshot({ path: `${ARTIFACTS}preview-report-chart-390.png` });
      });

      assert.deepEqual(problems, []);
    });
  },
);

test("no main-thread task over 50 ms of CPU while a 300-call report fills", { skip, timeout: 300_000 }, async () => {
  const jsonl = Array.from({ length: 300 }, (_, i) => JSON.stringify(trajectory(1 + i, 80))).join("\n") + "\n";
  await withPreview(async ({ page, url, problems }) => {
    await open(page, url);
    // Noise of a shared machine can make one try slow: the best of three tries' longest task counts.
    const longest = [];
    const over = [];
    for (let i = 0; i < 3 && !(longest.length && Math.min(...longest) <= 50); i++) {
      const path = join(dir, `run-300-${i}.jsonl`);
      writeFileSync(path, jsonl);
      const cdp = await page.context().newCDPSession(page);
      const { events, thread, tasks } = await traceMainThread(cdp, async () => {
        await page.setInputFiles("#file", path);
        await page.waitForFunction(() => window.preview.report.calls.length === 300 && window.preview.report.done, null, {
          timeout: 120_000,
        });
        await page.waitForTimeout(300);
      });
      await cdp.detach();
      const max = Math.max(0, ...tasks.map(cpuMs));
      over.push(tasks.filter((e) => cpuMs(e) > 50).map((e) => `${cpuMs(e).toFixed(0)} ms: ${inside(events, e, thread).join(", ")}`));
      console.log(`# 300-call report fill, try ${i + 1}: ${tasks.length} tasks, the longest ${max.toFixed(0)} ms of CPU`);
      longest.push(max);
    }
    assert.ok(Math.min(...longest) <= 50, `tasks over 50 ms of CPU while the report fills: ${JSON.stringify(over)}`);
    assert.deepEqual(problems, []);
  });
});
