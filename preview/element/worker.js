/**
 * The prompt view's Web Worker: holds the request, assembles it with the
 * module, decodes the response and sends the main thread a compact view (one
 * string with every text, typed arrays for roles, sizes, segments), so the
 * page's thread never parses, assembles or decodes.
 *
 * One worker serves every `<polyloop-prompt-view>` of a page (the module
 * compiled once): each message but `init` names its element with `view`, a
 * number, and the worker keeps one request per element; every answer names
 * the element it is for.
 *
 * The messages, their names and what each carries are in protocol.js (one
 * module, imported by the element too). Only the newest pending update of
 * an element is assembled: edits that arrive while one runs are applied,
 * then assembled once. An update with `fresh: true` is a new document (a
 * file opened): its result is not compared with the one before ("since the
 * previous result"). Requests are answered with `replyTo`; jobs run in
 * slices of about 10 ms, so the element's own updates go first.
 *
 * @module
 */

import { loadAssembler } from "@polyloop/assembly";
import { decodeMsgpack, jsonBytesSide, syntaxByte } from "./binding.js";
import { columnsOf, firstDifference } from "./columns.js";
import { codePointInLiteral, locatePath, utf16Index } from "./locate.js";
import { MSG, replyTo } from "./protocol.js";
import { cacheBlocks, errorOf, field, jsonBigInt, parseExact, unCRLF } from "./values.js";

export { cacheBlocks, parseExact, unCRLF } from "./values.js";

/** @type {Promise<import("@polyloop/assembly").Assembler> | null} */
let asmReady = null;
/** @type {import("@polyloop/assembly").Assembler | null} */
let asm = null;

/**
 * One element's request as it stands: its source, the newest generation,
 * the generation last assembled, whether a run is queued, and the last
 * accepted result's columns (for "what changed" and for copying the
 * response).
 *
 * @typedef {object} Client
 * @property {number} id
 * @property {"text" | "jsonBytes" | "object" | "bytes"} kind
 * @property {string} text
 * @property {"\n" | "\r\n"} lineBreak how the text's line breaks are judged
 * @property {any} value
 * @property {number} gen
 * @property {boolean} trajectory
 * @property {boolean} marks whether each ok result is followed by its cache breakpoints
 * @property {number} doneGen
 * @property {boolean} queued
 * @property {import("./columns.js").Columns | null} previous
 * @property {{cols: import("./columns.js").Columns, answer: any} | null} lastMarks the last breakpoints posted, and the layout they are of
 */

/** @type {Map<number, Client>} */
const clients = new Map();

/** @param {number} id @returns {Client} */
function clientOf(id) {
  let c = clients.get(id);
  if (!c) {
    c = {
      id,
      kind: "text",
      text: "",
      lineBreak: "\n",
      value: null,
      gen: 0,
      trajectory: false,
      marks: false,
      doneGen: -1,
      queued: false,
      previous: null,
      lastMarks: null,
    };
    clients.set(id, c);
  }
  return c;
}

const td = new TextDecoder();

/**
 * The compact view of a response, sent to the main thread: its columns
 * (texts as byte ranges of the response bytes, which are transferred; the
 * segments, steps and budget crossing as the core laid them out) and what
 * stayed byte-identical since the client's previous result.
 *
 * @param {Client} client
 * @param {import("./columns.js").Columns} c
 */
