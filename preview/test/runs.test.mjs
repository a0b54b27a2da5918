// Runs as the library defines them (issue 43, item 3): the page splits a
// file's entries into runs by run_rows' rule (preview/runs.js) and reports
// each run on its own. The oracle is the Python package's `data.run_rows`
// (bindings/python/src/polyloop_assembly/data/_run_rows.py, run by the project's
// .venv): its rows' run ids and breaks (the first call of each chain after
// the first, its segment and cause) are the page's runs and breaks, on the
// bundled examples, each line read as a run of its own and the file as one
// run's calls.

import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { REPO } from "../../bindings/js/test/common.mjs";
import { ARTIFACTS, open, skip, withPreview } from "./harness.mjs";
import { runIds, runsOf } from "../runs.js";

const PYTHON = `${REPO}.venv/bin/python`;
const noPython = existsSync(PYTHON) ? false : `${PYTHON} is missing: run \`make python.venv python.wasm\``;

/**
 * run_rows' verdict on `file`'s lines, each line its own run (`lines`) or
 * all one run (`calls`): the run ids in order and the breaks as [run, call,
 * segment, cause].
 */
function runRows(file, split) {
  const script = `
import json, sys
from polyloop_assembly import data
lines = open(sys.argv[1], encoding="utf-8", newline="").read().split("\\n")
if lines and lines[-1] == "":
    lines.pop()
ids = list(range(len(lines))) if sys.argv[2] == "lines" else [0] * len(lines)
rows = list(data.run_rows(zip(ids, lines)))
runs = []
for r in rows:
    if r["run_id"] not in runs:
        runs.append(r["run_id"])
breaks = [[runs.index(r["run_id"]), r["first_call"], r["break"]["segment"], r["break"]["cause"]] for r in rows if r["break"]]
print(json.dumps({"runs": len(runs), "breaks": breaks}))
`;
  return JSON.parse(execFileSync(PYTHON, ["-c", script, file, split], { encoding: "utf8" }));
}

/** The page's runs and breaks once its report is done. */
async function pageRuns(page) {
  await page.waitForFunction(() => window.preview.report.done && window.preview.report.complete);
  return page.evaluate(() => {
    const r = window.preview.report;
    const breaks = [];
    r.calls.forEach((c, k) => {
      if (!c?.break) return;
      const at = r.place(k);
      breaks.push([at.run, at.call, c.break.segment, c.break.cause]);
    });
    return { runs: r.runs.starts.length, breaks };
  });
}

test("runsOf: run_rows' rule (consecutive ids a run; an id met again refused)", () => {
  const ok = runsOf(["a", "a", "b", "c", "c", "c"]);
  assert.ok(!("error" in ok));
  assert.deepEqual([...ok.runs], [0, 0, 1, 2, 2, 2]);
  assert.deepEqual(
    [ok.starts, ok.ends, ok.ids],
    [
      [0, 2, 3],
      [2, 3, 6],
      ["a", "b", "c"],
    ],
  );
  const bad = runsOf(["a", "b", "a"]);
  assert.ok("error" in bad && /run "a" are not together .*call 2.*sort the calls by run id/.test(bad.error), JSON.stringify(bad));
  assert.deepEqual(runIds(3, "lines"), [0, 1, 2]);
  assert.deepEqual(runIds(3, "calls"), [0, 0, 0]);
});

test("the page's runs are run_rows' runs", { skip: skip || noPython, timeout: 240_000 }, async (t) => {
  await withPreview(async ({ page, url, problems }) => {
    await open(page, url);

    await t.test("trajectories.jsonl (the bundled ten runs): ten runs, their real breaks", async () => {
      const want = runRows(`${REPO}examples/trajectories.jsonl`, "lines");
      assert.equal(want.runs, 10);
      await page.selectOption("#examples", "trajectories.jsonl");
      await page.waitForFunction(() => window.preview.browser.entries.length === 10 && window.preview.report.entries.length === 10);
      assert.equal(await page.inputValue("#run-split"), "lines");
      assert.deepEqual(await pageRuns(page), want);
      assert.match(await page.textContent("#run-totals"), /^10 runs, 0 breaks in all · run 1 \(lines 1–1\): 1 call · 0 breaks/);
      const cells = await page.$$eval("#browser-rows .entry", (rows) => rows.map((r) => r.textContent));
      assert.ok(cells.length >= 5 && cells.every((c) => !c.includes("break:")), cells.join("\n"));
      assert.equal(cells.filter((c) => c.includes("first call")).length, 7, cells.join("\n"));
      await page.screenshot({ path: `${ARTIFACTS}runs-trajectories.png` });
    });

    await t.test("examples/caching/run.jsonl: one run's calls, and each line a run", async () => {
      const file = `${REPO}examples/caching/run.jsonl`;
      const bytes = readFileSync(file);
      await page.evaluate(
        async ([b64]) => {
          const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          await window.preview.openFile({ name: "run.jsonl", size: bytes.length, arrayBuffer: async () => bytes.slice().buffer });
        },
        [bytes.toString("base64")],
      );
      assert.equal(await page.inputValue("#run-split"), "calls");
      const one = runRows(file, "calls");
      assert.equal(one.runs, 1);
      assert.ok(one.breaks.length >= 1, "the run has a break");
      assert.deepEqual(await pageRuns(page), one);
      await page.selectOption("#run-split", "lines");
      assert.deepEqual(await pageRuns(page), runRows(file, "lines"));
    });

    await t.test("the chart and its table are drawn incrementally: only the columns that changed", async () => {
      await page.selectOption("#run-split", "calls");
      await page.waitForFunction(() => window.preview.report.done && window.preview.report.complete);
      const kept = await page.evaluate(() => {
        const r = window.preview.report;
        const nodes = () => [
          document.querySelector("#run-chart svg"),
          ...document.querySelectorAll("#run-chart [data-call]"),
          ...document.querySelectorAll("#run-table tbody tr"),
        ];
        const before = nodes();
        r.paint(); // nothing changed: nothing drawn again
        const same = nodes().every((n, i) => n === before[i]);
        // One call's figures change (as when its slice comes): its column and row only are drawn again.
        const saved = r.calls[3];
        r.calls[3] = { ...saved, prompt_chars: saved.prompt_chars + 1 };
        r.paint();
        const after = nodes();
        const changed = after
          .map((n, i) => (n === before[i] ? null : (n.getAttribute("data-call") ?? n.tagName)))
          .filter((x) => x !== null);
        r.calls[3] = saved;
        r.paint();
        return { same, changed, n: before.length };
      });
      assert.equal(kept.same, true, "a paint with nothing new draws nothing again");
      assert.deepEqual(kept.changed, ["3", "3"], `only call 3's column and row drawn again (of ${kept.n} nodes)`);
    });

    assert.deepEqual(problems, []);
  });
});
