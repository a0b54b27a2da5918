/**
 * The prompt view's Web Worker: holds the request, assembles it with the
 * module, decodes the response and sends the main thread a compact view (one
 * string with every text, typed arrays for roles, sizes, segments), so the
 * page's thread never parses, assembles or decodes.
 *
 * Messages in (each with `gen`, a number that grows; a result names the `gen`
 * it is for, and only the newest pending request is assembled — edits that
 * arrive while one runs are applied, then assembled once):
 *
 * - `{type: "init", wasmUrl?}`
 * - `{type: "text", gen, text}`: the request as JSON text (the module's
 *   `assemble_json` judges it: one verdict with the CLI)
 * - `{type: "edit", gen, changes: [from, to, insert][]}`: changes to that
 *   text, positions in the text before the changes, in ascending order
 * - `{type: "object", gen, request}`: a request object (the binding's encoder)
 * - `{type: "bytes", gen, bytes}`: msgpack request bytes
 * - `{type: "trajectory", gen, on}`: also build the prompt step by step with
 *   the incremental prompt (`asm.prompt()` + `addStep`), for the step slider
 * - `{type: "json", id}`: the current response as JSON text (for copying)
 *
 * Messages out: `{type: "ready"}`, `{type: "result", gen, ok, ...}`,
 * `{type: "json", id, text}`, `{type: "fatal", message}`.
 *
 * @module
 */

import { loadAssembler, AssemblyError } from "../browser.js";
import { decodeResponse } from "../decode.js";
import { encodeRequest } from "../encode.js";
import { encodeWtf8Into } from "../strings.js";
import { INTERNAL_MESSAGES } from "../consts.js";
import { columnsOf, columnsOfPrompt, firstDifference } from "./columns.js";
import { codePointInLiteral, locatePath, utf16Index } from "./locate.js";

/** @type {Promise<import("../assembler.js").Assembler> | null} */
let asmReady = null;
/** @type {import("../assembler.js").Assembler | null} */
let asm = null;

/** The request as it stands: its source and the newest generation. */
const current = {
  /** @type {"text" | "object" | "bytes"} */ kind: "text",
  text: "",
  /** @type {any} */ value: null,
  gen: 0,
  trajectory: false,
};
/** The generation last assembled, and whether a run is queued. */
let doneGen = -1;
let queued = false;
/** The last accepted result's columns, for "what changed" and for copying
 * the response. @type {import("./columns.js").Columns | null} */
let previous = null;

const encoder = new TextEncoder();

/** @param {string} s UTF-8 bytes of s; a lone surrogate as its WTF-8 bytes
 * (never U+FFFD), so the module sees and rejects it as every host does. */
function utf8(s) {
  if (s.isWellFormed()) return encoder.encode(s);
  const out = new Uint8Array(s.length * 3);
  return out.subarray(0, encodeWtf8Into(s, out, 0));
}

/**
 * One call of the module's `assemble_view` or `assemble_view_json` export
 * (wasm/README.md, docs/SPEC.md §7.8: the ABI of `assemble`): its answer,
 * the response with the core's view of it.
 *
 * @param {Uint8Array} bytes a msgpack request, or UTF-8 JSON text of one
 * @param {"assemble_view" | "assemble_view_json"} entry
 * @returns {Uint8Array}
 */
function callView(bytes, entry) {
  const a = /** @type {any} */ (asm);
  // The binding's own call path (pool, traps, internal errors) when it has
  // one that takes the entry point; else the ABI here.
  if (typeof a.run === "function" && a.run.length === 3) return a.run(bytes, entry, (/** @type {Uint8Array} */ r) => r.slice());
  const pool = a.pool;
  const inst = pool.acquire();
  let out;
  try {
    const ex = inst.exports;
    const ptr = ex.alloc(bytes.length) >>> 0;
    new Uint8Array(ex.memory.buffer, ptr, bytes.length).set(bytes);
    const packed = BigInt.asUintN(64, ex[entry](ptr, bytes.length));
    const rp = Number(packed >> 32n);
    out = new Uint8Array(ex.memory.buffer, rp, Number(packed & 0xffffffffn)).slice();
    ex.free(rp);
  } catch {
    throw new AssemblyError("internal", "", INTERNAL_MESSAGES.trapped);
  }
  pool.release(inst);
  return out;
}

/**
 * The answer of a view export split: the response's length (4 bytes,
 * little-endian), the response, the view as JSON text (null for an error
 * response). null when the answer has not that shape.
 *
 * @param {Uint8Array} ans
 * @returns {{bytes: Uint8Array, layout: any} | null}
 */
function splitAnswer(ans) {
  if (ans.length < 4) return null;
  const n = new DataView(ans.buffer, ans.byteOffset, 4).getUint32(0, true);
  if (4 + n > ans.length) return null;
  try {
    return { bytes: ans.subarray(4, 4 + n), layout: JSON.parse(td.decode(ans.subarray(4 + n))) };
  } catch {
    return null;
  }
}

