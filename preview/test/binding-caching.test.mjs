// Prompt caching made visible in Chromium: the page's assembler (the browser
// build, window.preview.asm) answers the planted run's cache report and the
// export of every vector exactly as Node's does (docs/SPEC.md §7.12, §7.13).
// POLYLOOP_SKIP_BROWSER=1 skips it.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decode as unpack } from "@msgpack/msgpack";
import { REPO, assembler } from "../../bindings/js/test/common.mjs";
import { plantedRun } from "../../bindings/js/test/planted-run.mjs";
import { open, skip, withPreview } from "./harness.mjs";

test("cache report and export in Chromium equal Node's", { skip, timeout: 180_000 }, async () => {
  const asm = await assembler();
  const run = plantedRun();
  const cases = ["export.json", "export-long.json"].flatMap(
    (f) => JSON.parse(readFileSync(join(REPO, "testdata/export-vectors", f), "utf8")).cases,
  );
  const ok = cases.filter((c) => !c.error);
  await withPreview(async ({ page, url }) => {
    await open(page, url);
    const [report, bodies] = await page.evaluate(
      ([run, vectors]) => {
        const asm = window.preview.asm;
        const fromB64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
        return [
          JSON.stringify(asm.cacheReport(run)),
          vectors.map((v) => JSON.stringify(asm.export(fromB64(v.request), v.provider, v.options))),
        ];
      },
      [run, ok.map((c) => ({ request: c.request, provider: c.provider, options: unpack(Buffer.from(c.options, "base64")) }))],
    );
    assert.equal(report, JSON.stringify(asm.cacheReport(run)));
    const breaks = JSON.parse(report).calls.flatMap((c, i) => (c.break ? [i] : []));
    assert.deepEqual(breaks, [50, 120, 170]);
    for (const [i, c] of ok.entries()) assert.equal(bodies[i], c.answer, c.name);
  });
});
