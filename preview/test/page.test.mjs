// The prompt preview in Chromium: the page (preview/, served by
// preview/serve.mjs) with its CodeMirror editor and <polyloop-prompt-view>.
// - what is shown equals Node's assemble() of the same request, message by
//   message, while only the rows in view are in the DOM, and long texts are
//   collapsed until expanded;
// - hostile text stays text (request data, channel names, entry ids, the
//   template, error messages);
// - a JSON syntax error and a template error get a lint mark in the editor at
//   their place; the JSON verdict is the module's (repeated keys, floats, big
//   integers: one verdict with the CLI);
// - while the request does not parse or is rejected, the prompt shown is
//   marked stale; the error's button selects its place in the editor;
// - the budget gauge, the message where the budget is first exceeded, what
//   stayed byte-identical since the last result, copying the response.
// Screenshots in artifacts/ (git-ignored).

import test from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { REPO, assembler } from "../../bindings/js/test/common.mjs";
import { ARTIFACTS, open, setText, shown, skip, withPreview } from "./harness.mjs";
import { trajectory } from "../bench/preview-requests.mjs";

/** Every message's block texts as the view holds them. */
const viewTexts = (page) =>
  page.evaluate(() => Array.from({ length: window.preview.view.summary.messages }, (_, i) => window.preview.view.messageTexts(i)));

/** The editor's lint marks: [from, to, text under the mark]. */
const lintMarks = (page) =>
  page.evaluate(async () => {
    await new Promise((r) => requestAnimationFrame(() => r(undefined)));
    return [...document.querySelectorAll("#editor .cm-lintRange-error")].map((e) => e.textContent);
  });

/** Template errors and the code point at fault, counted by hand (an oracle
 * independent of the message's wording and of the wire's offset). */
const TEMPLATE_ERRORS = [
  ["Result: {observation!x}", 21],
  ["😀😀 {observation!x}", 16],
  ['<img src=x onerror="window.__xss = 4">\n{obs}', 40],
  ["{observation", 0],
  ["line one\nline 😀 two {observation:d}", 33],
  ["tab\there {observation!x}", 22],
  ["{observation!rx}", 14], // "after the conversion at offset 13, found 'x' at offset 14"
  ['ab {"at offset 0"}', 4], // a quoted field name that reads "at offset 0"
];

