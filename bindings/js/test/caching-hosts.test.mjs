// Prompt caching made visible (docs/SPEC.md §7.12, §7.13) answered as every
// other host answers it: the planted run of 200 calls names exactly its three
// breaks and equals the command-line tool's report (the native core); every
// export vector of the independent Python reference (testdata/gen/
// gen_export_vectors.py) byte for byte; and a property over 2,000 random
// requests: every text untouched, at most four breakpoints.
import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { decode as unpack } from "@msgpack/msgpack";
import { AssemblyError } from "@polyloop/assembly";
import { REPO, assembler } from "./common.mjs";

const asm = await assembler();
const text = (role, s) => ({ role, content: [{ type: "text", text: s }] });

/** Call i has i+1 steps; an injection edited at 50, a run message's trailing space at 120, the history condensed at 170. */
function plantedRun(calls) {
  const out = [];
  for (let i = 0; i < calls; i++) {
    let steps = Array.from({ length: i + 1 }, (_, s) => ({
      raw_output: `Thought ${s}.\nAction: look(${s})`,
      observation: `result ${s}: café`,
    }));
    if (i >= 170) steps = [{ raw_output: "Summary of steps 0-99.", observation: "condensed" }, ...steps.slice(100)];
    out.push({
      run_messages: [text("system", "You are a careful agent." + (i >= 120 ? " " : ""))],
      injections: { memory: [{ entry_id: "m1", content: i >= 50 ? "Prefer imperial units." : "Prefer metric units." }] },
      goal_messages: [text("user", "Find the price.")],
      steps,
      observation_template: "Observation: {observation}",
    });
  }
  return out;
}

test("the planted run: exactly the three breaks, and the CLI's report", () => {
  const run = plantedRun(200);
  const usage = run.map((_, i) =>
    i % 4 ? { cache_read_input_tokens: i % 3 } : { usage: { prompt_tokens_details: { cached_tokens: 0 } } },
  );
  const report = asm.cacheReport(run, usage);
  const breaks = report.calls.flatMap((c, i) => (c.break ? [[i, c.break.segment, c.break.cause]] : []));
  assert.deepEqual(breaks, [
    [50, "injections", "injections_changed"],
    [120, "run", "run_changed"],
    [170, "history", "history_rewritten"],
  ]);
  const dir = mkdtempSync(join(tmpdir(), "cache-"));
  writeFileSync(join(dir, "run.jsonl"), run.map((r) => JSON.stringify(r) + "\n").join(""));
  writeFileSync(join(dir, "usage.jsonl"), usage.map((u) => JSON.stringify(u) + "\n").join(""));
  const cli = JSON.parse(
    execFileSync("go", ["run", "./cmd/polyloop-assemble", "cache", "--usage", join(dir, "usage.jsonl"), join(dir, "run.jsonl")], {
      cwd: REPO,
      maxBuffer: 1 << 26,
    }),
  );
  assert.deepEqual(report, cli);
});

test("every export vector of the independent reference, byte for byte", () => {
  const cases = ["export.json", "export-long.json"].flatMap(
    (f) => JSON.parse(readFileSync(join(REPO, "testdata/export-vectors", f), "utf8")).cases,
  );
  assert.ok(cases.length >= 200);
  for (const c of cases) {
    const request = new Uint8Array(Buffer.from(c.request, "base64"));
    const options = unpack(Buffer.from(c.options, "base64"));
    if (c.error) {
      assert.throws(
        () => asm.export(request, c.provider, options),
        (e) =>
          e instanceof AssemblyError &&
          e.code === c.error.code &&
          e.path === c.error.path &&
          (c.error.message === undefined || e.message === c.error.message),
        c.name,
      );
    } else {
      assert.equal(JSON.stringify(asm.export(request, c.provider, options)), c.answer, c.name);
    }
  }
});

const piece = fc.string({ unit: fc.constantFrom("a", "é", "😀", "\n", "\t", "\u2028", "\0", "{", " "), maxLength: 20 });
const message = fc.record({
  role: fc.constantFrom("system", "user", "assistant"),
  content: fc.array(fc.record({ type: fc.constant("text"), text: piece }), { maxLength: 3 }),
});
const request = fc.record({
  run_messages: fc.array(message, { maxLength: 3 }),
  injections: fc.dictionary(
    fc.constantFrom("a", "b", "é"),
    fc.array(fc.record({ entry_id: fc.constant("e"), content: piece }), { maxLength: 2 }),
  ),
  goal_messages: fc.array(message, { maxLength: 2 }),
  steps: fc.array(fc.record({ raw_output: piece, observation: piece }), { maxLength: 30 }),
  observation_template: fc.constantFrom("{observation}", "Obs: {observation}", "<{observation!r}>"),
});

test("export keeps every text, at most four breakpoints (2,000 random requests)", () => {
  fc.assert(
    fc.property(request, (req) => {
      const want = asm.assemble(req).messages.flatMap((m) => m.content.map((b) => b.text));
      for (const provider of ["anthropic", "openai-chat", "openai-responses"]) {
        let body;
        try {
          body = asm.export(req, provider);
        } catch (e) {
          // a system message after another role, or a provider rule (docs/SPEC.md §7.13): Anthropic's
          // at a text of the request or the request, OpenAI Chat's (no message) at the request
          assert.ok(e instanceof AssemblyError && e.code === "malformed_request", String(e));
          assert.ok(
            provider === "anthropic"
              ? e.path === "request" || e.path.startsWith("request.")
              : provider === "openai-chat" && e.path === "request" && want.length === 0,
            String(e),
          );
          continue;
        }
        const listed = [...(body.system ? [{ content: body.system }] : []), ...(body.messages ?? body.input)];
        assert.deepEqual(
          listed.flatMap((m) => m.content.map((b) => b.text)),
          want,
        );
        assert.ok(JSON.stringify(body).split('"cache_control"').length - 1 <= 4);
      }
    }),
    { numRuns: 2000, seed: 35 },
  );
});
