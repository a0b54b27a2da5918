// The preview's comparison view in Chromium (preview/compare.js): A and B
// picked as a pinned copy of the editor and the editor as it is edited, two
// entries of a JSON-lines file, two files; every field the view shows is
// checked against asm.compare in Node on the same two inputs (the native
// core's answer, computed apart from the page); an invalid side shows the
// error Node throws; axe-core finds no violations with the view open.
// Screenshot in artifacts/preview-compare.png (git-ignored).

import test from "node:test";
import assert from "node:assert/strict";
import { assembler, errorOf } from "../../bindings/js/test/common.mjs";
import { ARTIFACTS, axe, open, pickEntry, setText, skip, withPreview } from "./harness.mjs";
import { trajectory } from "../bench/preview-requests.mjs";

/** Runs `action` and waits for the comparison it causes to be shown;
 * returns the fields the view shows, by name (a list: a name may repeat). */
async function compared(page, action) {
  const before = await page.evaluate(() => window.preview.compare.seq);
  await action();
  await page.waitForFunction((b) => {
    const c = window.preview.compare;
    return c.seq > b && c.shownSeq === c.seq;
  }, before);
  return page.evaluate(() => {
    const out = {};
    for (const el of document.querySelectorAll("#compare-result [data-field]")) (out[el.dataset.field] ??= []).push(el.textContent);
    return out;
  });
}

/** The fields the view must show for Node's answer `ans` (docs/SPEC.md §7.9),
 * written apart from the page's code: numbers in en-US digits, the digest
 * verdicts in words. */
function expected(ans) {
  const n = (x) => x.toLocaleString("en-US");
  const out = {};
  const put = (k, v) => (out[k] ??= []).push(v);
  const d = ans.first_difference;
  if (ans.identical) put("identical", "A and B send the same prompt.");
  if (d) {
    put("message", n(d.message));
    put("char", n(d.char));
    put("kind", d.kind);
    if (d.segment !== null) put("segment", d.segment);
    if (d.step !== null) put("step", n(d.step));
  }
  for (const s of ["a", "b"]) {
    put(`${s}.kind`, ans[s].kind === "request" ? "request" : "recorded messages");
    put(`${s}.messages`, n(ans[s].messages));
    put(`${s}.prompt_chars`, n(ans[s].prompt_chars));
  }
  for (const k of ["run", "injections", "goal"])
    put(`prefix_digests.${k}`, { true: "matches", false: "differs", null: "no request" }[String(ans.prefix_digests[k])]);
  for (const s of d ? ["a", "b"] : []) {
    if (d[`role_${s}`] !== null) put(`role_${s}`, d[`role_${s}`]);
    if (d[`excerpt_${s}`] === null) continue;
    put("excerpt_before", d.excerpt_before);
    put(`excerpt_${s}`, d[`excerpt_${s}`]);
  }
  put("cacheable_prefix_chars", n(ans.cacheable_prefix_chars));
  return out;
}

/** The highlighted text of each side and the segment row marked. */
const highlights = (page) =>
  page.evaluate(() => ({
    marks: [...document.querySelectorAll("#compare-result .from mark")].map((m) => m.textContent),
    row: [...document.querySelectorAll("#compare-result tr.here")].map((r) => r.dataset.segment),
    labels: [document.getElementById("side-a-label").textContent, document.getElementById("side-b-label").textContent],
  }));

const docText = (page) => page.evaluate(() => window.preview.editor.state.doc.toString());

/** Types `insert` in place of `find` (its first occurrence) in the editor. */
async function editAt(page, find, insert) {
  const text = await docText(page);
  const at = text.indexOf(find);
  assert.ok(at >= 0, `${find} in the editor`);
  await page.evaluate(([f, t, i]) => window.preview.edit(f, t, i), [at, at + find.length, insert]);
}

