// asm.compare (docs/SPEC.md §7.9) gives the answer the CLI gives for the same
// two inputs (the native core, byte for byte after JSON parsing), and its
// errors name the side.
import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AssemblyError } from "@polyloop/assembly";
import { REPO, assembler } from "./common.mjs";

const req = {
  v: 1,
  run_messages: [{ role: "system", content: [{ type: "text", text: "Be careful 😀." }] }],
  steps: [{ raw_output: "ls", observation: "a.txt" }],
  observation_template: "Obs: {observation}",
};

function cli(a, b) {
  const dir = mkdtempSync(join(tmpdir(), "cmp-"));
  writeFileSync(join(dir, "a.json"), JSON.stringify(a));
  writeFileSync(join(dir, "b.json"), JSON.stringify(b));
  try {
    return JSON.parse(
      execFileSync("go", ["run", "./cmd/polyloop-assemble", "compare", join(dir, "a.json"), join(dir, "b.json")], { cwd: REPO }),
    );
  } catch (e) {
    return JSON.parse(e.stdout);
  }
}

test("compare answers what the CLI answers", async () => {
  const asm = await assembler();
  const recorded = [{ role: "system", content: "Be careful 😀!" }];
  const changed = structuredClone(req);
  changed.steps[0].observation = "b.txt";
  for (const [a, b] of [
    [recorded, req],
    [req, changed],
    [req, req],
  ]) {
    const got = asm.compare(a, b);
    assert.deepEqual(got, cli(a, b));
    assert.deepEqual(asm.compare(JSON.stringify(a), JSON.stringify(b)), got);
  }
  const d = asm.compare(recorded, req).first_difference;
  // "Be careful 😀" is 12 code points (13 UTF-16 units): the offset counts code points.
  assert.deepEqual([d.message, d.char, d.kind, d.segment, d.excerpt_a, d.excerpt_b], [0, 12, "text", "run", "!", "."]);
  assert.equal(asm.compare(req, changed).cacheable_prefix_chars, 13 + 2 + 5);
});

test("an invalid side throws with its side in the path", async () => {
  const asm = await assembler();
  assert.throws(
    () => asm.compare([{ role: "user" }], req),
    (e) => e instanceof AssemblyError && e.code === "missing_field" && e.path === "a[0].content",
  );
  assert.throws(
    () => asm.compare(req, { v: 2 }),
    (e) => e instanceof AssemblyError && e.code === "unsupported_version" && e.path === "b.v",
  );
});

test("an empty or overfull side is said as such, never as a cut compare request", async () => {
  const asm = await assembler();
  for (const [side, words] of [
    [new Uint8Array(0), "this side is empty (0 bytes)"],
    ["", "this side is empty (0 bytes)"],
    [" \r\n\t", "this side is empty (only white space)"],
    [Uint8Array.of(0x90, 0x90), "this side's bytes go on past its msgpack value (which ends at byte 1 of 2)"],
  ]) {
    for (const [a, b, path] of [
      [[], side, "b"],
      [side, [], "a"],
    ]) {
      assert.throws(
        () => asm.compare(a, b),
        (e) => e instanceof AssemblyError && e.code === "malformed_request" && e.path === path && e.message.includes(words),
      );
    }
  }
  assert.equal(asm.compare(Uint8Array.of(0x90), []).identical, true);
});
