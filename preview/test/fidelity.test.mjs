// The preview shows exactly what will be sent, in Chromium:
// - one text model: a CRLF file assembles the editor's text (edits land
//   where the editor shows them); files are decoded strictly, so a BOM and
//   invalid UTF-8 get the verdict every host gives the file's bytes; a file
//   past the browser's string ceiling is a coded error, not an empty editor;
// - integers exact end to end: step by step, and in the editor's JSON copy
//   of a msgpack file;
// - invisible characters (bidi controls, zero-width, BOM, CR, NBSP...) are
//   marked with their code point, the text itself unchanged;
// - share links inflate through a limit;
// - one worker for every <polyloop-prompt-view> of a page.
// The oracle of a verdict is the Node binding given the file's bytes (and
// the code and path the CLI answers, written here by hand).
// Screenshot of the markers in artifacts/ (git-ignored).

import test from "node:test";
import assert from "node:assert/strict";
import { encode as encodeMsgpack } from "@msgpack/msgpack";
import { assembler, errorOf } from "../../bindings/js/test/common.mjs";
import { ARTIFACTS, open, pickEntry, setText, shown, skip, withPreview } from "./harness.mjs";

const U64_MAX = "18446744073709551615";

/** Opens a file through the page's file input. */
async function openFile(page, name, buffer) {
  const before = await page.evaluate(() => window.preview.view.generation);
  await page.setInputFiles("#file", { name, mimeType: "application/octet-stream", buffer: Buffer.from(buffer) });
  await page.waitForFunction((b) => window.preview.view.generation > b, before);
  await page.evaluate(() => window.preview.view.whenRendered(window.preview.view.generation));
}

const docText = (page) => page.evaluate(() => window.preview.editor.state.doc.toString());

/** The text of the message holding raw_output (message 0 of a request with
 * no run or goal messages). */
const firstText = (page) => page.evaluate(() => window.preview.view.messageTexts(0)?.join(""));