test("the comparison view in Chromium", { skip, timeout: 300_000 }, async (t) => {
  const asm = await assembler();
  const base = trajectory(2, 80);
  const textA = JSON.stringify(base, null, 2);

  await withPreview(async ({ page, url, problems }) => {
    await open(page, url);
    assert.equal(await setText(page, textA), "ok");

    await t.test("Pin as A, then edit: B is the editor", async () => {
      const same = await compared(page, () => page.click("#compare-toggle"));
      assert.deepEqual(same, expected(asm.compare(textA, textA)));
      assert.equal(await page.getAttribute("#compare-toggle", "aria-expanded"), "true");
      // Step 1's observation changes: the difference is in the history.
      const got = await compared(page, () => editAt(page, "row 1:", "row 1!"));
      const ans = asm.compare(textA, await docText(page));
      assert.deepEqual(got, expected(ans));
      assert.deepEqual([ans.first_difference.segment, ans.first_difference.step], ["history", 1]);
      const hl = await highlights(page);
      assert.deepEqual(hl.marks, [":", "!"], "the first differing character of each side");
      assert.deepEqual(hl.row, ["history"]);
      assert.match(hl.labels[0], /^pinned copy of the editor/);
      assert.equal(hl.labels[1], "the editor, as you edit it");
    });

    await t.test("an edit of the goal: the goal digest differs, run and injections match", async () => {
      const got = await compared(page, () => editAt(page, "Summarise", "Summarize"));
      const ans = asm.compare(textA, await docText(page));
      assert.deepEqual(got, expected(ans));
      assert.deepEqual(ans.prefix_digests, { run: true, injections: true, goal: false });
      assert.deepEqual((await highlights(page)).row, ["goal"]);
      await page.screenshot({ path: `${ARTIFACTS}preview-compare.png` });
      assert.deepEqual(await axe(page), [], "axe, the comparison open");
      await page.setViewportSize({ width: 420, height: 800 });
      await page.screenshot({ path: `${ARTIFACTS}preview-compare-420.png` });
      assert.deepEqual(await axe(page), [], "axe, 420 px");
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), true, "no horizontal scrolling");
      await page.setViewportSize({ width: 1280, height: 800 });
    });

    await t.test("two entries of a JSON-lines file", async () => {
      const lines = [trajectory(1, 60), trajectory(3, 60), { ...trajectory(3, 60), max_prompt_chars: 500 }].map((r) => JSON.stringify(r));
      await page.setInputFiles("#file", { name: "run.jsonl", mimeType: "application/octet-stream", buffer: Buffer.from(lines.join("\n")) });
      await page.waitForFunction(() => document.querySelectorAll("#browser-rows [data-entry]").length === 3);
      await pickEntry(page, 1);
      await page.waitForFunction(() => window.preview.browser.selected === 1);
      await compared(page, () => page.click("#entry-a"));
      await pickEntry(page, 2);
      await page.waitForFunction(() => window.preview.browser.selected === 2);
      const got = await compared(page, () => page.click("#entry-b"));
      assert.deepEqual(got, expected(asm.compare(lines[1], lines[2])));
      assert.deepEqual((await highlights(page)).labels, ["run.jsonl · line 2", "run.jsonl · line 3"]);
      const other = await compared(page, () => pickEntry(page, 0).then(() => page.click("#entry-b")));
      assert.deepEqual(other, expected(asm.compare(lines[1], lines[0])));
    });

    await t.test("two files: a recorded message list against a request; an invalid side", async () => {
      const recorded = JSON.stringify([
        { role: "system", content: "You are a ReAct agent. Think step by step, then act with exactly one tool call!" },
        { role: "assistant", content: "hello" },
      ]);
      const file = (name, text) => ({ name, mimeType: "application/json", buffer: Buffer.from(text) });
      await compared(page, () => page.setInputFiles("#compare-file-a", file("recorded.json", recorded)));
      const got = await compared(page, () => page.setInputFiles("#compare-file-b", file("request.json", textA)));
      const ans = asm.compare(recorded, textA);
      assert.deepEqual(got, expected(ans));
      assert.equal(ans.a.kind, "messages");
      assert.deepEqual((await highlights(page)).labels, ["recorded.json", "request.json"]);
      const bad = JSON.stringify({ ...base, observation_template: "Obs {nope}" });
      const err = await compared(page, () => page.setInputFiles("#compare-file-b", file("bad.json", bad)));
      const e = errorOf(() => asm.compare(recorded, bad));
      assert.deepEqual(err, { "error.code": [e.code], "error.path": [e.path], "error.message": [e.message] });
      assert.equal(e.path, "b.observation_template");
    });

    await t.test("Close hides the view", async () => {
      await page.click("#compare-close");
      assert.equal(await page.isHidden("#compare"), true);
      assert.equal(await page.getAttribute("#compare-toggle", "aria-expanded"), "false");
    });

    assert.deepEqual(problems, []);
  });
});
