// The sample files of examples/ the page offers (issue 33, item 7), in
// Chromium, the CLI's --batch as the oracle: trajectories.jsonl (ten runs, a
// few rejected) gives the list the CLI's verdict line by line;
// requests.msgpack is a msgpack stream (the CLI's --batch --in msgpack) of
// entries; compare-a.json and compare-b.json open with the comparison.

import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { REPO } from "../../bindings/js/test/common.mjs";
import { open, skip, withPreview } from "./harness.mjs";

const CLI = process.env.POLYLOOP_CLI || `${REPO}build/bin/polyloop-assemble`;

/** The CLI's verdict codes on a stream of requests ("ok" or the error code). */
function batchCodes(file, args = []) {
  let out;
  try {
    out = execFileSync(CLI, ["--engine", "native", "--batch", ...args, "--out", "json", `${REPO}examples/${file}`], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch (e) {
    out = e.stdout;
  }
  return out
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .map((r) => (r.ok ? "ok" : r.error.code));
}

/** The list's verdicts once all are in. */
const listCodes = (page, n) =>
  page
    .waitForFunction((n) => window.preview.browser.entries.length === n && window.preview.browser.entries.every((e) => e.code), n)
    .then(() => page.evaluate(() => window.preview.browser.entries.map((e) => e.code)));

test("the examples the page offers", { skip, timeout: 180_000 }, async (t) => {
  await withPreview(async ({ page, url, problems }) => {
    await open(page, url);

    await t.test("trajectories.jsonl: the CLI's verdicts, line by line", async () => {
      const want = batchCodes("trajectories.jsonl");
      assert.ok(want.filter((c) => c !== "ok").length >= 3, `a few rejected: ${want}`);
      await page.selectOption("#examples", "trajectories.jsonl");
      assert.deepEqual(await listCodes(page, want.length), want);
      // Python's json.dumps lines are found by their decoded text.
      await page.fill("#browser-search", "zürich");
      await page.waitForFunction(() => window.preview.browser.shown.length === 1);
    });

    await t.test("requests.msgpack: a msgpack stream of entries", async () => {
      const want = batchCodes("requests.msgpack", ["--in", "msgpack"]);
      await page.selectOption("#examples", "requests.msgpack");
      assert.deepEqual(await listCodes(page, want.length), want);
      // The list's verdicts can be in before the selected entry's view is
      // assembled ("loading" in between, seen on a loaded machine).
      await page.waitForFunction(() => window.preview.state !== "loading");
      assert.equal(await page.evaluate(() => window.preview.state), "ok");
    });

    await t.test("compare-a.json and compare-b.json: the comparison open", async () => {
      await page.selectOption("#examples", "compare");
      await page.waitForFunction(() => !document.getElementById("compare").hidden);
      await page.waitForFunction(() => document.getElementById("compare-result").textContent.length > 0);
      assert.equal(await page.textContent("#side-a-label"), "compare-a.json");
      assert.equal(await page.textContent("#side-b-label"), "compare-b.json");
      assert.match(await page.textContent("#compare-result"), /goal/);
    });

    assert.deepEqual(problems, []);
  });
});
