// One state per view (issue 33, item 1), in Chromium: everything the page
// shows about a result (totals, budget gauge, step label, prefix digests,
// "copy response") is the answer for the request now in the editor; after an
// error each of them is cleared (a new document: a file or an entry) or
// visibly marked as the last valid request's (an edit), never silently kept.
// The expected values come from Node's assemble() of the same request (an
// oracle independent of the page), every transition walked: ok → error → ok,
// file → file, entry → entry, and in step mode.

import test from "node:test";
import assert from "node:assert/strict";
import { assembler } from "../../bindings/js/test/common.mjs";
import { open, setText, skip, withPreview } from "./harness.mjs";

const fmt = new Intl.NumberFormat("en-US");

/** Everything about a result the page shows, read from the DOM. */
const looks = (page) =>
  page.evaluate(() => {
    const v = window.preview.view;
    const r = v.shadowRoot;
    const q = (s) => r.querySelector(s);
    return {
      state: v.state,
      totals: q(".totals").textContent,
      gauge: q(".gauge .label").textContent,
      gaugeStale: q(".gauge").classList.contains("stale"),
      digests: Object.fromEntries([...r.querySelectorAll("[data-digest]")].map((d) => [d.dataset.digest, d.textContent])),
      digestsTitle: q(".digests summary").textContent,
      step: document.getElementById("step-label").textContent,
      stepDisabled: /** @type {HTMLInputElement} */ (document.getElementById("step")).disabled,
      copyDisabled: /** @type {HTMLButtonElement} */ (document.getElementById("copy")).disabled,
      rows: r.querySelectorAll(".row[data-message]").length,
    };
  });

/** Opens `bytes` as a file through the page's file input; resolves once shown. */
async function openFile(page, name, bytes) {
  const before = await page.evaluate(() => window.preview.view.generation);
  await page.setInputFiles("#file", { name, mimeType: "application/octet-stream", buffer: Buffer.from(bytes) });
  await page.waitForFunction((b) => window.preview.view.generation > b, before);
  await page.evaluate(() => window.preview.view.whenRendered(window.preview.view.generation));
}

/** A request with a budget and three steps (its own numbers, so no value of
 * one request can pass for another's). */
const request = (tag, budget) => ({
  run_messages: [{ role: "system", content: [{ type: "text", text: `run ${tag}` }] }],
  injections: { memory: [{ entry_id: `m-${tag}`, content: `memory ${tag}` }] },
  goal_messages: [{ role: "user", content: [{ type: "text", text: `goal ${tag}` }] }],
  steps: [1, 2, 3].map((k) => ({ raw_output: `out ${tag} ${k}`.repeat(k), observation: `obs ${tag} ${k}` })),
  observation_template: "Observation: {observation}",
  max_prompt_chars: budget,
});

