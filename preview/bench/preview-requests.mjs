/**
 * Trajectory-shaped requests for the preview benchmark and tests (its speed budgets):
 * `steps` steps of about `stepChars` characters each (a multi-line thought and
 * action, then an observation), a system prompt, two injection channels and a
 * goal. Deterministic: every run measures the same bytes.
 *
 * @module
 */

/** @param {string} role @param {string} text */
const msg = (role, text) => ({ role, content: [{ type: "text", text }] });

/** `unit` repeated, cut to `n` UTF-16 units. */
function fill(unit, n) {
  let s = unit;
  while (s.length < n) s += s;
  return s.slice(0, n);
}

/**
 * @param {number} steps number of steps
 * @param {number} stepChars characters per step (raw output + observation)
 * @param {{budget?: number}} [opts]
 * @returns {object}
 */
export function trajectory(steps, stepChars, opts = {}) {
  const rawChars = Math.max(40, Math.round(stepChars * 0.3));
  const obsChars = Math.max(1, stepChars - rawChars);
  const out = [];
  for (let i = 0; i < steps; i++) {
    const head = `Thought: step ${i}; the last result was partial, so I read the next page.\nAction: read_page(${i})\n`;
    out.push({
      raw_output:
        head.length >= rawChars
          ? head.slice(0, rawChars)
          : head + fill(`note ${i}: cross-check the café figures (naïve sum). `, rawChars - head.length),
      observation: fill(`row ${i}: status=ok; path=/var/log/app/server.log; bytes=40960; took 12ms — Ünïcode 日本語.\n`, obsChars),
    });
  }
  const req = {
    v: 1,
    run_messages: [msg("system", "You are a ReAct agent. Think step by step, then act with exactly one tool call.")],
    injections: {
      memory: [{ entry_id: "mem-1", content: "The user prefers metric units." }],
      tips: [{ entry_id: "tip-7", content: "Prefer read_page for documents." }],
    },
    goal_messages: [msg("user", "Summarise the server log.")],
    steps: out,
    observation_template: "Observation: {observation}",
  };
  if (opts.budget !== undefined) req.max_prompt_chars = opts.budget;
  return req;
}

/** The request as the preview's editor holds it (2-space indented JSON). */
export const asText = (req) => JSON.stringify(req, null, 2);

/**
 * The request sizes of the preview's speed budgets, plus the 16 MB one.
 * @type {{name: string, steps: number, stepChars: number}[]}
 */
export const SIZES = [
  { name: "20 steps × 500 chars", steps: 20, stepChars: 500 },
  { name: "200 steps × 1 KB", steps: 200, stepChars: 1000 },
  { name: "1,000 steps × 1 KB", steps: 1000, stepChars: 1000 },
  { name: "5,000 steps × 200 chars", steps: 5000, stepChars: 200 },
  { name: "16 MB (15,000 steps × 1 KB)", steps: 15000, stepChars: 1000 },
];

/**
 * The never-frozen figure's file (issue 43, item 2): 2,000 JSON lines of
 * about 2.5 KB (5 MB), one request a line, `k` shifting the step counts so
 * two files differ. Read as one run's calls (the page's default).
 * @param {number} [k]
 */
export function jsonLines2000(k = 0) {
  return Array.from({ length: 2000 }, (_, i) => JSON.stringify(trajectory(1 + ((i + k) % 5), 570))).join("\n") + "\n";
}
