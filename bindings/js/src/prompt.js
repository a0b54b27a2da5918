/**
 * The incremental prompt (docs/SPEC.md §7.3): a facade over the `add_step` call, which holds every rule; it keeps what add_step needs
 * (template, budget, state) and the messages, and hands out copies and read-only views; and `chatMessages`, `{role, content: string}`.
 * @module
 */

import { CALLS, CALL_ADD_STEP, WIRE_VERSION } from "./consts.js";
import { encodeRequest } from "./encode.js";

/** An incremental prompt (index.d.ts). */
export class Prompt {
  /**
   * @internal Made by Assembler.prompt: `request` accepted, `response` its prompt_start answer.
   * @param {{assembler: import("./assembler.js").Assembler, crossing: import("./crossing.js").Crossing, request: any, response: any}} options
   */
  constructor({ assembler, crossing, request, response }) {
    const field = (/** @type {string} */ k) => (request instanceof Map ? request.get(k) : request[k]);
    /** @private */
    this.assembler = assembler;
    /** @private the assembler's way into the module, for add_step */
    this.crossing = crossing;
    this.template = field("observation_template");
    /** @private undefined for no budget (the encoder leaves the key out) */
    this.budget = field("max_prompt_chars") ?? undefined;
    /** @private the state of docs/SPEC.md §7.3.1 */
    this.state = response.prompt;
    const { messages, message_chars, context_overflow, injected, prefix_digests, segments } = response;
    /** @private what callers get copies of; `segments`, where the run, injections and goal end (they never move) */
    this.own = { messages, message_chars, context_overflow, injected, prefix_digests, segments };
  }

  get messages() {
    return messagesView(this.own.messages, this.own.messages.length);
  }

