// Deep links (issue 43, item 4): `#entry=L&step=K` names line L of a file
// and step K. A new tab (or a reload) at such an address, with no file open,
// says plainly that the file must be opened and that what it shows is not
// line L; once the file is opened it lands exactly there (the first entry
// shown is line L, never line 1 first) and the address is kept. An address
// naming a line the open file does not have says so, the title too.

import test from "node:test";
import assert from "node:assert/strict";
import { ARTIFACTS, skip, withPreview } from "./harness.mjs";
import { trajectory } from "../bench/preview-requests.mjs";

test("deep links open exactly what they name", { skip, timeout: 180_000 }, async (t) => {
  const lines = [1, 2, 3, 2, 1].map((steps, i) => JSON.stringify({ ...trajectory(steps, 30 + i), max_prompt_chars: 100_000 + i }));
  await withPreview(async ({ page, url, problems }) => {
    await t.test("a new tab at #entry=3&step=1: says the file must be opened, then goes there", async () => {
      await page.goto(`${url}#entry=3&step=1`);
      await page.evaluate(() => window.preview.ready);
      await page.waitForFunction(() =>
        /names line 3 of a file that is not open here: open that file/.test(document.getElementById("notice").textContent),
      );
      assert.match(await page.textContent("#notice"), /What is shown now is not line 3\./);
      assert.equal(await page.textContent("#editor-title"), "Request · not line 3 (its file is not open)");
      assert.equal(await page.evaluate(() => location.hash), "#entry=3&step=1");
      await page.screenshot({ path: `${ARTIFACTS}deeplink-pending.png` });

      // Every document the editor is given from now on, to prove no other entry is shown first.
      await page.evaluate(() => {
        window.__docs = [];
        const v = window.preview.view;
        for (const m of ["setText", "setJSONBytes", "setBytes"]) {
          const f = v[m].bind(v);
          v[m] = (x, o) => (window.__docs.push(typeof x === "string" ? x : new TextDecoder().decode(x)), f(x, o));
        }
      });
      await page.evaluate(
        async (text) => {
          const bytes = new TextEncoder().encode(text);
          await window.preview.openFile({ name: "runs.jsonl", size: bytes.length, arrayBuffer: async () => bytes.slice().buffer });
          await window.preview.view.whenRendered(window.preview.view.generation);
        },
        lines.join("\n") + "\n",
      );
      await page.waitForFunction(() => window.preview.view.step === 1 && window.preview.view.stepCount === 3);
      const s = await page.evaluate(() => ({
        selected: window.preview.browser.selected,
        title: document.getElementById("editor-title").textContent,
        doc: window.preview.editor.state.doc.toString(),
        hash: location.hash,
        byStep: document.getElementById("by-step").checked,
        docs: window.__docs,
        notice: document.getElementById("notice").textContent,
      }));
      assert.equal(s.selected, 2);
      assert.equal(s.title, "Request · line 3");
      assert.equal(s.doc, lines[2]);
      assert.equal(s.hash, "#entry=3&step=1");
      assert.equal(s.byStep, true);
      assert.deepEqual(s.docs, [lines[2]], "the first and only document given is line 3's");
      assert.match(s.notice, /The address named line 3: shown\./);
      await page.screenshot({ path: `${ARTIFACTS}deeplink-opened.png` });
    });

    await t.test("an address naming a line the open file does not have: said, in the title too", async () => {
      await page.evaluate(() => (location.hash = "#entry=9"));
      await page.waitForFunction(() => /names line 9 of a file that is not open here/.test(document.getElementById("notice").textContent));
      assert.equal(await page.textContent("#editor-title"), "Request · not line 9 (its file is not open)");
    });

    await t.test("a reload at #entry=2: no file, said plainly, whatever storage holds", async () => {
      await page.evaluate((l) => localStorage.setItem("polyloop-preview:request", l), lines[3]);
      await page.goto("about:blank");
      await page.goto(`${url}#entry=2`);
      await page.evaluate(() => window.preview.ready);
      await page.waitForFunction(() => /names line 2 of a file that is not open here/.test(document.getElementById("notice").textContent));
      assert.equal(await page.textContent("#editor-title"), "Request · not line 2 (its file is not open)");
    });

    assert.deepEqual(problems, []);
  });
});
