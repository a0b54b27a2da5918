/**
 * The three benchmark requests of the JS binding, built deterministically (no
 * randomness, no files) so every run and every host measures the same bytes.
 *
 * - tiny: one run message, one goal message, one step.
 * - typical: a 20-step ReAct loop (system prompt with a tool schema, two
 *   injection channels, a goal, 20 thought/action/observation steps).
 * - large: about 1 MB of request, mostly long observations, with some
 *   non-ASCII text so the UTF-8 paths are exercised.
 *
 * @module
 */

/** @param {string} role @param {string} text */
const msg = (role, text) => ({ role, content: [{ type: "text", text }] });

/** Repeat `unit` until the string has at least `n` UTF-16 units, then cut. */
function fill(unit, n) {
  let s = unit;
  while (s.length < n) s += s;
  return s.slice(0, n);
}

const TOOLS =
  "Tools:\n" +
  Array.from(
    { length: 12 },
    (_, i) =>
      `- tool_${i}(query: str, limit: int = 10) -> list[str]: searches source ${i} for documents matching the query and returns their identifiers, newest first.`,
  ).join("\n");

/** @returns {object} */
export function tinyRequest() {
  return {
    v: 1,
    run_messages: [msg("system", "You are a helpful agent.")],
    goal_messages: [msg("user", "What is 2 + 2?")],
    steps: [{ raw_output: "Thought: easy.\nAction: calc(2+2)", observation: "4" }],
    observation_template: "Observation: {observation}",
  };
}

/** @returns {object} */
export function typicalRequest() {
  const steps = [];
  for (let i = 0; i < 20; i++) {
    steps.push({
      raw_output: `Thought: step ${i}, I should look at source ${i % 12} next because the previous result was incomplete.\nAction: tool_${i % 12}(query="café prices ${i}", limit=5)`,
      observation: fill(`result ${i}: doc-${i}-a, doc-${i}-b (naïve match, score 0.${i}) `, 900),
    });
  }
  return {
    v: 1,
    run_messages: [
      msg("system", "You are a ReAct agent. Think step by step, then act with exactly one tool call.\n\n" + TOOLS),
      msg("user", "Example question: who wrote Hamlet?"),
      msg("assistant", 'Thought: I know this.\nAction: finish("Shakespeare")'),
    ],
    injections: {
      memory: [
        { entry_id: "mem-1", content: "The user prefers answers in metric units." },
        { entry_id: "mem-2", content: "Previous run: prices were found in source 3." },
      ],
      tips: [{ entry_id: "tip-7", content: "Prefer tool_3 for prices." }],
    },
    goal_messages: [msg("user", "Find the average price of a café au lait in Lyon in 2024.")],
    steps,
    observation_template: "Observation: {observation}",
    max_prompt_chars: 60000,
  };
}

/** About 1 MiB of request bytes. @returns {object} */
export function largeRequest() {
  const steps = [];
  const obs = fill("row; naïve café Ünïcode 日本語 text — plus plain ASCII filler to make it long. ", 4800);
  for (let i = 0; i < 200; i++) {
    steps.push({ raw_output: `Thought: page ${i}.\nAction: read_page(${i})`, observation: obs });
  }
  return {
    v: 1,
    run_messages: [msg("system", "You read documents page by page.\n\n" + TOOLS)],
    goal_messages: [msg("user", "Summarise the document.")],
    steps,
    observation_template: "Page:\n{observation}",
  };
}

/** About 1 MiB of request bytes, ASCII only (shell and code output are
 * mostly ASCII; UTF-8 decoding is fastest there). @returns {object} */
export function largeAsciiRequest() {
  const r = largeRequest();
  const obs = fill("row 17: status=ok; path=/var/log/app/server.log; bytes=40960; took 12ms. ", 4800);
  for (const s of r.steps) s.observation = obs;
  return r;
}

/** A response-shaped object for `request` (what the core would send back),
 * used to measure decoding before the core exists. */
export function responseShaped(request) {
  const messages = [...(request.run_messages ?? []), ...(request.goal_messages ?? [])];
  for (const s of request.steps ?? []) {
    messages.push(msg("assistant", s.raw_output));
    messages.push(msg("user", request.observation_template.replace("{observation}", s.observation)));
  }
  const message_chars = messages.map((m) => [...m.content[0].text].length);
  return {
    v: 1,
    ok: true,
    messages,
    message_chars,
    prompt_chars: message_chars.reduce((a, b) => a + b, 0),
    context_overflow: false,
    injected: [],
    prefix_digests: { run: "0".repeat(64), injections: "1".repeat(64), goal: "2".repeat(64) },
  };
}
