/**
 * The Assembler: the binding's API over a pool of module instances
 * (src/instance.js). Every method forwards to {@link Assembler#call}, which
 * crosses into the module by the call's row of the contract table (consts.js
 * `CALLS`, generated from core/abi): the codec packs the arguments, the
 * module answers, the answer is decoded by its shape. Every error response,
 * those only the host saw included, is made by the core (its `error` call,
 * docs/SPEC.md §7.10). `node.js` and `browser.js` differ only in how they
 * obtain the compiled module.
 *
 * @module
 */
import { AssemblyError } from "./errors.js";
import { RequestTooLarge, acquireEncoder, encodeRequest } from "./encode.js";
import { encodeWtf8Into, wtf8Length } from "./strings.js";
import { MAX_STRING_UNITS, StringCeiling, decodeResponse } from "./decode.js";
import { InstancePool, STDERR_KEEP, poolOptions } from "./instance.js";
import { Prompt } from "./prompt.js";
import * as consts from "./consts.js";

export { MAX_REQUEST_BYTES, INTERNAL_MESSAGES } from "./consts.js";

/** The contract table's rows by name. @type {Record<string, import("./consts.js").CallSpec>} */
const CALL = Object.fromEntries(consts.CALLS.map((c) => [c.name, c]));
/** assemble() answers through `assemble_shared` when the module has it (docs/SPEC.md §7.11). */
const ASSEMBLE_OBJECT = CALL.assemble_shared ?? CALL.assemble;

const textDecoder = new TextDecoder();
const textEncoder = new TextEncoder();
/** @param {Uint8Array} bytes */
const copyOf = (bytes) => bytes.slice();

/**
 * Assembles prompts with the WebAssembly build of the core. Obtain one with
 * `await loadAssembler()`. Every method is synchronous, safe to call from any
 * number of async tasks, and gives the same bytes as every other host.
 */
export class Assembler {
  /**
   * @param {WebAssembly.Module} module
   * @param {import("./index.js").AssemblerOptions} [options]
   */
  constructor(module, options = {}) {
    const o = poolOptions(options);
    /** The compiled module (share it with workers: loadAssembler({module})). */
    this.module = module;
    /** The pool options in effect. */
    this.options = Object.freeze(o);
    /** @private */
    this.pool = new InstancePool(module, o.maxInstances, o.recycleAboveBytes);
    /** @private Lower string ceiling, for tests of the too_large path. */
    this.maxStringUnits = MAX_STRING_UNITS;
  }

  /** @private Prepares the first instance asynchronously. */
  async warm() {
    await this.pool.warm();
    return this;
  }

  /** Number of module instances created so far (a trap makes one more). */
  get instancesCreated() {
    return this.pool.created;
  }

  /**
   * The generic call: `name` is a row of the contract table (consts.js
   * `CALLS`; wasm/README.md). The request is the map `{params[i]: args[i]}`
   * for a call with params, else `args[0]` (msgpack bytes as they are, a
   * string as JSON text for a call that reads JSON). The answer is decoded
   * by the row's shape: a response object, the comparison, `{response,
   * view}` for a view; an error answer is thrown as its AssemblyError.
   *
   * @param {string} name
   * @param {...unknown} args
   * @returns {any}
   * @throws {AssemblyError}
   */
  call(name, ...args) {
    const row = CALL[name];
    if (row === undefined || row.answer === "batch" || row.answer === "named") {
      const names = consts.CALLS.filter((c) => c.answer !== "batch" && c.answer !== "named").map((c) => c.name);
      throw new TypeError(`the module has no call ${JSON.stringify(name)} to make this way; the calls are ${names.join(", ")}`);
    }
    /** @type {Record<string, unknown>} */
    const request = {};
    row.params.forEach((p, i) => (request[p] = args[i]));
    return this.forward(row, row.params.length ? request : args[0], 0, true);
  }

  /**
   * @private
   * {@link Assembler#call} of one request.
   * @param {import("./consts.js").CallSpec} row
   * @param {unknown} request
   * @param {number} [messageBase] where an add_step answer's messages go in the whole prompt
   * @param {boolean} [asIs] msgpack bytes (and JSON text) go as they are, not encoded as a value
   */
  forward(row, request, messageBase = 0, asIs = false) {
    return this.send(row, request, (r, texts) => this.answer(row, r, texts), messageBase, asIs);
  }

