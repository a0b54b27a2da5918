// prompt.messages costs O(1) to read, whatever the history, and stays safe to
// edit (issue 34, item 4: a read-only view, as Python's MessagesView);
// chatMessages gives {role, content: string}, the same as Python's
// chat_messages on every prompt vector. Work is counted, not timed: a spy on
// the prompt's own message list counts the messages read.

import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { AssemblyError, chatMessages } from "@polyloop/assembly";
import { REPO, assembler } from "./common.mjs";
import { loadCases } from "./vectorsets.mjs";

const asm = await assembler();
const text = (role, ...texts) => ({ role, content: texts.map((t) => ({ type: "text", text: t })) });
const prompt = () =>
  asm.prompt({
    run_messages: [text("system", "sys\u2028tem")],
    goal_messages: [text("user", "go", "!")],
    observation_template: "Observation: {observation}",
  });

/** Counts the messages read from `p`'s own list (a private field: the spy). */
function spy(p) {
  const reads = { n: 0 };
  p.own.messages = new Proxy(p.own.messages, {
    get(t, k) {
      if (typeof k === "string" && /^\d+$/.test(k)) reads.n++;
      return Reflect.get(t, k);
    },
  });
  return reads;
}

test("reading the messages after each of 4,000 steps reads no message", () => {
  const p = prompt();
  const reads = spy(p);
  let view;
  for (let k = 0; k < 4000; k++) {
    p.addStep(`r${k}`, `o${k}`);
    view = p.messages;
    assert.equal(view.length, 2 + 2 * (k + 1));
    assert.equal(reads.n, 0, `step ${k}: a read of the messages read ${reads.n} of them`);
  }
  assert.deepEqual(view.at(-1), text("user", "Observation: o3999"));
  assert.equal(reads.n, 1, "reading one message of the view reads one");
});

test("the view is a snapshot, an Array equal to the response's messages", () => {
  const p = prompt().addStep("a", "b");
  const before = p.messages;
  p.addStep("c", "d");
  assert.equal(before.length, 4, "later steps never show in an earlier view");
  assert.equal(p.messages.length, 6);
  const want = p.response().messages;
  assert.ok(Array.isArray(p.messages));
  assert.deepStrictEqual(p.messages, want);
  assert.deepStrictEqual(before, want.slice(0, 4));
  assert.deepStrictEqual([...p.messages], want);
  assert.deepStrictEqual(p.messages.slice(1, 3), want.slice(1, 3));
  assert.deepStrictEqual(JSON.parse(JSON.stringify(p.messages)), want);
  assert.deepStrictEqual(Object.keys(before), ["0", "1", "2", "3"]);
  assert.equal(before[4], undefined);
  assert.equal(4 in before, false);
  assert.deepStrictEqual(structuredClone(p.messages.slice()), want);
});

test("edits never reach the prompt; the view itself refuses them and says what to do", () => {
  const p = prompt().addStep("a", "b");
  const want = p.response();
  const v = p.messages;
  for (const m of [v[0], v.at(-1), ...v, ...v.slice(0, 2), ...v.map((m) => m), ...v.filter(() => true)]) {
    m.role = "x";
    m.content[0].text = "edited";
    m.content.push({ type: "text", text: "more" });
  }
  const edits = [
    () => v.push(text("user", "x")),
    () => v.pop(),
    () => v.shift(),
    () => v.splice(0, 1),
    () => v.sort(),
    () => v.reverse(),
    () => v.fill(null),
    () => (v[0] = text("user", "x")),
    () => (v[9] = text("user", "x")),
    () => (v.length = 0),
    () => delete v[0],
    () => Object.defineProperty(v, "0", { value: null }),
    () => Object.freeze(v),
    () => Object.setPrototypeOf(v, null),
  ];
  for (const edit of edits)
    assert.throws(edit, { name: "TypeError", message: /read-only: edit a copy \(messages\.slice\(\)/ }, String(edit));
  assert.deepStrictEqual(p.response(), want);
  assert.deepStrictEqual(p.messages, want.messages);
  p.addStep("c", "d");
  assert.deepStrictEqual(p.messages.slice(0, want.messages.length), want.messages);
});

test("chatMessages joins the blocks' texts", () => {
  const p = prompt().addStep("a\u0085", "b");
  const chat = p.chatMessages();
  assert.deepStrictEqual(chat, chatMessages(p.messages));
  assert.deepStrictEqual(chat, chatMessages(p.response().messages));
  assert.deepStrictEqual(chat.slice(0, 3), [
    { role: "system", content: "sys\u2028tem" },
    { role: "user", content: "go!" },
    { role: "assistant", content: "a\u0085" },
  ]);
  assert.deepStrictEqual(
    chat.map((m) => [...m.content].length),
    p.message_chars,
    "code points, as the core counts them",
  );
  assert.throws(() => chatMessages([text("user", "ok"), { role: "user", content: [{ type: "image" }] }]), {
    name: "TypeError",
    message: /^chatMessages: messages\[1\]\.content\[0\] is not a text block/,
  });
});

// Python's chat_messages and Prompt on the same vectors, each prompt's chat form after its start and after every step.
const PYTHON = join(REPO, ".venv/bin/python");
const PY_CHATS = `
import glob, json, sys
import polyloop_assembly as pa
from polyloop_assembly.data import chat_messages
out = []
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    for c in json.load(open(f, encoding="utf-8"))["cases"]:
        p = pa.Prompt(c["request"])
        chats = [p.chat_messages(), chat_messages(p.messages)]
        for s in c.get("steps", []):
            try:
                p.add_step(s["raw_output"], s["observation"])
            except pa.AssemblyError:
                pass
            chats.append(p.chat_messages())
        out.append(chats)
print(json.dumps(out))
`;

test(
  "chatMessages equals Python's chat_messages on every prompt vector",
  { skip: !existsSync(PYTHON) && "no .venv (make python.venv)" },
  () => {
    const cases = loadCases("prompt-vectors");
    const python = JSON.parse(
      execFileSync(PYTHON, ["-c", PY_CHATS, join(REPO, "testdata/prompt-vectors")], { encoding: "utf8", maxBuffer: 1 << 26 }),
    );
    const js = cases.map((c) => {
      const p = asm.prompt(c.request);
      const chats = [p.chatMessages(), chatMessages(p.messages)];
      for (const s of c.steps) {
        try {
          p.addStep(s.raw_output, s.observation);
        } catch (e) {
          if (!(e instanceof AssemblyError)) throw e;
        }
        chats.push(p.chatMessages());
      }
      return chats;
    });
    assert.ok(cases.length >= 8 && js.flat(2).length >= 100, `${js.flat(2).length} chat messages`);
    assert.deepStrictEqual(js, python);
  },
);
