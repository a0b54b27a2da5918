/**
 * Deep JSON texts for deep-json.test.mjs and chromium.test.mjs: DEEP_SOURCE
 * defines deepCase(name, n), the text of about n bytes and the msgpack it
 * says (null for a syntax error), as source, for a child process and a page
 * to build the text themselves; deepCase is it here.
 *
 * @module
 */

export const DEEP_SOURCE = String.raw`
const enc = new TextEncoder();
// s repeated k times, as bytes (past V8's longest string)
function rep(s, k) {
  const b = enc.encode(s);
  const out = new Uint8Array(b.length * k);
  if (!out.length) return out;
  out.set(b);
  for (let n = b.length; n < out.length; n *= 2) out.copyWithin(n, 0, Math.min(n, out.length - n));
  return out;
}
function cat(...parts) {
  parts = parts.map((p) => (typeof p === "string" ? enc.encode(p) : p instanceof Uint8Array ? p : Uint8Array.from(p)));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), (at += p.length));
  return out;
}
const tmpl = '"observation_template":"{observation}"';
const str = (s) => [0xa0 | s.length, ...enc.encode(s)];
function deepCase(name, n) {
  if (name === "[") return { text: rep("[", n), mp: null };
  if (name === '{"a":') return { text: rep('{"a":', Math.floor(n / 5)), mp: null };
  const head = [...str("observation_template"), ...str("{observation}")];
  if (name === "steps") {
    const k = Math.floor((n - 60) / 2);
    const text = cat("{" + tmpl + ',"steps":[', rep("[", k), rep("]", k), "]}");
    return { text, mp: cat([0x82, ...head, ...str("steps"), 0x91], new Uint8Array(k - 1).fill(0x91), [0x90]) };
  }
  const j = Math.floor((n - 60) / 6);
  const text = cat('{"x":', rep('{"a":', j), "0", rep("}", j), "," + tmpl + "}");
  return { text, mp: cat([0x82, ...str("x")], triples(j), [0, ...head]) };
}
function triples(j) {
  const out = new Uint8Array(3 * j);
  for (let i = 0; i < 3 * j; i += 3) (out[i] = 0x81), (out[i + 1] = 0xa1), (out[i + 2] = 0x61);
  return out;
}
`;

/** @type {(name: string, n: number) => {text: Uint8Array, mp: Uint8Array | null}} */
export const deepCase = new Function(`${DEEP_SOURCE}\nreturn deepCase;`)();

/** The cases: every shape at 1 and 10 MiB, and 100 MiB of "["; with
 * POLYLOOP_LIMITS=full (make test.limits), every shape at 1,000 MiB too. */
export const DEEP_CASES = [];
const SHAPES = ["[", '{"a":', "steps", "unknown"];
for (const n of [1 << 20, 10 << 20]) for (const name of SHAPES) DEEP_CASES.push([name, n]);
DEEP_CASES.push(["[", 100 << 20]);
if (process.env.POLYLOOP_LIMITS === "full") for (const name of SHAPES) DEEP_CASES.push([name, 1000 << 20]);