test("one state per view: nothing of another request is shown unmarked", { skip, timeout: 180_000 }, async (t) => {
  const asm = await assembler();
  /** What the page must show for request `req` as a valid result. */
  const expected = (req) => {
    const r = asm.assemble(req);
    return { gauge: `${fmt.format(r.prompt_chars)} / ${fmt.format(req.max_prompt_chars)}`, digests: r.prefix_digests };
  };
  /** Asserts the page shows `req`'s result, unmarked. */
  const showsValid = (s, req, what) => {
    const e = expected(req);
    assert.equal(s.state, "ok", what);
    assert.equal(s.gauge, e.gauge, `${what}: the gauge`);
    assert.equal(s.gaugeStale, false, `${what}: the gauge is not marked`);
    assert.deepEqual(s.digests, e.digests, `${what}: the digests`);
    assert.doesNotMatch(s.digestsTitle, /stale/, `${what}: the digests are not marked`);
    assert.doesNotMatch(s.totals, /last valid/, `${what}: the totals are not marked`);
    assert.equal(s.copyDisabled, false, `${what}: copy enabled`);
  };
  /** Asserts nothing of a result is shown (a rejected new document). */
  const showsNothing = (s, what) => {
    assert.equal(s.state, "error", what);
    assert.equal(s.rows, 0, `${what}: no message`);
    assert.equal(s.totals, "", `${what}: no totals`);
    assert.doesNotMatch(s.gauge, /\d/, `${what}: no number in the gauge (${s.gauge})`);
    assert.deepEqual(s.digests, {}, `${what}: no digest`);
    assert.equal(s.step, "", `${what}: no step`);
    assert.equal(s.stepDisabled, true, `${what}: the step slider is off`);
    assert.equal(s.copyDisabled, true, `${what}: nothing to copy`);
  };
  /** Asserts everything shown is marked as the last valid request's, `req`. */
  const showsStale = (s, req, what) => {
    const e = expected(req);
    assert.equal(s.state, "stale", what);
    assert.equal(s.gauge, `last valid · ${e.gauge}`, `${what}: the gauge says whose it is`);
    assert.equal(s.gaugeStale, true, `${what}: the gauge is marked`);
    assert.deepEqual(s.digests, e.digests, `${what}: the digests kept`);
    assert.match(s.digestsTitle, /stale: of the last request that assembled/, `${what}: the digests are marked`);
    assert.match(s.totals, /^last valid · /, `${what}: the totals are marked`);
    assert.equal(s.copyDisabled, true, `${what}: nothing to copy`);
  };

  await withPreview(async ({ page, url, problems }) => {
    const fetched = [];
    page.context().on("request", (r) => r.url().endsWith("/assembly.wasm") && fetched.push(r.url()));
    await open(page, url);
    await page.waitForFunction(() => window.preview.asm !== null);

    await t.test("the page and its worker share one compiled module", async () => {
      assert.equal(fetched.length, 1, `assembly.wasm fetched ${fetched.length} times`);
      assert.equal(
        await page.evaluate(() => window.preview.asm.assembleJSON('{"observation_template": "{observation}", "steps": []}').prompt_chars),
        0,
      );
    });

    const A = request("a", 5000);
    const B = request("b", 700);

    await t.test("ok → error → ok (edits)", async () => {
      assert.equal(await setText(page, A), "ok");
      showsValid(await looks(page), A, "A");
      assert.equal(await setText(page, JSON.stringify(A, null, 2).slice(0, -3)), "stale");
      showsStale(await looks(page), A, "A cut short");
      assert.equal(await setText(page, { ...B, max_prompt_chars: -1 }), "stale");
      showsStale(await looks(page), A, "B with a negative budget");
      assert.equal(await setText(page, B), "ok");
      showsValid(await looks(page), B, "B");
    });

    await t.test("step mode: the step label follows the state", async () => {
      await page.check("#by-step");
      await page.waitForFunction(() => document.getElementById("step-label").textContent === "3 / 3");
      await page.evaluate(() => {
        const s = /** @type {HTMLInputElement} */ (document.getElementById("step"));
        s.value = "1";
        s.dispatchEvent(new Event("input"));
      });
      assert.equal((await looks(page)).step, "1 / 3");
      assert.equal(await setText(page, "{"), "stale");
      const s = await looks(page);
      assert.equal(s.step, "1 / 3 · last valid request");
      assert.equal(s.stepDisabled, true, "the slider does not move a stale prompt");
      assert.equal(await setText(page, { ...A, steps: A.steps.slice(0, 2) }), "ok");
      const back = await looks(page);
      assert.match(back.step, /^1 \/ 2$/);
      assert.equal(back.stepDisabled, false);
      await page.uncheck("#by-step");
      assert.equal((await looks(page)).step, "");
    });

    await t.test("file → file: a rejected file shows nothing of the one before", async () => {
      await page.check("#by-step");
      await page.uncheck("#by-step");
      await openFile(page, "a.json", Buffer.from(JSON.stringify(A)));
      showsValid(await looks(page), A, "file a.json");
      await page.check("#by-step");
      await page.waitForFunction(() => document.getElementById("step-label").textContent === "3 / 3");
      await openFile(page, "bom.json", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(B))]));
      showsNothing(await looks(page), "file bom.json after a.json");
      await openFile(page, "b.json", Buffer.from(JSON.stringify(B)));
      showsValid(await looks(page), B, "file b.json after bom.json");
      await page.uncheck("#by-step");
    });

    await t.test("entry → entry: a rejected entry shows nothing of the one before", async () => {
      const lines = [JSON.stringify(A), JSON.stringify({ ...B, max_prompt_chars: "x" }), JSON.stringify(B)].join("\n");
      await openFile(page, "three.jsonl", Buffer.from(lines));
      showsValid(await looks(page), A, "entry 1");
      for (const [k, req] of [
        [1, null],
        [2, B],
        [1, null],
        [0, A],
      ]) {
        const before = await page.evaluate(() => window.preview.view.generation);
        await page.locator(`#browser-rows [data-entry="${k}"]`).click();
        await page.waitForFunction((b) => window.preview.view.generation > b, before);
        await page.evaluate(() => window.preview.view.whenRendered(window.preview.view.generation));
        if (req) showsValid(await looks(page), req, `entry ${k + 1}`);
        else showsNothing(await looks(page), `entry ${k + 1}`);
      }
    });

    await t.test("Reset example: the title and list of the file before go", async () => {
      // The JSON-lines file of the test before is open, entry 1 picked.
      assert.equal(await page.textContent("#editor-title"), "Request · line 1");
      await page.evaluate(() => window.preview.edit(0, 0, " "));
      await page.click("#reset");
      await page.click('#confirm-reset button[value="discard"]');
      await page.waitForFunction(() => document.getElementById("editor-title").textContent === "Request");
      assert.equal(await page.isVisible("#browser"), false, "no list of another file");
    });

    await t.test("a budget past 2^63 is shown as written", async () => {
      const text =
        '{"observation_template": "{observation}", "steps": [{"raw_output": "abc", "observation": "d"}], "max_prompt_chars": 18446744073709551615}';
      assert.equal(await setText(page, text), "ok");
      assert.equal((await looks(page)).gauge, "4 / 18,446,744,073,709,551,615");
    });

    assert.deepEqual(problems, []);
  });
});
