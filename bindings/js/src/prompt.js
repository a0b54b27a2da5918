/**
 * The incremental prompt (docs/SPEC.md §7.3): a facade over the `add_step` call, which holds every rule; it keeps what add_step needs
 * (template, budget, state) and the messages, and hands out copies.
 * @module
 */

import { CALLS, CALL_ADD_STEP, WIRE_VERSION } from "./consts.js";

/** An incremental prompt (index.d.ts). */
export class Prompt {
  /** @param {import("./assembler.js").Assembler} assembler @param {any} request accepted @param {any} response its prompt_start answer */
  constructor(assembler, request, response) {
    const field = (/** @type {string} */ k) => (request instanceof Map ? request.get(k) : request[k]);
    /** @private */
    this.assembler = assembler;
    this.template = field("observation_template");
    /** @private undefined for no budget (the encoder leaves the key out) */
    this.budget = field("max_prompt_chars") ?? undefined;
    /** @private the state of docs/SPEC.md §7.3.1 */
    this.state = response.prompt;
    const { messages, message_chars, context_overflow, injected, prefix_digests } = response;
    /** @private what callers get copies of */
    this.own = { messages, message_chars, context_overflow, injected, prefix_digests };
  }

  /** @returns {import("./index.js").Message[]} a fresh copy on every read */
  get messages() {
    return this.own.messages.map(copyMessage);
  }

  get message_chars() {
    return this.own.message_chars.slice();
  }

  get prompt_chars() {
    return this.state.prompt_chars;
  }

  get context_overflow() {
    return this.own.context_overflow;
  }

  /** @returns {import("./index.js").Injected[]} */
  get injected() {
    return this.own.injected.map((/** @type {object} */ e) => ({ ...e }));
  }

  /** @returns {import("./index.js").PrefixDigests} */
  get prefix_digests() {
    return { ...this.own.prefix_digests };
  }

  get stepCount() {
    return this.state.steps;
  }

  get responseBytes() {
    return this.state.response_bytes;
  }

  /** @param {string} rawOutput @param {string} observation @returns {this} */
  addStep(rawOutput, observation) {
    const own = this.own;
    const step = { raw_output: rawOutput, observation };
    const request = { v: WIRE_VERSION, observation_template: this.template, max_prompt_chars: this.budget, prompt: this.state, step };
    const r = this.assembler.send(CALLS[CALL_ADD_STEP], request, undefined, own.messages.length);
    own.messages.push(...r.messages);
    own.message_chars.push(...r.message_chars);
    own.context_overflow = r.context_overflow;
    this.state = r.prompt;
    return this;
  }

  /** @returns {import("./index.js").AssembleResponse} */
  response() {
    const { messages, message_chars, prompt_chars, context_overflow, injected, prefix_digests } = this;
    return { v: WIRE_VERSION, ok: true, messages, message_chars, prompt_chars, context_overflow, injected, prefix_digests };
  }

  toJSON() {
    return this.response();
  }
}

/** @param {import("./index.js").Message} m a copy of m, its content and blocks */
function copyMessage(m) {
  return { role: m.role, content: m.content.map((b) => ({ type: b.type, text: b.text })) };
}
