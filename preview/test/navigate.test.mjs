// Navigation people expect from a trajectory viewer (issue 33, item 6), in
// Chromium:
// - the list's search reads decoded text and ignores case: `Süd`, `café`,
//   `日本` written by Python's json.dumps (`S\u00fcd`…) are found;
// - a search inside the assembled prompt finds hits in messages off screen
//   and past a fold (the list is virtualised: the browser's find cannot),
//   jumps to each, marked;
// - "go to step k" scrolls to steps[k-1]'s raw output;
// - the address names the entry and the step; back and forward return; a
//   share link pasted into the open tab loads, after asking when the editor
//   holds edits, and so does one opened over saved edits.
// Expected values come from the requests as written here (their layout:
// no run, injection or goal messages, so steps[k]'s raw output is message
// 2k), not from the page. A screenshot of search results in artifacts/.

import test from "node:test";
import assert from "node:assert/strict";
import { ARTIFACTS, open, setText, skip, withPreview } from "./harness.mjs";

/** Opens `text` as a file through the page's file input; resolves once shown. */
async function openFile(page, name, text) {
  const before = await page.evaluate(() => window.preview.view.generation);
  await page.setInputFiles("#file", { name, mimeType: "application/octet-stream", buffer: Buffer.from(text) });
  await page.waitForFunction((b) => window.preview.view.generation > b, before);
  await page.evaluate(() => window.preview.view.whenRendered(window.preview.view.generation));
}

/** JSON as Python's json.dumps writes it by default (ensure_ascii: every
 * character past ASCII escaped, a pair for one past U+FFFF). */
const pyDumps = (v) => JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

const entry = (raw) => ({ observation_template: "{observation}", steps: [{ raw_output: raw, observation: "ok" }] });

/** The entries the list shows, by line. */
const listed = (page) => page.evaluate(() => [...window.preview.browser.shown].map((k) => window.preview.browser.entries[k].line));

/** Types into the list's search; resolves once it has filtered. */
async function searchList(page, q) {
  await page.fill("#browser-search", q);
  await page.waitForFunction(() => !window.preview.browser.filterTimer);
}

