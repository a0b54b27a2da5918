// The preview gives the CLI's verdict on every file it opens, in Chromium: a
// differential test. 1,000 request files, made deterministically (a seeded
// PRNG) from the shared vectors (testdata/vectors as msgpack files,
// testdata/json-vectors as JSON text) and from random requests, with random
// line endings (LF, CRLF, CR, mixed: between tokens, and now and then inside
// a string, which changes the value), some with a leading BOM, some with an
// invalid UTF-8 sequence in a string or elsewhere, some msgpack files cut
// short, with a trailing byte or a changed byte. Each file is opened through
// the page's file input, one page for all; its verdict (code and path, and
// for an ok request the exact response bytes) must equal what the CLI
// (`polyloop-assemble --engine native --out msgpack FILE`, built once)
// answers for the same bytes (docs/SPEC.md §2.3: JSON text gets one verdict
// wherever it is read). Every other JSON file with a CR (valid UTF-8) then
// gets a space typed before its last `}`, as a user types it: the verdict
// must not change (the edit lands where the editor shows it).
//
// Compared: the code, the path, the byte offset a message names ("at byte
// N": CRLF files with a syntax error, judged with their CRLF) and the
// response bytes. Also generated: `.json` files of two or three one-line
// objects (one JSON text, as the CLI reads it without --batch).
//
// Not generated, because the page and the CLI are not asked the same thing:
// a blank file (the CLI refuses it as no request at all).

import test from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { encode as encodeMsgpack } from "@msgpack/msgpack";
import { REPO, decode } from "../../bindings/js/test/common.mjs";
import { loadCases } from "../../bindings/js/test/vectorsets.mjs";
import { open, skip, withPreview } from "./harness.mjs";

const FILES = 1000;
const SEED = 0x5eed2101;
const te = new TextEncoder();

// ---- a seeded PRNG ------------------------------------------------------------

/** mulberry32: a small deterministic PRNG; `int(n)` in [0, n). */
function prng(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return { int, chance: (p) => next() < p, pick: (a) => a[int(a.length)] };
}

// ---- random requests ----------------------------------------------------------

const PIECES = [
  "a",
  "hello",
  " ",
  "  ",
  "{observation}",
  "{",
  "}",
  "{{",
  "}}",
  "é",
  "😀",
  "中文",
  "\u202e",
  "\u200b",
  "\ufeff",
  "\u00a0",
  "\u2028",
  "\n",
  "\r\n",
  "\r",
  "\t",
  '"',
  "\\",
  "/",
  "\u0001",
  "\u007f",
  "\ud800",
];

function randomString(r, max = 6) {
  let s = "";
  for (let n = r.int(max + 1); n > 0; n--) s += r.chance(0.04) ? "\ud800" : r.pick(PIECES.slice(0, -1));
  return s;
}

const TEMPLATES = ["{observation}", "Obs: {observation}", "{{x}} {observation}!", "{observation}{observation}", "", "{bad", "}", "{obs}"];
const BUDGETS = [0, 1, 7, 40, 1000, -1, 1.5, null, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 1n, 2n ** 64n, "10"];

const message = (r) => ({
  role: r.chance(0.9) ? r.pick(["system", "user", "assistant"]) : "tool",
  content: Array.from({ length: r.int(3) }, () => ({ type: r.chance(0.95) ? "text" : "image", text: randomString(r) })),
});

/** A random request (an object; bigints for integers past 2^53), valid or not. */
function randomRequest(r) {
  /** @type {Record<string, any>} */
  const req = {};
  const fields = {
    v: () => (r.chance(0.85) ? 1 : r.pick([2, 0, "1"])),
    run_messages: () => Array.from({ length: r.int(3) }, () => message(r)),
    injections: () =>
      Object.fromEntries(
        Array.from({ length: r.int(3) }, (_, k) => [
          r.chance(0.9) ? `ch${k}` : randomString(r, 2),
          Array.from({ length: r.int(3) }, (_, e) => ({ entry_id: r.chance(0.95) ? `e${e}` : "", content: randomString(r) })),
        ]),
      ),
    goal_messages: () => Array.from({ length: r.int(3) }, () => message(r)),
    steps: () => Array.from({ length: r.int(5) }, () => ({ raw_output: randomString(r), observation: randomString(r) })),
    observation_template: () => (r.chance(0.8) ? r.pick(TEMPLATES.slice(0, 4)) : r.pick(TEMPLATES)),
    max_prompt_chars: () => r.pick(BUDGETS),
  };
  const keys = Object.keys(fields);
  for (let n = keys.length; n > 1; n--) {
    const k = r.int(n);
    [keys[n - 1], keys[k]] = [keys[k], keys[n - 1]];
  }
  for (const k of keys) if (k === "observation_template" ? r.chance(0.97) : r.chance(0.5)) req[k] = fields[k]();
  if (r.chance(0.03)) req.extra = 1;
  if (r.chance(0.03) && req.steps?.length) delete req.steps[0].observation;
  return req;
}