  /**
   * The wire function: msgpack request bytes in, the core's canonical msgpack
   * response bytes out (ok or error, exactly as every other host returns
   * them). A request over 1 GiB gets the core's `too_large` response without
   * being copied into the module.
   *
   * @param {Uint8Array} request
   * @returns {Uint8Array}
   * @throws {AssemblyError} code `internal` only when the module itself failed
   *   (a trap, out of memory); the next call runs on a fresh instance.
   */
  assembleBytes(request) {
    if (!(request instanceof Uint8Array)) {
      throw new TypeError("assembleBytes takes a Uint8Array of msgpack request bytes; use assemble() for objects");
    }
    return this.send(CALL.assemble, request, copyOf, 0, true);
  }

  /**
   * Assembles a request object (docs/SPEC.md §2; README, "JavaScript values")
   * and returns the response object.
   *
   * @param {object} request
   * @returns {import("./index.js").AssembleResponse}
   * @throws {AssemblyError} with the core's code, path and message; `too_large`
   *   also when the response holds a string longer than this JavaScript engine
   *   allows (`assembleBytes` still works then)
   */
  assemble(request) {
    return this.forward(ASSEMBLE_OBJECT, request);
  }

  /**
   * Assembles a request written as JSON text (UTF-8 bytes, or a string), with
   * the command-line tool's verdict on JSON text (docs/SPEC.md §2.3).
   *
   * @param {string | Uint8Array} text
   * @returns {import("./index.js").AssembleResponse}
   * @throws {AssemblyError}
   */
  assembleJSON(text) {
    if (typeof text !== "string" && !(text instanceof Uint8Array)) {
      throw new TypeError("assembleJSON takes the JSON text of one request, as a string or a Uint8Array of UTF-8");
    }
    return this.call("assemble_json", text);
  }

  /**
   * Checks an observation template the way assemble() does (it is assembled
   * as `{observation_template: template}`), so a host can fail before a run
   * starts.
   *
   * @param {string} template
   * @throws {AssemblyError} `invalid_template` (`offset` is the code-point offset)
   */
  validateTemplate(template) {
    this.assemble({ observation_template: template });
  }

  /**
   * Compares two prompts (docs/SPEC.md §7.9): each side a request object, a
   * recorded message list, either as JSON text (a string) or msgpack bytes.
   *
   * @param {unknown} a
   * @param {unknown} b
   * @returns {import("./index.js").Comparison}
   * @throws {AssemblyError} a side is invalid (its path prefixed with `a` or `b`)
   */
  compare(a, b) {
    return this.call("compare", a, b);
  }

  /**
   * Starts an incremental prompt: assembles `request` once, then
   * {@link Prompt#addStep} appends one step at a cost independent of the
   * history.
   *
   * @param {object} request
   * @returns {Prompt}
   * @throws {AssemblyError}
   */
  prompt(request) {
    return new Prompt(this, request, this.forward(CALL.prompt_start, request));
  }

  /**
   * @private
   * Encodes `request` for call `row` (with `asIs`, msgpack bytes and, for a
   * JSON call, a string pass as they are), runs it and reads the answer in place with
   * `read(answer, texts)` (texts: the request's texts, docs/SPEC.md §7.11).
   * @template T
   * @param {import("./consts.js").CallSpec} row
   * @param {unknown} request
   * @param {(answer: Uint8Array, texts: string[] | undefined) => T} read
   * @param {number} [messageBase] where an add_step answer's messages go in the prompt
   * @param {boolean} [asIs]
   * @returns {T}
   */
  send(row, request, read, messageBase = 0, asIs = false) {
    const json = row.arg === "json";
    if (asIs && (request instanceof Uint8Array || (json && typeof request === "string"))) {
      const bytes = typeof request === "string" ? utf8(request) : request;
      const limit = json ? consts.MAX_MODULE_BUFFER_BYTES : consts.MAX_REQUEST_BYTES;
      if (bytes.length > limit) return this.hostError(row, read, { error: "too_large", size: bytes.length });
      return this.run(bytes, row.op, read, undefined, messageBase);
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
      return this.run(bytes, row.op, read, row.answer === "shared" ? encoder.texts() : undefined, messageBase);
    } finally {
      encoder.done();
    }
  }

