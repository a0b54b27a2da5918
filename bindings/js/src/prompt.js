/**
 * The incremental prompt (docs/SPEC.md §7.3): a shim over the module's
 * `add_step` export (§7.3.1). The rules (the step's path `steps[k]`,
 * `context_overflow`, the 1.5 GiB response limit) are the core's; the Prompt
 * holds only what add_step needs (the template, the budget and the prompt's
 * five-number state, from the module's prompt_start) and the messages it shows.
 *
 * @module
 */

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
    /** @type {import("./index.js").Message[]} */
    this.messages = response.messages;
    /** @type {number[]} */
    this.message_chars = response.message_chars;
    /** @type {number} */
    this.prompt_chars = response.prompt_chars;
    /** @type {boolean} */
    this.context_overflow = response.context_overflow;
    /** @type {import("./index.js").Injected[]} */
    this.injected = response.injected;
    /** @type {import("./index.js").PrefixDigests} */
    this.prefix_digests = response.prefix_digests;
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
      v: 1,
      observation_template: this.template,
      max_prompt_chars: this.budget,
      prompt: this.state,
      step: { raw_output: rawOutput, observation },
    };
    const r = this.assembler.send(request, "add_step", this.template, undefined, this.messages.length);
    this.messages.push(r.messages[0], r.messages[1]);
    this.message_chars.push(r.message_chars[0], r.message_chars[1]);
    this.state = r.prompt;
    this.prompt_chars = r.prompt.prompt_chars;
    this.context_overflow = r.context_overflow;
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
   * request with the same steps (fresh arrays; the messages are shared).
   *
   * @returns {import("./index.js").AssembleResponse}
   */
  response() {
    return {
      v: 1,
      ok: true,
      messages: this.messages.slice(),
      message_chars: this.message_chars.slice(),
      prompt_chars: this.prompt_chars,
      context_overflow: this.context_overflow,
      injected: this.injected.slice(),
      prefix_digests: { ...this.prefix_digests },
    };
  }

  /**
   * @deprecated Use {@link Prompt#response} (the same name on every host).
   * @returns {import("./index.js").AssembleResponse}
   */
  toResponse() {
    return this.response();
  }

  toJSON() {
    return this.response();
  }
}