test("the preview shows exactly what will be sent, in Chromium", { skip, timeout: 240_000 }, async (t) => {
  const asm = await assembler();
  await withPreview(async ({ page, url, problems }) => {
    await open(page, url);

    await t.test("a CRLF file: edits land where the editor shows them", async () => {
      const text =
        '{\r\n  "observation_template": "{observation}",\r\n  "steps": [\r\n    {"raw_output": "ABC", "observation": "o"}\r\n  ]\r\n}\r\n';
      await openFile(page, "crlf.json", new TextEncoder().encode(text));
      assert.equal(await firstText(page), "ABC");
      const doc = await docText(page);
      const at = doc.indexOf("ABC") + 3;
      await page.evaluate((at) => window.preview.edit(at, at, "Z"), at);
      assert.equal(await page.evaluate(() => window.preview.state), "ok");
      assert.equal(await firstText(page), "ABCZ");
      const at2 = (await docText(page)).indexOf("ABCZ") + 4;
      await page.evaluate((at) => window.preview.edit(at, at, "Y"), at2);
      assert.equal(await page.evaluate(() => window.preview.state), "ok", "a second edit is still valid JSON");
      const copied = JSON.parse(await page.evaluate(() => window.preview.view.responseJSON()));
      assert.deepEqual(copied.messages, asm.assembleJSON(await docText(page)).messages);
      assert.equal(copied.messages[0].content[0].text, "ABCZY");
    });

    await t.test("a leading BOM: malformed_request at byte 0, as the CLI says", async () => {
      const body = new TextEncoder().encode('{"observation_template": "{observation}", "steps": []}');
      const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...body]);
      const want = errorOf(() => asm.assembleJSON(bytes));
      assert.equal(want?.code, "malformed_request");
      await openFile(page, "bom.json", bytes);
      const s = await shown(page);
      assert.notEqual(s.state, "ok");
      assert.deepEqual({ code: s.error?.code, path: s.error?.path }, { code: "malformed_request", path: "" });
      assert.equal(s.error?.message, want.message);
      assert.match(s.error?.message ?? "", /at byte 0\b/);
      assert.equal((await docText(page)).codePointAt(0), 0xfeff, "the editor keeps the BOM");
    });

    await t.test("a raw 0xFF inside raw_output: invalid_utf8 at steps[0].raw_output", async () => {
      const enc = new TextEncoder();
      const bytes = new Uint8Array([
        ...enc.encode('{"observation_template": "{observation}", "steps": [{"raw_output": "a'),
        0xff,
        ...enc.encode('b", "observation": "o"}]}'),
      ]);
      const want = errorOf(() => asm.assembleJSON(bytes));
      assert.deepEqual({ code: want?.code, path: want?.path }, { code: "invalid_utf8", path: "steps[0].raw_output" });
      await openFile(page, "bad.json", bytes);
      const s = await shown(page);
      assert.deepEqual(
        { code: s.error?.code, path: s.error?.path, message: s.error?.message },
        { code: want.code, path: want.path, message: want.message },
      );
      assert.match(await page.textContent("#notice"), /not valid UTF-8/);
      // One line of a JSON-lines file, the same.
      const lines = new Uint8Array([...enc.encode('{"observation_template": "{observation}"}\n'), ...bytes, 0x0a]);
      await openFile(page, "two.jsonl", lines);
      await pickEntry(page, 1);
      await page.waitForFunction(() => window.preview.view.error?.code === "invalid_utf8");
      assert.equal(await page.evaluate(() => window.preview.view.error.path), "steps[0].raw_output");
    });

    await t.test("past the string ceiling: a coded error, never an empty document", async () => {
      assert.equal(await setText(page, '{"observation_template": "{observation}"}'), "ok");
      const got = await page.evaluate(async () => {
        const size = 536_870_889;
        const entries = window.preview.requestsOfFile({ length: size }, "huge.json");
        await window.preview.openFile({ name: "huge.json", size, arrayBuffer: () => Promise.reject(new Error("read")) });
        return { entries, notice: document.getElementById("notice").textContent, doc: window.preview.editor.state.doc.toString() };
      });
      assert.equal(got.entries.length, 1);
      assert.match(got.entries[0].error, /^too_large: .*536,870,889 bytes/);
      assert.match(got.notice, /too_large/);
      assert.equal(got.doc, '{"observation_template": "{observation}"}', "the editor kept its document");
    });

    await t.test("big integers are exact step by step", async () => {
      for (const budget of ["9007199254740993", "9223372036854775807", "9223372036854775808", U64_MAX]) {
        const text = `{"observation_template": "{observation}", "max_prompt_chars": ${budget}, "steps": [{"raw_output": "a", "observation": "b"}]}`;
        assert.equal(await setText(page, text), "ok");
        const whole = (await shown(page)).gauge.label;
        await page.check("#by-step");
        await page.waitForFunction(() => window.preview.view.stepCount === 1);
        const s = await shown(page);
        assert.equal(s.state, "ok", budget);
        assert.equal(s.gauge.label, whole, "step by step, the budget the module read");
        if (budget.length < 19) assert.equal(whole, `2 / ${BigInt(budget).toLocaleString("en-US")}`);
        await page.uncheck("#by-step");
      }
    });

    await t.test("a msgpack file's JSON copy keeps 2^64 - 1", async () => {
      const req = {
        observation_template: "{observation}",
        max_prompt_chars: 2n ** 64n - 1n,
        steps: [{ raw_output: "a", observation: "b" }],
      };
      await openFile(page, "big.msgpack", encodeMsgpack(req, { useBigInt64: true }));
      assert.equal(await page.evaluate(() => window.preview.state), "ok");
      const fromFile = (await shown(page)).gauge.label;
      assert.match(await docText(page), /"max_prompt_chars": 18446744073709551615\b/);
      const doc = await docText(page);
      await page.evaluate((n) => window.preview.edit(n, n, " "), doc.length);
      const s = await shown(page);
      assert.equal(s.state, "ok", "one space keeps the request valid");
      assert.equal(s.gauge.label, fromFile);
    });

    await t.test("invisible characters are marked with their code point", async () => {
      const raw = "RLO[\u202e]abc ZW[\u200b] BOM[\ufeff] CR[\r] NBSP[\u00a0] LRI[\u2066] WJ[\u2060] ESC[\u001b] IDSP[\u3000] é😀";
      const req = { observation_template: "{observation}", steps: [{ raw_output: raw, observation: "ok" }] };
      assert.equal(await setText(page, JSON.stringify(req, null, 2)), "ok");
      const got = await page.evaluate(() => {
        const b = window.preview.view.shadowRoot.querySelector('.row[data-message="0"] .block');
        return { text: b.textContent, marks: [...b.querySelectorAll(".cp")].map((e) => [e.dataset.cp, e.textContent]) };
      });
      assert.equal(got.text, raw, "the text itself is unchanged");
      const want = [
        ["U+202E", "\u202e"],
        ["U+200B", "\u200b"],
        ["U+FEFF", "\ufeff"],
        ["U+000D", "\r"],
        ["U+00A0", "\u00a0"],
        ["U+2066", "\u2066"],
        ["U+2060", "\u2060"],
        ["U+001B", "\u001b"],
        ["U+3000", "\u3000"],
      ];
      assert.deepEqual(got.marks, want);
      // The marker is visible (generated content) and the override does not
      // reorder what follows: "abc" is laid out left to right after "]".
      const layout = await page.evaluate(() => {
        const b = window.preview.view.shadowRoot.querySelector('.row[data-message="0"] .block');
        const cp = b.querySelector(".cp");
        const marker = getComputedStyle(cp, "::before").content;
        const node = cp.nextSibling;
        const r = document.createRange();
        const x = (i) => {
          r.setStart(node, i);
          r.setEnd(node, i + 1);
          return r.getBoundingClientRect().left;
        };
        return { marker, order: [x(1), x(2), x(3)], width: cp.getBoundingClientRect().width };
      });
      assert.equal(layout.marker, '"U+202E"');
      assert.ok(layout.width > 10, "the marker takes room");
      assert.ok(layout.order[0] < layout.order[1] && layout.order[1] < layout.order[2], `abc left to right: ${layout.order}`);
      const row = page.locator("#view").locator('.row[data-message="0"]');
      await row.screenshot({ path: `${ARTIFACTS}preview-invisible.png` });
    });

    await t.test("a share link inflates through a limit", async () => {
      const bomb = await page.evaluate(async () => {
        const zeros = new Uint8Array(40 * 1024 * 1024);
        const packed = new Uint8Array(
          await new Response(new Blob([zeros]).stream().pipeThrough(new CompressionStream("deflate-raw"))).arrayBuffer(),
        );
        let s = "";
        for (let i = 0; i < packed.length; i += 0x8000) s += String.fromCharCode(...packed.subarray(i, i + 0x8000));
        return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
      });
      assert.ok(bomb.length <= 60_000, `the bomb fits a link (${bomb.length})`);
      await page.goto("about:blank");
      await page.goto(`${url}#req=${bomb}`);
      await page.evaluate(() => window.preview.ready);
      assert.match(await page.textContent("#notice"), /inflates to more than 33,554,432 bytes; it was ignored/);
      assert.ok((await docText(page)).length > 0, "the editor is not blank");
      const long = "A".repeat(60_001);
      await page.goto("about:blank");
      await page.goto(`${url}#req=${long}`);
      await page.evaluate(() => window.preview.ready);
      assert.match(await page.textContent("#notice"), /share link is too long \(60,001 characters/);
      assert.ok((await docText(page)).length > 0, "the editor is not blank");
      const limited = await page.evaluate(async () => {
        const packed = new Uint8Array(
          await new Response(new Blob([new Uint8Array(1000)]).stream().pipeThrough(new CompressionStream("deflate-raw"))).arrayBuffer(),
        );
        return [(await window.preview.inflateBounded(packed, 999)) === null, (await window.preview.inflateBounded(packed, 1000))?.length];
      });
      assert.deepEqual(limited, [true, 1000]);
    });

    await t.test("one worker for every element of the page", async () => {
      await page.addInitScript(() => {
        const W = window.Worker;
        window.__workers = 0;
        window.Worker = class extends W {
          constructor(...a) {
            super(...a);
            window.__workers++;
          }
        };
      });
      await open(page, url);
      const got = await page.evaluate(async () => {
        const views = [];
        for (let k = 0; k < 12; k++) {
          const v = document.createElement("polyloop-prompt-view");
          v.setAttribute("wasm-url", window.preview.view.getAttribute("wasm-url"));
          document.body.append(v);
          v.request = { observation_template: "{observation}", steps: [{ raw_output: `r${k}`, observation: "o" }] };
          views.push(v);
        }
        await Promise.all(views.map((v) => v.whenRendered()));
        const texts = views.map((v) => v.messageTexts(0)[0]);
        for (const v of views) {
          v.terminate();
          v.remove();
        }
        return { workers: window.__workers, texts };
      });
      assert.deepEqual(
        got.texts,
        Array.from({ length: 12 }, (_, k) => `r${k}`),
      );
      assert.equal(got.workers, 1, "the page's view and 12 more share one worker");
      assert.equal(await page.evaluate(() => window.preview.state), "ok", "the page's own view still works");
      assert.equal(await setText(page, '{"observation_template": "{observation}"}'), "ok");
    });

    assert.deepEqual(problems, []);
  });
});
