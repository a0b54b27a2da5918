// Prompt caching in the preview (issue 35, item 4), in Chromium. The oracles
// are independent of the page: the breaks planted in the run
// (test/planted-run.mjs), and the command-line tool (built here, or
// POLYLOOP_CLI): `polyloop-assemble export --provider P FILE` for the
// request bodies and their cache_control blocks, `polyloop-assemble cache`
// for each call's figures (the page reports a run in slices; the CLI in one
// call).
//
// - the planted run of 200 calls shows exactly its three breaks (call,
//   segment, cause), every call's figures equal the CLI's, and a picked
//   call's new characters are highlighted in the prompt;
// - the request body shown and copied is the CLI's stdout, byte for byte,
//   for every provider over the export vectors' requests and requests of
//   non-ASCII text, U+2028, control characters, a long history and a system
//   message after a user message (its error, with its path, as the CLI's);
// - the breakpoints drawn are the blocks the CLI's Anthropic body marks with
//   cache_control, in order, each labelled "cache breakpoint k of n";
// - the keyboard reaches the toggle and the copy button;
// - nothing stale: switching provider, file or call never shows a value of
//   the one before.

import test from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO } from "../../bindings/js/test/common.mjs";
import { PLANTED, plantedRun } from "../../bindings/js/test/planted-run.mjs";
import { ARTIFACTS, open, skip, withPreview } from "./harness.mjs";

// The providers of docs/SPEC.md §7.13, written out: the page's menu comes from the binding's PROVIDERS.
const PROVIDERS = /** @type {const} */ ([
  "anthropic",
  "openai-chat",
  "openai-responses",
  "openrouter",
  "bedrock-converse",
  "gemini",
  "gemini-cache",
]);
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "polyloop-caching-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

/** The CLI (built once per test process unless POLYLOOP_CLI names one). */
let cliPath = "";
function cli() {
  if (cliPath) return cliPath;
  cliPath = process.env.POLYLOOP_CLI || join(dir, "polyloop-assemble");
  if (!process.env.POLYLOOP_CLI)
    execFileSync("go", ["build", "-o", cliPath, "./cmd/polyloop-assemble"], { cwd: REPO, env: { ...process.env, CGO_ENABLED: "0" } });
  return cliPath;
}

/** The CLI's stdout (exit 0 or 1) for `args`. @param {string[]} args */
async function cliOut(args) {
  return run(cli(), args, { encoding: "utf8", maxBuffer: 1 << 28 }).then(
    (p) => p.stdout,
    (e) => (e.code === 1 ? e.stdout : Promise.reject(new Error(`the CLI failed (${args.join(" ")}): ${e.stderr}`))),
  );
}

const text = (role, s) => ({ role, content: [{ type: "text", text: s }] });
const history = (n) => Array.from({ length: n }, (_, s) => ({ raw_output: `Thought ${s}: ünïcode 日本`, observation: `out ${s}\u2028` }));

/** Requests of the cases the issue names, as JSON text (the editor's). */
const CUSTOM = [
  {
    name: "non-ASCII, U+2028, U+2029, control characters",
    request: {
      run_messages: [
        text(
          "system",
          'Be exact: <b>&amp;</b> </script> \u2028line\u2029para \u0001\u0008\u000b\u000c\u001f\u007f\u0080 \t\n\r "q" \\ / é 😀 \u200f\u202e',
        ),
        text("system", "Second system message"),
      ],
      injections: { memory: [{ entry_id: "m", content: "ﬁ ǅ İ ß \ud83d\udc4d" }] },
      goal_messages: [text("user", "Zürich? \u0000 NUL")],
      steps: history(3),
      observation_template: "Observation: {observation}",
    },
  },
  {
    name: "a system message after a user message",
    request: { goal_messages: [text("user", "hi"), text("system", "late")], observation_template: "{observation}" },
  },
  {
    name: "a system run message after a user one",
    request: { run_messages: [text("user", "u"), text("system", "s")], observation_template: "{observation}" },
  },
  { name: "empty slots", request: { steps: history(2), observation_template: "{observation}" } },
  {
    name: "a 300-step history",
    request: {
      run_messages: [text("system", "sys")],
      goal_messages: [text("user", "go")],
      steps: history(300),
      observation_template: "O: {observation}",
    },
  },
];

