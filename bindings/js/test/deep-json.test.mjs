// Deep JSON through assembleJSON (docs/SPEC.md §2.3, the depth bound): texts
// of about 1 and 10 MB, and 100 MB of "[" (1,000 MB of each with
// POLYLOOP_LIMITS=full, make test.limits), each built in a child process
// whose memory is measured: "[" only and {"a": only (no value ever ends:
// the syntax error at the end, its message spelled out here), arrays opened
// and closed in steps[0], and objects under an unknown key (answered as
// assembleBytes answers the msgpack the text says, built here deep: the core
// reads deep msgpack at any depth). The call may add at most 1.5 times the
// text to the memory the child held before it (the module's copy of the
// text and the reader's stack of at most half a byte per byte), plus a
// constant. The page's answers are chromium.test.mjs's.

import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { DEEP_CASES, DEEP_SOURCE } from "./deepjson.mjs";

const MEM_PER_BYTE = 1.5;
const MEM_CONST = 64 << 20;
const mb = (n) => Math.floor(n / 2 ** 20); // (>> 20 wraps past 2 GiB)

const CHILD = `${DEEP_SOURCE}
const { loadAssembler } = await import(process.argv[1]);
const { CALL_ASSEMBLE_JSON } = await import(process.argv[2]);
const [name, n] = [process.argv[3], Number(process.argv[4])];
const asm = await loadAssembler({ maxInstances: 1 });
let { text, mp } = deepCase(name, n);
asm.crossing.run({ request: new Uint8Array([0x7b, 0x7d]), op: CALL_ASSEMBLE_JSON, read: (r) => r.slice() }); // the instance, before the measure
const rss0 = process.memoryUsage().rss;
const got = asm.crossing.run({ request: text, op: CALL_ASSEMBLE_JSON, read: (r) => r.slice() });
const peak = process.resourceUsage().maxRSS * 1024;
const size = text.length;
text = null;
const same = mp === null || Buffer.from(got).equals(Buffer.from(asm.assembleBytes(mp)));
console.log(JSON.stringify({ size, rss0, peak, same, got: Buffer.from(got).toString("base64") }));
`;

const SRC = (f) => fileURLToPath(new URL(`../src/${f}`, import.meta.url));

function runChild(name, n) {
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", CHILD, SRC("node.js"), SRC("consts.js"), name, String(n)], {
    encoding: "utf8",
    maxBuffer: 1 << 20,
    timeout: 600_000,
  });
  return JSON.parse(out.trim().split("\n").at(-1));
}

for (const [name, n] of DEEP_CASES) {
  test(`deep JSON: ${name}, ${n >> 20} MiB`, async () => {
    const { decode } = await import("./common.mjs");
    const out = runChild(name, n);
    const e = decode(Buffer.from(out.got, "base64")).error;
    assert.ok(out.same, `${name}: ${JSON.stringify(e)}, unlike assembleBytes of the msgpack the text says`);
    if (name === "[" || name === '{"a":') {
      const message = `invalid JSON at byte ${out.size}: unexpected end of input, expected a value; send one JSON object per request`;
      assert.deepEqual(e, { code: "malformed_request", message, path: "" });
    } else {
      assert.deepEqual([e.code, e.path], name === "steps" ? ["malformed_request", "steps[0]"] : ["unknown_field", "x"]);
    }
    const added = out.peak - out.rss0;
    console.log(
      `${name.padEnd(8)} ${String(out.size).padStart(10)} B  node  peak RSS ${mb(out.peak)} MB, the call adding ${mb(added)} MB (${(added / out.size).toFixed(2)} B/B)`,
    );
    assert.ok(added <= MEM_PER_BYTE * out.size + MEM_CONST, `${name}, ${out.size} bytes: the call added ${mb(added)} MB`);
  });
}