// ---- JSON text, written by hand (random escapes, bigints, repeated keys) ----

const hex4 = (u, r) => {
  const h = u.toString(16).padStart(4, "0");
  return `\\u${r.chance(0.5) ? h : h.toUpperCase()}`;
};
const SHORT = { 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\" };

/** A JS string as a JSON string literal, some characters escaped at random
 * (a lone surrogate can only be written escaped). */
function jsonString(s, r) {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    const pair = u >= 0xd800 && u < 0xdc00 && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    const lone = !pair && (u & 0xf800) === 0xd800;
    if (SHORT[u] && (u === 34 || u === 92 || r.chance(0.7))) out += SHORT[u];
    else if (u < 0x20 || lone || r.chance(0.08)) out += hex4(u, r);
    else if (u === 0x2f && r.chance(0.3)) out += "\\/";
    else if (pair) {
      out += r.chance(0.1) ? hex4(u, r) + hex4(s.charCodeAt(i + 1), r) : s.slice(i, i + 2);
      i++;
    } else out += s[i];
  }
  return `${out}"`;
}

/** A value as compact JSON text; now and then a key is written twice. */
function jsonText(v, r) {
  if (v === null) return "null";
  if (typeof v === "string") return jsonString(v, r);
  if (typeof v === "bigint" || typeof v === "number") return v === 0 && r.chance(0.1) ? "-0" : String(v);
  if (Array.isArray(v)) return `[${v.map((x) => jsonText(x, r)).join(",")}]`;
  const entries = Object.entries(v);
  if (entries.length && r.chance(0.02)) entries.push(r.pick(entries));
  return `{${entries.map(([k, x]) => `${jsonString(k, r)}:${jsonText(x, r)}`).join(",")}}`;
}

// ---- the files' bytes ---------------------------------------------------------

const EOLS = { LF: [0x0a], CRLF: [0x0d, 0x0a], CR: [0x0d] };
const isSpace = (b) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
const BAD_UTF8 = [
  [0xff],
  [0xfe],
  [0xc0, 0xaf],
  [0x80],
  [0xed, 0xa0, 0x80],
  [0xe2, 0x82],
  [0xf4, 0x90, 0x80, 0x80],
  [0xc3],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
];

/**
 * JSON bytes with their white space between tokens redrawn: each run
 * replaced by a non-empty one, some after `{ [ , :` and before `} ]`, line
 * ends of the kind `eol` (or all kinds, "mixed"); with `inString`, a space
 * inside a string now and then becomes a line end. Returns the bytes and
 * the offsets that are inside strings.
 */
function respace(bytes, r, eol, inString) {
  const out = [];
  const strings = [];
  const end = () => EOLS[eol === "mixed" ? r.pick(Object.keys(EOLS)) : eol];
  const ws = (nonEmpty) => {
    const k = r.int(nonEmpty ? 5 : 10);
    if (k >= 5) return;
    out.push(...[[0x20], end(), [...end(), 0x20, 0x20], [0x09], [0x20, ...end()]][k]);
  };
  if (r.chance(0.2)) ws(true);
  let str = false;
  let esc = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (str) {
      strings.push(out.length);
      if (inString && b === 0x20 && r.chance(0.05)) out.push(...end());
      else out.push(b);
      if (esc) esc = false;
      else if (b === 0x5c) esc = true;
      else if (b === 0x22) str = false;
      continue;
    }
    if (isSpace(b)) {
      while (i + 1 < bytes.length && isSpace(bytes[i + 1])) i++;
      ws(true);
      continue;
    }
    if (b === 0x7d || b === 0x5d) ws(false);
    out.push(b);
    if (b === 0x22) str = true;
    else if (b === 0x7b || b === 0x5b || b === 0x2c || b === 0x3a) ws(false);
  }
  if (r.chance(0.6)) out.push(...end());
  return { bytes: out, strings };
}

