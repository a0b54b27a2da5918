/**
 * The Assembler: the binding's API, each method a facade that forwards to one generic call by its row of the contract table (consts.js
 * `CALLS`, generated from core/abi; wasm/README.md "ABI"): the codec packs the request, the runtime crosses (src/instance.js), the answer
 * is decoded by its shape. Every error, those only the host saw included, is the core's answer (its `error` call, docs/SPEC.md §7.10).
 * @module
 */
import { AssemblyError } from "./errors.js";
import { RequestTooLarge, acquireEncoder, encodeRequest, usageValue } from "./encode.js";
import { textDecoder, wtf8 } from "./strings.js";
import { StringCeiling, decodeResponse } from "./decode.js";
import { InstancePool, poolOptions } from "./instance.js";
import { Prompt, promptForm } from "./prompt.js";
import { CacheRun } from "./cache-run.js";
import * as consts from "./consts.js";

/** @typedef {import("./consts.js").CallSpec} CallSpec */
/** @template T @typedef {(answer: Uint8Array, texts?: string[]) => T} Reader */
/** The contract table's rows by name. @type {Record<string, CallSpec>} */
const CALL = Object.fromEntries(consts.CALLS.map((c) => [c.name, c]));
/** What assemble(object) calls: the answer names the request's texts (docs/SPEC.md §7.11). */
const ASSEMBLE_OBJECT = CALL.assemble_shared ?? CALL.assemble;
const SHARED_MIN_BYTES = 2048;

/** Assembles prompts (index.d.ts); `await loadAssembler()` makes one. */
export class Assembler {
  constructor(module, options = {}) {
    const o = poolOptions(options);
    this.module = module;
    this.options = Object.freeze(o);
    /** @private */
    this.pool = new InstancePool(module, o.maxInstances, o.recycleAboveBytes);
    /** @private A lower string ceiling, for tests. */
    this.maxStringUnits = consts.MAX_STRING_UNITS;
  }

  /** @private Prepares the first instance asynchronously. */
  async warm() {
    await this.pool.warm();
    return this;
  }

  get instancesCreated() {
    return this.pool.created;
  }

  /** The generic call (index.d.ts). @param {string} name @param {...unknown} args @returns {any} */
  call(name, ...args) {
    const row = CALL[name];
    if (row === undefined || row.answer === "batch" || row.answer === "named") {
      const names = consts.CALLS.filter((c) => c.answer !== "batch" && c.answer !== "named").map((c) => c.name);
      throw new TypeError(`the module has no call ${JSON.stringify(name)} to make this way; the calls are ${names.join(", ")}`);
    }
    if (row.params.length === 0) return this.send(row, args[0], { asIs: true });
    return this.send(row, Object.fromEntries(row.params.map((p, i) => [p, args[i]])));
  }

  assembleBytes(request) {
    if (!(request instanceof Uint8Array)) {
      throw new TypeError("assembleBytes takes a Uint8Array of msgpack request bytes; use assemble() for objects");
    }
    return this.send(CALL.assemble, request, { read: (r) => r.slice(), asIs: true });
  }

  assemble(request) {
    return this.send(ASSEMBLE_OBJECT, request);
  }

  assembleJSON(text) {
    if (typeof text !== "string" && !(text instanceof Uint8Array)) {
      throw new TypeError("assembleJSON takes the JSON text of one request, as a string or a Uint8Array of UTF-8");
    }
    return this.call("assemble_json", text);
  }

  validateTemplate(template) {
    this.assemble({ observation_template: template });
  }

  compare(a, b) {
    return this.call("compare", side(a), side(b));
  }

  cacheReport(requests, usage) {
    // Each usage as the core reads it: JSON text parsed, a class instance through toJSON() (usageValue).
    const given = Array.isArray(usage) ? Array.from(usage, (u, i) => usageValue(u, `usage[${i}]`)) : usage;
    return this.call("cache_report", Array.isArray(requests) ? requests.map(side) : side(requests), given);
  }

  cacheRun() {
    return new CacheRun(this);
  }

  export(request, provider, options) {
    return this.call("export", side(request), provider, options);
  }

  prompt(request) {
    return new Prompt(this, request, this.send(CALL.prompt_start, request));
  }

  /**
   * @internal The one way into the module for the binding's modules (this facade and src/prompt.js): encodes `request` for call
   * `row` (with `asIs`, bytes and a JSON call's string as they are), crosses, and reads the answer in place: by `read`, or decoded by
   * its shape. `messageBase`: the prompt's messages before an add_step answer's own.
   * @template T @param {CallSpec} row @param {unknown} request
   * @param {{read?: Reader<T>, messageBase?: number, asIs?: boolean}} [options]
   */
  send(row, request, { read = (r, texts) => this.answer(row, r, texts), messageBase = 0, asIs = false } = {}) {
    const json = row.arg === "json";
    if (asIs && (request instanceof Uint8Array || (json && typeof request === "string"))) {
      const bytes = typeof request === "string" ? wtf8(request) : request;
      const max = json ? consts.MAX_MODULE_BUFFER_BYTES : consts.MAX_REQUEST_BYTES;
      if (bytes.length > max) return this.hostError(row, read, { error: "too_large", size: bytes.length });
      return this.run(bytes, row.op, read, { messageBase });
    }
    const encoder = acquireEncoder();
    try {
      let bytes;
      try {
        bytes = encoder.encodeShared(request);
      } catch (e) {
        if (e instanceof RequestTooLarge) return this.hostError(row, read, { error: "too_large", size: e.size });
        throw e;
      }
      // A small request's answer decodes as fast whole, and the shared one costs the module more.
      const small = row.answer === "shared" && bytes.length < SHARED_MIN_BYTES;
      const texts = row.answer === "shared" && !small ? encoder.texts() : undefined;
      // errors in a JS user's words
      return this.run(bytes, small ? CALL.assemble.op : row.op, read, { texts, messageBase, words: consts.WORDS_JS });
    } finally {
      encoder.done();
    }
  }

