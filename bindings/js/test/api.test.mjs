// The public API: loading, assemble, assembleBytes, validateTemplate, the
// incremental prompt and AssemblyError. Expected values come from the shared
// example and from hand-counted texts, never from the binding's own output.

import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync, cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as pkg from "@polyloop/assembly";
import { AssemblyError, loadAssembler, Assembler, Prompt, ERROR_CODES } from "@polyloop/assembly";
import { REPO, assembler, decode, errorOf } from "./common.mjs";
import * as W from "./hand.mjs";

const asm = await assembler();
const T = "{observation}";
const text = (role, t) => ({ role, content: [{ type: "text", text: t }] });

test("the package exports what README documents", () => {
  for (const name of [
    "loadAssembler",
    "Assembler",
    "Prompt",
    "CacheRun",
    "AssemblyError",
    "ERROR_CODES",
    "MAX_REQUEST_BYTES",
    "compileModule",
    "DEFAULT_WASM_URL",
  ]) {
    assert.ok(name in pkg, `missing export ${name}`);
  }
  assert.ok(asm instanceof Assembler);
  assert.equal(ERROR_CODES.length, 13);
});

// node.js starts compiling the packaged module when it is imported; a module
// that is missing or not WebAssembly must still fail only in loadAssembler,
// with its reason, and never as an unhandled rejection of that early compile.
test("loadAssembler without a usable assembly.wasm beside src/ says why; importing alone fails nothing", () => {
  const dir = mkdtempSync(join(tmpdir(), "polyloop-nowasm-"));
  try {
    cpSync(new URL("../src", import.meta.url), join(dir, "src"), { recursive: true });
    symlinkSync(new URL("../node_modules", import.meta.url).pathname, join(dir, "node_modules"));
    const script = `const m = await import(process.argv[1]);
await new Promise((r) => setTimeout(r, 200));
try { await m.loadAssembler(); console.log("loaded"); } catch (e) { console.log(e.name + ": " + e.message); }`;
    const run = () => {
      const r = spawnSync(
        process.execPath,
        ["--unhandled-rejections=strict", "--input-type=module", "-e", script, join(dir, "src", "node.js")],
        {
          encoding: "utf8",
        },
      );
      assert.equal(r.status, 0, r.stderr);
      return r.stdout.trim();
    };
    assert.match(run(), /^Error: cannot read the assembly module at file:.*assembly\.wasm \(ENOENT\); .*make js\.wasm/);
    writeFileSync(join(dir, "assembly.wasm"), "not a module");
    assert.match(run(), /^CompileError: /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("loadAssembler compiles the module once per process", async () => {
  const a = await loadAssembler();
  const b = await loadAssembler();
  assert.notEqual(a, b);
  assert.equal(a.module, b.module);
  const c = await loadAssembler({ module: a.module, maxInstances: 1 });
  assert.equal(c.module, a.module);
});

test("loadAssembler says what to do when the module is missing", async () => {
  await assert.rejects(loadAssembler({ wasm: "/nonexistent/assembly.wasm" }), /make js\.wasm/);
});

test("assemble: a minimal request, order and sizes counted by hand", () => {
  const r = asm.assemble({
    observation_template: "Obs: {observation}",
    run_messages: [text("system", "sys")],
    injections: { z: [{ entry_id: "e1", content: "zz" }], a: [{ entry_id: "e2", content: "a" }] },
    goal_messages: [text("user", "goal")],
    steps: [{ raw_output: "act", observation: "😀é" }],
    max_prompt_chars: 18,
  });
  assert.deepEqual(Object.keys(r), [
    "v",
    "ok",
    "messages",
    "message_chars",
    "prompt_chars",
    "context_overflow",
    "injected",
    "prefix_digests",
  ]);
  assert.equal(r.v, 1);
  assert.equal(r.ok, true);
  assert.deepEqual(r.messages, [
    text("system", "sys"),
    text("user", "a"),
    text("user", "zz"),
    text("user", "goal"),
    text("assistant", "act"),
    text("user", "Obs: 😀é"),
  ]);
  assert.deepEqual(r.message_chars, [3, 1, 2, 4, 3, 7]);
  assert.equal(r.prompt_chars, 20);
  assert.equal(r.context_overflow, true); // 20 > 18
  assert.deepEqual(r.injected, [
    { channel: "a", entry_id: "e2", message_index: 1 },
    { channel: "z", entry_id: "e1", message_index: 2 },
  ]);
  assert.deepEqual(Object.keys(r.prefix_digests), ["run", "injections", "goal"]);
  for (const d of Object.values(r.prefix_digests)) assert.match(d, /^[0-9a-f]{64}$/);
});

test("assemble equals assembleBytes on the hand-made bytes of the same request", () => {
  const wire = W.map(["observation_template", W.str(T)], ["steps", W.arr(W.map(["raw_output", W.str("r")], ["observation", W.str("o")]))]);
  assert.deepEqual(
    asm.assemble({ observation_template: T, steps: [{ raw_output: "r", observation: "o" }] }),
    decode(asm.assembleBytes(wire)),
  );
});

test("assemble: examples/react.json", { skip: !existsSync(`${REPO}examples/react.json`) }, () => {
  const req = JSON.parse(readFileSync(`${REPO}examples/react.json`, "utf8"));
  const r = asm.assemble(req);
  // Sizes are code points: recount every block with the string iterator.
  const count = (m) => m.content.reduce((a, b) => a + [...b.text].length, 0);
  assert.deepEqual(r.message_chars, r.messages.map(count));
  assert.equal(
    r.prompt_chars,
    r.message_chars.reduce((a, b) => a + b, 0),
  );
  assert.equal(
    r.messages.length,
    req.run_messages.length + r.injected.length + (req.goal_messages?.length ?? 0) + 2 * (req.steps?.length ?? 0),
  );
});

test("AssemblyError carries the core's code, path and message", () => {
  const e = errorOf(() => asm.assemble({ observation_template: T, steps: [{ raw_output: "x" }] }));
  assert.ok(e instanceof AssemblyError);
  assert.ok(e instanceof Error);
  assert.equal(e.name, "AssemblyError");
  assert.equal(e.code, "missing_field");
  assert.equal(e.path, "steps[0].observation");
  assert.ok(e.message.length > 0);
  assert.equal(String(e), `AssemblyError [missing_field at steps[0].observation]: ${e.message}`);
});

test("assembleBytes returns error responses as bytes and refuses non-bytes", () => {
  const resp = decode(asm.assembleBytes(new Uint8Array([0xc1])));
  assert.equal(resp.ok, false);
  assert.equal(resp.error.code, "malformed_request");
  assert.equal(resp.error.path, "");
  assert.equal(decode(asm.assembleBytes(new Uint8Array())).error.code, "malformed_request");
  assert.throws(() => asm.assembleBytes([0x80]), TypeError);
  assert.throws(() => asm.assembleBytes("x"), TypeError);
  // A Buffer is a Uint8Array.
  assert.equal(decode(asm.assembleBytes(Buffer.from([0x80]))).error.code, "missing_field");
});

test("validateTemplate accepts good templates and throws the core's error for bad ones", () => {
  for (const t of ["{observation}", "Output:\n{observation!r:>20.5}", "{{literal}} {observation} {observation!a}", "→ {observation} 😀"]) {
    assert.equal(asm.validateTemplate(t), undefined, t);
  }
  const rows = [
    ["Output:", "invalid_template", "observation_template"],
    ["{{observation}}", "invalid_template", "observation_template"],
    ["{observation.x}", "invalid_template", "observation_template"],
    ["{observation", "invalid_template", "observation_template"],
    ["😀😀{obs}", "invalid_template", "observation_template"],
    ["a\uD800{observation}", "invalid_utf8", "observation_template"],
    [42, "malformed_request", "observation_template"],
    [null, "malformed_request", "observation_template"],
    [undefined, "missing_field", "observation_template"],
  ];
  for (const [t, code, path] of rows) {
    const e = errorOf(() => asm.validateTemplate(t));
    assert.ok(e instanceof AssemblyError, `${String(t)}: ${e}`);
    assert.deepEqual([e.code, e.path], [code, path], String(t));
  }
});

test("a template error names the code-point offset of the problem", () => {
  // Astral characters before the problem: the offset counts code points (2
  // emoji = 2, not 4 UTF-16 units).
  const e = errorOf(() => asm.validateTemplate("😀😀{obs}"));
  assert.match(e.message, /offset 3\b/);
});

test("prompt: incremental steps equal one assemble, counted by hand", () => {
  const req = { observation_template: "[{observation}]", goal_messages: [text("user", "go")], max_prompt_chars: 12 };
  const p = asm.prompt(req);
  assert.ok(p instanceof Prompt);
  assert.equal(p.stepCount, 0);
  assert.deepEqual(p.message_chars, [2]);
  assert.equal(p.context_overflow, false);
  assert.equal(p.addStep("ab", "😀"), p);
  assert.deepEqual(p.messages.slice(1), [text("assistant", "ab"), text("user", "[😀]")]);
  assert.deepEqual(p.message_chars, [2, 2, 3]);
  assert.equal(p.prompt_chars, 7);
  assert.equal(p.context_overflow, false);
  p.addStep("cdef", "");
  assert.equal(p.prompt_chars, 13);
  assert.equal(p.context_overflow, true); // 13 > 12
  assert.equal(p.stepCount, 2);
  const full = asm.assemble({
    ...req,
    steps: [
      { raw_output: "ab", observation: "😀" },
      { raw_output: "cdef", observation: "" },
    ],
  });
  assert.deepEqual(p.response(), full);
  assert.deepEqual(JSON.parse(JSON.stringify(p)), JSON.parse(JSON.stringify(full)));
});

test("prompt vocabulary (shared by every host): response(), addStep returns the prompt, stepCount; toResponse() is gone (deprecated at 0.2.0)", () => {
  const req = { observation_template: T, steps: [{ raw_output: "a", observation: "b" }] };
  const p = asm.prompt(req);
  assert.equal(typeof p.response, "function");
  assert.equal(p.stepCount, 1);
  assert.equal(p.addStep("c", "d"), p);
  assert.equal(p.stepCount, 2);
  const whole = asm.assemble({ ...req, steps: [...req.steps, { raw_output: "c", observation: "d" }] });
  assert.deepEqual(p.response(), whole);
  assert.equal(p.toResponse, undefined);
  assert.notEqual(p.response().messages, p.response().messages, "fresh arrays each time");
  assert.deepEqual(p.toJSON(), whole);
});

test("prompt: a bad step throws with its real index and leaves the prompt unchanged", () => {
  const p = asm.prompt({ observation_template: T, steps: [{ raw_output: "a", observation: "b" }] });
  p.addStep("c", "d");
  const before = JSON.stringify(p.response());
  for (const [raw, obs, code, path] of [
    ["x", "\uD800", "invalid_utf8", "steps[2].observation"],
    [7, "y", "malformed_request", "steps[2].raw_output"],
    [undefined, "y", "missing_field", "steps[2].raw_output"],
    ["x", null, "malformed_request", "steps[2].observation"],
  ]) {
    const e = errorOf(() => p.addStep(raw, obs));
    assert.ok(e instanceof AssemblyError, String(e));
    assert.deepEqual([e.code, e.path], [code, path]);
    // The same mistake in one whole request has the same code and path.
    const whole = errorOf(() =>
      asm.assemble({
        observation_template: T,
        steps: [
          { raw_output: "a", observation: "b" },
          { raw_output: "c", observation: "d" },
          { raw_output: raw, observation: obs },
        ],
      }),
    );
    assert.deepEqual([whole.code, whole.path, whole.message], [e.code, e.path, e.message]);
  }
  assert.equal(JSON.stringify(p.response()), before);
  assert.equal(p.stepCount, 2);
});

test("prompt: a bad request throws at prompt()", () => {
  const e = errorOf(() => asm.prompt({ observation_template: "nothing" }));
  assert.ok(e instanceof AssemblyError);
  assert.equal(e.code, "invalid_template");
});

test("prompt: addStep sends one step, never the history", () => {
  const p = asm.prompt({ observation_template: T });
  const sizes = [];
  const run = asm.crossing.run.bind(asm.crossing);
  asm.crossing.run = (options) => {
    sizes.push(options.request.length);
    return run(options);
  };
  try {
    for (let i = 0; i < 50; i++) p.addStep("x".repeat(1000), "y".repeat(1000));
  } finally {
    delete asm.crossing.run;
  }
  // The step, the template and four numbers (docs/SPEC.md §7.3.1): only the
  // numbers' widths change (at most 8 bytes more each), never with the 200 kB of history.
  assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 4 * 8, `request sizes vary with history: ${sizes.slice(0, 5)}…`);
  assert.ok(Math.max(...sizes) < 2200, `${Math.max(...sizes)} bytes`);
  assert.equal(p.messages.length, 100);
});

test("prompt: budget as bigint and null", () => {
  const p = asm.prompt({ observation_template: T, max_prompt_chars: 3n });
  p.addStep("ab", "c");
  assert.equal(p.context_overflow, false);
  p.addStep("d", "");
  assert.equal(p.context_overflow, true);
  const q = asm.prompt({ observation_template: T, max_prompt_chars: null });
  q.addStep("x".repeat(100), "");
  assert.equal(q.context_overflow, false);
});

test("prompt: the request may be a Map", () => {
  const req = new Map([
    ["observation_template", "<{observation}>"],
    ["steps", [{ raw_output: "a", observation: "b" }]],
    ["max_prompt_chars", 5],
  ]);
  const p = asm.prompt(req);
  p.addStep("c", "d");
  assert.equal(p.stepCount, 2);
  assert.deepEqual(
    p.messages.map((m) => m.content[0].text),
    ["a", "<b>", "c", "<d>"],
  );
  assert.equal(p.prompt_chars, 8);
  assert.equal(p.context_overflow, true);
  const e = errorOf(() => p.addStep("e", 1));
  assert.deepEqual([e.code, e.path], ["malformed_request", "steps[2].observation"]);
});

test("version is the project's VERSION and moduleSha256 the SHA-256 of the packaged module", async () => {
  const { createHash } = await import("node:crypto");
  assert.equal(pkg.version, readFileSync(`${REPO}VERSION`, "utf8").trim());
  assert.match(pkg.version, /^\d+\.\d+\.\d+/);
  assert.equal(
    pkg.moduleSha256,
    createHash("sha256")
      .update(readFileSync(new URL("../assembly.wasm", import.meta.url)))
      .digest("hex"),
  );
});

test("assembleJSON: the same response as assemble, and the CLI's verdict on JSON text", () => {
  const req = { observation_template: T, steps: [{ raw_output: "r", observation: "o" }], max_prompt_chars: 9007199254740993n };
  const text = JSON.stringify({ ...req, max_prompt_chars: 1 }).replace(/"max_prompt_chars":1/, '"max_prompt_chars":9007199254740993');
  assert.deepEqual(asm.assembleJSON(text), asm.assemble(req));
  const cases = [
    [
      '{"observation_template": "{observation}", "steps": [{"raw_output": "a", "raw_output": "b", "observation": ""}]}',
      "duplicate_key",
      "steps[0].raw_output",
    ],
    ['{"v": 1.0, "observation_template": "{observation}"}', "malformed_request", "v"],
    ['{"observation_template": "{observation}", "max_prompt_chars": 1e2}', "malformed_request", "max_prompt_chars"],
    ['{"observation_template": "{observation}",}', "malformed_request", ""],
  ];
  for (const [json, code, path] of cases) {
    const e = errorOf(() => asm.assembleJSON(json));
    assert.ok(e instanceof AssemblyError, `${json}: ${e}`);
    assert.deepEqual([e.code, e.path], [code, path], json);
  }
  assert.match(errorOf(() => asm.assembleJSON("{")).message, /^invalid JSON at byte \d+/);
  assert.throws(() => asm.assembleJSON({}), TypeError);
});

test("prompt: editing what it returns (messages, response(), injected, digests) never changes the prompt", () => {
  const req = {
    run_messages: [text("system", "s")],
    injections: { mem: [{ entry_id: "m1", content: "fact" }] },
    goal_messages: [text("user", "g")],
    observation_template: "Observation: {observation}",
    steps: [{ raw_output: "a", observation: "b" }],
  };
  const p = asm.prompt(req);
  const vandalise = (r) => {
    r.messages[0].cache_control = { type: "ephemeral" };
    r.messages[0].content[0].text = "edited";
    r.messages[1].content.push({ type: "text", text: "more" });
    r.messages.pop();
    r.message_chars[0] = 999;
    r.injected[0].entry_id = "x";
    r.prefix_digests.run = "0";
  };
  for (let k = 0; k < 3; k++) {
    vandalise(p.response());
    vandalise({
      messages: [...p.messages], // the view itself refuses edits (prompt-messages.test.mjs)
      message_chars: p.message_chars,
      injected: p.injected,
      prefix_digests: p.prefix_digests,
    });
    p.addStep(`r${k}`, `o${k}`);
  }
  const steps = [...req.steps, ...[0, 1, 2].map((k) => ({ raw_output: `r${k}`, observation: `o${k}` }))];
  const whole = asm.assemble({ ...req, steps });
  assert.deepEqual(p.response(), whole);
  assert.deepEqual(p.messages, whole.messages);
  assert.equal(p.prompt_chars, whole.prompt_chars);
});
