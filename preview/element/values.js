/**
 * What the element's worker makes of the module's answers, with no state of
 * its own: an error as a message's plain object, JSON with every integer
 * exact, positions in a CRLF text, and the blocks an Anthropic export marks
 * with `cache_control`.
 *
 * @module
 */

import { AssemblyError } from "@polyloop/assembly";

/** An AssemblyError (or any error: internal) as a message's plain object,
 * with where it is (`at`: the path's keys and indexes, a JSON syntax
 * error's byte) when a view call gave it (docs/SPEC.md §7.8).
 * @param {any} e @returns {{code: string, path: string, message: string, offset?: number, at?: {path: (string | number)[], byte: number | null}}} */
export function errorOf(e) {
  if (!(e instanceof AssemblyError)) return { code: "internal", path: "", message: String(e?.message ?? e) };
  /** @type {any} */
  const out = { code: String(e.code), path: String(e.path ?? ""), message: String(e.message ?? "") };
  if (typeof e.offset === "number" && e.offset >= 0) out.offset = e.offset;
  if (e.at) out.at = { path: [...e.at.path], byte: e.at.byte ?? null };
  return out;
}

/** @param {any} v @param {string} k */
export const field = (v, k) => (v instanceof Map ? v.get(k) : v?.[k]);

/** A run of digits long enough to be an integer beyond 2^53. */
const LONG_INTEGER = /\d{16}/;

/**
 * JSON text as a JavaScript value with every integer exact: one beyond
 * 2^53 becomes a bigint read from its source text (JSON.parse's reviver
 * context), never a rounded number, so the incremental prompt sends the
 * budget the module read (docs/SPEC.md §7.3).
 *
 * @param {string} text JSON text the module judged valid
 */
export function parseExact(text) {
  if (!LONG_INTEGER.test(text)) return JSON.parse(text);
  return JSON.parse(text, (_k, v, ctx) => {
    if (typeof v !== "number" || Number.isSafeInteger(v)) return v;
    const src = /** @type {any} */ (ctx)?.source;
    if (typeof src !== "string") throw new Error("this JavaScript engine cannot read an integer beyond 2^53 exactly");
    return /^-?\d+$/.test(src) ? BigInt(src) : v;
  });
}

/**
 * The position in `text` of the UTF-16 index `i` of `judged` (the text with
 * each LF written CRLF): the CRs before it are not in `text`.
 * @param {string} judged @param {number} i
 */
export function unCRLF(judged, i) {
  let crs = 0;
  for (let at = judged.indexOf("\r"); at >= 0 && at < i; at = judged.indexOf("\r", at + 1)) crs++;
  return i - crs;
}

/**
 * Where the blocks of an Anthropic export body that carry `cache_control`
 * are in the prompt: its `system` blocks are the blocks of the prompt's
 * leading system messages, in order, and `messages[j]` is the message after
 * them j places on (docs/SPEC.md §7.13: no message added, dropped or moved).
 * @param {any} body the export's answer
 * @param {{count: number, roleNames: string[], roles: ArrayLike<number>, blockStart: ArrayLike<number>}} cols
 * @returns {[number, number][]} `[message, block]` pairs, in prompt order
 */
export function cacheBlocks(body, cols) {
  const system = field(body, "system") ?? [];
  const messages = field(body, "messages") ?? [];
  let lead = 0;
  while (lead < cols.count && cols.roleNames[cols.roles[lead]] === "system") lead++;
  /** @type {[number, number][]} */
  const out = [];
  let k = 0;
  for (let i = 0; i < lead; i++)
    for (let b = 0; b < cols.blockStart[i + 1] - cols.blockStart[i]; b++, k++)
      if (field(system[k], "cache_control") != null) out.push([i, b]);
  if (k !== system.length || messages.length !== cols.count - lead)
    throw new Error(`the Anthropic export (${system.length} system blocks, ${messages.length} messages) does not match the prompt`);
  messages.forEach((/** @type {any} */ m, /** @type {number} */ j) => {
    const blocks = field(m, "content") ?? [];
    blocks.forEach((/** @type {any} */ blk, /** @type {number} */ b) => field(blk, "cache_control") != null && out.push([lead + j, b]));
  });
  return out;
}

/** A bigint as its exact JSON number. */
export const jsonBigInt = (/** @type {string} */ _k, /** @type {any} */ v) =>
  typeof v === "bigint" ? /** @type {any} */ (JSON).rawJSON(String(v)) : v;
