// The page's main thread as Chrome traces it (Chrome DevTools protocol
// tracing, categories toplevel and devtools.timeline), for the never-frozen
// tests (issue 43, item 2): every task of the main thread with its CPU time
// (the trace's thread time, which a loaded machine does not stretch as it
// stretches wall-clock time), whatever code runs in it.

import assert from "node:assert/strict";

const key = (/** @type {any} */ e) => `${e.pid}:${e.tid}`;

/**
 * Runs `run()` with the page traced.
 * @template T
 * @param {import("playwright-core").CDPSession} cdp @param {() => Promise<T>} run
 * @returns {Promise<{result: T, events: any[], thread: string, tasks: any[]}>} the page's main thread
 *   (`pid:tid`) and its tasks: its outermost "toplevel" events (a task run, a mojo message handled), each with
 *   `tdur` (µs of CPU) and `dur` (µs of wall-clock)
 */
export async function traceMainThread(cdp, run) {
  const events = [];
  const collect = (/** @type {any} */ d) => events.push(...d.value);
  cdp.on("Tracing.dataCollected", collect);
  await cdp.send("Tracing.start", { categories: "toplevel,devtools.timeline", transferMode: "ReportEvents" });
  const result = await run();
  const complete = new Promise((r) => cdp.once("Tracing.tracingComplete", r));
  await cdp.send("Tracing.end");
  await complete;
  cdp.off("Tracing.dataCollected", collect);
  // The renderer's main thread that ran the page's script.
  const mains = new Set(events.filter((e) => e.name === "thread_name" && e.args.name === "CrRendererMain").map(key));
  const ran = events.find((e) => mains.has(key(e)) && e.name === "FunctionCall" && /\/preview\//.test(e.args?.data?.url ?? ""));
  assert.ok(ran, "the trace holds the page's main thread");
  const thread = key(ran);
  const tasks = [];
  for (const e of events
    .filter((e) => e.ph === "X" && e.cat.split(",").includes("toplevel") && key(e) === thread)
    .sort((a, b) => a.ts - b.ts || b.dur - a.dur)) {
    const last = tasks.at(-1);
    if (!last || e.ts >= last.ts + last.dur) tasks.push(e);
  }
  return { result, events, thread, tasks };
}

/** A task's CPU time in ms. */
export const cpuMs = (/** @type {any} */ task) => (task.tdur ?? task.dur) / 1000;

/** What a task did, for a failure's message: its longest events inside (script, timers, style, layout, paint). */
export function inside(events, task, thread) {
  const end = task.ts + task.dur;
  return events
    .filter((e) => e !== task && key(e) === thread && e.ph === "X" && e.ts >= task.ts && e.ts + e.dur <= end)
    .filter((e) =>
      /^(FunctionCall|EvaluateScript|TimerFire|Layout|UpdateLayoutTree|Paint|MinorGC|MajorGC|FireAnimationFrame)$/.test(e.name),
    )
    .sort((a, b) => b.dur - a.dur)
    .slice(0, 4)
    .map(
      (e) =>
        `${e.name} ${(e.dur / 1000).toFixed(0)} ms${e.args?.data?.url ? ` ${e.args.data.url.split("/").pop()}:${e.args.data.lineNumber}` : ""}`,
    );
}
