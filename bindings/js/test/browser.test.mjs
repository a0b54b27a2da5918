// The real-browser test (issue 5 item 6): Debian's Chromium driven by
// playwright-core loads the preview from `preview/serve.mjs`, and
// - the page's assembleBytes gives, for every shared vector, the same bytes as
//   Node's (and the vector's response for ok cases);
// - editing the request re-renders the prompt; markup in request data shows up
//   as text (no element, no script run);
// - a broken template shows the offending column (counted in code points);
// - the budget gauge turns to "context overflow";
// - the copy button copies the response as JSON;
// - a screenshot goes to artifacts/preview.png (git-ignored).
// POLYLOOP_SKIP_BROWSER=1 skips it; UPDATE_DOCS_SCREENSHOT=1 also rewrites
// docs/preview.png for the README.

import test from "node:test";
import { loadPromptVectors } from "./common.mjs";
import { requestToJs } from "./jsvalue.mjs";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { startServer } from "../preview/serve.mjs";
import { REPO, assembler, loadVectors } from "./common.mjs";

const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const skip = process.env.POLYLOOP_SKIP_BROWSER ? "POLYLOOP_SKIP_BROWSER is set" : false;

const b64 = (u8) => Buffer.from(u8).toString("base64");

test("the preview in Chromium", { skip, timeout: 180_000 }, async (t) => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: run \`make js.chromium\` (apt-get install chromium)`);
  const asm = await assembler();
  const server = await startServer({ port: 0 });
  const profile = mkdtempSync(join(tmpdir(), "polyloop-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
  });
  const problems = [];
  try {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(server.url).origin });
    const page = context.pages()[0] ?? (await context.newPage());
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
    await page.goto(server.url);
    await page.evaluate(() => window.preview.ready);
    assert.equal(await page.evaluate(() => document.body.dataset.state), "ok", "the example request renders");

    /** Sets the editor's text as a user would (an input event) and waits for the render. */
    async function edit(request) {
      const before = Number(await page.evaluate(() => document.body.dataset.renders));
      await page.fill("#request", typeof request === "string" ? request : JSON.stringify(request, null, 2));
      await page.waitForFunction((n) => Number(document.body.dataset.renders) > n, before);
      return page.evaluate(() => document.body.dataset.state);
    }

    await t.test("every vector: the page's assembleBytes equals Node's, byte for byte", async () => {
      const vectors = loadVectors();
      assert.ok(vectors.length > 100, `only ${vectors.length} vectors`);
      const got = await page.evaluate((reqs) => {
        const fromB64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
        const toB64 = (u8) => {
          let s = "";
          for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000));
          return btoa(s);
        };
        return reqs.map((r) => toB64(window.preview.asm.assembleBytes(fromB64(r))));
      }, vectors.map((v) => b64(v.request)));
      let same = 0;
      for (const [i, v] of vectors.entries()) {
        const node = b64(asm.assembleBytes(v.request));
        assert.equal(got[i], node, `${v.file}/${v.name}: Chromium and Node differ`);
        if (v.response) assert.equal(got[i], b64(v.response), `${v.file}/${v.name}: Chromium differs from the vector`);
        same++;
      }
      t.diagnostic(`${same} vectors byte-identical in Chromium and Node`);

      // The prompt vectors (testdata/prompt-vectors): the page's prompt()
      // answers each step as the vector says. JSON.stringify escapes lone
      // surrogates, JSON.parse in the page restores them.
      const cases = loadPromptVectors();
      const answers = await page.evaluate((src) => {
        return JSON.parse(src).map((c) => {
          const p = window.preview.asm.prompt(c.request);
          const first = p.toResponse();
          const steps = c.steps.map((s) => {
            try {
              p.addStep(s.raw_output, s.observation);
              return { response: p.toResponse() };
            } catch (e) {
              return { error: { code: e.code, path: e.path }, response: p.toResponse() };
            }
          });
          return { first, steps };
        });
      }, JSON.stringify(cases));
      const expected = (s) => requestToJs(new Uint8Array(Buffer.from(s, "base64")));
      for (const [i, c] of cases.entries()) {
        let want = expected(c.response);
        assert.deepEqual(answers[i].first, want, `prompt vector ${c.name}: the first response`);
        for (const [k, s] of c.steps.entries()) {
          if (s.response) want = expected(s.response);
          assert.deepEqual(answers[i].steps[k].error, s.error, `prompt vector ${c.name}: step ${k}`);
          assert.deepEqual(answers[i].steps[k].response, want, `prompt vector ${c.name}: after step ${k}`);
        }
      }
      t.diagnostic(`${cases.length} prompt vectors answered alike in Chromium`);
    });

    await t.test("the example renders as assemble() gives it in Node", async () => {
      const example = existsSync(`${REPO}examples/react.json`) ? JSON.parse(readFileSync(`${REPO}examples/react.json`, "utf8")) : null;
      const pageResp = await page.evaluate(() => window.preview.lastResponse);
      if (example) assert.deepEqual(pageResp, asm.assemble(example));
      const shown = await page.$$eval(".msg .chars", (els) => els.map((e) => e.textContent));
      assert.deepEqual(shown, pageResp.message_chars.map((n) => `${n.toLocaleString("en-US")} ${n === 1 ? "char" : "chars"}`));
      const blocks = await page.$$eval(".msg", (els) => els.map((e) => [...e.querySelectorAll(".block")].map((b) => b.textContent)));
      assert.deepEqual(blocks, pageResp.messages.map((m) => m.content.map((b) => b.text)));
      mkdirSync(`${REPO}artifacts`, { recursive: true });
      await page.screenshot({ path: `${REPO}artifacts/preview.png` });
      if (process.env.UPDATE_DOCS_SCREENSHOT) {
        await page.evaluate(() => {
          const head = document.querySelector('.segment-head[data-segment="injection"]');
          document.querySelector(".output-pane").scrollTop = head.offsetTop - 380;
        });
        await page.screenshot({ path: new URL("../docs/preview.png", import.meta.url).pathname });
        await page.evaluate(() => (document.querySelector(".output-pane").scrollTop = 0));
      }
    });

    const payload = `<script>window.__xss = 1</script></textarea><img src=x onerror="window.__xss = 2"><b>bold</b> & &amp; "q"`;
    const xssRequest = {
      run_messages: [{ role: "system", content: [{ type: "text", text: payload }] }],
      injections: { [`<i>${payload}`]: [{ entry_id: `<img src=y onerror="window.__xss = 3">`, content: payload }] },
      steps: [{ raw_output: payload, observation: payload }],
      observation_template: "<u>Observation</u>: {observation}",
    };

    await t.test("markup in request data renders as text", async () => {
      assert.equal(await edit(xssRequest), "ok");
      const r = await page.evaluate(() => ({
        xss: window.__xss,
        elements: document.querySelectorAll("main img, main script, main b, main u, main i:not(.legend i)").length,
        blocks: [...document.querySelectorAll(".msg .block")].map((b) => b.textContent),
        wheres: [...document.querySelectorAll(".msg .where")].map((b) => b.textContent),
        entries: [...document.querySelectorAll(".msg .entry")].map((b) => b.textContent),
        editor: document.getElementById("request").value,
      }));
      assert.equal(r.xss, undefined, "a payload script ran");
      assert.equal(r.elements, 0, "request markup became elements");
      assert.deepEqual(r.blocks, [payload, payload, payload, `<u>Observation</u>: ${payload}`]);
      assert.equal(r.wheres[1], `#1 · injections[${JSON.stringify(`<i>${payload}`)}][0]`);
      assert.deepEqual(r.entries, [`entry <img src=y onerror="window.__xss = 3">`]);
      assert.deepEqual(JSON.parse(r.editor), xssRequest, "the editor kept the request whole");
      // The same page: the response object equals Node's.
      assert.deepEqual(await page.evaluate(() => window.preview.lastResponse), asm.assemble(xssRequest));
    });

    await t.test("a broken template shows its column, in code points", async () => {
      for (const template of ["Result: {observation!x}", "😀😀 {observation!x}", "<img src=x onerror=\"window.__xss = 4\">\n{obs}", "{observation", "line one\nline 😀 two {observation:d}"]) {
        assert.equal(await edit({ ...xssRequest, observation_template: template }), "error");
        let expected;
        try {
          asm.validateTemplate(template);
        } catch (e) {
          expected = e;
        }
        assert.ok(expected, `Node accepts ${template}`);
        const offset = Number(/\boffset (\d+)\b/.exec(expected.message)[1]);
        const shown = await page.evaluate(() => {
          const mark = document.querySelector("#error mark");
          const col = document.querySelector("#error .column");
          return {
            code: document.querySelector("#error .code").textContent,
            message: document.querySelector("#error .message").textContent,
            offset: mark && Number(mark.dataset.offset),
            marked: mark && mark.textContent,
            column: col && Number(col.dataset.column),
            line: col && Number(col.dataset.line),
            template: document.querySelector("#error .template")?.textContent,
            elements: document.querySelectorAll("#error img, #error script").length,
            xss: window.__xss,
          };
        });
        const cps = [...template];
        const before = cps.slice(0, offset);
        const lastNl = before.lastIndexOf("\n");
        assert.deepEqual(
          { code: shown.code, message: shown.message, offset: shown.offset, marked: shown.marked, line: shown.line, column: shown.column },
          {
            code: "invalid_template",
            message: expected.message,
            offset,
            marked: offset < cps.length ? (cps[offset] === "\n" ? "\u21b5\n" : cps[offset]) : "\u2038",
            line: before.filter((c) => c === "\n").length + 1,
            column: before.length - (lastNl + 1) + 1,
          },
          template,
        );
        assert.equal(shown.elements, 0);
        assert.equal(shown.xss, undefined);
      }
      // "😀😀 {observation!x}": the x is code point 16 (counted by hand), UTF-16 unit 18.
      await edit({ ...xssRequest, observation_template: "😀😀 {observation!x}" });
      assert.equal(await page.evaluate(() => document.querySelector("#error mark").dataset.offset), "16");
      await page.screenshot({ path: `${REPO}artifacts/preview-template-error.png` });
    });

    await t.test("the budget gauge turns to context overflow", async () => {
      const base = { goal_messages: [{ role: "user", content: [{ type: "text", text: "😀😀😀😀😀" }] }], observation_template: "{observation}" };
      assert.equal(await edit({ ...base, max_prompt_chars: 5 }), "ok");
      let g = await page.evaluate(() => ({ cls: document.getElementById("gauge").className, label: document.querySelector("#gauge .label").textContent }));
      assert.ok(!g.cls.includes("over"), g.cls);
      assert.equal(g.label, "5 / 5"); // 5 code points, 10 UTF-16 units
      assert.equal(await edit({ ...base, max_prompt_chars: 4 }), "ok");
      g = await page.evaluate(() => ({ cls: document.getElementById("gauge").className, label: document.querySelector("#gauge .label").textContent }));
      assert.ok(g.cls.includes("over"), g.cls);
      assert.match(g.label, /^context overflow · 5 \/ 4$/);
      assert.equal(await edit(base), "ok");
      assert.equal(await page.evaluate(() => document.querySelector("#gauge .label").textContent), "no budget");
    });

    await t.test("a JSON syntax error is shown, a lone surrogate is the core's invalid_utf8", async () => {
      assert.equal(await edit('{"observation_template": '), "json-error");
      assert.match(await page.evaluate(() => document.getElementById("json-error").textContent), /^JSON: /);
      assert.equal(await edit('{"observation_template": "{observation}", "steps": [{"raw_output": "\\ud800", "observation": ""}]}'), "error");
      assert.deepEqual(await page.evaluate(() => [window.preview.lastError.code, window.preview.lastError.path]), ["invalid_utf8", "steps[0].raw_output"]);
    });

    await t.test("the copy button copies the response as JSON", async () => {
      assert.equal(await edit(xssRequest), "ok");
      await page.click("#copy");
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      assert.deepEqual(JSON.parse(copied), asm.assemble(xssRequest));
    });

    assert.deepEqual(problems, [], "the page logged errors");
  } finally {
    await context.close();
    await server.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