/** The distinct requests of the export vectors (msgpack maps). */
function vectorRequests() {
  const seen = new Set();
  const out = [];
  for (const f of ["export.json", "export-long.json"])
    for (const c of JSON.parse(readFileSync(join(REPO, "testdata/export-vectors", f), "utf8")).cases) {
      const b = Buffer.from(c.request, "base64");
      if (seen.has(c.request) || !((b[0] >= 0x80 && b[0] <= 0x8f) || b[0] === 0xde || b[0] === 0xdf)) continue;
      seen.add(c.request);
      out.push({ name: c.name, bytes: b, file: "request.msgpack" });
    }
  return out;
}

/**
 * Whether request k is checked for provider p: every request for Anthropic (whose breakpoints are drawn) and the
 * hand-made ones for all; a third of the vectors for the other providers, whose bodies differ from Anthropic's only in
 * the core's shapes (the vectors check every one on every host; here the page's showing and copying of them).
 */
const checked = (p, k) => p === "anthropic" || k < CUSTOM.length || k % (p === "openrouter" || p === "gemini-cache" ? 6 : 3) === 0;

/** Every request with its file and the CLI's stdout per provider it is checked for. */
async function withOracle(requests) {
  return Promise.all(
    requests.map(async (r, k) => {
      const path = join(dir, `${k}-${r.file}`);
      writeFileSync(path, r.bytes);
      const want = {};
      for (const p of PROVIDERS) if (checked(p, k)) want[p] = await cliOut(["export", "--provider", p, path]);
      return { ...r, want };
    }),
  );
}

/** Opens `bytes` as file `name` in the page; resolves once its result is on screen. */
async function openBytes(page, name, bytes) {
  await page.evaluate(
    async ([name, b64]) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      await window.preview.openFile({ name, size: bytes.length, arrayBuffer: async () => bytes.slice().buffer });
      await window.preview.view.whenRendered(window.preview.view.generation);
    },
    [name, Buffer.from(bytes).toString("base64")],
  );
}

/** The export panel once it shows the view's newest request: its text, title, error. */
const exported = (page) =>
  page
    .waitForFunction(() => window.preview.exporter.shownGen === window.preview.view.generation)
    .then(() =>
      page.evaluate(() => {
        const $ = (id) => document.getElementById(id);
        const err = $("export-error");
        return {
          shown: $("export-json").textContent,
          whole: window.preview.exporter.text,
          copyDisabled: /** @type {HTMLButtonElement} */ ($("export-copy")).disabled,
          error: err.hidden
            ? null
            : {
                code: err.querySelector(".code")?.textContent,
                path: err.querySelector(".path")?.textContent,
                message: err.querySelector(".message")?.textContent,
              },
        };
      }),
    );

/** The texts of the blocks the CLI's Anthropic body marks with cache_control, in order. */
function cacheControlTexts(body) {
  const blocks = [...(body.system ?? []), ...body.messages.flatMap((m) => m.content)];
  return blocks.filter((b) => b.cache_control).map((b) => b.text);
}