  /**
   * @private
   * One call into an instance (one export call, wasm/README.md "ABI"); `read`
   * gets the answer in place, before the next call into the instance. What
   * goes wrong on the host's side (a trap, bytes that are no answer, a
   * string the engine cannot make) is answered by the core's error call.
   * @template T
   * @param {Uint8Array} request
   * @param {number} op the call's op number (consts.js `CALL_*`)
   * @param {(answer: Uint8Array, texts: string[] | undefined) => T} read
   * @param {string[]} [texts]
   * @param {number} [messageBase]
   * @returns {T}
   */
  run(request, op, read, texts, messageBase = 0) {
    const row = consts.CALLS[op];
    let inst;
    let resp;
    try {
      inst = this.pool.acquire();
      resp = inst.invoke(request, op);
    } catch (e) {
      if (inst) this.pool.discard(inst);
      const said = inst ? inst.stderr.text.trim() : "";
      // GAP: the engine's own words for a failed allocation are V8's.
      const oom = inst?.stderr.outOfMemory || (e instanceof RangeError && /memory|allocation failed/i.test(e.message));
      const what = inst ? `a request of ${request.length} bytes` : "could not instantiate the module";
      const detail = `${what}: ${describe(e)}` + (said ? `\nthe module's stderr (first ${STDERR_KEEP} bytes):\n${said}` : "");
      return this.hostError(row, read, { error: oom ? "out_of_memory" : "trapped" }, detail);
    }
    let args;
    try {
      return read(resp, texts);
    } catch (e) {
      if (e instanceof AssemblyError) throw e;
      if (!(e instanceof StringCeiling)) {
        this.pool.discard(inst);
        inst = undefined;
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
   * The core's answer to an error only the host saw (docs/SPEC.md §7.10), in
   * the shape of call `row`, read as its own answers are; an internal error
   * is thrown whatever `read` does, with `detail` (what the engine and the
   * module said). When the error call itself fails, the host raises it.
   * @template T
   * @param {import("./consts.js").CallSpec} row
   * @param {(answer: Uint8Array) => T} read
   * @param {Record<string, unknown>} args
   * @param {string} [detail]
   * @returns {T}
   */
  hostError(row, read, args, detail) {
    if (row === CALL.error) {
      const message =
        { out_of_memory: consts.MSG_OUT_OF_MEMORY, trapped: consts.MSG_TRAPPED }[String(args.error)] ?? consts.MSG_BAD_RESPONSE;
      throw new AssemblyError("internal", "", message, { detail });
    }
    const request = encodeRequest({ call: row.op, ...args });
    try {
      return this.run(request, consts.CALL_ERROR, detail === undefined && args.error === "too_large" ? read : (r) => this.answer(row, r));
    } catch (e) {
      if (e instanceof AssemblyError && detail !== undefined) e.detail = detail;
      throw e;
    }
  }

  /**
   * @private
   * An answer of call `row` decoded by its shape (CALLS `answer`), or the
   * AssemblyError it carries.
   * @param {import("./consts.js").CallSpec} row
   * @param {Uint8Array} bytes
   * @param {string[]} [texts] the request's texts (an `assemble_shared` answer)
   */
  answer(row, bytes, texts) {
    if (row.answer === "json") return checked(JSON.parse(textDecoder.decode(bytes)), bytes);
    if (row.answer !== "view") return this.read(bytes, texts);
    const n = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
    const response = bytes.slice(4, 4 + n);
    const view = JSON.parse(textDecoder.decode(bytes.subarray(4 + n)));
    if (view !== null) return { response, view };
    this.read(response); // throws the error the response carries
    throw new Error("a view answer of an ok response without its view");
  }

  /**
   * @private
   * Response bytes (msgpack) to the response object, or the AssemblyError it carries.
   * @param {Uint8Array} bytes
   * @param {string[]} [texts] the request's texts, for an answer that names them
   */
  read(bytes, texts) {
    const max = this.maxStringUnits === MAX_STRING_UNITS ? undefined : this.maxStringUnits;
    return checked(decodeResponse(bytes, { texts, maxStringUnits: max }), bytes);
  }
}

/**
 * A decoded answer, or the AssemblyError its `error` carries.
 * @param {any} r @param {Uint8Array} bytes
 */
function checked(r, bytes) {
  if (r !== null && typeof r === "object") {
    const e = r.error;
    if (e === undefined && r.ok !== false) return r;
    if (e !== null && typeof e === "object") {
      const offset = typeof e.offset === "bigint" ? Number(e.offset) : e.offset;
      throw new AssemblyError(String(e.code), String(e.path ?? ""), String(e.message ?? ""), { offset });
    }
  }
  throw new Error(`${bytes.length} bytes that decode to no answer`);
}

/**
 * JSON text as UTF-8; a lone surrogate as its WTF-8 bytes, so the core says
 * invalid_utf8 as it does for assemble() (TextEncoder would write U+FFFD).
 * @param {string} s
 */
function utf8(s) {
  if (s.isWellFormed?.() ?? !/[\uD800-\uDFFF]/.test(s)) return textEncoder.encode(s);
  const bytes = new Uint8Array(wtf8Length(s));
  encodeWtf8Into(s, bytes, 0);
  return bytes;
}

/** @param {unknown} e */
function describe(e) {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}
