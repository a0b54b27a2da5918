/**
 * The incremental prompt (docs/SPEC.md §7.3): a shim over the module's
 * `add_step` export (§7.3.1). The rules (the step's path `steps[k]`,
 * `context_overflow`, the 1.5 GiB response limit) are the core's; the Prompt
 * holds only what add_step needs (the template, the budget and the prompt's
 * five-number state, from the module's prompt_start) and the messages it shows.
 *
 * @module
 */

import { CALLS, CALL_ADD_STEP, WIRE_VERSION } from "./consts.js";

/** @typedef {{steps: number, messages: number, prompt_chars: number, response_bytes: number, request_bytes: number}} PromptState */

/**
 * An incremental prompt: after k calls of addStep its messages,
 * message_chars, prompt_chars, context_overflow, injected and prefix_digests
 * equal those of one assemble() of the request with those k steps added.
 * addStep sends the template, the budget, the state and the new step to the
 * core, never the history.
 */
export class Prompt {
  /**
   * @param {import("./assembler.js").Assembler} assembler
   * @param {any} request the request the assembler accepted
   * @param {any} response its prompt_start response: the assemble response and the prompt state
   */
  constructor(assembler, request, response) {
    // The core accepted the request, so these fields are what it read: a
    // string, an array, an int or nil (the request may be a plain object or
    // a Map).
    const field = (k) => (request instanceof Map ? request.get(k) : request[k]);
    /** @private */
    this.assembler = assembler;
    /** @private */
    this.template = field("observation_template");
    /** @private undefined for no budget (the encoder leaves the key out) */
    this.budget = field("max_prompt_chars") ?? undefined;
    /**
     * @private The prompt state of docs/SPEC.md §7.3.1, keys in the wire's order.
     * @type {PromptState}
     */
    this.state = response.prompt;
    /** @private the prompt's own messages: callers get copies (messages, response()) */
    this.own = {
      messages: response.messages,
      message_chars: response.message_chars,
      context_overflow: response.context_overflow,
      injected: response.injected,
      prefix_digests: response.prefix_digests,
    };
  }

  /**
   * The assembled messages: a fresh copy on every read (new arrays and
   * objects), so editing it (adding a provider's `cache_control`, say) never
   * changes the prompt (docs/SPEC.md §7.3). O(messages) per read, nothing per
   * step.
   *
   * @returns {import("./index.js").Message[]}
   */
  get messages() {
    return this.own.messages.map(copyMessage);
  }

  /** @returns {number[]} a copy of the size of each message in code points */
  get message_chars() {
    return this.own.message_chars.slice();
  }

  /** @returns {number} */
  get prompt_chars() {
    return this.state.prompt_chars;
  }

  /** @returns {boolean} */
  get context_overflow() {
    return this.own.context_overflow;
  }

  /** @returns {import("./index.js").Injected[]} a copy of what the injection slot pasted */
  get injected() {
    return this.own.injected.map((e) => ({ ...e }));
  }

  /** @returns {import("./index.js").PrefixDigests} a copy */
  get prefix_digests() {
    return { ...this.own.prefix_digests };
  }

  /** Number of steps held (those of the request plus those added). */
  get stepCount() {
    return this.state.steps;
  }

  /**
   * Appends one completed step: the assistant message `rawOutput` as given and
   * the user message rendered from the observation template.
   *
   * @param {string} rawOutput
   * @param {string} observation
   * @returns {this}
   * @throws {import("./errors.js").AssemblyError} the core's error for this step in the whole
   *   request (`steps[k].observation`; `too_large` at path "" when the whole
   *   response would be over 1.5 GiB). The prompt is unchanged then.
   */
  addStep(rawOutput, observation) {
    const request = {
      v: WIRE_VERSION,
      observation_template: this.template,
      max_prompt_chars: this.budget,
      prompt: this.state,
      step: { raw_output: rawOutput, observation },
    };
    const own = this.own;
    const r = this.assembler.forward(CALLS[CALL_ADD_STEP], request, own.messages.length);
    own.messages.push(...r.messages);
    own.message_chars.push(...r.message_chars);
    own.context_overflow = r.context_overflow;
    this.state = r.prompt;
    return this;
  }

  /**
   * The size in bytes of the prompt's canonical response: what
   * assembleBytes() returns for the request with the same steps.
   *
   * @returns {number}
   */
  get responseBytes() {
    return this.state.response_bytes;
  }

  /**
   * The prompt as a response object, equal to what assemble() returns for the
   * request with the same steps: a copy the caller may edit.
   *
   * @returns {import("./index.js").AssembleResponse}
   */
  response() {
    return {
      v: WIRE_VERSION,
      ok: true,
      messages: this.messages,
      message_chars: this.message_chars,
      prompt_chars: this.prompt_chars,
      context_overflow: this.context_overflow,
      injected: this.injected,
      prefix_digests: this.prefix_digests,
    };
  }

  toJSON() {
    return this.response();
  }
}

/** @param {import("./index.js").Message} m a copy of m, its content and blocks */
function copyMessage(m) {
  return { role: m.role, content: m.content.map((b) => ({ type: b.type, text: b.text })) };
}
