// The real-browser test: Debian's Chromium driven by
// playwright-core loads the preview from `preview/serve.mjs`, and the page's
// assembleBytes gives, for every shared vector, the same bytes as Node's (and
// the vector's response for ok cases). The preview itself is tested by
// preview/test/*.test.mjs. POLYLOOP_SKIP_BROWSER=1 skips it.

import test from "node:test";
import assert from "node:assert/strict";
import { assembler } from "../../bindings/js/test/common.mjs";
import { loadCases } from "../../bindings/js/test/vectorsets.mjs";
import { requestToJs } from "../../bindings/js/test/jsvalue.mjs";
import { open, skip, withPreview } from "./harness.mjs";

const b64 = (u8) => Buffer.from(u8).toString("base64");

test("the preview in Chromium", { skip, timeout: 180_000 }, async (t) => {
  const asm = await assembler();
  await withPreview(async ({ page, url, problems }) => {
    await open(page, url);

    await t.test("every vector: the page's assembleBytes equals Node's, byte for byte", async () => {
      const vectors = loadCases("vectors");
      assert.ok(vectors.length > 100, `only ${vectors.length} vectors`);
      const got = await page.evaluate(
        (reqs) => {
          const fromB64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
          const toB64 = (u8) => {
            let s = "";
            for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000));
            return btoa(s);
          };
          return reqs.map((r) => toB64(window.preview.asm.assembleBytes(fromB64(r))));
        },
        vectors.map((v) => b64(v.request)),
      );
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
      const cases = loadCases("prompt-vectors");
      const answers = await page.evaluate(
        (src) => {
          return JSON.parse(src).map((c) => {
            const p = window.preview.asm.prompt(c.request);
            const first = p.response();
            const steps = c.steps.map((s) => {
              try {
                p.addStep(s.raw_output, s.observation);
                return { response: p.response() };
              } catch (e) {
                return { error: { code: e.code, path: e.path }, response: p.response() };
              }
            });
            return { first, steps };
          });
        },
        JSON.stringify(
          cases.map((c) => ({ request: c.request, steps: c.steps.map((s) => ({ raw_output: s.raw_output, observation: s.observation })) })),
        ),
      );
      for (const [i, c] of cases.entries()) {
        let want = requestToJs(c.response);
        assert.deepEqual(answers[i].first, want, `prompt vector ${c.name}: the first response`);
        for (const [k, s] of c.steps.entries()) {
          if (s.response) want = requestToJs(s.response);
          assert.deepEqual(answers[i].steps[k].error, s.error, `prompt vector ${c.name}: step ${k}`);
          assert.deepEqual(answers[i].steps[k].response, want, `prompt vector ${c.name}: after step ${k}`);
        }
      }
      t.diagnostic(`${cases.length} prompt vectors answered alike in Chromium`);
    });

    assert.deepEqual(problems, [], "the page logged errors");
  });
});
