/**
 * The planted run of issue 35's acceptance: 200 calls of one agent loop, its
 * prompt broken three times on purpose: the injection edited at call 50
 * (`injections`, `injections_changed`), one space added to the run's system
 * message at call 120 (`run`, `run_changed`), the history condensed at call
 * 170 (`history`, `history_rewritten`). Every other call extends the one
 * before by one step.
 *
 * @module
 */

/** The breaks planted: [call, segment, cause]. */
export const PLANTED = [
  [50, "injections", "injections_changed"],
  [120, "run", "run_changed"],
  [170, "history", "history_rewritten"],
];

/** @returns {object[]} the 200 requests, in call order */
export function plantedRun() {
  const text = (role, s) => ({ role, content: [{ type: "text", text: s }] });
  return Array.from({ length: 200 }, (_, i) => {
    let steps = Array.from({ length: i + 1 }, (_, s) => ({ raw_output: `Thought ${s}.`, observation: `result ${s}: café` }));
    if (i >= 170) steps = [{ raw_output: "Summary.", observation: "condensed" }, ...steps.slice(100)];
    return {
      run_messages: [text("system", "You are a careful agent." + (i >= 120 ? " " : ""))],
      injections: { memory: [{ entry_id: "m1", content: i >= 50 ? "Prefer imperial units." : "Prefer metric units." }] },
      goal_messages: [text("user", "Find the price.")],
      steps,
      observation_template: "Observation: {observation}",
    };
  });
}
