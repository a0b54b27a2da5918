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
import { firstDifference, readColumns } from "./columns.js";
import { codePointInLiteral, locatePath, requestShape, utf16Index } from "./locate.js";

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
 * The module's `assemble_json` (wasm/README.md: the ABI of `assemble`, with
 * the request as UTF-8 JSON text): the response bytes, ok or error.
 *
 * @param {Uint8Array} bytes UTF-8 JSON text of one request
 * @returns {Uint8Array}
 */
function assembleJSONBytes(bytes) {
  const a = /** @type {any} */ (asm);
  // The binding's own call path (pool, traps, internal errors) when it has
  // one that takes the entry point; else the ABI here.
  if (typeof a.run === "function" && a.run.length === 3) return a.run(bytes, "assemble_json", (/** @type {Uint8Array} */ r) => r.slice());
  const pool = a.pool;
  const inst = pool.acquire();
  let out;
  try {
    const ex = inst.exports;
    const ptr = ex.alloc(bytes.length) >>> 0;
    new Uint8Array(ex.memory.buffer, ptr, bytes.length).set(bytes);
    const packed = BigInt.asUintN(64, ex.assemble_json(ptr, bytes.length));
    const rp = Number(packed >> 32n);
    out = new Uint8Array(ex.memory.buffer, rp, Number(packed & 0xffffffffn)).slice();
    ex.free(rp);
  } catch {
    throw new AssemblyError("internal", "", INTERNAL_MESSAGES.trapped);
  }
  pool.release(inst);
  return out;
}

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

const SEG = { run: 0, injection: 1, goal: 2, history: 3 };

/**
 * The compact view of a response, sent to the main thread: its columns
 * (texts as byte ranges of the response bytes, which are transferred), the
 * segment of each message, where the budget is first exceeded and what
 * stayed byte-identical since the previous result.
 *
 * @param {import("./columns.js").Columns} c
 * @param {{nRun: number, nGoal: number, budget: number | null}} shape
 */
function viewOf(c, shape) {
  const n = c.count;
  const nInj = c.injected.length;
  const segs = new Uint8Array(n);
  for (let i = 0; i < n; i++)
    segs[i] =
      i < shape.nRun ? SEG.run : i < shape.nRun + nInj ? SEG.injection : i < shape.nRun + nInj + shape.nGoal ? SEG.goal : SEG.history;
  let firstOver = -1;
  if (shape.budget !== null) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      sum += c.chars[i];
      if (sum > shape.budget) {
        firstOver = i;
        break;
      }
    }
  }
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
    roles: c.roles.slice(),
    chars: c.chars.slice(),
    blockStart: c.blockStart.slice(),
    starts: c.starts.slice(),
    ends: c.ends.slice(),
    segs,
    nRun: shape.nRun,
    nInj,
    nGoal: shape.nGoal,
    budget: shape.budget,
    firstOver,
    changedFrom,
    sameDigests,
  };
}

/** @param {any} v */
const field = (v, k) => (v instanceof Map ? v.get(k) : v?.[k]);

/**
 * What the view needs from an accepted request: the counts of run and goal
 * messages and the budget.
 * @param {any} req
 */
function shapeOf(req) {
  const b = field(req, "max_prompt_chars");
  return {
    nRun: field(req, "run_messages")?.length ?? 0,
    nGoal: field(req, "goal_messages")?.length ?? 0,
    budget: b === null || b === undefined ? null : Number(b),
  };
}

/**
 * The request as a JavaScript value, once the module has accepted it (or
 * named its template): for the text kind, JSON.parse of text the module
 * judged valid JSON.
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

/** Assembles the newest request and posts its result. */
function run() {
  queued = false;
  const gen = current.gen;
  if (gen === doneGen) return;
  doneGen = gen;
  const t0 = performance.now();
  /** @type {Uint8Array} */
  let bytes;
  const jsonText = current.kind === "text" ? current.text : null;
  const a = /** @type {any} */ (asm);
  try {
    if (current.kind === "text") bytes = assembleJSONBytes(utf8(current.text));
    else if (current.kind === "bytes") bytes = a.assembleBytes(current.value);
    else bytes = a.assembleBytes(encodeRequest(current.value));
  } catch (e) {
    const err = e instanceof AssemblyError ? errorOf(e) : { code: "internal", path: "", message: String(e?.message ?? e) };
    postMessage({ type: "result", gen, ok: false, error: err, ms: performance.now() - t0 });
    return;
  }
  let cols = readColumns(bytes);
  /** @type {any} */
  const resp = cols ? { ok: true } : decodeResponse(bytes);
  if (resp.ok === true && !cols) {
    postMessage({
      type: "result",
      gen,
      ok: false,
      error: { code: "internal", path: "", message: INTERNAL_MESSAGES.notAResponse },
      ms: performance.now() - t0,
    });
    return;
  }
  const tAssembled = performance.now();
  if (resp.ok !== true) {
    const err = errorOf(resp.error);
    /** @type {any} */
    const out = { type: "result", gen, ok: false, error: err, ms: tAssembled - t0 };
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
    if (err.code === "invalid_template") {
      const offset = templateOffset(err);
      let template;
      try {
        template = field(requestValue(), "observation_template");
      } catch {
        template = undefined;
      }
      if (typeof template === "string" && offset !== null) {
        out.template = { text: template, offset };
        if (jsonText !== null && out.location?.exact) {
          const at = codePointInLiteral(jsonText, out.location.from, out.location.to, offset);
          if (at) out.location = { ...at, exact: true };
        }
      }
    }
    postMessage(out);
    return;
  }
  // The request as a value only when the step-by-step prompt needs it; the
  // view's counts and budget come from a scan of the text.
  const req = current.trajectory || current.kind !== "text" ? requestValue() : null;
  const shape = req === null ? requestShape(current.text) : shapeOf(req);
  const tParsed = performance.now();
  /** @type {any} */
  let traj = null;
  if (current.trajectory) {
    // The prompt step by step: its messages are those shown (they must equal
    // one assemble()'s; traj.sameAsAssemble says whether they do).
    const built = incremental(req);
    const stepped = readColumns(encodeRequest(built.prompt));
    if (!stepped) throw new Error("the step-by-step prompt could not be read back");
    traj = {
      baseCount: built.baseCount,
      steps: built.steps,
      sameAsAssemble: firstDifference(stepped, cols) < 0 && stepped.prompt_chars === cols.prompt_chars,
    };
    cols = stepped;
  }
  const tTraj = performance.now();
  const view = viewOf(/** @type {any} */ (cols), shape);
  const tView = performance.now();
  const transfer = [
    view.bytes.buffer,
    view.roles.buffer,
    view.chars.buffer,
    view.segs.buffer,
    view.blockStart.buffer,
    view.starts.buffer,
    view.ends.buffer,
  ];
  postMessage(
    {
      type: "result",
      gen,
      ok: true,
      view,
      trajectory: traj,
      ms: tAssembled - t0,
      msTotal: performance.now() - t0,
      timing: { assemble: tAssembled - t0, request: tParsed - tAssembled, trajectory: tTraj - tParsed, view: tView - tTraj },
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
        postMessage({ type: "json", id: m.id, text: previous ? JSON.stringify(decodeResponse(previous.bytes), null, 2) : null });
        return;
      default:
        return;
    }
    schedule();
  } catch (e) {
    postMessage({ type: "fatal", message: String(e?.stack ?? e) });
  }
};
