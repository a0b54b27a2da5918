/**
 * The response limit of the incremental prompt (docs/SPEC.md §4 and §7.3):
 * `addStep` is `too_large` exactly when one `assemble` of the same steps
 * would be, that is when the canonical response of the whole prompt would be
 * longer than 1.5 GiB. The binding keeps that response's exact size from the
 * byte lengths of the responses it already receives, at a cost independent of
 * the history (the core's `ResponseSizer`, core/size.go, is the same rule
 * on typed messages).
 *
 * The rule. An ok response is the fixed part (keys, `v`, `ok`, the
 * `context_overflow` flag, the `injected` array, the three digests), the two
 * array headers of `messages` and `message_chars` (1, 3 or 5 bytes for n
 * entries: ≤ 15, ≤ 65535, more), each message with its `message_chars`
 * entry, and the `prompt_chars` value (a msgpack uint: 1, 2, 3, 5 or 9
 * bytes). So a response of B bytes, n messages and prompt_chars c holds
 * `B − 2·header(n) − uint(c)` bytes that do not change when messages are
 * appended to it ("body"), and a one-step response (no `injected` entries)
 * brings `B − STEP_FIXED − 2·header(n) − uint(c)` bytes of messages.
 * The property test in test/size.test.mjs proves the rule against
 * `assembleBytes` of the whole request.
 *
 * @module
 */

/** docs/SPEC.md §4: the longest response, in bytes (core.MaxResponseBytes). */
export const MAX_RESPONSE_BYTES = 3 * 2 ** 29;

/** The core's message for a response over {@link MAX_RESPONSE_BYTES} (path ""). */
export const RESPONSE_TOO_LARGE =
  "the response would be over the 1.5 GiB limit; split the request (fewer steps, or a narrower template width)";

/**
 * The fixed part of an ok response with no `injected` entries: the map
 * header, the eight keys, `v`, `ok`, `context_overflow`, the empty `injected`
 * array, the three-key `prefix_digests` map with three 64-digit hex strs.
 */
export const STEP_FIXED = 1 + 2 + 1 + 3 + 1 + 9 + 14 + 13 + 17 + 1 + 9 + 1 + 15 + 1 + (4 + 11 + 5) + 3 * (2 + 64);

/** Bytes of a msgpack array header of `n` entries. */
export function arrayHeaderSize(n) {
  return n <= 15 ? 1 : n <= 0xffff ? 3 : 5;
}

/** Bytes of a msgpack uint `u` (≥ 0) in its shortest form. */
export function uintSize(u) {
  return u <= 0x7f ? 1 : u <= 0xff ? 2 : u <= 0xffff ? 3 : u <= 0xffffffff ? 5 : 9;
}

/** The exact size of the canonical response of a prompt that grows by steps. */
export class ResponseSize {
  /**
   * @param {number} bytes the size of an ok response (as the module returned it)
   * @param {number} messages its number of messages
   * @param {number} promptChars its `prompt_chars`
   */
  constructor(bytes, messages, promptChars) {
    /** @private the bytes that do not change when messages are appended */
    this.body = bytes - 2 * arrayHeaderSize(messages) - uintSize(promptChars);
    /** @private */
    this.messages = messages;
    /** @private */
    this.promptChars = promptChars;
  }

  /** The size of the whole response now. */
  get bytes() {
    return this.body + 2 * arrayHeaderSize(this.messages) + uintSize(this.promptChars);
  }

  /**
   * The size of the whole response once the messages of a one-step response
   * are appended (nothing changes).
   *
   * @param {number} stepBytes the size of the one-step ok response
   * @param {number} stepMessages its number of messages
   * @param {number} stepChars its `prompt_chars`
   */
  after(stepBytes, stepMessages, stepChars) {
    const body = this.body + stepBytes - STEP_FIXED - 2 * arrayHeaderSize(stepMessages) - uintSize(stepChars);
    return body + 2 * arrayHeaderSize(this.messages + stepMessages) + uintSize(this.promptChars + stepChars);
  }

  /**
   * Appends the messages of a one-step response; false (and nothing changes)
   * when the whole response would be over {@link MAX_RESPONSE_BYTES}.
   *
   * @param {number} stepBytes
   * @param {number} stepMessages
   * @param {number} stepChars
   * @returns {boolean}
   */
  add(stepBytes, stepMessages, stepChars) {
    if (this.after(stepBytes, stepMessages, stepChars) > MAX_RESPONSE_BYTES) return false;
    this.body += stepBytes - STEP_FIXED - 2 * arrayHeaderSize(stepMessages) - uintSize(stepChars);
    this.messages += stepMessages;
    this.promptChars += stepChars;
    return true;
  }
}
