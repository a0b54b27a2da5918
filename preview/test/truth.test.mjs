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
import { REPO } from "../../bindings/js/test/common.mjs";
import { ARTIFACTS, open, skip, withPreview } from "./harness.mjs";
import { trajectory } from "../bench/preview-requests.mjs";

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

    await t.test("an entry edited in the editor: marked edited in the list, its report entry stale", async () => {
      const text = [ok, JSON.stringify(trajectory(3, 40)), ok].join("\n") + "\n";
      await openText(page, "run.jsonl", text);
      await page.waitForFunction(() => window.preview.report.done);
      await page.locator('#browser-rows [data-entry="1"]').click();
      await page.waitForFunction(() =>
        /^Line 2 \(call 2 of the run\): .*chars; cacheable/.test(document.getElementById("run-call").textContent),
      );
      const line = () => page.textContent('#browser-rows [data-entry="1"] .entry-line');
      assert.equal(await line(), "line 2");
      await page.evaluate(() => window.preview.edit(0, 0, " "));
      await page.waitForFunction(
        () => document.querySelector('#browser-rows [data-entry="1"] .entry-line')?.textContent === "line 2 · edited",
      );
      await page.waitForFunction(() => document.getElementById("run-call").classList.contains("stale"));
      assert.match(
        await page.textContent("#run-call"),
        /^Line 2 \(call 2 of the run\): edited: the figures of this call are the file's line/,
      );
      assert.equal(await page.textContent('#browser-rows [data-entry="0"] .entry-line'), "line 1", "only the edited entry");
      await page.screenshot({ path: `${ARTIFACTS}truth-edited.png` });
      // Another entry picked: the editor holds it, nothing is edited.
      await page.locator('#browser-rows [data-entry="2"]').click();
      await page.waitForFunction(() => document.querySelector('#browser-rows [data-entry="1"] .entry-line')?.textContent === "line 2");
      await page.waitForFunction(() => /^Line 3 \(call 3 of the run\): /.test(document.getElementById("run-call").textContent));
      assert.equal(await page.evaluate(() => document.getElementById("run-call").classList.contains("stale")), false);
    });

    await t.test("a raw control character: the JSON error says which one and how to write it", async () => {
      await openText(page, "one.json", JSON.stringify(trajectory(1, 10)));
      await page.evaluate(() => window.preview.setText('{"v": 1, "observation_template": "a\tb"}'));
      await page.waitForFunction(() => window.preview.view.error?.code === "malformed_request");
      const message = await page.evaluate(() => window.preview.view.error.message);
      assert.equal(
        message,
        "invalid JSON at byte 35: control character U+0009 (tab) in a string: JSON text cannot hold it raw; write it as \\t",
      );
    });

    await t.test("focus stays on the control after Enter on a segment head or a folded message", async () => {
      const long = { ...trajectory(1, 10) };
      long.steps = [{ raw_output: "r", observation: "x".repeat(3000) }];
      await openText(page, "long.json", JSON.stringify(long));
      const active = () =>
        page.evaluate(() => {
          const a = window.preview.view.shadowRoot.activeElement;
          return a
            ? {
                fold: a.getAttribute("data-fold"),
                expand: a.getAttribute("data-expand"),
                row: a.classList.contains("row"),
                index: a.getAttribute("data-index"),
                message: a.getAttribute("data-message"),
              }
            : null;
        });
      // The fold button of the run segment's head.
      await page.locator('polyloop-prompt-view [data-fold="0"]').focus();
      await page.keyboard.press("Enter");
      await page.waitForFunction(
        () => window.preview.view.shadowRoot.querySelector('[data-fold="0"]')?.getAttribute("aria-expanded") === "false",
      );
      await page.waitForFunction(() => window.preview.view.shadowRoot.activeElement?.getAttribute("data-fold") === "0");
      await page.keyboard.press("Enter");
      await page.waitForFunction(
        () => window.preview.view.shadowRoot.querySelector('[data-fold="0"]')?.getAttribute("aria-expanded") === "true",
      );
      assert.equal((await active())?.fold, "0", "still on the fold button");
      // The folded message's expand button.
      const more = page.locator("polyloop-prompt-view [data-expand]").first();
      const i = await more.getAttribute("data-expand");
      await more.focus();
      await page.keyboard.press("Enter");
      await page.waitForFunction(
        (i) => window.preview.view.shadowRoot.querySelector(`[data-expand="${i}"]`)?.getAttribute("aria-expanded") === "true",
        i,
      );
      await page.waitForFunction((i) => window.preview.view.shadowRoot.activeElement?.getAttribute("data-expand") === i, i);
      // A segment head's row, by keyboard: Enter folds it, focus stays on the row, the arrows go on.
      await page.locator("polyloop-prompt-view .list").focus();
      await page.keyboard.press("Home");
      await page.waitForFunction(() => window.preview.view.shadowRoot.activeElement?.classList.contains("head"));
      await page.keyboard.press("Enter");
      await page.waitForFunction(
        () => window.preview.view.shadowRoot.querySelector('[data-fold="0"]')?.getAttribute("aria-expanded") === "false",
      );
      await page.waitForFunction(() => window.preview.view.shadowRoot.activeElement?.classList.contains("head"));
      await page.keyboard.press("ArrowDown");
      await page.waitForFunction(() => {
        const a = window.preview.view.shadowRoot.activeElement;
        return a?.classList.contains("row") && a.getAttribute("data-index") !== "0";
      });
      assert.notEqual(await page.evaluate(() => document.activeElement?.tagName), "BODY");
    });

    await t.test("the search finds a line as the rows write it: 'line 1,234'", async () => {
      const text = Array.from({ length: 1300 }, (_, i) => `{"observation_template": "{observation}", "max_prompt_chars": ${i}}`).join("\n");
      await openText(page, "many.jsonl", text);
      for (const q of ["line 1,234", "line 1234", "1,234", "1234", "LINE 1,234"]) {
        await page.fill("#browser-search", q);
        await page
          .waitForFunction(() => {
            const rows = [...document.querySelectorAll("#browser-rows [data-entry]")];
            return rows.length === 1 && rows[0].querySelector(".entry-line").textContent === "line 1,234";
          })
          .catch((e) => assert.fail(`${q}: ${e.message}`));
      }
      await page.fill("#browser-search", "");
    });

    await t.test("a host rule display:block; height:300px leaves no blank band", async () => {
      await openText(page, "one.json", JSON.stringify(trajectory(3, 40)));
      await page.addStyleTag({ content: "polyloop-prompt-view{display:block;height:300px;flex:none}" });
      await page.waitForFunction(() => Math.round(window.preview.view.getBoundingClientRect().height) === 300);
      const box = await page.evaluate(() => {
        const v = window.preview.view;
        const r = v.getBoundingClientRect();
        const list = v.shadowRoot.querySelector(".list").getBoundingClientRect();
        const digests = v.shadowRoot.querySelector(".digests").getBoundingClientRect();
        return { bottom: r.bottom, list: list.height, digests: digests.bottom };
      });
      assert.ok(Math.abs(box.bottom - box.digests) <= 1, `the last part ends at the host's bottom: ${JSON.stringify(box)}`);
      assert.ok(box.list > 120, `the list takes the height left: ${JSON.stringify(box)}`);
      await page.screenshot({ path: `${ARTIFACTS}truth-host-300.png` });
    });

    assert.deepEqual(problems, []);
  });
});
