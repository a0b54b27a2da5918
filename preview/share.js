/**
 * The share link (the request's text deflated into the address's fragment,
 * never sent to a server), read back within bounds, and copying to the
 * clipboard.
 *
 * @module
 */

import { fmt } from "./element/text.js";

/** The longest share link fragment (characters after `#req=`). */
export const SHARE_LIMIT = 60_000;
/** The most bytes a share link may inflate to: a link this page makes holds
 * at most SHARE_LIMIT characters of compressed text, and deflate inflates a
 * byte to at most about 1,032; past this the link is refused. */
export const SHARE_INFLATE_LIMIT = 32 * 1024 * 1024;

const b64url = (u8) => {
  let s = "";
  for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000));
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
};
const unb64url = (s) => Uint8Array.from(atob(s.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));

async function pipe(bytes, stream) {
  const out = new Blob([bytes]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(out).arrayBuffer());
}

/** The share link of a request text: deflate-raw, base64url, in the
 * fragment (never sent to a server). Null beyond SHARE_LIMIT. */
export async function shareLink(text) {
  const packed = b64url(await pipe(new TextEncoder().encode(text), new CompressionStream("deflate-raw")));
  if (packed.length > SHARE_LIMIT) return { url: null, size: packed.length };
  const u = new URL(location.href);
  u.search = "";
  u.hash = `req=${packed}`;
  return { url: u.href, size: packed.length };
}

/**
 * Inflates deflate-raw bytes through a streaming limit: read chunk by
 * chunk, stopped (and the stream cancelled) once past `limit` bytes.
 * @param {Uint8Array} packed @param {number} limit
 * @returns {Promise<Uint8Array | null>} null past the limit
 */
export async function inflateBounded(packed, limit) {
  const reader = new Blob([packed]).stream().pipeThrough(new DecompressionStream("deflate-raw")).getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * The request text of a share link's fragment (`#req=…`): `{text}`, `{refused}`
 * (why it is ignored: too long, inflating past its limit, damaged), or null
 * when the fragment holds none.
 * @param {string} hash
 * @returns {Promise<{text: string} | {refused: string} | null>}
 */
export async function readShareLink(hash) {
  const m = /^#req=([A-Za-z0-9_-]+)$/.exec(hash);
  if (!m) return null;
  if (m[1].length > SHARE_LIMIT)
    return {
      refused: `The share link is too long (${fmt.format(m[1].length)} characters, the limit is ${fmt.format(SHARE_LIMIT)}); it was ignored.`,
    };
  try {
    const bytes = await inflateBounded(unb64url(m[1]), SHARE_INFLATE_LIMIT);
    if (bytes === null)
      return { refused: `The share link inflates to more than ${fmt.format(SHARE_INFLATE_LIMIT)} bytes; it was ignored.` };
    return { text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    return { refused: "The share link in the address is damaged; it was ignored." };
  }
}

/** Copies text to the clipboard (a selected textarea where the Clipboard API is refused). @param {string} text */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const ta = document.createElement("textarea");
    ta.value = text;
    document.body.append(ta);
    ta.select();
    document.execCommand("copy");
    ta.remove();
  }
}