test("the planted run: exactly its three breaks, each call's figures the CLI's", { skip, timeout: 300_000 }, async () => {
  const lines = plantedRun().map((r) => JSON.stringify(r));
  const jsonl = lines.join("\n") + "\n";
  const path = join(dir, "run.jsonl");
  writeFileSync(path, jsonl);
  const want = JSON.parse(await cliOut(["cache", path])).calls;
  await withPreview(async ({ page, url, problems }) => {
    await open(page, url);
    await openBytes(page, "run.jsonl", Buffer.from(jsonl));
    await page.waitForFunction(() => window.preview.report.done);
    await page.click(".run-table summary");
    const rows = await page.$$eval("#run-table tbody tr", (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    assert.equal(rows.length, 200);
    // Rows name their line (call k is line k + 1 of this file).
    const breaks = rows.filter((r) => r[4] !== "").map((r) => [Number(r[0].replaceAll(",", "")) - 1, r[4], r[5]]);
    assert.deepEqual(breaks, PLANTED, "the table names exactly the planted breaks");
    const label = await page.getAttribute("#run-chart svg", "aria-label");
    assert.match(label, /3 breaks \(lines 51, 121, 171\)/);
    assert.equal(await page.locator("#run-chart rect.break").count(), 3);
    const num = (s) => Number(s.replaceAll(",", ""));
    for (const [k, c] of want.entries()) {
      assert.equal(num(rows[k][1]), c.prompt_chars, `call ${k}: prompt chars`);
      assert.equal(num(rows[k][2]), c.cacheable_prefix_chars, `call ${k}: cacheable`);
    }
    // A break picked: its segment, place and cause; its new characters from the break's char on.
    for (const [k, segment, cause] of PLANTED) {
      await page.evaluate((k) => window.preview.browser.pick(k), k);
      await page.waitForFunction((k) => document.getElementById("run-call").textContent.startsWith(`Line ${k + 1} (call ${k + 1} `), k);
      await page.evaluate(() => window.preview.view.whenRendered(window.preview.view.generation));
      const call = await page.evaluate(() => {
        const f = (n) => document.querySelector(`#run-call [data-field="${n}"]`)?.textContent;
        return { text: document.getElementById("run-call").textContent, segment: f("segment"), cause: f("cause") };
      });
      const b = want[k].break;
      assert.deepEqual([call.segment, call.cause], [segment, cause], `call ${k}`);
      assert.ok(call.text.includes(`message ${b.message}, char ${b.char}`), call.text);
      await page.evaluate((m) => window.preview.view.scrollToMessage(m), b.message);
      await page.waitForFunction((m) => window.preview.view.shadowRoot.querySelector(`.row[data-message="${m}"] .badge.since`), b.message);
      const since = await page.evaluate((m) => {
        const row = window.preview.view.shadowRoot.querySelector(`.row[data-message="${m}"]`);
        return {
          at: row.querySelector(".badge.since").dataset.since,
          marked: [...row.querySelectorAll("mark.since")].map((e) => e.textContent).join(""),
        };
      }, b.message);
      assert.equal(Number(since.at), b.char, `call ${k}: new from the break's char`);
      const msg = await page.evaluate((m) => window.preview.view.messageTexts(m).join(""), b.message);
      if (b.char > 0) assert.equal(since.marked, [...msg].slice(b.char).join(""), `call ${k}: the characters past the break marked`);
    }
    // A call that extends the one before: only its last step's two messages are new.
    await page.evaluate(() => window.preview.browser.pick(60));
    await page.waitForFunction(() => document.getElementById("run-call").textContent.startsWith("Line 61 (call 61 "));
    await page.evaluate(() => window.preview.view.whenRendered(window.preview.view.generation));
    const count = await page.evaluate(() => window.preview.view.summary.messages);
    await page.evaluate((n) => window.preview.view.scrollToMessage(n - 1), count);
    await page.waitForFunction(() => window.preview.view.shadowRoot.querySelector(".msg.is-since"));
    const fresh = await page.evaluate(() =>
      [...window.preview.view.shadowRoot.querySelectorAll(".row[data-message]")]
        .filter((r) => r.querySelector(".badge.since"))
        .map((r) => Number(r.dataset.message)),
    );
    assert.deepEqual(fresh, [count - 2, count - 1]);
    assert.ok((await page.textContent("#run-call")).includes("extends line 60"));
    await page.screenshot({ path: `${ARTIFACTS}preview-cache-run.png` });
    assert.deepEqual(problems, []);
  });
});

test(
  "the request body shown and copied is the CLI's, byte for byte; breakpoints are its cache_control blocks",
  { skip, timeout: 600_000 },
  async () => {
    const requests = await withOracle([
      ...CUSTOM.map((c) => ({ name: c.name, bytes: Buffer.from(JSON.stringify(c.request, null, 1)), file: "request.json" })),
      ...vectorRequests(),
    ]);
    assert.ok(requests.length >= 60, `${requests.length} requests`);
    let errors = 0;
    let marks = 0;
    await withPreview(async ({ page, url, problems }) => {
      await open(page, url);
      const menu = await page.$$eval('input[name="provider"]', (rs) => rs.map((r) => /** @type {HTMLInputElement} */ (r).value));
      assert.deepEqual(menu, ["prompt", ...PROVIDERS], "the provider menu: every provider the export writes");
      for (const p of PROVIDERS) {
        await page.check(`input[name="provider"][value="${p}"]`);
        for (const [k, r] of requests.entries()) {
          if (!checked(p, k)) continue;
          await openBytes(page, r.file, r.bytes);
          const got = await exported(page);
          const want = r.want[p];
          if (want.startsWith('{"error"')) {
            errors++;
            const e = JSON.parse(want).error;
            assert.deepEqual(got.error, { code: e.code, path: e.path, message: e.message }, `${r.name}, ${p}`);
            assert.equal(got.shown, "");
            assert.ok(got.copyDisabled);
            continue;
          }
          assert.equal(got.error, null, `${r.name}, ${p}`);
          assert.equal(got.whole + "\n", want, `${r.name}, ${p}: the text`);
          if (got.whole.length <= 1_000_000) assert.equal(got.shown, got.whole);
          if (r === requests[0]) {
            // Its bidi controls and invisible characters are marked, never reordering the JSON around them.
            const marked = await page.$$eval("#export-json .cp", (els) => els.map((e) => e.dataset.cp));
            for (const cp of ["U+202E", "U+200F", "U+2028", "U+0080"]) assert.ok(marked.includes(cp), `${cp} marked in ${marked}`);
          }
          if (r === requests[0] || r.name === "a 300-step history") {
            await page.click("#export-copy");
            assert.equal(await page.evaluate(() => navigator.clipboard.readText()), want, `${r.name}, ${p}: copied`);
          }
          if (p !== "anthropic") continue;
          // The breakpoints drawn: the blocks the CLI's body marks, in order.
          await page.waitForFunction(() => window.preview.view.breakpoints !== null);
          const drawn = await page.evaluate(() => {
            const v = window.preview.view;
            const list = v.breakpoints.list;
            return list && list.map(([i, b]) => v.messageTexts(i)[b]);
          });
          assert.deepEqual(drawn, cacheControlTexts(JSON.parse(want)), `${r.name}: breakpoints`);
          marks += drawn.length;
        }
      }
      // Drawn on the rows: "cache breakpoint k of n" right after the block.
      await page.check('input[name="provider"][value="prompt"]');
      await openBytes(page, "request.json", requests[0].bytes);
      await page.waitForFunction(() => window.preview.view.breakpoints?.list);
      const list = await page.evaluate(() => window.preview.view.breakpoints.list);
      assert.ok(list.length >= 3);
      for (const [k, [i, b]] of list.entries()) {
        await page.evaluate((i) => window.preview.view.scrollToMessage(i), i);
        await page.waitForFunction((i) => window.preview.view.shadowRoot.querySelector(`.row[data-message="${i}"] .bp`), i);
        const at = await page.evaluate(
          ([i, k]) => {
            const bp = window.preview.view.shadowRoot.querySelector(`.row[data-message="${i}"] .bp[data-breakpoint="${k + 1}"]`);
            if (!bp) return null;
            const blocks = [...bp.parentElement.querySelectorAll(":scope > .block")];
            return { label: bp.textContent, block: blocks.indexOf(/** @type {any} */ (bp.previousElementSibling)) };
          },
          [i, k],
        );
        assert.deepEqual(at, { label: `cache breakpoint ${k + 1} of ${list.length}`, block: b });
      }
      await page.evaluate(() => window.preview.view.scrollToMessage(0));
      await page.screenshot({ path: `${ARTIFACTS}preview-cache-breakpoints.png` });
      // Step by step: the breakpoints are the whole request's, so none is drawn on a step's prompt.
      await page.check("#by-step");
      await page.waitForFunction(() => window.preview.view.shadowRoot.querySelector(".bps").textContent.includes("not step by step"));
      assert.equal(await page.evaluate(() => window.preview.view.shadowRoot.querySelectorAll(".bp").length), 0);
      await page.uncheck("#by-step");
      await page.waitForFunction(() => window.preview.view.shadowRoot.querySelector(".bp"));
      await page.check('input[name="provider"][value="anthropic"]');
      await exported(page);
      await page.screenshot({ path: `${ARTIFACTS}preview-cache-export.png` });
      assert.deepEqual(problems, []);
    });
    assert.ok(errors >= 6, `${errors} refused exports`);
    assert.ok(marks > 100, `${marks} breakpoints`);
  },
);

test("the keyboard reaches the provider toggle and the copy button", { skip, timeout: 120_000 }, async () => {
  const want = await cliOut(["export", "--provider", "anthropic", join(REPO, "preview/react.json")]);
  await withPreview(async ({ page, url }) => {
    await open(page, url);
    const tabTo = async (selector) => {
      for (let i = 0; i < 80; i++) {
        await page.keyboard.press("Tab");
        if (await page.evaluate((s) => document.activeElement?.matches(s), selector)) return i + 1;
      }
      assert.fail(`Tab never reached ${selector}`);
    };
    await tabTo('input[name="provider"]');
    await page.keyboard.press("ArrowRight");
    assert.ok(await page.isChecked('input[value="anthropic"]'));
    await exported(page);
    await tabTo("#export-copy");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.getElementById("notice").textContent.startsWith("Copied"));
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), want);
  });
});