test("the prompt preview in Chromium", { skip, timeout: 180_000 }, async (t) => {
  const asm = await assembler();
  await withPreview(async ({ page, url, problems }) => {
    await open(page, url);

    await t.test("the example renders as assemble() gives it in Node", async () => {
      const s = await shown(page);
      assert.equal(s.state, "ok");
      const example = existsSync(`${REPO}examples/react.json`) ? JSON.parse(readFileSync(`${REPO}examples/react.json`, "utf8")) : null;
      if (example) {
        const r = asm.assemble(example);
        assert.deepEqual(
          await viewTexts(page),
          r.messages.map((m) => m.content.map((b) => b.text)),
        );
        assert.equal(s.summary.promptChars, r.prompt_chars);
      }
      await page.screenshot({ path: `${ARTIFACTS}preview.png` });
    });

    await t.test("1,000 steps: only the rows in view are in the DOM; long texts collapse and expand", async () => {
      const req = trajectory(1000, 1000);
      req.steps[0].observation = "long line ".repeat(600) + "\nend";
      assert.equal(await setText(page, req), "ok");
      const r = asm.assemble(req);
      const s = await shown(page);
      assert.equal(s.summary.messages, r.messages.length);
      assert.ok(s.rows > 3 && s.rows < 60, `${s.rows} rows in the DOM for ${r.messages.length} messages`);
      assert.deepEqual(
        await viewTexts(page),
        r.messages.map((m) => m.content.map((b) => b.text)),
      );
      // Scroll to message 5 (steps[0].observation rendered): collapsed.
      const idx = 5;
      await page.evaluate((i) => window.preview.view.scrollToMessage(i), idx);
      await page.waitForFunction((i) => window.preview.view.shadowRoot.querySelector(`.row[data-message="${i}"] .more`), idx);
      const full = r.messages[idx].content[0].text;
      const before = await page.evaluate(
        (i) => window.preview.view.shadowRoot.querySelector(`.row[data-message="${i}"] .block`).textContent,
        idx,
      );
      assert.ok(before.length < full.length && full.startsWith(before), "the long text is collapsed to its start");
      await page.locator(`polyloop-prompt-view .row[data-message="${idx}"] .more`).click();
      const after = await page.evaluate(
        (i) => window.preview.view.shadowRoot.querySelector(`.row[data-message="${i}"] .block`).textContent,
        idx,
      );
      assert.equal(after, full);
      // Scrolled to the end, the last message is in the DOM, the first is not.
      await page.evaluate(() => window.preview.view.scrollToMessage(window.preview.view.summary.messages - 1));
      await page.waitForFunction(() =>
        window.preview.view.shadowRoot.querySelector(`.row[data-message="${window.preview.view.summary.messages - 1}"]`),
      );
      const s2 = await shown(page);
      assert.ok(!s2.messages.includes(0) && s2.rows < 60, JSON.stringify(s2.messages));
      await page.screenshot({ path: `${ARTIFACTS}preview-1000-steps.png` });
    });

    await t.test("typing is coalesced: fewer results than keystrokes, the last one current", async () => {
      const req = trajectory(1000, 1000);
      assert.equal(await setText(page, req), "ok");
      const typed = "coalesced while typing";
      const pos = await page.evaluate(() => {
        const text = window.preview.editor.state.doc.toString();
        const at = text.lastIndexOf('"observation": "') + '"observation": "'.length;
        window.preview.editor.dispatch({ selection: { anchor: at } });
        window.preview.editor.focus();
        window.__results = 0;
        window.preview.view.addEventListener("polyloop-result", () => window.__results++);
        return at;
      });
      // One edit per character, all in one task of the page: on a loaded
      // machine a keystroke per CDP round trip can each be answered before the
      // next arrives, which tests the machine, not the coalescing.
      await page.evaluate(
        ([at, typed]) => {
          for (let i = 0; i < typed.length; i++) {
            window.preview.editor.dispatch({ changes: { from: at + i, insert: typed[i] }, selection: { anchor: at + i + 1 } });
          }
        },
        [pos, typed],
      );
      await page.evaluate(() => window.preview.view.whenRendered(window.preview.view.generation));
      const r = await page.evaluate(() => ({
        results: window.__results,
        gen: window.preview.view.generation,
        shown: window.preview.view.shownGeneration,
        text: window.preview.editor.state.doc.toString(),
      }));
      assert.ok(r.results < typed.length, `${r.results} results for ${typed.length} keystrokes`);
      assert.equal(r.shown, r.gen, "the newest edit is the one shown");
      assert.equal(r.text.slice(pos, pos + typed.length), typed);
      const last = asm.assemble(JSON.parse(r.text));
      const n = last.messages.length;
      assert.deepEqual(
        await page.evaluate((n) => window.preview.view.messageTexts(n - 1), n),
        last.messages[n - 1].content.map((b) => b.text),
      );
      t.diagnostic(`${r.results} results for ${typed.length} keystrokes`);
    });

    const payload = `<script>window.__xss = 1</script></textarea><img src=x onerror="window.__xss = 2"><b>bold</b> & &amp; "q"`;
    const xssRequest = {
      run_messages: [{ role: "system", content: [{ type: "text", text: payload }] }],
      injections: { [`<i>${payload}`]: [{ entry_id: `<img src=y onerror="window.__xss = 3">`, content: payload }] },
      steps: [{ raw_output: payload, observation: payload }],
      observation_template: "<u>Observation</u>: {observation}",
    };

    await t.test("markup in request data renders as text", async () => {
      assert.equal(await setText(page, xssRequest), "ok");
      const r = await page.evaluate(() => {
        const root = window.preview.view.shadowRoot;
        return {
          xss: window.__xss,
          elements:
            root.querySelectorAll(".rows img, .rows script, .rows b, .rows u, .rows i").length +
            document.querySelectorAll("main img, main script, main b, main u").length,
          wheres: [...root.querySelectorAll(".row .where")].map((b) => b.textContent),
          entries: [...root.querySelectorAll(".row .entry")].map((b) => b.textContent),
        };
      });
      const s = await shown(page);
      assert.equal(r.xss, undefined, "a payload script ran");
      assert.equal(r.elements, 0, "request markup became elements");
      assert.deepEqual(s.blocks, [payload, payload, payload, `<u>Observation</u>: ${payload}`]);
      assert.equal(r.wheres[1], `#1 · injections[${JSON.stringify(`<i>${payload}`)}][0]`);
      assert.deepEqual(r.entries, [`entry <img src=y onerror="window.__xss = 3">`]);
      const editorText = await page.evaluate(() => window.preview.editor.state.doc.toString());
      assert.deepEqual(JSON.parse(editorText), xssRequest, "the editor kept the request whole");
    });

    await t.test("a template error: its column in code points, a lint mark in the editor", async () => {
      for (const [template, offset] of TEMPLATE_ERRORS) {
        let expected;
        try {
          asm.validateTemplate(template);
        } catch (e) {
          expected = e;
        }
        assert.ok(expected, `Node accepts ${template}`);
        if (typeof expected.offset === "number") assert.equal(expected.offset, offset, `the wire's offset for ${template}`);
        assert.equal(await setText(page, { ...xssRequest, observation_template: template }), "stale");
        const got = await page.evaluate(() => {
          const root = window.preview.view.shadowRoot;
          const mark = root.querySelector(".error mark");
          const col = root.querySelector(".error .column");
          return {
            code: root.querySelector(".error .code").textContent,
            message: root.querySelector(".error .message").textContent,
            offset: mark && Number(mark.dataset.offset),
            line: col && Number(col.dataset.line),
            column: col && Number(col.dataset.column),
            elements: root.querySelectorAll(".error img, .error script").length,
            xss: window.__xss,
          };
        });
        const cps = [...template];
        const before = cps.slice(0, offset);
        const lastNl = before.lastIndexOf("\n");
        assert.deepEqual(got, {
          code: "invalid_template",
          message: expected.message,
          offset,
          line: before.filter((c) => c === "\n").length + 1,
          column: before.length - (lastNl + 1) + 1,
          elements: 0,
          xss: undefined,
        });
        // The lint mark covers the code point at the offset inside the JSON
        // string literal (an escape such as \n or \t is one code point).
        const marks = await lintMarks(page);
        const at = cps[offset];
        assert.deepEqual(marks, [at === undefined ? '"' : JSON.stringify(at).slice(1, -1)], `${template}: ${JSON.stringify(marks)}`);
      }
      await page.screenshot({ path: `${ARTIFACTS}preview-template-error.png` });
    });

    await t.test("a JSON syntax error: stale prompt, lint mark, a button to its place", async () => {
      assert.equal(await setText(page, xssRequest), "ok");
      const good = await shown(page);
      const broken = '{\n  "observation_template": "{observation}",\n  "steps": [}\n';
      assert.equal(await setText(page, broken), "stale");
      const s = await shown(page);
      assert.match(s.banner, /^Stale: the request is not valid JSON/);
      assert.equal(s.error.code, "malformed_request");
      assert.match(s.error.message, /^invalid JSON at byte \d+/);
      assert.deepEqual(s.blocks, good.blocks, "the last prompt stays, marked stale");
      assert.equal(s.summary.stale, true);
      assert.equal(await page.evaluate(() => window.preview.view.classList.contains("stale-view")), true);
      const byte = Number(/at byte (\d+)/.exec(s.error.message)[1]);
      assert.deepEqual(await lintMarks(page), [broken[byte]]);
      await page.locator("polyloop-prompt-view .error .locate").click();
      const sel = await page.evaluate(() => {
        const { from, to } = window.preview.editor.state.selection.main;
        return { from, to, focused: window.preview.editor.hasFocus };
      });
      assert.deepEqual(sel, { from: byte, to: byte + 1, focused: true });
      await page.screenshot({ path: `${ARTIFACTS}preview-json-error.png` });
      // Fixed: current again, no mark left in the text or the gutter.
      assert.equal(await setText(page, xssRequest), "ok");
      assert.equal((await shown(page)).banner, null);
      assert.deepEqual(await lintMarks(page), []);
      assert.equal(await page.evaluate(() => document.querySelectorAll("#editor .cm-lint-marker").length), 0);
    });

    await t.test("a rejected request: stale, and its path selected in the editor", async () => {
      const bad = {
        ...xssRequest,
        steps: [
          { raw_output: "a", observation: "b" },
          { raw_output: "c", observation: 7 },
        ],
      };
      assert.equal(await setText(page, bad), "stale");
      const s = await shown(page);
      assert.match(s.banner, /rejected \(malformed_request\)/);
      assert.deepEqual([s.error.code, s.error.path], ["malformed_request", "steps[1].observation"]);
      await page.locator("polyloop-prompt-view .error .locate").click();
      const selected = await page.evaluate(() => {
        const { from, to } = window.preview.editor.state.selection.main;
        return window.preview.editor.state.sliceDoc(from, to);
      });
      assert.equal(selected, "7");
      assert.deepEqual(await lintMarks(page), ["7"]);
    });

    await t.test("the JSON verdict is the module's: repeated keys, floats, big integers", async () => {
      const base = '"observation_template": "{observation}"';
      assert.equal(await setText(page, `{${base}, "steps": [{"raw_output": "a", "raw_output": "b", "observation": "c"}]}`), "stale");
      assert.deepEqual([(await shown(page)).error.code, (await shown(page)).error.path.startsWith("steps[0]")], ["duplicate_key", true]);
      assert.equal(await setText(page, `{"v": 1.0, ${base}}`), "stale");
      assert.equal((await shown(page)).error.code, "malformed_request");
      assert.equal(await setText(page, `{${base}, "max_prompt_chars": 1e2}`), "stale");
      assert.equal((await shown(page)).error.code, "malformed_request");
      // JSON.parse would round it; the module takes it whole.
      assert.equal(await setText(page, `{${base}, "max_prompt_chars": 9007199254740993}`), "ok");
      // "\ud800" escapes a lone surrogate: the core's invalid_utf8.
      assert.equal(await setText(page, `{${base}, "steps": [{"raw_output": "\\ud800", "observation": ""}]}`), "stale");
      assert.deepEqual([(await shown(page)).error.code, (await shown(page)).error.path], ["invalid_utf8", "steps[0].raw_output"]);
    });

    await t.test("the budget: gauge, overflow, the message where it is first exceeded", async () => {
      const base = {
        goal_messages: [{ role: "user", content: [{ type: "text", text: "😀😀😀😀😀" }] }],
        observation_template: "{observation}",
      };
      assert.equal(await setText(page, { ...base, max_prompt_chars: 5 }), "ok");
      let s = await shown(page);
      assert.ok(!s.gauge.cls.includes("over"), s.gauge.cls);
      assert.equal(s.gauge.label, "5 / 5"); // 5 code points, 10 UTF-16 units
      assert.equal(await setText(page, { ...base, max_prompt_chars: 4 }), "ok");
      s = await shown(page);
      assert.ok(s.gauge.cls.includes("over"), s.gauge.cls);
      assert.equal(s.gauge.label, "context overflow · 5 / 4");
      assert.equal(await setText(page, base), "ok");
      assert.equal((await shown(page)).gauge.label, "no budget");
      // A trajectory over its budget: the badge is on the first message past it.
      const req = trajectory(6, 300, { budget: 1000 });
      const r = asm.assemble(req);
      let sum = 0;
      const first = r.message_chars.findIndex((c) => (sum += c) > 1000);
      assert.ok(first > 0);
      assert.equal(await setText(page, req), "ok");
      await page.evaluate((i) => window.preview.view.scrollToMessage(i), first);
      await page.waitForFunction((i) => window.preview.view.shadowRoot.querySelector(`.row[data-message="${i}"]`), first);
      const over = await page.evaluate(() =>
        [...window.preview.view.shadowRoot.querySelectorAll(".badge.over")].map((b) => Number(b.closest(".row").dataset.message)),
      );
      assert.deepEqual(over, [first]);
    });

    await t.test("what stayed byte-identical since the last result", async () => {
      const req = trajectory(5, 200);
      assert.equal(await setText(page, req), "ok");
      const r = asm.assemble(req);
      const last = r.messages.length - 1;
      // Edit the last observation: everything before the last message is cacheable.
      const text = await page.evaluate(() => window.preview.editor.state.doc.toString());
      const pos = text.lastIndexOf('"observation": "') + '"observation": "'.length;
      await page.evaluate((p) => window.preview.edit(p, p, "Z"), pos);
      let s = await shown(page);
      assert.match(s.cache, new RegExp(`run identical · injections identical · goal identical · messages before #${last} byte-identical`));
      // Edit the goal: the goal's digest changes.
      const g = text.indexOf("Summarise");
      await page.evaluate((p) => window.preview.edit(p, p, "Please "), g);
      s = await shown(page);
      assert.match(s.cache, /run identical · injections identical · goal changed/);
    });

    await t.test("the copy button copies the response as JSON", async () => {
      assert.equal(await setText(page, xssRequest), "ok");
      await page.click("#copy");
      await page.waitForFunction(() => document.getElementById("notice").textContent.startsWith("Response JSON copied"));
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      assert.deepEqual(JSON.parse(copied), asm.assemble(xssRequest));
    });

    assert.deepEqual(problems, [], "the page logged errors");
  });
});