/** A JSON file from JSON bytes: line ends, maybe a BOM, maybe invalid UTF-8. */
function jsonFile(r, text, what) {
  const eol = r.pick(["LF", "LF", "CRLF", "CRLF", "CR", "mixed"]);
  let { bytes, strings } = respace([...text], r, eol, r.chance(0.1));
  const tags = [what, eol];
  if (r.chance(0.12)) {
    // A syntax error: a stray byte between two tokens or anywhere.
    let at = r.int(bytes.length + 1);
    if (bytes[at - 1] === 0x0d && bytes[at] === 0x0a) at++; // a CRLF stays one line break
    bytes = [...bytes.slice(0, at), ...te.encode(r.pick(["]", ",", "}", "x", ":", '"', "{"])), ...bytes.slice(at)];
    tags.push(`syntax: a stray byte at ${at}`);
  }
  if (r.chance(0.15)) {
    const bad = r.pick(BAD_UTF8);
    const first = bytes.findIndex((b) => !isSpace(b));
    const inStr = strings.length > 0 && r.chance(0.75);
    const at = inStr ? r.pick(strings) : first + 1 + r.int(Math.max(1, bytes.length - first));
    bytes = [...bytes.slice(0, at), ...bad, ...bytes.slice(at)];
    tags.push(`${bad.map((b) => b.toString(16)).join(" ")} at byte ${at}${inStr ? " (in a string)" : ""}`);
  }
  if (r.chance(0.12)) {
    bytes = [0xef, 0xbb, 0xbf, ...bytes];
    tags.push("BOM");
  }
  return { name: "request.json", in: "json", bytes: Uint8Array.from(bytes), what: tags.join(", ") };
}

/** A `.json` file of two or three requests, one a line: the CLI reads one
 * JSON text (its "unexpected data after the JSON value"), and so must the page. */
function multiObjectFile(r, k) {
  const eol = r.pick(["LF", "CRLF"]);
  const lines = Array.from({ length: 2 + r.int(2) }, () => jsonText(randomRequest(r), r));
  const nl = eol === "LF" ? "\n" : "\r\n";
  const bytes = te.encode(lines.join(nl) + (r.chance(0.5) ? nl : ""));
  return { name: "request.json", in: "json", bytes, what: `multi-object ${k}, ${eol}` };
}

const isMap = (b) => (b >= 0x80 && b <= 0x8f) || b === 0xde || b === 0xdf;

/** A msgpack file, maybe cut short, with a trailing byte, a changed byte or
 * an invalid UTF-8 sequence in place of `marker` (same length). */
function msgpackFile(r, bytes, what, marker = null) {
  const b = Uint8Array.from(bytes);
  const tags = [what];
  const at = marker === null ? -1 : Buffer.from(b).indexOf(marker);
  if (at >= 0) {
    b.set([0xed, 0xa0, 0x80].slice(0, marker.length), at);
    tags.push(`a surrogate's bytes at byte ${at}`);
  }
  let out = b;
  const change = r.int(100);
  if (b.length > 1 && change < 8) {
    out = b.slice(0, 1 + r.int(b.length - 1));
    tags.push(`cut at ${out.length}`);
  } else if (change < 13) {
    out = Uint8Array.from([...b, r.int(256)]);
    tags.push("a trailing byte");
  } else if (b.length > 1 && change < 21) {
    const k = 1 + r.int(b.length - 1);
    out[k] = r.int(256);
    tags.push(`byte ${k} changed`);
  }
  return isMap(out[0]) ? { name: "request.msgpack", in: "msgpack", bytes: out, what: tags.join(", ") } : null;
}

/** A random request as a msgpack file (integers past 2^64 - 1 have no
 * msgpack form: a float there instead). */
function randomMsgpack(r, k) {
  const req = randomRequest(r);
  const marker = "\u0003\u0004\u0005";
  if (req.max_prompt_chars === 2n ** 64n) req.max_prompt_chars = 1.5;
  if (r.chance(0.15)) (req.steps ??= []).push({ raw_output: `x${marker}y`, observation: "o" });
  return msgpackFile(r, encodeMsgpack(req, { useBigInt64: true }), `random request ${k} (msgpack)`, te.encode(marker));
}

/** The 1,000 files, the same every run. */
function makeFiles() {
  const r = prng(SEED);
  const jsonCases = loadCases("json-vectors").filter((c) => Buffer.from(c.request).toString("latin1").trim() !== "");
  const mpCases = loadCases("vectors").filter((c) => isMap(c.request[0]));
  assert.ok(jsonCases.length > 100 && mpCases.length > 600, "the shared vectors are there");
  const files = [];
  for (let k = 0; files.length < FILES; k++) {
    let f;
    if (k < jsonCases.length) f = jsonFile(r, jsonCases[k].request, `json-vectors ${jsonCases[k].id}`);
    else if (k < jsonCases.length + 250) {
      const c = r.pick(mpCases);
      f = msgpackFile(r, c.request, `vectors ${c.id}`);
    } else if (r.chance(0.04)) f = multiObjectFile(r, k);
    else if (r.chance(0.2)) {
      const c = r.pick(jsonCases);
      f = jsonFile(r, c.request, `json-vectors ${c.id}`);
    } else if (r.chance(0.3)) f = randomMsgpack(r, k);
    else f = jsonFile(r, te.encode(jsonText(randomRequest(r), r)), `random request ${k}`);
    if (f) files.push({ ...f, what: `file ${files.length}: ${f.what}` });
  }
  return files;
}