  /**
   * @private
   * One call into an instance, `read` given the answer in place. A trap, bytes that are no answer and a string the engine cannot make are
   * answered by the core's error call.
   * @template T @param {Uint8Array} request @param {number} op @param {Reader<T>} read
   * @param {{texts?: string[], messageBase?: number, words?: number}} [options] `words`: the vocabulary of the call's messages
   * (consts.WORDS_*) @returns {T}
   */
  run(request, op, read, { texts, messageBase = 0, words = 0 } = {}) {
    const row = consts.CALLS[op];
    let inst;
    let resp;
    try {
      inst = this.pool.acquire();
      resp = inst.invoke(request, op | words);
    } catch (e) {
      // The instance is dropped (never released); the pool makes a fresh one on demand.
      const said = inst ? inst.stderr.text.trim() : "";
      // GAP: the engine's own words for a failed allocation are V8's.
      const oom = said.includes(consts.STDERR_OUT_OF_MEMORY) || (e instanceof RangeError && /memory|allocation failed/i.test(e.message));
      const what = inst ? `a request of ${request.length} bytes` : "could not instantiate the module";
      const detail = `${what}: ${describe(e)}` + (said ? `\nthe module's stderr (first ${consts.STDERR_KEEP_BYTES} bytes):\n${said}` : "");
      return this.hostError(row, read, { error: oom ? "out_of_memory" : "trapped" }, detail);
    }
    let args;
    try {
      return read(resp, texts);
    } catch (e) {
      if (e instanceof AssemblyError) throw e;
      if (!(e instanceof StringCeiling)) {
        inst = undefined; // dropped
        return this.hostError(row, read, { error: "not_a_response" }, `${resp.length} bytes: ${describe(e)}`);
      }
      args = { error: "string_ceiling", size: e.bytes, path: e.path, message_base: messageBase };
    } finally {
      if (inst) this.pool.release(inst);
    }
    return this.hostError(row, read, args);
  }

  /**
   * @private
   * The core's answer, in the shape of call `row`, to an error only the host saw; an internal one is thrown whatever `read` does, with
   * `detail`. When the error call fails too, the host raises it.
   * @template T @param {CallSpec} row @param {Reader<T>} read @param {Record<string, unknown>} args @param {string} [detail] @returns {T}
   */
  hostError(row, read, args, detail) {
    if (row === CALL.error) {
      const message = { out_of_memory: consts.MSG_OUT_OF_MEMORY, trapped: consts.MSG_TRAPPED }[String(args.error)];
      throw new AssemblyError("internal", "", message ?? consts.MSG_BAD_RESPONSE, { detail });
    }
    const request = encodeRequest({ call: row.op, ...args });
    try {
      return this.run(request, consts.CALL_ERROR, detail === undefined && args.error === "too_large" ? read : (r) => this.answer(row, r));
    } catch (e) {
      if (e instanceof AssemblyError && detail !== undefined) e.detail = detail;
      throw e;
    }
  }

  /** @private An answer decoded by its shape, or the AssemblyError it carries. @param {CallSpec} row @param {Uint8Array} bytes @param {string[]} [texts] */
  answer(row, bytes, texts) {
    if (row.answer === "json") return checked(JSON.parse(textDecoder.decode(bytes)), bytes, true);
    if (row.answer !== "view") return this.read(bytes, texts, row.answer === "map");
    const n = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
    const response = bytes.slice(4, 4 + n);
    const view = JSON.parse(textDecoder.decode(bytes.subarray(4 + n)));
    if (view !== null && view.error_path === undefined) return { response, view };
    try {
      this.read(response); // throws the error the response carries
    } catch (e) {
      throw view ? Object.assign(e, { at: { path: view.error_path, byte: view.syntax_byte } }) : e; // where, for an editor (SPEC §7.8)
    }
    throw new Error("a view answer of an ok response without its view");
  }

  /** @private A msgpack answer's value, or the AssemblyError it carries. @param {Uint8Array} bytes @param {string[]} [texts] @param {boolean} [plain] */
  read(bytes, texts, plain = false) {
    return checked(decodeResponse(bytes, { texts, maxStringUnits: this.maxStringUnits }), bytes, plain);
  }
}

/**
 * A decoded answer, or the AssemblyError its `error` carries. A plain answer (JSON, a map: an export's body, which may
 * hold any field but `error`) is judged by its `error` key only (docs/SPEC.md §7.13); a response by `ok` too.
 * @param {any} r @param {Uint8Array} bytes @param {boolean} [plain]
 */
function checked(r, bytes, plain = false) {
  if (r !== null && typeof r === "object") {
    const e = r.error;
    if (e === undefined && (plain || r.ok !== false)) return r;
    if (e !== null && typeof e === "object") {
      const offset = typeof e.offset === "bigint" ? Number(e.offset) : e.offset;
      throw new AssemblyError(String(e.code), String(e.path ?? ""), String(e.message ?? ""), { offset });
    }
  }
  throw new Error(`${bytes.length} bytes that decode to no answer`);
}

/** A request, or a {@link Prompt} as its prompt form (docs/SPEC.md §7.14): its messages now, a snapshot. @param {unknown} x */
const side = (x) => (x instanceof Prompt ? promptForm(x) : x);

const describe = (e) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));