  chatMessages() {
    return chatMessages(this.own.messages);
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

  get injected() {
    return this.own.injected.map((/** @type {object} */ e) => ({ ...e }));
  }

  get prefix_digests() {
    return { ...this.own.prefix_digests };
  }

  get stepCount() {
    return this.state.steps;
  }

  get responseBytes() {
    return this.state.response_bytes;
  }

  addStep(rawOutput, observation) {
    const own = this.own;
    const step = { raw_output: rawOutput, observation };
    const request = { v: WIRE_VERSION, observation_template: this.template, max_prompt_chars: this.budget, prompt: this.state, step };
    const r = this.crossing.send({ call: CALLS[CALL_ADD_STEP], request, messageBase: own.messages.length });
    own.messages.push(...r.messages);
    own.message_chars.push(...r.message_chars);
    own.context_overflow = r.context_overflow;
    this.state = r.prompt;
    return this;
  }

  export(provider, options) {
    return this.assembler.export(packedForm(this), provider, options);
  }

  response() {
    const { message_chars, prompt_chars, context_overflow, injected, prefix_digests } = this;
    const messages = this.own.messages.map(copyMessage);
    return { v: WIRE_VERSION, ok: true, messages, message_chars, prompt_chars, context_overflow, injected, prefix_digests };
  }

  toJSON() {
    return this.response();
  }
}

/**
 * @internal The prompt form of `prompt` (docs/SPEC.md §7.14), which export, cache_report, cache_call and compare take wherever they take a request:
 * its first `n` messages (all by default) with its segments and injected entries. A snapshot: later steps never show in it (its messages
 * are never changed, only appended to).
 * @param {Prompt} prompt @param {number} [n] @returns {{messages: import("./index.js").Message[], segments: object, injected: object[]}}
 */
export function promptForm(prompt, n = prompt.own.messages.length) {
  const { messages, segments, injected } = prompt.own;
  return { messages: messages.slice(0, n), segments, injected };
}

/** @type {WeakMap<Prompt, {bytes: Uint8Array, n: number}>} a Prompt's messages as msgpack, kept by {@link packedForm} between exports */
const packed = new WeakMap();

/** The msgpack array header of n items. @param {number} n */
const arrayHeader = (n) =>
  n < 16
    ? Uint8Array.of(0x90 | n)
    : n < 0x10000
      ? Uint8Array.of(0xdc, n >> 8, n & 0xff)
      : Uint8Array.of(0xdd, n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff);

/**
 * @internal The prompt form of all of `prompt`'s messages as msgpack bytes (which the calls read as the form itself): the messages' bytes are kept
 * from export to export, and each packs only those added since the last.
 * @param {Prompt} prompt @returns {Uint8Array}
 */
export function packedForm(prompt) {
  const { messages, segments, injected } = prompt.own;
  const n = messages.length;
  let kept = packed.get(prompt) ?? { bytes: new Uint8Array(0), n: 0 };
  if (kept.n < n) {
    const more = encodeRequest(messages.slice(kept.n, n));
    const items = more.subarray(arrayHeader(n - kept.n).length);
    const bytes = new Uint8Array(kept.bytes.length + items.length);
    bytes.set(kept.bytes);
    bytes.set(items, kept.bytes.length);
    packed.set(prompt, (kept = { bytes, n }));
  }
  const parts = [Uint8Array.of(0x83), encodeRequest("segments"), encodeRequest(segments), encodeRequest("messages"), arrayHeader(n)];
  parts.push(kept.bytes, encodeRequest("injected"), encodeRequest(injected));
  const out = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** @internal The number of messages `prompt` holds. @param {Prompt} prompt */
export function messageCount(prompt) {
  return prompt.own.messages.length;
}

/** @internal The messages `prompt` holds from `from` to `to` (a fresh array of its own messages, never changed). @param {Prompt} prompt @param {number} from @param {number} to */
export function messagesOf(prompt, from, to) {
  return prompt.own.messages.slice(from, to);
}

/** @param {import("./index.js").Message} m a copy of m, its content and blocks */
function copyMessage(m) {
  return { role: m.role, content: m.content.map((b) => ({ type: b.type, text: b.text })) };
}

function readOnly() {
  throw new TypeError("a prompt's messages are read-only: edit a copy (messages.slice() or [...messages] is an array of new messages)");
}

/**
 * The first `n` of `items` (which only grow) as a read-only Array made in O(1), as Python's MessagesView: later steps never show in it,
 * each message read from it is a new object. A Proxy over an empty Array: Array.isArray, the Array methods and JSON.stringify take it.
 * (Its handler is one object literal: spreading a table of traps into it made a read cost 4 µs.)
 * @param {import("./index.js").Message[]} items @param {number} n @returns {readonly import("./index.js").Message[]}
 */
function messagesView(items, n) {
  const at = (/** @type {string | symbol} */ k) => (typeof k === "string" && +k < n && String(+k >>> 0) === k ? +k : -1);
  const target = /** @type {any} */ ([]);
  target[INSPECT] = () => items.slice(0, n); // what Node's console shows
  return new Proxy(target, {
    get: (t, k) => (at(k) >= 0 ? copyMessage(items[at(k)]) : k === "length" ? n : Reflect.get(t, k)),
    has: (t, k) => at(k) >= 0 || Reflect.has(t, k),
    ownKeys: () => [...Array.from({ length: n }, (_, i) => String(i)), "length"],
    getOwnPropertyDescriptor(t, k) {
      if (k === "length") return { value: n, writable: true, enumerable: false, configurable: false };
      return at(k) >= 0 ? { value: copyMessage(items[at(k)]), writable: false, enumerable: true, configurable: true } : undefined;
    },
    set: readOnly,
    defineProperty: readOnly,
    deleteProperty: readOnly,
    preventExtensions: readOnly,
    setPrototypeOf: readOnly,
  });
}
const INSPECT = Symbol.for("nodejs.util.inspect.custom");

/**
 * Messages (`{role, content: [{type: "text", text}]}`, as the core answers them) as chat templates, TRL and the providers' SDKs take
 * them: `{role, content: string}`, each content its blocks' texts joined (every character kept), as Python's chat_messages.
 * @param {Iterable<import("./index.js").Message>} messages @returns {import("./index.js").ChatMessage[]}
 */
export function chatMessages(messages) {
  return Array.from(messages, (m, i) => ({ role: m.role, content: m.content.map((b, j) => textOf(b, i, j)).join("") }));
}

/** @param {any} b block `j` of message `i` @param {number} i @param {number} j */
function textOf(b, i, j) {
  if (b?.type === "text" && typeof b.text === "string") return b.text;
  const what = `chatMessages: messages[${i}].content[${j}] is not a text block {type: "text", text: string}`;
  throw new TypeError(`${what}: pass the messages the core assembled (prompt.messages, a response's messages)`);
}