// ---- the oracle: the CLI --------------------------------------------------------

/** The CLI's answer for each file: `{code, path}` or `{ok, bytes}`. */
async function cliVerdicts(files, dir) {
  // built once by make for every suite that runs it (POLYLOOP_CLI), else here
  const cli = process.env.POLYLOOP_CLI || join(dir, "polyloop-assemble");
  if (!process.env.POLYLOOP_CLI) {
    execFileSync("go", ["build", "-o", cli, "./cmd/polyloop-assemble"], { cwd: REPO, env: { ...process.env, CGO_ENABLED: "0" } });
  }
  const run = promisify(execFile);
  const out = new Array(files.length);
  let next = 0;
  const worker = async () => {
    for (let k = next++; k < files.length; k = next++) {
      const path = join(dir, `${k}${files[k].name.slice(files[k].name.indexOf("."))}`);
      writeFileSync(path, files[k].bytes);
      const args = ["--engine", "native", "--in", files[k].in, "--out", "msgpack", path];
      const stdout = await run(cli, args, { encoding: "buffer", maxBuffer: 1 << 26 }).then(
        (p) => p.stdout,
        (e) => (e.code === 1 ? e.stdout : Promise.reject(new Error(`${files[k].what}: the CLI failed: ${e.stderr}`))),
      );
      const resp = decode(stdout);
      out[k] = resp.ok
        ? { ok: true, bytes: Buffer.from(stdout).toString("hex") }
        : { code: resp.error.code, path: resp.error.path, offset: byteOf(resp.error.message) };
    }
  };
  await Promise.all([worker(), worker()]);
  return out;
}

/** The byte offset an error message names ("at byte N"), or null. @param {string} message */
const byteOf = (message) => {
  const m = /at byte (\d+)/.exec(message);
  return m ? Number(m[1]) : null;
};

// ---- the page -----------------------------------------------------------------

/** Installs `window.verdict()`: the view's verdict once the newest
 * generation after `b` is rendered (code and path as the error panel shows
 * them, or the exact response bytes), and how many requests the file gave. */
const VERDICT = () => {
  /** @param {number} b */
  window.verdict = async (b) => {
    const v = window.preview.view;
    while (v.generation <= b) await new Promise((ok) => setTimeout(ok, 1));
    await v.whenRendered(v.generation);
    const requests = window.preview.browser.entries.length;
    const panel = v.shadowRoot.querySelector(".error");
    if (v.state === "ok") {
      let hex = "";
      for (const x of (await v.responseBytes()) ?? []) hex += x.toString(16).padStart(2, "0");
      return { requests, verdict: { ok: true, bytes: hex }, panelHidden: panel.hidden };
    }
    const q = (s) => panel.querySelector(s)?.textContent ?? "";
    const m = /at byte (\d+)/.exec(q(".message"));
    return { requests, verdict: { code: q(".code"), path: q(".path"), offset: m ? Number(m[1]) : null }, panelHidden: panel.hidden };
  };
};

/** Opens a file through the page's file input; its verdict as the page shows it. */
async function opened(page, f) {
  const before = await page.evaluate(() => window.preview.view.generation);
  await page.setInputFiles("#file", { name: f.name, mimeType: "application/octet-stream", buffer: Buffer.from(f.bytes) });
  return page.evaluate((b) => window.verdict(b), before);
}

/** Types a space before the editor's last `}` (white space between tokens
 * in any valid JSON text, so the CLI's verdict on the file still holds):
 * the edit must land where the editor shows it, whatever the file's line
 * ends were. */
function edited(page) {
  return page.evaluate(async () => {
    const before = window.preview.view.generation;
    const at = window.preview.editor.state.doc.toString().lastIndexOf("}");
    window.preview.edit(at, at, " ");
    return window.verdict(before);
  });
}

const fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
/** Whether a file is JSON text with a CR the editor's text does not have
 * (the editor holds valid UTF-8 only: the page's first edit of another file
 * switches to a text it changed). */
