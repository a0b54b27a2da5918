/**
 * Shared helpers of the Node suite: the assembler (loaded once per test file
 * through the package's own name, so the exports map is exercised), the
 * shared vectors, and small decoding helpers.
 *
 * @module
 */

import { readFileSync, readdirSync, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Decoder } from "@msgpack/msgpack";
import { loadAssembler } from "@polyloop/assembly";

export const REPO = fileURLToPath(new URL("../../../", import.meta.url));
export const VECTORS_DIR = `${REPO}testdata/vectors`;

/** @type {Promise<import("../src/index.js").Assembler> | undefined} */
let loading;
/** The assembler shared by a test file. */
export function assembler() {
  loading ??= loadAssembler();
  return loading;
}

/**
 * The library's decoder with Node's own UTF-8 decoding of strings: the
 * library's TextDecoder drops a leading U+FEFF (a lost code point),
 * which made this oracle agree with the binding's old decoder.
 */
class OracleDecoder extends Decoder {
  decodeUtf8String(byteLength, headerOffset) {
    const offset = this.pos + headerOffset;
    if (this.bytes.byteLength < offset + byteLength) throw new RangeError("truncated msgpack str");
    const s = Buffer.from(this.bytes.buffer, this.bytes.byteOffset + offset, byteLength).toString("utf8");
    this.pos += headerOffset + byteLength;
    return s;
  }
}

const decoder = new OracleDecoder();
/** Decodes response bytes with the library decoder (strings by Node's Buffer). */
export function decode(bytes) {
  return decoder.decode(bytes);
}

/**
 * Every case of testdata/vectors/*.json, with the file it came from and the
 * request (and response, for ok cases) as bytes.
 *
 * @returns {{file: string, name: string, description: string, request: Uint8Array,
 *   response?: Uint8Array, error?: {code: string, path: string}}[]}
 */
export function loadVectors() {
  if (!existsSync(VECTORS_DIR)) return [];
  const out = [];
  for (const f of readdirSync(VECTORS_DIR).filter((n) => n.endsWith(".json")).sort()) {
    const doc = JSON.parse(readFileSync(`${VECTORS_DIR}/${f}`, "utf8"));
    for (const c of doc.cases) {
      out.push({
        file: f,
        name: c.name,
        description: c.description,
        request: new Uint8Array(Buffer.from(c.request, "base64")),
        response: c.response === undefined ? undefined : new Uint8Array(Buffer.from(c.response, "base64")),
        error: c.error,
      });
    }
  }
  return out;
}

const PROMPT_CASE_KEYS = ["name", "description", "request", "response", "steps"];
const PROMPT_STEP_KEYS = ["raw_output", "observation", "response", "error"];

/**
 * The cases of testdata/prompt-vectors/prompts.json (format in its README),
 * checked: known keys only, unique names, each step with exactly one of
 * response and error. The JSON text is parsed by JSON.parse, so a lone
 * surrogate escape is a lone surrogate in the string.
 *
 * @returns {{name: string, description: string, request: object, response: string,
 *   steps: {raw_output: string, observation: string, response?: string, error?: {code: string, path: string}}[]}[]}
 */
export function loadPromptVectors() {
  const doc = JSON.parse(readFileSync(`${REPO}testdata/prompt-vectors/prompts.json`, "utf8"));
  const names = new Set();
  for (const c of doc.cases) {
    for (const k of Object.keys(c)) if (!PROMPT_CASE_KEYS.includes(k)) throw new Error(`${c.name}: unknown key ${k}`);
    if (names.has(c.name)) throw new Error(`prompt vector ${c.name} twice`);
    names.add(c.name);
    for (const s of c.steps) {
      for (const k of Object.keys(s)) if (!PROMPT_STEP_KEYS.includes(k)) throw new Error(`${c.name}: unknown step key ${k}`);
      if ((s.response === undefined) === (s.error === undefined)) throw new Error(`${c.name}: a step has exactly one of response and error`);
    }
  }
  return doc.cases;
}

/** Compares strings by Unicode code point (the order docs/SPEC.md §3 asks for),
 * written without any sort of the engine: code point by code point. */
export function compareCodePoints(a, b) {
  const x = [...a].map((c) => c.codePointAt(0));
  const y = [...b].map((c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** The error of a call, or null if it did not throw. */
export function errorOf(f) {
  try {
    f();
    return null;
  } catch (e) {
    return e;
  }
}

export const hex = (b) => Buffer.from(b).toString("hex");

export const JSON_VECTORS_DIR = `${REPO}testdata/json-vectors`;

/**
 * Every case of testdata/json-vectors/*.json (format in its README), with the
 * file it came from and the JSON text as bytes.
 *
 * @returns {{file: string, name: string, request: Uint8Array, response?: Uint8Array,
 *   error?: {code: string, path: string}, syntax: boolean}[]}
 */
export function loadJsonVectors() {
  if (!existsSync(JSON_VECTORS_DIR)) return [];
  const out = [];
  const known = new Set(["name", "description", "request", "msgpack", "response", "error", "syntax"]);
  for (const f of readdirSync(JSON_VECTORS_DIR).filter((n) => n.endsWith(".json")).sort()) {
    for (const c of JSON.parse(readFileSync(`${JSON_VECTORS_DIR}/${f}`, "utf8")).cases) {
      for (const k of Object.keys(c)) if (!known.has(k)) throw new Error(`${f}/${c.name}: unknown key ${k}`);
      if ((c.response === undefined) === (c.error === undefined)) throw new Error(`${f}/${c.name}: exactly one of response and error`);
      out.push({
        file: f,
        name: c.name,
        request: new Uint8Array(Buffer.from(c.request, "base64")),
        response: c.response === undefined ? undefined : new Uint8Array(Buffer.from(c.response, "base64")),
        error: c.error,
        syntax: c.syntax === true,
      });
    }
  }
  return out;
}
