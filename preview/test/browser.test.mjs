// The preview's trajectory browser in Chromium: a JSON-lines file's entries
// listed with line, size, step count and the module's verdict (compared with
// Node's assembleJSON of each line), a search and an "errors only" filter,
// 100,000 entries virtualised; an invalid entry shows its error alone (never
// a stale prompt); "since the previous result" starts again with a new file
// and hides on errors; the step slider scrolls to what step k added; a JSON
// syntax error's line and column, marked in the editor; "Format" keeps every
// value as written. Screenshots in artifacts/.

import test from "node:test";
import assert from "node:assert/strict";
import { assembler, errorOf } from "../../bindings/js/test/common.mjs";
import { ARTIFACTS, open, pickEntry, setText, shown, skip, withPreview } from "./harness.mjs";
import { trajectory } from "../bench/preview-requests.mjs";

/** Opens `text` as the file `name` through the file input. */
async function openFile(page, name, text) {
  const before = await page.evaluate(() => window.preview.view.generation);
  await page.setInputFiles("#file", { name, mimeType: "application/octet-stream", buffer: Buffer.from(text) });
  await page.waitForFunction((b) => window.preview.view.generation > b, before);
  await page.evaluate(() => window.preview.view.whenRendered(window.preview.view.generation));
}

/** The rows of the list in the DOM: entry index, and its texts. */
const listRows = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll("#browser-rows [data-entry]")]
      .map((el) => ({
        k: Number(el.dataset.entry),
        line: el.querySelector(".entry-line").textContent,
        verdict: el.querySelector(".verdict").textContent,
        meta: el.querySelector(".entry-meta").textContent,
        selected: el.getAttribute("aria-selected") === "true",
      }))
      .sort((a, b) => a.k - b.k),
  );

const verdictsDone = (page) => page.waitForFunction(() => !document.getElementById("browser-count").textContent.includes("verdicts"));

/** A size as the list shows it (an independent formula: B, KB, MB, one decimal). */
const sizeOf = (n) => (n < 1000 ? `${n} B` : n < 1e6 ? `${(n / 1e3).toFixed(1)} KB` : `${(n / 1e6).toFixed(1)} MB`);

