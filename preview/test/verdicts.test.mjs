// The CLI's verdict survives in the page (issue 33, items 3 and 4), in
// Chromium, the CLI (`polyloop-assemble --out json FILE`) as the oracle:
// - a file the engine rejects for its bytes (not UTF-8) stays rejected
//   through a keystroke, with the notice saying the file's bytes are judged;
//   no share link, nothing stored; only "Convert to text" (which says what
//   it replaces) makes the editor's text the request;
// - a syntax error in a CRLF file: the CLI's byte offset, before and after
//   an edit, and the editor's mark on the character the CLI names;
// - a `.json` file of two one-line objects is one request, as the CLI reads
//   it (its error); "Open as JSON lines" is the explicit other reading.

import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "../../bindings/js/test/common.mjs";
import { open, shown, skip, withPreview } from "./harness.mjs";

const CLI = process.env.POLYLOOP_CLI || `${REPO}build/bin/polyloop-assemble`;

/** The CLI's answer for a file of `bytes` named `name`. */
function cli(bytes, name = "request.json") {
  const dir = mkdtempSync(join(tmpdir(), "polyloop-cli-"));
  try {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    try {
      return JSON.parse(execFileSync(CLI, ["--engine", "native", "--out", "json", path], { encoding: "utf8" }));
    } catch (e) {
      if (e.status === 1) return JSON.parse(e.stdout);
      throw e;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Opens `bytes` as a file through the page's file input; resolves once shown. */
async function openFile(page, name, bytes) {
  const before = await page.evaluate(() => window.preview.view.generation);
  await page.setInputFiles("#file", { name, mimeType: "application/octet-stream", buffer: Buffer.from(bytes) });
  await page.waitForFunction((b) => window.preview.view.generation > b, before);
  await page.evaluate(() => window.preview.view.whenRendered(window.preview.view.generation));
}

/** Types `text` as a user does, the cursor put at `at` (a position in the editor). */
async function typeAt(page, at, text) {
  await page.evaluate((at) => {
    const ed = window.preview.editor;
    ed.focus();
    ed.dispatch({ selection: { anchor: at } });
  }, at);
  await page.keyboard.type(text);
  // The view's newest generation rendered (none may have started).
  await page.evaluate(() => new Promise((r) => setTimeout(r, 300)));
  await page.evaluate(() => window.preview.view.whenRendered(window.preview.view.generation));
}

const docText = (page) => page.evaluate(() => window.preview.editor.state.doc.toString());
const noticeText = (page) => page.textContent("#notice");
const byteOf = (message) => Number(/at byte (\d+)/.exec(message)?.[1] ?? NaN);

test("the CLI's verdict survives in the page", { skip, timeout: 180_000 }, async (t) => {
  await withPreview(async ({ page, url, problems }) => {
    await open(page, url);

    await t.test("a file that is not UTF-8 stays rejected through a keystroke until converted", async () => {
      const bytes = Buffer.concat([
        Buffer.from('{"observation_template": "{observation}", "steps": [{"raw_output": "Hello w'),
        Buffer.from([0xf6]),
        Buffer.from('rld", "observation": "o"}]}'),
      ]);
      const want = cli(bytes);
      assert.deepEqual([want.error.code, want.error.path], ["invalid_utf8", "steps[0].raw_output"]);
      // The example's own save (400 ms after it loads) first: cleared before it, the example would be stored after.
      await page.waitForFunction(() => localStorage.getItem("polyloop-preview:request") !== null);
      await page.evaluate(() => localStorage.clear());
      await openFile(page, "hello.json", bytes);
      const check = async (what) => {
        const s = await shown(page);
        assert.equal(s.state, "error", what);
        assert.deepEqual({ code: s.error?.code, path: s.error?.path }, { code: want.error.code, path: want.error.path }, what);
        assert.match(await noticeText(page), /judges the file's bytes/, `${what}: the notice says what is judged`);
      };
      await check("opened");
      const before = await docText(page);
      await typeAt(page, before.lastIndexOf("}"), " ");
      await check("after a keystroke");
      assert.equal(await docText(page), before, "the editor took no edit");
      assert.equal(await page.evaluate(() => localStorage.getItem("polyloop-preview:request")), null, "nothing stored");
      await page.click("#share");
      assert.match(await noticeText(page), /^No share link for this request/);
      // The explicit conversion, which says what it replaces.
      assert.match(await page.textContent("#convert"), /replaces the invalid bytes with U\+FFFD/);
      const gen = await page.evaluate(() => window.preview.view.generation);
      await page.click("#convert");
      await page.waitForFunction((g) => window.preview.view.generation > g, gen);
      await page.evaluate(() => window.preview.view.whenRendered(window.preview.view.generation));
      assert.equal((await shown(page)).state, "ok");
      assert.match(await noticeText(page), /^Converted to text: 1 invalid byte sequence replaced with U\+FFFD/);
      assert.equal(await page.isVisible("#convert"), false);
      assert.equal(await page.evaluate(() => window.preview.view.messageTexts(0)?.join("")), "Hello w\ufffdrld");
      await typeAt(page, 0, " ");
      assert.equal((await docText(page))[0], " ", "the converted text takes edits");
    });

    await t.test("a syntax error in a CRLF file: the CLI's byte offset, also after an edit", async () => {
      const text =
        '{\r\n  "observation_template": "{observation}",\r\n  "steps": [\r\n    {"raw_output": "é😀", "observation": "b"},\r\n  ]\r\n}\r\n';
      const bytes = Buffer.from(text);
      const want = cli(bytes);
      assert.equal(want.error.code, "malformed_request");
      await openFile(page, "crlf.json", bytes);
      const s = await shown(page);
      assert.deepEqual({ code: s.error?.code, path: s.error?.path }, { code: "malformed_request", path: "" });
      assert.equal(byteOf(s.error.message), byteOf(want.error.message), `page "${s.error.message}", CLI "${want.error.message}"`);
      assert.equal(s.error.message, want.error.message);
      // The editor's mark is on the character the CLI names.
      const named = Buffer.from(bytes.subarray(byteOf(want.error.message))).toString("utf8")[0];
      const marked = await page.evaluate(() => {
        const at = Number(document.getElementById("error-at").dataset.index);
        return window.preview.editor.state.doc.sliceString(at, at + 1);
      });
      assert.equal(marked, named);
      // An edit: the CLI's verdict on the file as it would be saved (CRLF).
      await typeAt(page, 0, " ");
      const after = cli(Buffer.from(" " + text));
      const s2 = await shown(page);
      assert.equal(s2.error?.message, after.error.message);
    });

    await t.test("a .json file of two one-line objects is one request, as the CLI reads it", async () => {
      const req = '{"observation_template": "{observation}", "steps": []}';
      const bytes = Buffer.from(`${req}\n${req}\n`);
      const want = cli(bytes, "two.json");
      assert.match(want.error.message, /unexpected data after the JSON value/);
      await openFile(page, "two.json", bytes);
      const s = await shown(page);
      assert.equal(await page.evaluate(() => window.preview.browser.entries.length), 1);
      assert.deepEqual(
        { code: s.error?.code, path: s.error?.path, message: s.error?.message },
        { code: want.error.code, path: want.error.path, message: want.error.message },
      );
      // The explicit choice: the same file as JSON lines (what `--batch` reads).
      assert.equal(await page.isVisible("#as-lines"), true);
      const gen = await page.evaluate(() => window.preview.view.generation);
      await page.click("#as-lines");
      await page.waitForFunction((g) => window.preview.view.generation > g, gen);
      await page.evaluate(() => window.preview.view.whenRendered(window.preview.view.generation));
      assert.equal(await page.evaluate(() => window.preview.browser.entries.length), 2);
      assert.equal((await shown(page)).state, "ok");
      // A .jsonl name is JSON lines by itself, as the CLI's rule says.
      await openFile(page, "two.jsonl", bytes);
      assert.equal(await page.evaluate(() => window.preview.browser.entries.length), 2);
      assert.equal(await page.isVisible("#as-lines"), false);
    });

    assert.deepEqual(problems, []);
  });
});
