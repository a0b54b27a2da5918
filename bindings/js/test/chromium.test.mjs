// The binding in Chromium (its browser entry, src/browser.js, through an
// import map, as a page without a bundler loads it): every shared vector and
// every JSON-text vector gives the bytes Node gives (and the vectors'), and
// texts keep a leading U+FEFF on every decoding path of the browser (where
// TextDecoder does the long strings). POLYLOOP_SKIP_BROWSER=1 skips it.

import test from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { assembler, decode } from "./common.mjs";
import { loadCases } from "./vectorsets.mjs";
import { serve, withPage } from "./chromium.mjs";
import { CALL_ASSEMBLE_JSON } from "../src/consts.js";
import { DEEP_CASES, DEEP_SOURCE, deepCase } from "./deepjson.mjs";

const skip = process.env.POLYLOOP_SKIP_BROWSER ? "POLYLOOP_SKIP_BROWSER is set" : false;
const b64 = (u8) => Buffer.from(u8).toString("base64");

const PAGE = `<!doctype html><meta charset="utf-8"><title>binding</title><link rel="icon" href="data:,">
<script type="importmap">
{"imports": {
  "@polyloop/assembly": "/src/browser.js",
  "@bjorn3/browser_wasi_shim": "/node_modules/@bjorn3/browser_wasi_shim/dist/index.js",
  "@msgpack/msgpack": "/node_modules/@msgpack/msgpack/dist.esm/index.mjs"
}}
</script>
<script type="module">
  import * as pkg from "@polyloop/assembly";
  import { CALL_ASSEMBLE_JSON } from "/src/consts.js";
  window.pkg = pkg;
  window.asm = await pkg.loadAssembler();
  const fromB64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  const toB64 = (u8) => {
    let s = "";
    for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000));
    return btoa(s);
  };
  window.wire = (reqs) => reqs.map((r) => toB64(window.asm.assembleBytes(fromB64(r))));
  window.json = (reqs) => reqs.map((r) => {
    const bytes = toB64(window.asm.crossing.run({ request: fromB64(r), op: CALL_ASSEMBLE_JSON, read: (x) => x.slice() }));
    try {
      return { bytes, value: window.asm.assembleJSON(fromB64(r)) };
    } catch (e) {
      return { bytes, error: [e.code, e.path, e.message] };
    }
  });
  document.body.dataset.ready = "1";
</script>`;