test("the trajectory browser in Chromium", { skip, timeout: 300_000 }, async (t) => {
  const asm = await assembler();
  // Seven entries: four valid (3, 12, 1 and 0 steps), a bad template, a
  // blank line (an error, as --batch counts it) and a line that is not JSON.
  const lines = [
    JSON.stringify(trajectory(3, 100)),
    JSON.stringify(trajectory(12, 400)),
    JSON.stringify({ ...trajectory(1, 50), observation_template: "Obs {nope}" }),
    "",
    '{"observation_template": "{observation}", "steps": [}',
    JSON.stringify(trajectory(1, 60)),
    JSON.stringify({ observation_template: "{observation}" }),
  ];
  const file = lines.join("\n") + "\n";
  const entries = lines.map((l, i) => ({ l, line: i + 1 }));
  const codeOf = (l) => errorOf(() => asm.assembleJSON(l))?.code ?? "ok";
  const stepsOf = [3, 12, 1, null, null, 1, 0];

  await withPreview(async ({ page, url, problems }) => {
    await open(page, url);

    await t.test("each entry: line, size, step count, the module's verdict", async () => {
      await openFile(page, "run.jsonl", file);
      await verdictsDone(page);
      const rows = await listRows(page);
      assert.equal(rows.length, entries.length);
      entries.forEach((e, k) => {
        const steps = stepsOf[k];
        assert.deepEqual(
          rows[k],
          {
            k,
            line: `line ${e.line}`,
            verdict: codeOf(e.l),
            meta: `${sizeOf(Buffer.byteLength(e.l))} · ${steps === null ? "steps unknown" : `${steps} ${steps === 1 ? "step" : "steps"}`}`,
            selected: k === 0,
          },
          `entry ${k}`,
        );
      });
      assert.deepEqual(
        rows.map((r) => r.verdict),
        ["ok", "ok", "invalid_template", "malformed_request", "malformed_request", "ok", "ok"],
      );
      assert.match(await page.textContent("#browser-count"), /^7 of 7 entries · 3 rejected$/);
    });

    await t.test("an invalid entry shows its error, not the previous prompt", async () => {
      await pickEntry(page, 1);
      await page.waitForFunction(() => window.preview.state === "ok" && window.preview.view.summary.messages === 4 + 24);
      await pickEntry(page, 2);
      await page.waitForFunction(() => window.preview.view.error?.code === "invalid_template");
      const s = await shown(page);
      assert.equal(s.state, "error");
      assert.equal(s.banner, null, "no stale banner");
      assert.deepEqual(s.messages, [], "no message of the previous entry shown");
      assert.equal(s.error.code, "invalid_template");
      assert.match(await page.textContent("#editor-title"), /line 3/);
    });

    await t.test("the errors-only filter and the search", async () => {
      await page.check("#browser-errors");
      await page.waitForFunction(() => document.querySelectorAll("#browser-rows [data-entry]").length === 3);
      assert.deepEqual(
        (await listRows(page)).map((r) => [r.line, r.verdict]),
        [
          ["line 3", "invalid_template"],
          ["line 4", "malformed_request"],
          ["line 5", "malformed_request"],
        ],
      );
      await page.screenshot({ path: `${ARTIFACTS}preview-browser-errors.png` });
      await page.uncheck("#browser-errors");
      await page.fill("#browser-search", "malformed");
      await page.waitForFunction(() => document.querySelectorAll("#browser-rows [data-entry]").length === 2);
      assert.deepEqual(
        (await listRows(page)).map((r) => r.line),
        ["line 4", "line 5"],
      );
      await page.fill("#browser-search", "Obs {nope}");
      await page.waitForFunction(() => document.querySelector("#browser-rows [data-entry]")?.dataset.entry === "2");
      // A number: the entry of that line (here with no "7" in its text).
      await page.fill("#browser-search", "7");
      await page.waitForFunction(() => document.querySelector('#browser-rows [data-entry="6"]'));
      await page.fill("#browser-search", "");
      await page.waitForFunction(() => document.querySelectorAll("#browser-rows [data-entry]").length === 7);
      await pickEntry(page, 2);
      await page.screenshot({ path: `${ARTIFACTS}preview-browser.png` });
    });

    await t.test("the list by keyboard", async () => {
      await page.locator("#browser-list").focus();
      await page.keyboard.press("ArrowDown");
      await page.waitForFunction(() => window.preview.browser.selected === 3 && window.preview.view.error?.code === "malformed_request");
      await page.keyboard.press("Home");
      await page.waitForFunction(() => window.preview.browser.selected === 0 && window.preview.state === "ok");
    });

    await t.test("the step slider scrolls to what step k added", async () => {
      await pickEntry(page, 1);
      await page.waitForFunction(() => window.preview.state === "ok" && window.preview.view.summary.messages === 28);
      await page.check("#by-step");
      await page.waitForFunction(() => window.preview.view.stepCount === 12 && !document.getElementById("step").disabled);
      await page.locator("#step").fill("0");
      for (const k of [11, 12, 6]) {
        await page.locator("#step").fill(String(k));
        const added = [4 + 2 * k - 2, 4 + 2 * k - 1];
        // The first message step k added is in the list's viewport, marked.
        await page.waitForFunction((i) => {
          const r = window.preview.view.shadowRoot;
          const row = r.querySelector(`.row[data-message="${i}"]`);
          if (!row) return false;
          const list = r.querySelector(".list").getBoundingClientRect();
          const b = row.getBoundingClientRect();
          return b.top >= list.top - 1 && b.top < list.bottom;
        }, added[0]);
        const marked = await page.evaluate(() =>
          [...window.preview.view.shadowRoot.querySelectorAll(".msg.is-new")].map((b) => Number(b.closest(".row").dataset.message)),
        );
        assert.ok(marked.includes(added[0]), `step ${k}: ${marked}`);
      }
      await page.uncheck("#by-step");
    });

    await t.test("'since the previous result' starts again with a new file and hides on errors", async () => {
      const a = JSON.stringify(trajectory(2, 80), null, 2);
      assert.equal(await setText(page, a), "ok");
      assert.equal(await setText(page, a.replace("metric", "imperial")), "ok");
      assert.match((await shown(page)).cache, /^Since the previous result/);
      await openFile(page, "other.json", JSON.stringify(trajectory(1, 40), null, 2));
      assert.equal((await shown(page)).cache, "", "the new file is not compared with the document before");
      assert.equal(await page.isVisible("#browser"), false, "one request: no list");
      await page.evaluate(() => window.preview.edit(0, 0, " "));
      assert.match((await shown(page)).cache, /^Since the previous result/);
      await page.evaluate(() => window.preview.edit(0, 1, "x"));
      assert.equal(await page.evaluate(() => window.preview.state), "stale");
      assert.equal(await page.evaluate(() => window.preview.view.shadowRoot.querySelector(".cache").checkVisibility()), false);
    });

    await t.test("a JSON syntax error: its line and column, marked in the editor", async () => {
      // Line 3, after two spaces, "é😀" and ": " — column 9 in characters
      // (10 UTF-16 units, 12 bytes).
      const text = '{\n  "observation_template": "{observation}",\n  "é😀": @\n}';
      assert.equal(await setText(page, text), "stale");
      const byte = Buffer.byteLength(text.slice(0, text.indexOf("@")));
      assert.match((await shown(page)).error.message, new RegExp(`^invalid JSON at byte ${byte}\\b`));
      await page.waitForSelector("#error-at:not([hidden])");
      assert.equal(await page.textContent("#error-at"), "JSON syntax error: line 3, column 9");
      await page.waitForFunction(() => document.querySelector("#editor .cm-lintRange-error"));
      assert.equal(await page.textContent("#editor .cm-lintRange-error"), "@");
      await page.click("#error-at");
      const sel = await page.evaluate(() => window.preview.editor.state.selection.main.from);
      assert.equal(sel, text.indexOf("@"));
      assert.equal(await page.isDisabled("#format"), true);
      assert.equal(await setText(page, '{"observation_template": "{observation}"}'), "ok");
      assert.equal(await page.isVisible("#error-at"), false);
    });

    await t.test("Format pretty-prints without changing any value", async () => {
      const U64 = "18446744073709551615";
      const one = `{"v":1,"observation_template":"Obs: {observation}\\u00e9\\n\\"q\\" \\\\","max_prompt_chars":${U64},"run_messages":[{"role":"system","content":[{"type":"text","text":"a,b:{c}[d] ,"}]}],"injections":{},"goal_messages":[],"steps":[{"raw_output":"r 9007199254740993","observation":"o é 😀"}]}`;
      assert.equal(await setText(page, one), "ok");
      await page.click("#format");
      await page.waitForFunction((o) => window.preview.editor.state.doc.toString() !== o, one);
      await page.evaluate(() => window.preview.view.whenRendered(window.preview.view.generation));
      const pretty = await page.evaluate(() => window.preview.editor.state.doc.toString());
      assert.ok(pretty.split("\n").length > 20, pretty);
      assert.ok(pretty.includes(`"max_prompt_chars": ${U64}`));
      assert.ok(pretty.includes('"Obs: {observation}\\u00e9\\n\\"q\\" \\\\"'), "the string as written, escapes kept");
      assert.ok(pretty.includes('"text": "a,b:{c}[d] ,"'));
      assert.ok(pretty.includes('"injections": {}'));
      assert.deepEqual(asm.assembleJSON(pretty), asm.assembleJSON(one), "the same request to the module");
      assert.equal(await page.evaluate(() => window.preview.state), "ok");
      const json = await page.evaluate(() => window.preview.view.responseJSON());
      assert.ok(json.includes("9007199254740993"));
    });

    await t.test("100,000 entries: virtualised", async () => {
      const many = Array.from({ length: 100_000 }, (_, i) =>
        i % 1000 === 999
          ? `{"observation_template": "{nope}", "max_prompt_chars": ${i}}`
          : `{"observation_template": "{observation}", "max_prompt_chars": ${i}}`,
      ).join("\n");
      await openFile(page, "many.jsonl", many);
      const inDom = await page.evaluate(() => document.querySelectorAll("#browser-rows [data-entry]").length);
      assert.ok(inDom > 5 && inDom < 80, `${inDom} rows in the DOM`);
      await page.evaluate(() => {
        const l = document.getElementById("browser-list");
        l.scrollTop = l.scrollHeight;
      });
      await page.waitForFunction(() => document.querySelector('#browser-rows [data-entry="99999"]'));
      assert.equal(await page.textContent('#browser-rows [data-entry="99999"] .entry-line'), "line 100,000");
      assert.ok((await page.evaluate(() => document.querySelectorAll("#browser-rows [data-entry]").length)) < 80);
      await page.waitForFunction(
        () => document.querySelector('#browser-rows [data-entry="99999"] .verdict').textContent === "invalid_template",
        null,
        {
          timeout: 120_000,
        },
      );
      await page.check("#browser-errors");
      await page
        .waitForFunction(() => /^100 of 100,000 entries · 100 rejected$/.test(document.getElementById("browser-count").textContent))
        .catch(async (e) => assert.fail(`${e.message}: ${await page.textContent("#browser-count")}`));
      await page.uncheck("#browser-errors");
    });

    assert.deepEqual(problems, [], "the page logged errors");
  });
});