const td = new TextDecoder();

/** @param {any} e @returns {{code: string, path: string, message: string, offset?: number}} */
function errorOf(e) {
  const out = { code: String(e.code), path: String(e.path ?? ""), message: String(e.message ?? "") };
  if (typeof e.offset === "number" && e.offset >= 0) out.offset = e.offset;
  return out;
}

/**
 * A template error's code-point offset: the wire's `offset` key; from a
 * module that predates it, read from the message with care: quoted excerpts
 * (a field name may contain "at offset 7") are left out, and in "found X at
 * offset N" the offending place is the last offset named, elsewhere the first.
 * @param {{message: string, offset?: number}} err
 */
export function templateOffset(err) {
  if (typeof err.offset === "number") return err.offset;
  const bare = err.message.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""');
  const all = [...bare.matchAll(/ at offset (\d+)/g)].map((m) => Number(m[1]));
  if (all.length === 0) return null;
  return / found .* at offset \d+/.test(bare) ? all[all.length - 1] : all[0];
}

/**
 * The compact view of a response, sent to the main thread: its columns
 * (texts as byte ranges of the response bytes, which are transferred; the
 * segments, steps and budget crossing as the core laid them out) and what
 * stayed byte-identical since the previous result.
 *
 * @param {import("./columns.js").Columns} c
 */
function viewOf(c) {
  let changedFrom = -1;
  let sameDigests = null;
  if (previous) {
    changedFrom = firstDifference(previous, c);
    sameDigests = {
      run: previous.prefix_digests.run === c.prefix_digests.run,
      injections: previous.prefix_digests.injections === c.prefix_digests.injections,
      goal: previous.prefix_digests.goal === c.prefix_digests.goal,
    };
  }
  previous = c;
  return {
    ...c,
    // Copies: these are transferred, and the worker keeps `previous` whole.
    bytes: c.bytes.slice(),
    response: undefined, // kept here for copying; not cloned into the page
    roles: c.roles.slice(),
    chars: c.chars.slice(),
    blockStart: c.blockStart.slice(),
    starts: c.starts.slice(),
    ends: c.ends.slice(),
    changedFrom,
    sameDigests,
  };
}

/** @param {any} v */
const field = (v, k) => (v instanceof Map ? v.get(k) : v?.[k]);

/**
 * The request as a JavaScript value, for the step-by-step prompt and a
 * template error: for the text kind, JSON.parse of text the module judged
 * valid JSON.
 */
function requestValue() {
  if (current.kind === "text") return JSON.parse(current.text);
  if (current.kind === "bytes") return decodeResponse(current.value);
  return current.value;
}

/**
 * The prompt step by step with the incremental prompt: the request without
 * its steps, then addStep for each. Returns the steps' message counts so the
 * main thread can show the prompt as sent before any step.
 *
 * @param {any} req
 */
function incremental(req) {
  const steps = field(req, "steps") ?? [];
  const base = req instanceof Map ? new Map(req) : { ...req };
  if (base instanceof Map) base.set("steps", []);
  else base.steps = [];
  const prompt = /** @type {any} */ (asm).prompt(base);
  const baseCount = prompt.messages.length;
  for (const s of steps) prompt.addStep(field(s, "raw_output"), field(s, "observation"));
  return { prompt: prompt.toResponse(), baseCount, steps: steps.length };
}

/**
 * The current request through the module's view export: the split answer,
 * or the error an assembler threw.
 * @returns {{bytes: Uint8Array, layout: any} | {thrown: any} | null}
 */
function assembleCurrent() {
  try {
    if (current.kind === "text") return splitAnswer(callView(utf8(current.text), "assemble_view_json"));
    const bytes = current.kind === "bytes" ? current.value : encodeRequest(current.value);
    return splitAnswer(callView(bytes, "assemble_view"));
  } catch (e) {
    const err = e instanceof AssemblyError ? errorOf(e) : { code: "internal", path: "", message: String(e?.message ?? e) };
    return { thrown: err };
  }
}

/** Assembles the newest request and posts its result. */
function run() {
  queued = false;
  const gen = current.gen;
  if (gen === doneGen) return;
  doneGen = gen;
  const t0 = performance.now();
  const got = assembleCurrent();
  const ms = performance.now() - t0;
  if (got === null) return postError(gen, { code: "internal", path: "", message: INTERNAL_MESSAGES.notAResponse }, ms);
  if ("thrown" in got) return postError(gen, got.thrown, ms);
  if (got.layout === null) {
    /** @type {any} */
    const resp = decodeResponse(got.bytes);
    if (resp.ok === true) return postError(gen, { code: "internal", path: "", message: INTERNAL_MESSAGES.notAResponse }, ms);
    return postRejected(gen, errorOf(resp.error), ms);
  }
  postView(gen, columnsOf(got.bytes, got.layout), t0, performance.now());
}

