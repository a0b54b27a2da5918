// The prompt preview's paths a person takes that the keystroke budget does
// not cover, measured in headless Chromium by bench/preview.mjs:
//
// - opening a 1,000-step × 1 KB request file through the file input until
//   its prompt is painted (the file, then an edited copy, in turn);
// - opening a 10,000-line JSON-lines file until its list of entries is
//   painted (the verdicts follow in the background);
// - 100 <polyloop-prompt-view> elements on one page until every one has
//   painted its prompt (with the number of workers the page runs);
// - a cold page load (HTTP cache, with the code cache, cleared) until the
//   first prompt is painted;
// - a search over a 10,000-entry JSONL (escaped as Python's json.dumps
//   writes it) until the filtered list is painted;
// - an edit of a 1,000-step × 1 KB request in step mode (at step 500) until
//   the prompt is painted.
//
// Each figure: every sample, the median, and the spread (min–max).

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { asText, trajectory } from "./preview-requests.mjs";

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
/** @param {number[]} ms */
const figure = (ms) => ({ ms, median_ms: median(ms), min_ms: Math.min(...ms), max_ms: Math.max(...ms) });
const line = (name, f) =>
  console.log(
    `${name}: median ${f.median_ms.toFixed(0)} ms (spread ${f.min_ms.toFixed(0)}–${f.max_ms.toFixed(0)}; ${f.ms.map((x) => x.toFixed(0)).join(", ")})`,
  );

/**
 * Arms the page: from the file input's next `change` (before the page's own
 * handler) until `done()` holds in a frame painted after it; the time is
 * left in window.__opened.
 * @param {import("playwright-core").Page} page
 * @param {"prompt" | "list"} until
 * @param {number} entries
 */
function arm(page, until, entries) {
  return page.evaluate(
    ({ until, entries }) => {
      window.__opened = null;
      const p = window.preview;
      const before = p.view.generation;
      const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      let t0 = 0;
      const done = () =>
        until === "prompt"
          ? p.view.shownGeneration > before && p.view.state === "ok"
          : p.browser.paintedAt > t0 &&
            p.browser.entries.length === entries &&
            document.querySelector("#browser-rows [data-entry]") !== null;
      window.addEventListener(
        "change",
        async () => {
          t0 = performance.now();
          while (!done()) await new Promise((r) => requestAnimationFrame(r));
          await frame();
          window.__opened = performance.now() - t0;
        },
        { capture: true, once: true },
      );
    },
    { until, entries },
  );
}

/** Opens `path` through the file input n times (cycling through paths). */
async function openTimes(page, paths, n, until, entries = 0) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    await arm(page, until, entries);
    await page.setInputFiles("#file", paths[i % paths.length]);
    await page.waitForFunction(() => window.__opened !== null, null, { timeout: 60_000 });
    ms.push(await page.evaluate(() => window.__opened));
    // The verdicts of a JSON-lines file run on in the worker: let them end.
    await page.waitForFunction(() => !document.getElementById("browser-count").textContent.includes("verdicts"), null, {
      timeout: 120_000,
    });
    await page.waitForTimeout(150);
  }
  return figure(ms);
}

/** 100 elements on the page (the page's own view's worker shared), until
 * each has painted; returns the time and the number of workers. */
async function elementsTimes(page, n, count) {
  const ms = [];
  let workers = 0;
  for (let i = 0; i < n; i++) {
    const t = await page.evaluate(async (count) => {
      const box = document.createElement("div");
      box.style.cssText = "position:fixed;inset:0;overflow:auto;background:white;z-index:5";
      document.body.append(box);
      const t0 = performance.now();
      const views = [];
      for (let k = 0; k < count; k++) {
        const v = document.createElement("polyloop-prompt-view");
        v.setAttribute("wasm-url", "../assembly.wasm");
        v.style.cssText = "display:flex;flex-direction:column;height:180px";
        box.append(v);
        const text = JSON.stringify({
          observation_template: "Observation: {observation}",
          goal_messages: [{ role: "user", content: [{ type: "text", text: `Element ${k}: summarise the log.` }] }],
          steps: [{ raw_output: `Action: read(${k})`, observation: `row ${k}: ok` }],
        });
        views.push([v, v.setText(text)]);
      }
      await Promise.all(views.map(([v, gen]) => v.whenRendered(gen)));
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      const elapsed = performance.now() - t0;
      const ok = views.every(([v]) => v.state === "ok");
      return { elapsed, ok };
    }, count);
    if (!t.ok) throw new Error("an element did not assemble its request");
    workers = page.workers().length;
    ms.push(t.elapsed);
    await page.evaluate(() => {
      const box = document.body.lastElementChild;
      for (const v of box.querySelectorAll("polyloop-prompt-view")) v.terminate();
      box.remove();
    });
    await page.waitForTimeout(150);
  }
  return { ...figure(ms), elements: count, workers };
}