test("nothing stale: provider, file and call switched", { skip, timeout: 300_000 }, async () => {
  const reqs = ["A", "B"].map((tag) => ({
    run_messages: [text("system", `system ${tag}`)],
    goal_messages: [text("user", `goal ${tag}`)],
    steps: history(tag === "A" ? 4 : 9),
    observation_template: `${tag}: {observation}`,
  }));
  const files = reqs.map((r, k) => ({ name: `${k}`, bytes: Buffer.from(JSON.stringify(r)), file: "request.json" }));
  const [a, b] = await withOracle(files);
  await withPreview(async ({ page, url, problems }) => {
    await open(page, url);
    /** Runs `action` in the page, then samples what the export panel shows
     * each frame until it shows the newest request's body: every value seen. */
    const samples = (action, arg) =>
      page.evaluate(
        async ([action, arg]) => {
          const seen = new Set();
          const x = window.preview.exporter;
          const act = /** @type {any} */ ({
            provider: (v) => document.querySelector(`input[value="${v}"]`).click(),
            file: ([name, b64]) => {
              const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
              window.preview.openFile({ name, size: bytes.length, arrayBuffer: async () => bytes.slice().buffer });
            },
          })[action];
          // A file is read first: until the view is sent it, the editor (and the panel) still hold the request before.
          const g0 = window.preview.view.generation;
          act(arg);
          for (let i = 0; i < 600; i++) {
            if (action === "provider" || window.preview.view.generation !== g0)
              seen.add(document.getElementById("export-json").textContent);
            if (x.shownGen === window.preview.view.generation && x.shownGen >= 0 && (action === "provider" || x.shownGen !== g0)) break;
            await new Promise((r) => requestAnimationFrame(r));
          }
          seen.add(document.getElementById("export-json").textContent);
          return [...seen];
        },
        [action, arg],
      );
    await openBytes(page, "a.json", a.bytes);
    await page.check('input[value="anthropic"]');
    assert.equal((await exported(page)).whole + "\n", a.want.anthropic);
    // Provider: the old body is gone at once, then the new one's.
    assert.deepEqual(await samples("provider", "openai-chat"), ["", a.want["openai-chat"].slice(0, -1)]);
    // File: never A's body over B (cleared, maybe too briefly for a frame to see it, then B's).
    const seen = await samples("file", ["b.json", b.bytes.toString("base64")]);
    assert.deepEqual(
      seen.filter((v) => v !== ""),
      [b.want["openai-chat"].slice(0, -1)],
    );
    // An edit: the body is cleared at once, then the edited request's.
    const cleared = await page.evaluate(() => {
      window.preview.editor.dispatch({ changes: { from: 1, to: 1, insert: " " } });
      return document.getElementById("export-json").textContent;
    });
    assert.equal(cleared, "");
    // Breakpoints of the file shown only: B's, never A's.
    await page.check('input[value="prompt"]');
    await openBytes(page, "a.json", a.bytes);
    await page.waitForFunction(() => window.preview.view.breakpoints?.list);
    const listA = await page.evaluate(() => window.preview.view.breakpoints.list);
    const seenMarks = await page.evaluate(
      async ([name, b64]) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const out = [];
        const v = window.preview.view;
        const g0 = v.generation;
        const p = window.preview.openFile({ name, size: bytes.length, arrayBuffer: async () => bytes.slice().buffer });
        for (let i = 0; i < 30; i++) {
          // once the view is sent B (before, the editor holds A, and A's breakpoints are right)
          if (v.generation !== g0) out.push(JSON.stringify(v.breakpoints?.list ?? null));
          await new Promise((r) => requestAnimationFrame(r));
        }
        await p;
        return out;
      },
      ["b.json", b.bytes.toString("base64")],
    );
    await page.waitForFunction(() => window.preview.view.breakpoints?.list);
    const listB = await page.evaluate(() => window.preview.view.breakpoints.list);
    assert.notDeepEqual(listA, listB);
    assert.ok(seenMarks.length > 0);
    for (const s of seenMarks) assert.ok(s === "null" || s === JSON.stringify(listB), `stale breakpoints ${s}`);
    // An edit inside a text (the same messages and blocks): B's breakpoints stay on screen with its
    // result (the export places them by the layout alone), then the export confirms them.
    const edit = (what, insert) =>
      page.evaluate(
        async ([what, insert]) => {
          const at = window.preview.editor.state.doc.toString().indexOf(what) + what.length;
          await window.preview.edit(at, at, insert);
          return JSON.stringify(window.preview.view.breakpoints?.list ?? null);
        },
        [what, insert],
      );
    assert.equal(await edit("goal B", " and more"), JSON.stringify(listB));
    await page.waitForFunction(() => window.preview.view.breakpoints?.list);
    assert.deepEqual(await page.evaluate(() => window.preview.view.breakpoints.list), listB);
    // A step added (another layout): none until the export answers.
    assert.equal(await edit('"steps":[', '{"raw_output":"r","observation":"o"},'), "null");
    await page.waitForFunction(() => window.preview.view.breakpoints?.list);
    assert.notDeepEqual(await page.evaluate(() => window.preview.view.breakpoints.list), listB);
    // Calls: the report of the picked call and its highlight, never the one before's.
    const jsonl = plantedRun()
      .slice(0, 60)
      .map((r) => JSON.stringify(r))
      .join("\n");
    await openBytes(page, "run.jsonl", Buffer.from(jsonl));
    await page.waitForFunction(() => window.preview.report.done);
    for (const k of [50, 51, 10, 50]) {
      const shown = await page.evaluate(async (k) => {
        window.preview.browser.pick(k);
        const out = [];
        for (let i = 0; i < 20; i++) {
          out.push(document.getElementById("run-call").textContent);
          await new Promise((r) => requestAnimationFrame(r));
        }
        return out;
      }, k);
      for (const s of shown) assert.ok(s === "" || s.startsWith(`Line ${k + 1} (call ${k + 1} `), `call ${k} shows "${s}"`);
    }
    // An edit of the picked call: its highlight ends (the prompt is no longer the call's).
    await page.waitForFunction(() => window.preview.view.shadowRoot.querySelector(".badge.since"));
    await page.evaluate(() => window.preview.edit(0, 0, " "));
    assert.equal(await page.evaluate(() => window.preview.view.shadowRoot.querySelectorAll(".badge.since").length), 0);
    // Another file: no report of the run left.
    await openBytes(page, "b.json", b.bytes);
    assert.ok(await page.evaluate(() => document.getElementById("run").hidden));
    assert.deepEqual(problems, []);
  });
});