function viewOf(client, c) {
  const previous = client.previous;
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
  client.previous = c;
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

/**
 * The request as a JavaScript value, for the step-by-step prompt and a
 * template error: for the text kinds, the JSON text the module judged.
 * @param {Client} c
 */
function requestValue(c) {
  if (c.kind === "text") return parseExact(c.text);
  if (c.kind === "jsonBytes") return parseExact(td.decode(c.value));
  if (c.kind === "bytes") return decodeMsgpack(c.value);
  return c.value;
}

/**
 * The client's request through the module's view call: the response and
 * its view, or the error the assembler threw.
 * @param {Client} c
 * @returns {{response: Uint8Array, view: any} | {thrown: any}}
 */
function assembleCurrent(c) {
  try {
    const json = c.kind === "text" || c.kind === "jsonBytes";
    return /** @type {any} */ (asm).call(json ? "assemble_view_json" : "assemble_view", c.kind === "text" ? judgedText(c) : c.value);
  } catch (e) {
    return { thrown: errorOf(e) };
  }
}

/** The JSON text the module judges: the client's, its line breaks as the
 * client's `lineBreak` says. @param {Client} c */
function judgedText(c) {
  return c.lineBreak === "\r\n" && c.text.includes("\n") ? c.text.replaceAll("\n", "\r\n") : c.text;
}

/** The view's max_prompt_chars stops at 2^63 - 1 (core/view.go writes an
 * int64): a budget there is read from the request itself, exactly. */
const INT64_MAX = "9223372036854775807";

/** The request's max_prompt_chars as a decimal string, or null. @param {Client} c */
function exactBudget(c) {
  try {
    const b = field(requestValue(c), "max_prompt_chars");
    return typeof b === "bigint" || typeof b === "number" ? String(b) : null;
  } catch {
    return null;
  }
}

/** Assembles the client's newest request and posts its result. @param {Client} c */
function run(c) {
  if (c.queued) queuedRuns--;
  c.queued = false;
  const gen = c.gen;
  if (gen === c.doneGen || !clients.has(c.id)) return;
  c.doneGen = gen;
  const t0 = performance.now();
  const got = assembleCurrent(c);
  const ms = performance.now() - t0;
  if ("thrown" in got) return got.thrown.code === "internal" ? postError(c, gen, got.thrown, ms) : postRejected(c, gen, got.thrown, ms);
  const cols = columnsOf(got.response, got.view);
  if (cols.budget === INT64_MAX) cols.budget = exactBudget(c) ?? cols.budget;
  // Not in step mode: the view draws them on the whole request only.
  const marks = c.marks && !c.trajectory;
  postView(c, gen, cols, t0, performance.now(), marks ? carriedMarks(c, cols) : null);
  if (marks) scheduleMarks(c, gen, cols);
}

/**
 * The breakpoints last posted, when this result has their layout (the same
 * roles, blocks and segments: the export places cache_control by these
 * alone, docs/SPEC.md §7.13), sent with the result so that an edit inside
 * a text keeps them on screen; the export that follows confirms them.
 * @param {Client} c @param {import("./columns.js").Columns} cols
 */
function carriedMarks(c, cols) {
  const last = c.lastMarks;
  if (!last) return null;
  const a = last.cols;
  const same = (/** @type {ArrayLike<any>} */ x, /** @type {ArrayLike<any>} */ y) => {
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
    return true;
  };
  const layout =
    same(a.segEnds, cols.segEnds) && same(a.roleNames, cols.roleNames) && same(a.roles, cols.roles) && same(a.blockStart, cols.blockStart);
  return layout ? last.answer : null;
}

/** A prompt whose response is past this many bytes gets no breakpoints
 * drawn: its export would hold the worker longer than an edit's budget. */
export const MARKS_LIMIT = 4_000_000;

/** After result `gen` is posted, its cache breakpoints, unless a newer
 * request came meanwhile (its own result will be marked).
 * @param {Client} c @param {number} gen @param {import("./columns.js").Columns} cols */
function scheduleMarks(c, gen, cols) {
  setTimeout(() => {
    if (c.gen !== gen || c.doneGen !== gen || !c.marks || !clients.has(c.id)) return;
    const answer = marksOf(c, cols);
    c.lastMarks = answer.reason ? null : { cols, answer };
    postMessage({ type: MSG.MARKS, view: c.id, gen, ...answer });
  }, 0);
}

/** The blocks the Anthropic export of the client's request marks with
 * `cache_control`, or why there are none. @param {Client} c @param {import("./columns.js").Columns} cols */
function marksOf(c, cols) {
  if (cols.bytes.length > MARKS_LIMIT)
    return {
      reason: `not drawn for a prompt over ${MARKS_LIMIT / 1e6} MB (the export takes long); export it with the provider toggle or the CLI`,
    };
  try {
    return { breakpoints: cacheBlocks(/** @type {any} */ (asm).export(sideInput(c, { kind: "current" }), "anthropic"), cols) };
  } catch (e) {
    return { error: errorOf(e) };
  }
}

/** Posts the client's request as the provider's request body (JSON text),
 * or its error with the place of its path in the JSON text.
 * @param {Client} c */
function exportRequest(c, m) {
  if (!asm) return void asmReady?.then(() => exportRequest(c, m));
  /** @type {any} */
  const out = replyTo(m, { gen: c.gen });
  try {
    out.text = JSON.stringify(
      /** @type {any} */ (asm).export(sideInput(c, { kind: "current" }), m.provider, m.options ?? null),
      jsonBigInt,
    );
  } catch (e) {
    out.error = errorOf(e);
    // request.steps[0] is steps[0] of the editor's text
    const path = out.error.path.replace(/^request(?=$|[.[])\.?/, "");
    if (c.kind === "text" && out.error.path.startsWith("request")) out.location = locatePath(c.text, path);
  }
  postMessage(out);
}

/** The newest cache report job of each element (a newer one supersedes it). */
const reportJobs = new Map();

/**
 * Starts the cache report of `items` for client c, in slices of about 10
 * ms (the element's own requests run between them). A call is compared with
 * the last valid call before it (docs/SPEC.md §7.12), so each slice starts
 * with that call (whose own answer is dropped): every call's answer is the
 * one a report of the whole run gives.
 * @param {Client} c @param {number} id @param {(Uint8Array | {msgpack: Uint8Array})[]} items
 * @param {ArrayLike<number>} [runs] the run of each item (runs.js): each run reported on its own
 */
function startReport(c, m) {
  const { id, items, runs } = m;
  reportJobs.set(c.id, id);
  // Where each item's run ends (runs: a run number per item, each run's items together): a slice never
  // crosses a run's end, and a run's first call is compared with nothing before it.
  const ends = new Int32Array(items.length);
  for (let k = items.length - 1; k >= 0; k--) ends[k] = k + 1 < items.length && runs && runs[k + 1] === runs[k] ? ends[k + 1] : k + 1;
  let lastValid = -1;
  let runStart = 0;
  let size = 8;
  const step = (/** @type {number} */ from) => {
    if (reportJobs.get(c.id) !== id || !clients.has(c.id)) return;
    if (!asm) return void asmReady?.then(() => step(from));
    if (queuedRuns > 0) return void setTimeout(() => step(from), 0);
    if (from > 0 && ends[from - 1] === from) runStart = from;
    const to = Math.min(ends[from], from + size);
    const base = lastValid >= runStart ? lastValid : from;
    const t0 = performance.now();
    let calls;
    try {
      const sides = items.slice(base, to).map((it) => (it instanceof Uint8Array ? it : it.msgpack));
      calls = /** @type {any} */ (asm).cacheReport(sides).calls.slice(from - base);
    } catch (e) {
      postMessage(replyTo(m, { from, calls: [], error: errorOf(e), done: true }));
      reportJobs.delete(c.id);
      return;
    }
    const ms = performance.now() - t0;
    for (const call of calls) if (call.previous != null) call.previous += base;
    calls.forEach((/** @type {any} */ call, /** @type {number} */ k) => !call.error && (lastValid = from + k));
    const done = to >= items.length;
    postMessage(replyTo(m, { from, calls, done }));
    if (done) reportJobs.delete(c.id);
    else {
      size = Math.max(1, Math.min(4096, Math.round((size * 10) / Math.max(ms, 0.5))));
      setTimeout(() => step(to), 0);
    }
  };
  setTimeout(() => step(0), 0);
}

/** Posts a failure with no place in the request. */
function postError(c, gen, error, ms) {
  postMessage({ type: MSG.RESULT, view: c.id, gen, ok: false, error, ms });
}

/**
 * Posts an error response, with its place in the JSON text (a syntax error's
 * byte, the path's value) and a template error's offset in the template.
 * @param {Client} c
 */
function postRejected(c, gen, err, ms) {
  const jsonText = c.kind === "text" ? c.text : null;
  /** @type {any} */
  const out = { type: MSG.RESULT, view: c.id, gen, ok: false, error: err, ms };
  if (jsonText !== null) {
    const byte = syntaxByte(err);
    if (byte !== null) {
      const judged = judgedText(c);
      const at = judged === jsonText ? utf16Index(jsonText, byte) : unCRLF(judged, utf16Index(judged, byte));
      out.syntax = true;
      out.location = { from: at, to: Math.min(jsonText.length, at + 1), exact: true };
    } else {
      out.location = locatePath(jsonText, err.at?.path ?? err.path);
    }
  }
  if (err.code === "invalid_template") placeTemplateError(c, out, err, jsonText);
  postMessage(out);
}

/** Adds the template and the error's place in it to `out`. */
function placeTemplateError(c, out, err, jsonText) {
  const offset = err.offset ?? null;
  let template;
  try {
    template = field(requestValue(c), "observation_template");
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
 * Posts an ok result: its columns, and with the step slider on, where each
 * step starts (the core's step_start: the prompt as sent before step k is
 * the first step_start[k] messages, a byte-identical prefix of the whole,
 * docs/SPEC.md §7.8), so a step costs the page no second assembly.
 * @param {Client} c
 */
function postView(c, gen, cols, t0, tAssembled, marks = null) {
  const traj = c.trajectory ? { steps: cols.steps, stepStart: Array.from(cols.stepStart) } : null;
  const tTraj = performance.now();
  const view = viewOf(c, cols);
  const tView = performance.now();
  const transfer = [view.bytes, view.roles, view.chars, view.blockStart, view.starts, view.ends].map((a) => a.buffer);
  postMessage(
    {
      type: MSG.RESULT,
      view: c.id,
      gen,
      ok: true,
      columns: view,
      marks,
      trajectory: traj,
      ms: tAssembled - t0,
      msTotal: performance.now() - t0,
      timing: { assemble: tAssembled - t0, trajectory: tTraj - tAssembled, view: tView - tTraj },
    },
    /** @type {any} */ ({ transfer }),
  );
}

/** How many elements' requests wait to be assembled: the background jobs
 * (verdicts, cache reports) let them go first. */
let queuedRuns = 0;

/** @param {Client} c */
function schedule(c) {
  if (c.queued) return;
  c.queued = true;
  queuedRuns++;
  // After the messages already queued (later edits) are applied.
  setTimeout(() => {
    if (asm) run(c);
    else asmReady?.then(() => run(c));
  }, 0);
}

/** @param {Client} c @param {[number, number, string][]} changes ascending, in old positions */
function applyChanges(c, changes) {
  let t = c.text;
  for (let i = changes.length - 1; i >= 0; i--) {
    const [from, to, insert] = changes[i];
    t = t.slice(0, from) + insert + t.slice(to);
  }
  c.text = t;
}

/** Loads the module (once, whatever the number of elements). */
function init(m) {
  if (asmReady) {
    asmReady.then(
      () => postMessage({ type: MSG.READY }),
      () => {},
    );
    return;
  }
  asmReady = loadAssembler(m.wasmUrl ? { url: m.wasmUrl } : {});
  asmReady.then(
    (a) => {
      asm = a;
      postMessage({ type: MSG.READY });
    },
    (e) => postMessage({ type: MSG.FATAL, message: `cannot load the assembly module: ${e?.message ?? e}` }),
  );
}

/** A new document (fresh): its result is compared with nothing before it. @param {Client} c */
const source = (c, m, fields) => {
  Object.assign(c, fields, { gen: m.gen });
  if (m.fresh) [c.previous, c.lastMarks] = [null, null];
};

/** A setting of the client's view that changes what its next result carries. @param {Client} c */
const setting = (c, m, key) => {
  c[key] = Boolean(m.on);
  c.gen = m.gen;
  c.doneGen = -1;
};

/**
 * The updates of an element's request (protocol.js): each applies its
 * message to the client; true: assemble (the newest update) once the ones
 * queued meanwhile are applied.
 * @type {Record<string, (c: Client, m: any) => boolean>}
 */
const UPDATES = {
  [MSG.TEXT]: (c, m) => (
    source(c, m, { kind: "text", text: m.text, lineBreak: m.lineBreak === "\r\n" ? "\r\n" : "\n", value: null }),
    true
  ),
  [MSG.JSON_BYTES]: (c, m) => (source(c, m, { kind: m.type, text: "", value: m.bytes }), true),
  [MSG.BYTES]: (c, m) => (source(c, m, { kind: m.type, text: "", value: m.bytes }), true),
  [MSG.OBJECT]: (c, m) => (source(c, m, { kind: "object", text: "", value: m.request }), true),
  [MSG.EDIT]: (c, m) => {
    if (c.kind !== "text") return false;
    applyChanges(c, m.changes);
    c.gen = m.gen;
    return true;
  },
  [MSG.MARKS]: (c, m) => (setting(c, m, "marks"), true),
  [MSG.TRAJECTORY]: (c, m) => (setting(c, m, "trajectory"), true),
};

/**
 * The requests and jobs (protocol.js): each answers with `replyTo(m, …)`,
 * once or in slices.
 * @type {Record<string, (c: Client, m: any) => void>}
 */
const REQUESTS = {
  [MSG.RESPONSE]: (c, m) => {
    const r = c.previous?.response ?? null;
    if (m.bytes) postMessage(replyTo(m, { bytes: r && r.slice() }));
    else postMessage(replyTo(m, { text: r && JSON.stringify(decodeMsgpack(r), jsonBigInt, 2) }));
  },
  [MSG.MODULE]: (_c, m) => void asmReady?.then((a) => postMessage(replyTo(m, { module: /** @type {any} */ (a).module }))),
  [MSG.COMPARE]: (c, m) => compareSides(c, m),
  [MSG.EXPORT]: (c, m) => exportRequest(c, m),
  [MSG.VERDICTS]: (c, m) => startVerdicts(c, m),
  [MSG.CACHE_REPORT]: (c, m) => startReport(c, m),
};

/** The newest verdicts job of each element (a newer one supersedes it). */
const verdictJobs = new Map();

/** Starts the verdicts of `items` for client c, in slices. @param {Client} c */
function startVerdicts(c, m) {
  const { id, items } = m;
  verdictJobs.set(c.id, id);
  const step = (from) => {
    if (verdictJobs.get(c.id) !== id || !clients.has(c.id)) return;
    if (!asm) return void asmReady?.then(() => step(from));
    if (queuedRuns > 0) return void setTimeout(() => step(from), 0);
    const codes = [];
    const steps = [];
    const t0 = performance.now();
    let k = from;
    // Slices of about 10 ms, so the element's requests queued meanwhile run
    // between them.
    for (; k < items.length && (k === from || performance.now() - t0 < 10); k++) {
      const v = verdictOf(items[k]);
      codes.push(v.code);
      steps.push(v.steps);
    }
    const done = k >= items.length;
    postMessage(replyTo(m, { from, codes, steps, done }));
    if (done) verdictJobs.delete(c.id);
    else setTimeout(() => step(k), 0);
  };
  setTimeout(() => step(0), 0);
}

/**
 * The module's verdict on one JSON request (its UTF-8 bytes; `{msgpack}`:
 * msgpack bytes): "ok" or the
 * error code, and its number of steps (the core's for an accepted request;
 * for a rejected one read from the JSON when it parses, else -1).
 * @param {Uint8Array} bytes
 */
export function verdictOf(bytes) {
  if (!(bytes instanceof Uint8Array)) {
    // msgpack bytes: the steps are the core's, or unknown.
    try {
      return { code: "ok", steps: Number(/** @type {any} */ (asm).call("assemble_view", bytes.msgpack).view.steps) };
    } catch (e) {
      return { code: errorOf(e).code, steps: -1 };
    }
  }
  try {
    return { code: "ok", steps: Number(/** @type {any} */ (asm).call("assemble_view_json", bytes).view.steps) };
  } catch (e) {
    let steps = -1;
    try {
      const s = JSON.parse(td.decode(bytes))?.steps;
      if (Array.isArray(s)) steps = s.length;
    } catch {
      // not JSON: the number of steps is unknown
    }
    return { code: errorOf(e).code, steps };
  }
}

/**
 * A side of a comparison as `asm.compare` takes it: JSON text as a string,
 * the bytes of JSON text as a msgpack str of exactly those bytes (so bytes
 * that are not UTF-8 get the module's verdict, as the CLI gives), msgpack
 * bytes as they are; "current" the element's request.
 * @param {Client} c
 * @param {{kind: string, text?: string, bytes?: Uint8Array}} s
 */
function sideInput(c, s) {
  if (s.kind === "current") {
    if (c.kind === "text") return judgedText(c);
    if (c.kind === "object") return c.value;
    s = { kind: c.kind, bytes: c.value };
  }
  if (s.kind === "text") return /** @type {string} */ (s.text);
  const bytes = /** @type {Uint8Array} */ (s.bytes);
  return s.kind === "bytes" ? bytes : jsonBytesSide(bytes);
}

/** Posts the module's comparison of m.a and m.b (docs/SPEC.md §7.9). @param {Client} c */
function compareSides(c, m) {
  if (!asm) return void asmReady?.then(() => compareSides(c, m));
  /** @type {any} */
  const out = replyTo(m, {});
  try {
    out.answer = /** @type {any} */ (asm).compare(sideInput(c, m.a), sideInput(c, m.b));
  } catch (e) {
    out.error = errorOf(e);
  }
  postMessage(out);
}

self.onmessage = (ev) => {
  const m = ev.data;
  try {
    if (m.type === MSG.INIT) return init(m);
    if (m.type === MSG.DROP) return void clients.delete(m.view);
    const c = clientOf(m.view ?? 0);
    if (UPDATES[m.type]?.(c, m)) schedule(c);
    else REQUESTS[m.type]?.(c, m);
  } catch (e) {
    postMessage({ type: MSG.FATAL, view: m?.view, message: String(e?.stack ?? e) });
  }
};