/** Cold loads: the HTTP cache (with V8's code cache and the compiled
 * module) cleared before each. */
async function coldLoads(page, url, n) {
  const cdp = await page.context().newCDPSession(page);
  const ms = [];
  for (let i = 0; i < n; i++) {
    await page.evaluate(() => localStorage.clear());
    await cdp.send("Network.clearBrowserCache");
    await page.goto(url + "?bench-cold");
    ms.push(await page.evaluate(async () => (await window.preview.ready, window.preview.firstPainted)));
  }
  await cdp.detach();
  return figure(ms);
}

/**
 * A search over the list of a 10,000-entry JSONL (non-ASCII written as
 * \uXXXX escapes): each query set and the list refiltered, until painted.
 * @param {import("playwright-core").Page} page @param {string} text the file @param {number} n
 */
async function searchTimes(page, text, n) {
  const before = await page.evaluate(() => window.preview.view.generation);
  await page.setInputFiles("#file", { name: "run.jsonl", mimeType: "application/octet-stream", buffer: Buffer.from(text) });
  await page.waitForFunction((b) => window.preview.view.generation > b, before);
  await page.waitForTimeout(300);
  const ms = [];
  for (let i = 0; i < n; i++) {
    ms.push(
      await page.evaluate(
        async (q) => {
          const t0 = performance.now();
          document.getElementById("browser-search").value = q;
          window.preview.browser.refilter();
          await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
          return performance.now() - t0;
        },
        ["süd", "SÜD", "observation", "Süd"][i % 4],
      ),
    );
  }
  return figure(ms);
}

/**
 * An edit of a 1,000-step × 1 KB request in step mode (the slider at step
 * 500), until the prompt is painted.
 * @param {import("playwright-core").Page} page @param {string} text @param {number} n
 */
async function stepEditTimes(page, text, n) {
  const pos = text.lastIndexOf('"observation": "') + '"observation": "'.length;
  const ms = await page.evaluate(
    async ({ text, pos, n }) => {
      const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      const p = window.preview;
      const by = document.getElementById("by-step");
      if (!by.checked) by.click();
      await p.setText(text);
      await frame();
      const s = document.getElementById("step");
      s.value = "500";
      s.dispatchEvent(new Event("input"));
      await frame();
      const out = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await p.edit(pos, pos + 1, i % 2 ? "x" : "y");
        await frame();
        out.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 100));
      }
      by.click();
      return out;
    },
    { text, pos, n },
  );
  return figure(ms);
}

/**
 * Measures the six paths; the page is the preview, loaded.
 * @param {import("playwright-core").Page} page
 * @param {string} url
 * @param {string} dir a temporary directory for the files
 * @param {boolean} quick
 */
export async function measurePaths(page, url, dir, quick) {
  const req = trajectory(1000, 1000);
  const file = join(dir, "trajectory-1000.json");
  const edited = join(dir, "trajectory-1000-edited.json");
  writeFileSync(file, asText(req));
  writeFileSync(
    edited,
    asText({ ...req, goal_messages: [{ role: "user", content: [{ type: "text", text: "Summarise the server log, briefly." }] }] }),
  );
  const lines = 10_000;
  // Two files in turn: the file input fires no change for the same file.
  const jsonl = [0, 1].map((k) => join(dir, `run-10000-${k}.jsonl`));
  for (const [k, path] of jsonl.entries())
    writeFileSync(path, Array.from({ length: lines }, (_, i) => JSON.stringify(trajectory(1 + ((i + k) % 5), 150))).join("\n") + "\n");

  const out = {};
  out.open_file = await openTimes(page, [file, edited], quick ? 3 : 7, "prompt");
  line("open a 1,000-step × 1 KB file → prompt painted", out.open_file);
  out.open_jsonl = { ...(await openTimes(page, jsonl, quick ? 3 : 5, "list", lines)), lines };
  line("open a 10,000-line JSONL → list painted", out.open_jsonl);
  out.elements = await elementsTimes(page, quick ? 2 : 5, 100);
  line(`100 elements → all painted (${out.elements.workers} worker${out.elements.workers === 1 ? "" : "s"})`, out.elements);
  out.cold_load = await coldLoads(page, url, quick ? 3 : 6);
  line("cold page load (empty HTTP cache) → first prompt painted", out.cold_load);
  const escaped = Array.from({ length: lines }, (_, i) => {
    const t = trajectory(1 + (i % 5), 150);
    if (i % 1000 === 7) t.steps[0].observation += " Wind aus Süd";
    return JSON.stringify(t).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  });
  out.search = await searchTimes(page, escaped.join("\n") + "\n", quick ? 4 : 8);
  line("search a 10,000-entry JSONL → list painted", out.search);
  await page.goto(url);
  await page.evaluate(async () => await window.preview.ready);
  out.step_edit = await stepEditTimes(page, asText(req), quick ? 5 : 9);
  line("edit in step mode, 1,000 steps × 1 KB → painted", out.step_edit);
  return out;
}
