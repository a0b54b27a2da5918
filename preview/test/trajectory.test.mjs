// The trajectory viewer in Chromium: a JSON-lines file
// opened with the picker, one request picked, the step slider showing the
// prompt exactly as it was sent before step k (built with the incremental
// prompt, compared here with Node's assemble() of the request cut to k
// steps), what step k added marked, what stayed byte-identical, the message
// where the budget is first exceeded, segments collapsing; a msgpack file
// dropped on the page; the keyboard on the slider and the message list.
// UPDATE_DOCS_SCREENSHOT=1 rewrites docs/preview.png for the README.

import test from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assembler } from "../../bindings/js/test/common.mjs";
import { encode as encodeRequest } from "@msgpack/msgpack";
import { ARTIFACTS, open, pickEntry, shown, skip, withPreview } from "./harness.mjs";
import { trajectory } from "../bench/preview-requests.mjs";

const viewTexts = (page, n) => page.evaluate((n) => Array.from({ length: n }, (_, i) => window.preview.view.messageTexts(i)), n);

test("the trajectory viewer in Chromium", { skip, timeout: 180_000 }, async (t) => {
  const asm = await assembler();
  const dir = mkdtempSync(join(tmpdir(), "polyloop-traj-"));
  try {
    const requests = [trajectory(3, 100), trajectory(12, 400, { budget: 3000 }), trajectory(2, 50)];
    const file = join(dir, "run.jsonl");
    writeFileSync(file, requests.map((r) => JSON.stringify(r)).join("\n") + "\n");
    await withPreview(async ({ page, url, problems }) => {
      await open(page, url);

      await t.test("a JSON-lines file: pick one request, step through it", async () => {
        await page.setInputFiles("#file", file);
        await page.waitForFunction(() => document.querySelectorAll("#browser-rows [data-entry]").length === 3);
        assert.equal(await page.isVisible("#browser"), true);
        await pickEntry(page, 1);
        await page.waitForFunction(() => window.preview.view.summary?.messages === 4 + 24 && window.preview.state === "ok");
        await page.check("#by-step");
        await page.waitForFunction(() => window.preview.view.stepCount === 12 && !document.getElementById("step").disabled);
        const req = requests[1];
        const base = asm.assemble({ ...req, steps: [] }).messages.length;
        for (const k of [0, 1, 5, 12]) {
          await page.locator("#step").fill(String(k));
          const expected = asm.assemble({ ...req, steps: req.steps.slice(0, k) });
          const s = await shown(page);
          assert.equal(s.summary.messages, expected.messages.length, `step ${k}`);
          assert.equal(s.summary.promptChars, expected.prompt_chars, `step ${k}`);
          assert.equal(s.summary.contextOverflow, expected.context_overflow, `step ${k}`);
          assert.deepEqual(
            await viewTexts(page, expected.messages.length),
            expected.messages.map((m) => m.content.map((b) => b.text)),
            `step ${k}`,
          );
          // What step k added: its two messages, marked.
          await page.evaluate(() => window.preview.view.scrollToMessage(window.preview.view.summary.messages - 1));
          await page.waitForFunction(
            (n) => window.preview.view.shadowRoot.querySelector(`.row[data-message="${n - 1}"]`),
            expected.messages.length,
          );
          const marked = await page.evaluate(() =>
            [...window.preview.view.shadowRoot.querySelectorAll(".badge.new")].map((b) => Number(b.closest(".row").dataset.message)),
          );
          assert.deepEqual(marked, k === 0 ? [] : [base + 2 * k - 2, base + 2 * k - 1], `step ${k}`);
          if (k > 0) {
            const prev = asm.assemble({ ...req, steps: req.steps.slice(0, k - 1) });
            assert.match(
              s.cache,
              new RegExp(
                `^Step ${k}: run, injections and goal unchanged .*the whole prompt of step ${k - 1} \\(${prev.prompt_chars.toLocaleString("en-US")} chars\\) is a byte-identical prefix`,
              ),
            );
          }
        }
        // The budget (3,000) is first exceeded in this message.
        let sum = 0;
        const full = asm.assemble(req);
        const first = full.message_chars.findIndex((c) => (sum += c) > 3000);
        await page.evaluate((i) => window.preview.view.scrollToMessage(i), first);
        await page.waitForFunction((i) => window.preview.view.shadowRoot.querySelector(`.row[data-message="${i}"] .badge.over`), first);
        await page.screenshot({ path: `${ARTIFACTS}preview-trajectory.png` });
        if (process.env.UPDATE_DOCS_SCREENSHOT)
          await page.screenshot({ path: new URL("../../bindings/js/docs/preview.png", import.meta.url).pathname });
        // Keyboard on the slider.
        await page.focus("#step");
        await page.keyboard.press("ArrowLeft");
        assert.equal((await shown(page)).summary.messages, base + 2 * 11);
      });

      await t.test("segments collapse and expand", async () => {
        await page.evaluate(() => window.preview.view.scrollToMessage(0));
        await page.waitForFunction(() => window.preview.view.shadowRoot.querySelector('.head[data-segment="run"]'));
        const before = (await shown(page)).messages;
        assert.ok(before.length > 0);
        await page.locator('polyloop-prompt-view .head[data-segment="run"] button').click();
        let s = await shown(page);
        assert.ok(!s.messages.includes(0), "run message still shown");
        assert.equal(await page.locator('polyloop-prompt-view .head[data-segment="run"] button').getAttribute("aria-expanded"), "false");
        await page.locator('polyloop-prompt-view .head[data-segment="run"] button').click();
        s = await shown(page);
        assert.ok(s.messages.includes(0));
      });

      await t.test("the message list by keyboard", async () => {
        await page.evaluate(() => window.preview.view.scrollToMessage(0));
        await page.locator("polyloop-prompt-view .list").focus();
        await page.keyboard.press("Home");
        const focused = () =>
          page.evaluate(
            () => new Promise((r) => requestAnimationFrame(() => r(window.preview.view.shadowRoot.activeElement?.dataset.message))),
          );
        await page.keyboard.press("ArrowDown");
        assert.equal(await focused(), "0", "the row after the run segment's head is message 0");
        await page.keyboard.press("ArrowDown"); // the injection slot's head
        await page.keyboard.press("ArrowDown");
        assert.equal(await focused(), "1");
        await page.keyboard.press("End");
        await page.waitForFunction(
          () => window.preview.view.shadowRoot.activeElement?.dataset.message === String(window.preview.view.summary.messages - 1),
        );
      });

      await t.test("a msgpack file dropped on the page", async () => {
        const req = trajectory(4, 120);
        const bytes = Array.from(encodeRequest(req));
        await page.uncheck("#by-step");
        await page.evaluate((bytes) => {
          const dt = new DataTransfer();
          dt.items.add(new File([Uint8Array.from(bytes)], "one.msgpack"));
          window.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
        }, bytes);
        const expected = asm.assemble(req);
        await page.waitForFunction(
          (n) => window.preview.view.summary?.messages === n && window.preview.state === "ok",
          expected.messages.length,
        );
        assert.deepEqual(
          await viewTexts(page, expected.messages.length),
          expected.messages.map((m) => m.content.map((b) => b.text)),
        );
        assert.match(await page.textContent("#notice"), /msgpack file/);
      });

      assert.deepEqual(problems, [], "the page logged errors");
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