test("the binding in Chromium", { skip, timeout: 300_000 }, async (t) => {
  const asm = await assembler();
  const server = await serve(fileURLToPath(new URL("..", import.meta.url)), { "/binding-test.html": PAGE });
  try {
    await withPage(`${server.url}binding-test.html`, async (page) => {
      await page.waitForFunction(() => document.body?.dataset.ready === "1");

      await t.test("every shared vector: the page's assembleBytes equals Node's and the vector's", async () => {
        const vectors = loadCases("vectors");
        assert.ok(vectors.length > 100);
        const got = await page.evaluate(
          (reqs) => window.wire(reqs),
          vectors.map((v) => b64(v.request)),
        );
        for (const [i, v] of vectors.entries()) {
          assert.equal(got[i], b64(asm.assembleBytes(v.request)), `${v.file}/${v.name}: Chromium and Node differ`);
          if (v.response) assert.equal(got[i], b64(v.response), `${v.file}/${v.name}`);
        }
      });

      await t.test("every JSON-text vector: assembleJSON in the page gives Node's bytes, value and error", async () => {
        const vectors = loadCases("json-vectors");
        assert.ok(vectors.length >= 100, `only ${vectors.length} JSON vectors`);
        const got = await page.evaluate(
          (reqs) => window.json(reqs),
          vectors.map((v) => b64(v.request)),
        );
        for (const [i, v] of vectors.entries()) {
          const where = `${v.file}/${v.name}`;
          assert.equal(
            got[i].bytes,
            b64(asm.crossing.run({ request: v.request, op: CALL_ASSEMBLE_JSON, read: (r) => r.slice() })),
            `${where}: bytes`,
          );
          if (v.response) {
            assert.equal(got[i].bytes, b64(v.response), where);
            assert.deepEqual(got[i].value, asm.assembleJSON(v.request), where);
          } else {
            assert.deepEqual(got[i].error.slice(0, 2), [v.error.code, v.error.path], where);
          }
        }
      });

      await t.test("memoryLimitBytes in the browser: the module compiled with that cap runs out of memory as in Node", async () => {
        const out = await page.evaluate(async () => {
          const capped = await window.pkg.loadAssembler({ memoryLimitBytes: 16 * 1024 * 1024, maxInstances: 1 });
          const ok = capped.assemble({ observation_template: "{observation}" }).ok;
          let e;
          try {
            capped.assemble({ observation_template: "{observation}", steps: [{ raw_output: "x".repeat(20e6), observation: "" }] });
          } catch (err) {
            e = [err.code, err.path, err.message, typeof err.detail];
          }
          const after = capped.assemble({ observation_template: "{observation}" }).ok;
          return {
            ok,
            e,
            after,
            big: window.asm.assemble({ observation_template: "{observation}", steps: [{ raw_output: "x".repeat(20e6), observation: "" }] })
              .ok,
          };
        });
        assert.deepEqual(out, {
          ok: true,
          e: [
            "internal",
            "",
            "the assembly module ran out of memory; the instance was discarded and the next call gets a fresh one",
            "string",
          ],
          after: true,
          big: true,
        });
      });

      await t.test("deep JSON (docs/SPEC.md §2.3): a module capped at 1.5 times the text and 64 MiB answers as Node does", async (st) => {
        for (const [name, n] of DEEP_CASES) {
          const cap = Math.ceil((1.5 * n + (64 << 20)) / 65536) * 65536;
          const got = await page.evaluate(
            async ([src, name, n, op, cap]) => {
              const { text } = new Function(`${src}\nreturn deepCase;`)()(name, n);
              const capped = await window.pkg.loadAssembler({ memoryLimitBytes: cap, maxInstances: 1 });
              const a = capped.crossing.run({ request: text, op, read: (r) => r.slice() });
              let s = "";
              for (let i = 0; i < a.length; i += 0x8000) s += String.fromCharCode(...a.subarray(i, i + 0x8000));
              return btoa(s);
            },
            [DEEP_SOURCE, name, n, CALL_ASSEMBLE_JSON, cap],
          );
          const node = asm.crossing.run({ request: deepCase(name, n).text, op: CALL_ASSEMBLE_JSON, read: (r) => r.slice() });
          assert.equal(
            got,
            b64(node),
            `${name}, ${n} bytes, module capped at ${Math.floor(cap / 2 ** 20)} MiB: Chromium answers ${JSON.stringify(decode(Buffer.from(got, "base64")).error)}`,
          );
          st.diagnostic(`${name}, ${n} bytes, capped at ${Math.floor(cap / 2 ** 20)} MiB: ${JSON.stringify(decode(node).error)}`);
        }
      });

      await t.test("a leading U+FEFF survives assemble(), assembleJSON() and addStep() in the browser", async () => {
        const out = await page.evaluate(() => {
          const lens = [];
          for (const n of [0, 10, 40, 199, 200, 300, 70000]) {
            const s = "\uFEFF" + "x".repeat(n);
            const req = { observation_template: "{observation}", run_messages: [{ role: "user", content: [{ type: "text", text: s }] }] };
            const a = window.asm.assemble(req).messages[0].content[0].text;
            const j = window.asm.assembleJSON(JSON.stringify(req)).messages[0].content[0].text;
            const p = window.asm
              .prompt({ observation_template: "{observation}" })
              .addStep(s, s)
              .messages.map((m) => m.content[0].text);
            lens.push([a === s, j === s, p[0] === s && p[1] === s]);
          }
          return lens;
        });
        for (const row of out) assert.deepEqual(row, [true, true, true]);
      });
    });
  } finally {
    server.close();
  }
});
