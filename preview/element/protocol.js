/**
 * The protocol between `<polyloop-prompt-view>` and its worker: the message
 * names, and the one way a reply finds its request. Imported by both sides.
 *
 * Every message is `{type, view, ...}` (`view`: the element's number; one
 * worker serves every element of a page). Three kinds:
 *
 * - **updates** of the element's request, each with `gen` (a number that grows
 *   per element); the worker assembles only the newest and answers with one
 *   `RESULT` for that `gen` (and, with marks on, one `MARKS`);
 * - **requests** answered once: `request(type, payload)` sends them with a
 *   fresh `id` and resolves with the reply carrying that `id`;
 * - **jobs** answered in slices (`done` on the last): `job(type, payload,
 *   onProgress)`; a newer job of the same type supersedes the older one, whose
 *   slices are dropped.
 *
 * What each message carries is written beside its name.
 *
 * @module
 */

/** The message names. */
export const MSG = Object.freeze({
  // ---- element → worker: setup
  /** `{wasmUrl?}`: load the module (once per worker). */
  INIT: "init",
  /** forget the element's request */
  DROP: "drop",
  // ---- element → worker: updates (each with `gen`)
  /** `{text, lineBreak?, fresh?}`: the request as JSON text, judged by the module as the CLI judges it; with
   * `lineBreak: "\r\n"` judged with each LF written CRLF, so byte offsets are the file's, positions the text's */
  TEXT: "text",
  /** `{bytes, fresh?}`: the bytes of JSON text, judged as they are (a file that is not UTF-8) */
  JSON_BYTES: "jsonBytes",
  /** `{bytes, fresh?}`: msgpack request bytes */
  BYTES: "bytes",
  /** `{request, fresh?}`: a request object (the binding's encoder) */
  OBJECT: "object",
  /** `{changes: [from, to, insert][]}`: edits to the text, ascending, in positions before the edit */
  EDIT: "edit",
  /** `{on}`: also say where each step starts (the step slider) */
  TRAJECTORY: "trajectory",
  /** `{on}`: after each ok result also send its cache breakpoints (a `MARKS` for that `gen`) */
  MARKS: "marks",
  // ---- element → worker: requests (each with `id`, answered once with the same `type` and `id`)
  /** `{bytes?}` → `{text | bytes}`: the last accepted response as JSON text, or its exact msgpack bytes */
  RESPONSE: "json",
  /** `{}` → `{module}`: the compiled WebAssembly.Module */
  MODULE: "module",
  /** `{provider, options?}` → `{gen, text | error, location?}`: the provider's request body (docs/SPEC.md §7.13) */
  EXPORT: "export",
  /** `{a, b}` → `{answer | error}`: the module's comparison of two sides (docs/SPEC.md §7.9), each `{kind: "text",
   * text}`, `{kind: "jsonBytes", bytes}`, `{kind: "bytes", bytes}` or `{kind: "current"}` */
  COMPARE: "compare",
  // ---- element → worker: jobs (each with `id`, answered in slices `{from, ..., done}`)
  /** `{items}` → `{from, codes, steps, done}`: the module's verdict on each item ("ok" or the code; steps, -1 unknown) */
  VERDICTS: "verdicts",
  /** `{items, runs?}` → `{from, calls, done, error?}`: the cache report (docs/SPEC.md §7.12), each run on its own */
  CACHE_REPORT: "cacheReport",
  // ---- worker → element: events
  /** `{}`: the module is loaded (no `view`: for every element) */
  READY: "ready",
  /** `{gen, ok, columns | error, ...}`: the result of update `gen` */
  RESULT: "result",
  /** `{gen, breakpoints | error | reason}`: the cache breakpoints of result `gen` (`[message, block]` pairs) */
  // (MARKS, above, is also the name of the answer)
  /** `{message}`: the worker failed (no `view`: for every element) */
  FATAL: "fatal",
});

/** The message types answered by `request` (once) and by `job` (in slices). */
export const REQUESTS = new Set([MSG.RESPONSE, MSG.MODULE, MSG.EXPORT, MSG.COMPARE]);
export const JOBS = new Set([MSG.VERDICTS, MSG.CACHE_REPORT]);

/**
 * The element's side of the requests and jobs: sends through `post` and
 * matches each reply to what asked for it by its `id`.
 */
export class Requests {
  #post;
  #nextId = 0;
  /** @type {Map<number, (reply: any) => void>} id → resolve of a request */
  #pending = new Map();
  /** @type {Map<string, {id: number, onProgress: (slice: any) => void}>} type → the newest job */
  #jobs = new Map();

  /** @param {(msg: object) => void} post sends a message to the worker (it adds the element's `view`) */
  constructor(post) {
    this.#post = post;
  }

  /**
   * Sends a request; resolves with its reply (the worker's message).
   * @param {string} type one of REQUESTS @param {object} [payload] @returns {Promise<any>}
   */
  request(type, payload = {}) {
    const id = ++this.#nextId;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#post({ ...payload, type, id });
    });
  }

  /**
   * Starts a job: `onProgress` gets each slice of its answer until one says
   * `done`; a newer job of the same type supersedes it.
   * @param {string} type one of JOBS @param {object} payload @param {(slice: any) => void} onProgress
   */
  job(type, payload, onProgress) {
    const id = ++this.#nextId;
    this.#jobs.set(type, { id, onProgress });
    this.#post({ ...payload, type, id });
  }

  /**
   * Hands a reply to what asked for it; false when `m` answers no request or job of these (an event, or a
   * superseded job's slice: dropped).
   * @param {any} m @returns {boolean} whether m was a reply
   */
  settle(m) {
    if (REQUESTS.has(m.type)) {
      this.#pending.get(m.id)?.(m);
      this.#pending.delete(m.id);
      return true;
    }
    if (JOBS.has(m.type)) {
      const job = this.#jobs.get(m.type);
      if (job?.id !== m.id) return true;
      if (m.done) this.#jobs.delete(m.type);
      job.onProgress(m);
      return true;
    }
    return false;
  }
}

/**
 * The worker's side: the reply to request or job message `m` (same type, element and id).
 * @param {{type: string, view: number, id: number}} m @param {object} fields
 */
export const replyTo = (m, fields) => ({ ...fields, type: m.type, view: m.view, id: m.id });
