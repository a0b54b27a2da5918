// The documented JavaScript runs as written (issue 45): every ```js block
// of README.md, docs/*.md and the binding READMEs runs in Node as an ES
// module from this package's directory (so "@polyloop/assembly" is this
// checkout), unless the line just before its fence is
// <!-- docs-test: skip (why) -->: a browser or bundler example, or a
// fragment of a larger program. What a block prints is checked against the
// comments of its console.log lines (expectedOutput), where it has them.
// cmd/polyloop-assemble/docs_test.go (shell) and
// bindings/python/tests/test_docs.py (Python) do the same.

import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { REPO } from "./common.mjs";

const JS_DIR = fileURLToPath(new URL("../", import.meta.url));
const SKIP = /^<!--\s*docs-test:\s*skip\s*\((.+)\)\s*-->$/;
const FENCE = /^\s*```\s*([A-Za-z0-9_-]*)/;

/** The Markdown files whose blocks run, from the repository root. */
function docFiles() {
  const docs = readdirSync(join(REPO, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  assert.ok(docs.length > 0, "no docs/*.md");
  return ["README.md", ...docs, "bindings/python/README.md", "bindings/js/README.md"];
}

/** Each ```js block: where, its code, why it is skipped (or undefined). */
function jsBlocks() {
  const blocks = [];
  for (const file of docFiles()) {
    const lines = readFileSync(join(REPO, file), "utf8").split("\n");
    let prev = "";
    for (let i = 0; i < lines.length; i++) {
      const m = FENCE.exec(lines[i]);
      if (!m) {
        if (lines[i].trim()) prev = lines[i].trim();
        continue;
      }
      let end = i + 1;
      while (end < lines.length && lines[end].trim() !== "```") end++;
      if (["js", "javascript", "mjs"].includes(m[1])) {
        blocks.push({ where: `${file}:${i + 1}`, code: lines.slice(i + 1, end).join("\n") + "\n", skip: SKIP.exec(prev)?.[1] });
      }
      prev = lines[i].trim();
      i = end;
    }
  }
  return blocks;
}

/**
 * What the block says it prints, one entry per console.log line: its
 * trailing comment, or the comment line just below it ("…" at the end:
 * what the line starts with); undefined when it does not say.
 */
function expectedOutput(code) {
  const lines = code.split("\n");
  const said = [];
  lines.forEach((line, k) => {
    if (!/\bconsole\.log\(/.test(line)) return;
    const m = /\);?\s*\/\/\s?(.*)$/.exec(line) ?? /^\s*\/\/\s?(.*)$/.exec(lines[k + 1] ?? "");
    if (m) said.push(m[1]);
  });
  return said.length ? said : undefined;
}

/** Whether the output is what the block says it prints. */
function printsAsSaid(out, said) {
  const got = out.split("\n").slice(0, -1);
  return got.length === said.length && said.every((s, k) => (s.endsWith("…") ? got[k].startsWith(s.slice(0, -1)) : got[k] === s));
}

const blocks = jsBlocks();

test("the documented JavaScript blocks are found", () => {
  const run = blocks.filter((b) => b.skip === undefined);
  const skipped = blocks.filter((b) => b.skip !== undefined).map((b) => `${b.where} (${b.skip})`);
  console.log(`documented JavaScript blocks: ${run.length} run, ${skipped.length} skipped:\n  ${skipped.join("\n  ")}`);
  assert.ok(run.length > 0, "no runnable JavaScript block found");
});

for (const { where, code, skip } of blocks) {
  test(`${where} runs as documented`, { skip }, () => {
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", code], {
      cwd: JS_DIR,
      encoding: "utf8",
      timeout: 60_000,
    });
    const said = expectedOutput(code);
    if (said !== undefined)
      assert.ok(printsAsSaid(out, said), `${where} prints ${JSON.stringify(out)}, its doc says ${JSON.stringify(said)}`);
  });
}
