// Layout assertions (issue 43, items 4 and 5): at 390×844, 1280×800 and
// 1920×1080, with the page as it opens, the compare pane open, a run's cache
// report open, and both, measured with getBoundingClientRect:
// - no two visible labelled boxes overlap (the page's panes and the
//   element's parts: bar, banner, error, cache line, breakpoints line,
//   message list, prefix digests);
// - no label, heading, button or the gauge's text is cut (scrollWidth <=
//   clientWidth where it clips; the gauge's label inside the gauge, which
//   clips it), nor the header's or the notice's lines (scrollHeight);
// - the element's parts stay inside the element's box (nothing drawn below
//   it, as "Prefix digests" was over the compare pane);
// - the message list has a usable height (MIN_LIST px: a few rows), as laid
//   out and as the output pane shows it: at rest where the panes stand side
//   by side (wider than 820 px), once scrolled to where they stack.
// Beside the four pane combinations, two states of the issue: the compare
// example (compare-a.json against compare-b.json), and a prompt over its
// budget with a 7-digit count, stale ("last valid · context overflow ·
// 4,93x,xxx / 4,000", the gauge's longest label).
// A screenshot of each state goes to artifacts/layout-WIDTH-STATE.png.
// The states the page does not meet yet are `todo` (named with what fails):
// they report, and turn into failures once the todo is removed.

import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ARTIFACTS, open, skip, withPreview } from "./harness.mjs";

const MIN_LIST = 200;
const JSONL = readFileSync(new URL("../../examples/trajectories.jsonl", import.meta.url));

/** States the page does not meet yet: `${width} ${state}` → what fails. @type {Record<string, string>} */
const TODO = {};

/** What the page shows, measured in it. */
function measure() {
  const root = window.preview.view.shadowRoot;
  const shown = (el) => {
    if (!el || el.closest("[hidden]")) return null;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== "hidden" ? r : null;
  };
  const boxes = [];
  for (const sel of ["header", "#entries", ".editor-pane", "#run", "#compare", "#export"]) {
    const r = shown(document.querySelector(sel));
    if (r) boxes.push({ name: sel, r });
  }
  // The element's parts as drawn: clipped by the output pane, which scrolls.
  const pane = document.querySelector(".output-pane").getBoundingClientRect();
  for (const sel of [".bar", ".stale-banner", ".error", ".cache", ".bps", ".list", ".digests"]) {
    const r = shown(root.querySelector(sel));
    if (!r) continue;
    const clipped = { left: r.left, right: r.right, top: Math.max(r.top, pane.top), bottom: Math.min(r.bottom, pane.bottom) };
    if (clipped.bottom > clipped.top) boxes.push({ name: `view ${sel}`, r: clipped });
  }
  const overlaps = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i].r, boxes[j].r];
      const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (x > 1 && y > 1) overlaps.push(`${boxes[i].name} × ${boxes[j].name} (${Math.round(x)}×${Math.round(y)} px)`);
    }
  // The element's parts inside its box (a part below it draws over what follows the element).
  const host = window.preview.view.getBoundingClientRect();
  const outside = [];
  for (const sel of [".bar", ".stale-banner", ".error", ".cache", ".bps", ".list", ".digests"]) {
    const r = shown(root.querySelector(sel));
    if (r && (r.bottom > host.bottom + 1 || r.right > host.right + 1))
      outside.push(`${sel} ends ${Math.round(Math.max(r.bottom - host.bottom, r.right - host.right))} px past the element`);
  }
  const cut = [];
  const gauge = shown(root.querySelector(".gauge"));
  const label = root.querySelector(".gauge .label");
  if (gauge) {
    const l = label.getBoundingClientRect();
    if (l.right > gauge.right + 1 || l.bottom > gauge.bottom + 1 || label.scrollWidth > label.clientWidth + 1)
      cut.push(`gauge: "${label.textContent}"`);
  }
  // The header and the notice keep their lines (flex items of the page's column, never squeezed).
  for (const el of [document.querySelector("header"), document.getElementById("notice")])
    if (shown(el) && el.scrollHeight > el.clientHeight + 1)
      cut.push(`${el.id || el.tagName}: "${el.textContent.trim().slice(0, 40)}" (height)`);
  for (const el of [root.querySelector(".totals"), ...document.querySelectorAll("label, h2, button")]) {
    if (!shown(el) || getComputedStyle(el).overflowX === "visible") continue;
    if (el.scrollWidth > el.clientWidth + 1) cut.push(`${el.id || el.className || el.tagName}: "${el.textContent.trim().slice(0, 40)}"`);
  }
  const list = root.querySelector(".list").getBoundingClientRect();
  const inView = innerWidth > 820 ? Math.min(list.bottom, pane.bottom) - Math.max(list.top, pane.top) : Math.min(list.height, pane.height);
  return { overlaps, outside, cut, list: Math.round(list.height), inView: Math.round(inView) };
}

for (const viewport of [
  { width: 390, height: 844 },
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
]) {
  test(`layout at ${viewport.width}×${viewport.height}: no overlap, no cut text, a usable list`, { skip, timeout: 180_000 }, async (t) => {
    await withPreview(
      async ({ page, url, problems }) => {
        await open(page, url);
        const check = async (state) => {
          const todo = TODO[`${viewport.width} ${state}`];
          await t.test(state, { todo }, async () => {
            await page.waitForTimeout(200);
            await page.screenshot({ path: `${ARTIFACTS}layout-${viewport.width}-${state}.png` });
            const m = await page.evaluate(measure);
            assert.deepEqual(m.overlaps, [], "boxes that overlap");
            assert.deepEqual(m.outside, [], "the element's parts past its box");
            assert.deepEqual(m.cut, [], "text cut");
            assert.ok(m.list >= MIN_LIST, `the message list is ${m.list} px tall (at least ${MIN_LIST})`);
            assert.ok(m.inView >= MIN_LIST, `${m.inView} px of the message list in view (at least ${MIN_LIST})`);
          });
        };
        await check("plain");
        await page.click("#compare-toggle");
        await check("compare");
        await page.click("#compare-toggle");
        await page.setInputFiles("#file", { name: "trajectories.jsonl", mimeType: "application/octet-stream", buffer: JSONL });
        await page.waitForFunction(() => window.preview.report.done, null, { timeout: 60_000 });
        await check("report");
        await page.click("#compare-toggle");
        await check("report+compare");
        await page.click("#compare-toggle");
        // The compare example: compare-a.json in the view, A against B in the compare pane.
        await page.selectOption("#examples", "compare");
        await page.waitForFunction(() => !document.getElementById("compare").hidden && document.querySelector("#compare-result table"));
        await check("compare-example");
        await page.click("#compare-toggle");
        // Over the budget with a 7-digit count, then stale (a syntax error): the gauge's longest label.
        await page.evaluate(async () => {
          const req = JSON.parse(window.preview.editor.state.doc.toString());
          req.max_prompt_chars = 4000;
          req.goal_messages = [{ role: "user", content: [{ type: "text", text: "x".repeat(4_930_000) }] }];
          await window.preview.setText(JSON.stringify(req));
        });
        await check("overflow");
        await page.evaluate(() => window.preview.setText("{"));
        await page.waitForFunction(() => window.preview.view.state === "stale");
        await check("overflow-stale");
        assert.deepEqual(problems, []);
      },
      { viewport },
    );
  });
}
