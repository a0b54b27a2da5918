// Everyday comforts of the prompt preview in Chromium:
// edits survive a reload; a share link carries the request in the URL
// fragment (deflate-raw, a clear size limit, no server); "reset" asks before
// discarding; dark mode (the system's preference and a toggle); the layout at
// 420 px; axe-core finds no violations, light and dark, wide and narrow.
// Screenshots in artifacts/ (git-ignored).

import test from "node:test";
import assert from "node:assert/strict";
import { ARTIFACTS, axe, open, setText, skip, withPreview } from "./harness.mjs";
import { trajectory } from "../bench/preview-requests.mjs";

const docText = (page) => page.evaluate(() => window.preview.editor.state.doc.toString());

test("everyday comforts of the preview in Chromium", { skip, timeout: 180_000 }, async (t) => {
  await withPreview(async ({ page, url, problems }) => {
    await open(page, url);
    const example = await docText(page);

    await t.test("edits survive a reload", async () => {
      const edited = JSON.stringify(trajectory(2, 60), null, 2);
      assert.equal(await setText(page, edited), "ok");
      await page.waitForFunction((t) => localStorage.getItem("polyloop-preview:request") === t, edited);
      await open(page, url);
      assert.equal(await docText(page), edited);
      assert.match(await page.textContent("#notice"), /Restored your edits/);
    });

    await t.test("reset asks before discarding", async () => {
      const edited = await docText(page);
      await page.click("#reset");
      assert.equal(await page.isVisible("#confirm-reset"), true);
      await page.screenshot({ path: `${ARTIFACTS}preview-reset-dialog.png` });
      await page.click('#confirm-reset button[value="cancel"]');
      assert.equal(await docText(page), edited, "cancel kept the edits");
      await page.click("#reset");
      await page.click('#confirm-reset button[value="discard"]');
      await page.waitForFunction((e) => window.preview.editor.state.doc.toString() === e, example);
      assert.equal(await page.evaluate(() => localStorage.getItem("polyloop-preview:request")), null);
    });

    await t.test("a share link carries the request in its fragment", async () => {
      const req = JSON.stringify({ ...trajectory(3, 80), observation_template: "Obs <b>{observation}</b> 😀" }, null, 2);
      assert.equal(await setText(page, req), "ok");
      await page.click("#share");
      await page.waitForFunction(() => document.getElementById("notice").textContent.startsWith("Share link copied"));
      const link = await page.evaluate(() => navigator.clipboard.readText());
      const u = new URL(link);
      assert.match(u.hash, /^#req=[A-Za-z0-9_-]+$/);
      assert.equal(u.search, "");
      await page.evaluate(() => localStorage.clear());
      await page.goto("about:blank");
      await page.goto(link);
      await page.evaluate(() => window.preview.ready);
      assert.equal(await docText(page), req);
      assert.equal(await page.evaluate(() => location.hash), "", "the fragment is dropped once loaded, so a reload keeps later edits");
      // Over the limit: refused with the sizes, nothing copied.
      const big = await page.evaluate(async () => {
        let s = "";
        let x = 12345;
        for (let i = 0; i < 120000; i++) s += String.fromCharCode(97 + ((x = (x * 48271) % 2147483647) % 26));
        return window.preview.shareLink(
          JSON.stringify({ observation_template: "{observation}", run_messages: [{ role: "user", content: [{ type: "text", text: s }] }] }),
        );
      });
      assert.equal(big.url, null, `a link of ${big.size} characters`);
      assert.ok(big.size > 60000);
      // A damaged link is ignored with a notice.
      await page.goto("about:blank");
      await page.goto(`${url}#req=AAAA`);
      await page.evaluate(() => window.preview.ready);
      assert.match(await page.textContent("#notice"), /damaged/);
    });

    await t.test("dark mode: the system's preference and the toggle", async () => {
      const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const viewBg = () => page.evaluate(() => getComputedStyle(window.preview.view).backgroundColor);
      assert.equal(await bg(), "rgb(247, 247, 245)");
      await page.emulateMedia({ colorScheme: "dark" });
      assert.equal(await bg(), "rgb(22, 24, 29)");
      assert.equal(await viewBg(), "rgb(22, 24, 29)");
      await page.screenshot({ path: `${ARTIFACTS}preview-dark.png` });
      assert.deepEqual(await axe(page), [], "axe, dark");
      await page.emulateMedia({ colorScheme: "light" });
      await page.click("#theme"); // auto → light
      await page.click("#theme"); // light → dark
      assert.equal(await page.textContent("#theme"), "Theme: dark");
      assert.equal(await bg(), "rgb(22, 24, 29)");
      assert.equal(await page.evaluate(() => window.preview.view.getAttribute("theme")), "dark");
      await open(page, url);
      assert.equal(await bg(), "rgb(22, 24, 29)", "the choice survives a reload");
      await page.click("#theme"); // dark → auto
      assert.equal(await bg(), "rgb(247, 247, 245)");
    });

    await t.test("axe-core: no violations, wide", async () => {
      assert.equal(await setText(page, trajectory(8, 300, { budget: 2000 })), "ok");
      assert.deepEqual(await axe(page), []);
      // With an error shown too.
      assert.equal(await setText(page, '{"observation_template": "{obs"}'), "stale");
      assert.deepEqual(await axe(page), []);
    });

    await t.test("420 px: no horizontal scrolling, panes stacked, axe clean", async () => {
      await page.setViewportSize({ width: 420, height: 860 });
      assert.equal(await setText(page, trajectory(8, 300, { budget: 2000 })), "ok");
      const layout = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        editor: document.querySelector(".editor-pane").getBoundingClientRect().toJSON(),
        output: document.querySelector(".output-pane").getBoundingClientRect().toJSON(),
        words: [...window.preview.view.shadowRoot.querySelectorAll(".row[data-message] .block")].map(
          (b) => b.getBoundingClientRect().width,
        ),
      }));
      assert.ok(layout.scroll <= 420, `page is ${layout.scroll} px wide`);
      assert.ok(layout.output.top >= layout.editor.bottom - 1, "the output pane is below the editor");
      assert.ok(
        layout.words.every((w) => w > 300),
        `text blocks too narrow: ${layout.words}`,
      );
      await page.screenshot({ path: `${ARTIFACTS}preview-420.png` });
      assert.deepEqual(await axe(page), [], "axe, 420 px");
      await page.emulateMedia({ colorScheme: "dark" });
      await page.screenshot({ path: `${ARTIFACTS}preview-420-dark.png` });
      await page.emulateMedia({ colorScheme: "light" });
      await page.setViewportSize({ width: 1280, height: 800 });
    });

    assert.deepEqual(
      problems.filter((p) => !p.includes("404")),
      [],
      "the page logged errors",
    );
  });
});