function editable(f) {
  if (f.in !== "json" || !f.bytes.includes(0x0d) || !f.bytes.includes(0x7d)) return false;
  try {
    fatal.decode(f.bytes);
    return true;
  } catch {
    return false;
  }
}

/** What differs between the page's verdict `got` and the CLI's `want`, or
 * null; with `anyOffset`, the byte offset is not compared (an edited file
 * whose line breaks were mixed: the editor's text, all LF, is judged). */
function mismatch(got, want, anyOffset = false) {
  if (got.requests !== 1) return `the page opened ${got.requests} requests`;
  if (got.panelHidden !== Boolean(got.verdict.ok)) return "the error panel contradicts the state";
  if (anyOffset && !want.ok) want = { ...want, offset: got.verdict.offset };
  if (JSON.stringify(got.verdict) === JSON.stringify(want)) return null;
  return `page ${brief(got.verdict, want)}, CLI ${brief(want, got.verdict)}`;
}

/** A verdict for a message: response bytes as their length and where they
 * first differ from `other`'s. */
function brief(v, other) {
  if (!v.ok) return JSON.stringify(v);
  let i = 0;
  while (i < v.bytes.length && v.bytes[i] === other.bytes?.[i]) i++;
  return `ok (${v.bytes.length / 2} response bytes${other.ok ? `, from byte ${i >> 1}: ${v.bytes.slice(i & ~1, (i & ~1) + 32)}` : ""})`;
}

test("the preview gives the CLI's verdict on 1,000 random files", { skip, timeout: 600_000 }, async (t) => {
  const files = makeFiles();
  const dir = mkdtempSync(join(tmpdir(), "polyloop-differential-"));
  try {
    const want = await cliVerdicts(files, dir);
    // The CLI's verdict on each file to be edited, as saved after the edit
    // (a space before its last "}", its line breaks as they were).
    const toEdit = files.map((f, k) => (editable(f) && k % 2 === 0 ? k : -1)).filter((k) => k >= 0);
    const wantEdited = new Map();
    const editedVerdicts = await cliVerdicts(
      toEdit.map((k) => {
        const b = files[k].bytes;
        const at = b.lastIndexOf(0x7d);
        return { ...files[k], bytes: Uint8Array.from([...b.subarray(0, at), 0x20, ...b.subarray(at)]) };
      }),
      dir,
    );
    toEdit.forEach((k, j) => wantEdited.set(k, editedVerdicts[j]));
    // The mix is what it says: every kind of file and of verdict.
    const count = (f) => files.filter(f).length;
    for (const tag of ["CRLF", "CR", "LF", "mixed", "BOM", "in a string", "(msgpack)", "vectors ", "cut at", "syntax", "multi-object"])
      assert.ok(count((f) => f.what.includes(tag)) >= 10, `at least 10 files with ${tag}`);
    const crlfSyntax = files.filter((f, k) => /\bCRLF\b/.test(f.what) && want[k].offset > 0).length;
    assert.ok(crlfSyntax >= 10, `${crlfSyntax} CRLF files with a syntax error's byte offset`);
    t.diagnostic(
      `${crlfSyntax} CRLF files with a syntax error's offset, ${count((f) => f.what.includes("multi-object"))} multi-object .json files, ${toEdit.length} edited`,
    );
    const codes = new Map();
    for (const w of want) codes.set(w.ok ? "ok" : w.code, (codes.get(w.ok ? "ok" : w.code) ?? 0) + 1);
    for (const c of ["ok", "malformed_request", "invalid_utf8", "duplicate_key", "invalid_template", "invalid_budget"])
      assert.ok((codes.get(c) ?? 0) >= 10, `at least 10 CLI verdicts ${c}: ${JSON.stringify([...codes])}`);

    await withPreview(async ({ page, url, problems }) => {
      await open(page, url);
      await page.evaluate(VERDICT);
      const mismatches = [];
      let edits = 0;
      for (let k = 0; k < files.length; k++) {
        const m = mismatch(await opened(page, files[k]), want[k]);
        if (m) mismatches.push(`${files[k].what}: ${m}`);
        else if (editable(files[k]) && k % 2 === 0) {
          edits++;
          const pure = !/\b(CR|mixed)\b/.test(files[k].what);
          const e = mismatch(await edited(page), /** @type {any} */ (wantEdited.get(k)), !pure);
          if (e) mismatches.push(`${files[k].what}, then a space typed before the last "}": ${e}`);
        }
      }
      assert.ok(edits >= 50, `${edits} files edited`);
      assert.deepEqual(mismatches.slice(0, 20), [], `${mismatches.length} of ${files.length} files differ`);
      assert.deepEqual(problems, []);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