test("navigation: search, go to step, addresses, pasted links", { skip, timeout: 180_000 }, async (t) => {
  await withPreview(async ({ page, url, problems }) => {
    await open(page, url);

    await t.test("the list's search reads decoded text, any case", async () => {
      const lines = [entry("Wind from the Süd"), entry("un café noir"), entry("日本語のテキスト"), entry("plain ascii"), entry("Straße")];
      await openFile(page, "py.jsonl", lines.map(pyDumps).join("\n") + "\n");
      assert.equal(
        await page.evaluate(() => window.preview.browser.entries[0].text.includes("\\u00fc")),
        true,
        "escaped as Python writes it",
      );
      for (const [q, want] of [
        ["Süd", [1]],
        ["süd", [1]],
        ["SÜD", [1]],
        ["CAFÉ", [2]],
        ["日本", [3]],
        ["PLAIN", [4]],
        ["straße", [5]],
        ["\\u00fc", []], // the escape is not the text
      ])
        assert.deepEqual(await listed((await searchList(page, q), page)), want, `search ${q}`);
      await searchList(page, "");
    });

    await t.test("search inside the prompt: hits off screen and past a fold", async () => {
      const steps = Array.from({ length: 300 }, (_, k) => ({ raw_output: `step ${k} thinks`, observation: `result ${k}` }));
      steps[10].observation = "a Needle here";
      steps[250].raw_output = "the needle again";
      steps[260].observation = `${"hay ".repeat(600)}\nNEEDLE past the fold`;
      const req = { observation_template: "{observation}", steps };
      assert.equal(await setText(page, req), "ok");
      await page.fill("#find", "needle");
      await page.press("#find", "Enter");
      const at = () =>
        page.evaluate(() => {
          const v = window.preview.view;
          const s = v.searchState;
          const row = v.shadowRoot.querySelector(`.row[data-message="${s.message}"]`);
          const cur = row?.querySelector("mark.hit.current");
          const r = cur?.getBoundingClientRect();
          const list = v.shadowRoot.querySelector(".list").getBoundingClientRect();
          return {
            ...s,
            count: s.count,
            marked: cur?.textContent ?? null,
            inView: Boolean(r && r.top >= list.top && r.bottom <= list.bottom),
            label: document.getElementById("find-count").textContent,
          };
        });
      await page.waitForFunction(() => window.preview.view.searchState.count === 3);
      // Messages: steps[k].raw_output is 2k, its observation 2k + 1.
      const want = [
        [21, "Needle"],
        [500, "needle"],
        [521, "NEEDLE"],
      ];
      for (let k = 0; k < 3; k++) {
        await page.waitForFunction((m) => window.preview.view.searchState.message === m, want[k][0]);
        await page.waitForFunction(() => {
          const v = window.preview.view;
          return v.shadowRoot.querySelector(`.row[data-message="${v.searchState.message}"] mark.hit.current`) !== null;
        });
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        const s = await at();
        assert.deepEqual([s.message, s.marked, s.inView, s.label], [want[k][0], want[k][1], true, `${k + 1} of 3`], `hit ${k + 1}`);
        if (k === 2) await page.screenshot({ path: `${ARTIFACTS}preview-search.png` });
        await page.click("#find-next");
      }
      await page.waitForFunction(() => window.preview.view.searchState.current === 0);
      await page.fill("#find", "");
      await page.press("#find", "Enter");
      assert.equal(await page.evaluate(() => window.preview.view.shadowRoot.querySelectorAll("mark.hit").length), 0);
    });

    await t.test("go to step k", async () => {
      await page.fill("#goto-step", "200");
      await page.press("#goto-step", "Enter");
      await page.waitForFunction(() => window.preview.view.shadowRoot.activeElement?.dataset?.message === "398");
      await page.fill("#goto-step", "301");
      await page.press("#goto-step", "Enter");
      assert.equal(await page.textContent("#goto-note"), "no step 301: this request has 300 steps");
    });

    await t.test("the address names the entry and the step; back and forward", async () => {
      const lines = [1, 2, 3].map((n) =>
        JSON.stringify({
          observation_template: "{observation}",
          steps: Array.from({ length: n }, (_, k) => ({ raw_output: `e${n} s${k}`, observation: "o" })),
        }),
      );
      await openFile(page, "three.jsonl", lines.join("\n"));
      const title = () => page.textContent("#editor-title");
      const picked = async (k) => {
        await page.locator(`#browser-rows [data-entry="${k}"]`).click();
        await page.waitForFunction((k) => location.hash.startsWith(`#entry=${k + 1}`), k);
      };
      await picked(1);
      await picked(2);
      assert.equal(await page.evaluate(() => location.hash), "#entry=3");
      await page.check("#by-step");
      await page.waitForFunction(() => !document.getElementById("step").disabled);
      await page.evaluate(() => {
        const s = /** @type {HTMLInputElement} */ (document.getElementById("step"));
        s.value = "1";
        s.dispatchEvent(new Event("input"));
        s.dispatchEvent(new Event("change"));
      });
      assert.equal(await page.evaluate(() => location.hash), "#entry=3&step=1");
      await page.goBack();
      await page.waitForFunction(() => document.getElementById("by-step").checked === false);
      assert.equal(await title(), "Request · line 3");
      await page.goBack();
      await page.waitForFunction(() => document.getElementById("editor-title").textContent === "Request · line 2");
      await page.goForward();
      await page.waitForFunction(() => document.getElementById("editor-title").textContent === "Request · line 3");
      await page.goForward();
      await page.waitForFunction(() => document.getElementById("step-label").textContent === "1 / 3");
      assert.equal(await page.evaluate(() => window.preview.view.summary.messages), 2);
    });

    await t.test("a pasted share link loads, after asking when there are edits", async () => {
      const X = JSON.stringify(entry("from the link"), null, 2);
      const { url: link } = await page.evaluate((x) => window.preview.shareLink(x), X);
      const hash = new URL(link).hash;
      const doc = () => page.evaluate(() => window.preview.editor.state.doc.toString());
      assert.equal(await setText(page, entry("mine")), "ok");
      await page.evaluate(() => window.preview.edit(0, 0, " ")); // an edit of the document loaded
      const mine = await doc();
      await page.evaluate((h) => (location.hash = h), hash);
      await page.waitForSelector("#confirm-link[open]");
      await page.click('#confirm-link button[value="cancel"]');
      await page.waitForFunction(() => location.hash === "");
      assert.equal(await doc(), mine, "kept");
      assert.match(await page.textContent("#notice"), /^Kept your edits/);
      await page.evaluate((h) => (location.hash = h), hash);
      await page.waitForSelector("#confirm-link[open]");
      await page.click('#confirm-link button[value="open"]');
      await page.waitForFunction((x) => window.preview.editor.state.doc.toString() === x, X);
      assert.equal(await page.evaluate(() => location.hash), "");
      // No edits: a link loads without asking.
      const Y = JSON.stringify(entry("another link"), null, 2);
      const { url: link2 } = await page.evaluate((y) => window.preview.shareLink(y), Y);
      await page.evaluate((h) => (location.hash = h), new URL(link2).hash);
      await page.waitForFunction((y) => window.preview.editor.state.doc.toString() === y, Y);
      // Opening a link over saved edits asks first.
      await page.evaluate(() => window.preview.edit(0, 0, " "));
      const saved = await doc();
      await page.waitForFunction((s) => localStorage.getItem("polyloop-preview:request") === s, saved);
      await page.goto("about:blank");
      await page.goto(link);
      await page.waitForSelector("#confirm-link[open]");
      await page.click('#confirm-link button[value="cancel"]');
      await page.evaluate(() => window.preview.ready);
      assert.equal(await doc(), saved, "the saved edits kept");
      assert.equal(await page.evaluate(() => location.hash), "");
    });

    assert.deepEqual(problems, []);
  });
});