/** Posts a failure with no place in the request. */
function postError(gen, error, ms) {
  postMessage({ type: "result", gen, ok: false, error, ms });
}

/**
 * Posts an error response, with its place in the JSON text (a syntax error's
 * byte, the path's value) and a template error's offset in the template.
 */
function postRejected(gen, err, ms) {
  const jsonText = current.kind === "text" ? current.text : null;
  /** @type {any} */
  const out = { type: "result", gen, ok: false, error: err, ms };
  if (jsonText !== null) {
    const m = /^invalid JSON at byte (\d+)/.exec(err.message);
    if (err.code === "malformed_request" && err.path === "" && m) {
      const at = utf16Index(jsonText, Number(m[1]));
      out.syntax = true;
      out.location = { from: at, to: Math.min(jsonText.length, at + 1), exact: true };
    } else {
      out.location = locatePath(jsonText, err.path);
    }
  }
  if (err.code === "invalid_template") placeTemplateError(out, err, jsonText);
  postMessage(out);
}

/** Adds the template and the error's place in it to `out`. */
function placeTemplateError(out, err, jsonText) {
  const offset = templateOffset(err);
  let template;
  try {
    template = field(requestValue(), "observation_template");
  } catch {
    template = undefined;
  }
  if (typeof template !== "string" || offset === null) return;
  out.template = { text: template, offset };
  if (jsonText !== null && out.location?.exact) {
    const at = codePointInLiteral(jsonText, out.location.from, out.location.to, offset);
    if (at) out.location = { ...at, exact: true };
  }
}

/**
 * Posts an ok result: the columns, or with the step slider on, those of
 * the prompt built step by step (its messages must equal one assemble()'s;
 * trajectory.sameAsAssemble says whether they do).
 */
function postView(gen, cols, t0, tAssembled) {
  /** @type {any} */
  let traj = null;
  if (current.trajectory) {
    const built = incremental(requestValue());
    const stepped = columnsOfPrompt(built.prompt, cols);
    traj = {
      baseCount: built.baseCount,
      steps: built.steps,
      sameAsAssemble: firstDifference(stepped, cols) < 0 && stepped.prompt_chars === cols.prompt_chars,
    };
    cols = stepped;
  }
  const tTraj = performance.now();
  const view = viewOf(cols);
  const tView = performance.now();
  const transfer = [view.bytes, view.roles, view.chars, view.blockStart, view.starts, view.ends].map((a) => a.buffer);
  postMessage(
    {
      type: "result",
      gen,
      ok: true,
      view,
      trajectory: traj,
      ms: tAssembled - t0,
      msTotal: performance.now() - t0,
      timing: { assemble: tAssembled - t0, trajectory: tTraj - tAssembled, view: tView - tTraj },
    },
    /** @type {any} */ ({ transfer }),
  );
}

function schedule() {
  if (queued) return;
  queued = true;
  // After the messages already queued (later edits) are applied.
  setTimeout(() => {
    if (asm) run();
    else asmReady?.then(run);
  }, 0);
}

/** @param {[number, number, string][]} changes ascending, in old positions */
function applyChanges(changes) {
  let t = current.text;
  for (let i = changes.length - 1; i >= 0; i--) {
    const [from, to, insert] = changes[i];
    t = t.slice(0, from) + insert + t.slice(to);
  }
  current.text = t;
}

self.onmessage = (ev) => {
  const m = ev.data;
  try {
    switch (m.type) {
      case "init":
        asmReady = loadAssembler(m.wasmUrl ? { url: m.wasmUrl } : {});
        asmReady.then(
          (a) => {
            asm = a;
            postMessage({ type: "ready" });
          },
          (e) => postMessage({ type: "fatal", message: `cannot load the assembly module: ${e?.message ?? e}` }),
        );
        return;
      case "text":
        Object.assign(current, { kind: "text", text: m.text, value: null, gen: m.gen });
        break;
      case "edit":
        if (current.kind !== "text") return;
        applyChanges(m.changes);
        current.gen = m.gen;
        break;
      case "object":
        Object.assign(current, { kind: "object", text: "", value: m.request, gen: m.gen });
        break;
      case "bytes":
        Object.assign(current, { kind: "bytes", text: "", value: m.bytes, gen: m.gen });
        break;
      case "trajectory":
        current.trajectory = Boolean(m.on);
        current.gen = m.gen;
        doneGen = -1;
        break;
      case "json":
        postMessage({ type: "json", id: m.id, text: previous ? JSON.stringify(decodeResponse(previous.response), null, 2) : null });
        return;
      default:
        return;
    }
    schedule();
  } catch (e) {
    postMessage({ type: "fatal", message: String(e?.stack ?? e) });
  }
};
