/**
 * A run's cache report made call by call (docs/SPEC.md §7.15): a facade over the `cache_call` call, which holds every rule. It keeps the
 * run's state between calls and the last valid call's prompt, and sends a {@link Prompt} that has only grown since that call as an
 * extension (its new messages alone), so a call costs what the loop added.
 * @module
 */

import { RequestTooLarge, encodeRequest, usageValue } from "./encode.js";
import { Prompt, messageCount, messagesOf, promptForm } from "./prompt.js";

/** A run's cache report made call by call (index.d.ts); `assembler.cacheRun()` starts one. */
export class CacheRun {
  /** @param {import("./assembler.js").Assembler} assembler */
  constructor(assembler) {
    /** @private */
    this.assembler = assembler;
    /** @private the run state the last cache_call answered; null before the first call */
    this.state = null;
    /** @private every call's entry, in order */
    this.entries = [];
    /**
     * @private the last valid call's prompt: a Prompt and its message count then, or a request as sent (a snapshot); null before one
     * @type {{prompt: Prompt, count: number} | {request: unknown} | null}
     */
    this.last = null;
  }

  /**
   * Reports on the run's next call, whose prompt is `prompt` (a Prompt as it is now, a request, its JSON text or msgpack bytes) and whose
   * provider usage (or response) is `usage` (null: none recorded): the call's entry, as cacheReport gives it over the same calls.
   * @param {unknown} prompt @param {unknown} [usage] @returns {Record<string, any>}
   */
  call(prompt, usage = null) {
    const last = this.last;
    let sent;
    let previous = null;
    let kept;
    if (prompt instanceof Prompt) {
      const n = messageCount(prompt);
      kept = { prompt, count: n };
      if (last !== null && "prompt" in last && last.prompt === prompt && n >= last.count) {
        sent = { extends: last.count, messages: messagesOf(prompt, last.count, n) }; // O(new)
      } else {
        sent = promptForm(prompt, n);
        previous = previousOf(last);
      }
    } else {
      sent = snapshot(prompt);
      kept = { request: sent };
      previous = previousOf(last);
    }
    const answer = this.assembler.call("cache_call", this.state, sent, previous, usageValue(usage ?? null, "usage"));
    this.state = answer.run;
    this.entries.push(answer.call);
    if (answer.call.error === undefined) this.last = kept; // an invalid request leaves the run's last valid call
    return structuredClone(answer.call);
  }

  /** The run's report so far, `{calls, groups, totals}`, as cacheReport gives it over the same calls (fresh). @returns {Record<string, any>} */
  report() {
    if (this.state === null) return this.assembler.cacheReport([], []);
    const { groups, totals } = this.state;
    return structuredClone({ calls: this.entries, groups, totals });
  }
}

/** The last valid call's prompt as cache_call's `previous`: a Prompt's prompt form cut to its messages then. */
function previousOf(/** @type {CacheRun["last"]} */ last) {
  if (last === null) return null;
  return "prompt" in last ? promptForm(last.prompt, last.count) : last.request;
}

/**
 * A request as it is now, to send and to give back as the next call's `previous` (a request object can be changed after its call):
 * its msgpack bytes, which cache_call reads as it reads the object. A JSON text is kept, bytes copied.
 * @param {unknown} request
 */
function snapshot(request) {
  if (typeof request === "string") return request;
  if (request instanceof Uint8Array) return request.slice();
  try {
    return encodeRequest(request);
  } catch (e) {
    if (e instanceof RequestTooLarge) return request; // the call answers too_large
    throw e;
  }
}
