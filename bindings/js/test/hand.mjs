/**
 * A hand-made msgpack writer for tests, independent of any msgpack library and
 * of the binding's encoder: each function returns the bytes of one value, in
 * the shortest form, so a test can state the exact wire bytes a JavaScript
 * value should be equivalent to.
 *
 * @module
 */

/** @param {...(Uint8Array|number[])} parts */
export function cat(...parts) {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function be(n, width) {
  const b = [];
  for (let i = width - 1; i >= 0; i--) b.push(Number((BigInt(n) >> BigInt(8 * i)) & 0xffn));
  return b;
}

/** A str whose payload is the given raw bytes (valid UTF-8 or not). */
export function rawStr(bytes) {
  const n = bytes.length;
  const head = n < 32 ? [0xa0 | n] : n < 256 ? [0xd9, n] : n < 65536 ? [0xda, ...be(n, 2)] : [0xdb, ...be(n, 4)];
  return cat(head, bytes);
}

/** A str of the UTF-8 of a well-formed JavaScript string (Node's Buffer). */
export function str(s) {
  if (!s.isWellFormed()) throw new Error("hand.str takes well-formed strings; use rawStr");
  return rawStr(new Uint8Array(Buffer.from(s, "utf8")));
}

/** An int in its shortest form (number or bigint). */
export function int(v) {
  const n = BigInt(v);
  if (n >= 0n) {
    if (n < 128n) return Uint8Array.of(Number(n));
    if (n < 256n) return Uint8Array.of(0xcc, Number(n));
    if (n < 65536n) return Uint8Array.of(0xcd, ...be(n, 2));
    if (n < 1n << 32n) return Uint8Array.of(0xce, ...be(n, 4));
    return Uint8Array.of(0xcf, ...be(n, 8));
  }
  if (n >= -32n) return Uint8Array.of(Number(n + 256n));
  if (n >= -128n) return Uint8Array.of(0xd0, Number(n + 256n));
  if (n >= -32768n) return Uint8Array.of(0xd1, ...be(n + 65536n, 2));
  if (n >= -(1n << 31n)) return Uint8Array.of(0xd2, ...be(n + (1n << 32n), 4));
  return Uint8Array.of(0xd3, ...be(n + (1n << 64n), 8));
}

/** A float64. */
export function f64(x) {
  const b = new Uint8Array(9);
  b[0] = 0xcb;
  new DataView(b.buffer).setFloat64(1, x);
  return b;
}

export const nil = Uint8Array.of(0xc0);
export const T = Uint8Array.of(0xc3);
export const F = Uint8Array.of(0xc2);

/** A bin. */
export function bin(bytes) {
  return cat([0xc4, bytes.length], bytes);
}

/** A fixext 1 of the given type and data byte. */
export function ext1(type, byte) {
  return Uint8Array.of(0xd4, type, byte);
}

/** An array of encoded elements. */
export function arr(...items) {
  const n = items.length;
  return cat(n < 16 ? [0x90 | n] : [0xdc, ...be(n, 2)], ...items);
}

/** A map from [keyBytes|string, valueBytes] pairs, in the order given. */
export function map(...pairs) {
  const n = pairs.length;
  const parts = [n < 16 ? [0x80 | n] : [0xde, ...be(n, 2)]];
  for (const [k, v] of pairs) parts.push(typeof k === "string" ? str(k) : k, v);
  return cat(...parts);
}

/** A message `{role, content: [{type: "text", text}]}` with a plain text. */
export function message(role, text) {
  return map(["role", str(role)], ["content", arr(map(["type", str("text")], ["text", str(text)]))]);
}
