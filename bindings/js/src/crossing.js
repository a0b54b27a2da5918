/**
 * @internal
 * The crossing into the module, the binding's one way in (as Python's `_crossing.py`): a call's request encoded (or the error call's,
 * for an error only the host saw), run on an instance of the pool, and its answer read in place, decoded by the call's shape or thrown
 * as the AssemblyError it carries. The API's modules (src/assembler.js, src/prompt.js) cross only through a {@link Crossing}, every
 * argument by name. Not part of the package's API (index.d.ts).
 * @module
 */
import { AssemblyError } from "./errors.js";
import { RequestTooLarge, acquireEncoder, encodeRequest } from "./encode.js";
import { textDecoder, wtf8 } from "./strings.js";
import { StringCeiling, decodeResponse } from "./decode.js";
import * as consts from "./consts.js";

/** @typedef {import("./consts.js").CallSpec} CallSpec */
/** @typedef {import("./instance.js").InstancePool} InstancePool */
/** @template T @typedef {(answer: Uint8Array, texts?: string[]) => T} Reader */
/** The contract table's rows by name. @type {Record<string, CallSpec>} */
export const CALL = Object.fromEntries(consts.CALLS.map((c) => [c.name, c]));
const SHARED_MIN_BYTES = 2048;

/** @internal An assembler's way into the module: its pool, and the longest string its answers may hold. */
export class Crossing {
  /** @param {InstancePool} pool */
  constructor(pool) {
    this.pool = pool;
    /** A lower string ceiling, for tests. */
    this.maxStringUnits = consts.MAX_STRING_UNITS;
  }

  /**
   * @internal Encodes `request` for `call` (with `asIs`, bytes and a JSON call's string as they are), crosses, and reads the answer in
   * place: by `read`, or decoded by its shape. `messageBase`: the prompt's messages before an add_step answer's own.
   * @template T
   * @param {{call: CallSpec, request: unknown, read?: Reader<T>, messageBase?: number, asIs?: boolean}} options
   * @returns {T}
   */
  send({ call, request, read = (r, texts) => this.answer({ call, bytes: r, texts }), messageBase = 0, asIs = false }) {
    const json = call.arg === "json";
    if (asIs && (request instanceof Uint8Array || (json && typeof request === "string"))) {
      const bytes = typeof request === "string" ? wtf8(request) : request;
      const max = json ? consts.MAX_MODULE_BUFFER_BYTES : consts.MAX_REQUEST_BYTES;
      if (bytes.length > max) return this.hostError({ call, read, args: { error: "too_large", size: bytes.length } });
      return this.run({ request: bytes, op: call.op, read, messageBase });
    }
    const encoder = acquireEncoder();
    try {
      let bytes;
      try {
        bytes = encoder.encodeShared(request);
      } catch (e) {
        if (e instanceof RequestTooLarge) return this.hostError({ call, read, args: { error: "too_large", size: e.size } });
        throw e;
      }
      // A small request's answer decodes as fast whole, and the shared one costs the module more.
      const small = call.answer === "shared" && bytes.length < SHARED_MIN_BYTES;
      const texts = call.answer === "shared" && !small ? encoder.texts() : undefined;
      // errors in a JS user's words
      return this.run({ request: bytes, op: small ? CALL.assemble.op : call.op, read, texts, messageBase, words: consts.WORDS_JS });
    } finally {
      encoder.done();
    }
  }

  /**
   * @internal One call into an instance, `read` given the answer in place. A trap, bytes that are no answer and a string the engine
   * cannot make are answered by the core's error call. `words`: the vocabulary of the call's messages (consts.WORDS_*).
   * @template T
   * @param {{request: Uint8Array, op: number, read: Reader<T>, texts?: string[], messageBase?: number, words?: number}} options
   * @returns {T}
   */
  run({ request, op, read, texts, messageBase = 0, words = 0 }) {
    const call = consts.CALLS[op];
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
      return this.hostError({ call, read, args: { error: oom ? "out_of_memory" : "trapped" }, detail });
    }
    let args;
    try {
      return read(resp, texts);
    } catch (e) {
      if (e instanceof AssemblyError) throw e;
      if (!(e instanceof StringCeiling)) {
        inst = undefined; // dropped
        return this.hostError({ call, read, args: { error: "not_a_response" }, detail: `${resp.length} bytes: ${describe(e)}` });
      }
      args = { error: "string_ceiling", size: e.bytes, path: e.path, message_base: messageBase };
    } finally {
      if (inst) this.pool.release(inst);
    }
    return this.hostError({ call, read, args });
  }

  /**
   * @private
   * The core's answer, in the shape of `call`, to an error only the host saw; an internal one is thrown whatever `read` does, with
   * `detail`. When the error call fails too, the host raises it.
   * @template T @param {{call: CallSpec, read: Reader<T>, args: Record<string, unknown>, detail?: string}} options @returns {T}
   */
  hostError({ call, read, args, detail }) {
    if (call === CALL.error) {
      const message = { out_of_memory: consts.MSG_OUT_OF_MEMORY, trapped: consts.MSG_TRAPPED }[String(args.error)];
      throw new AssemblyError("internal", "", message ?? consts.MSG_BAD_RESPONSE, { detail });
    }
    const request = encodeRequest({ call: call.op, ...args });
    const keep = detail === undefined && args.error === "too_large";
    try {
      return this.run({ request, op: consts.CALL_ERROR, read: keep ? read : (r) => this.answer({ call, bytes: r }) });
    } catch (e) {
      if (e instanceof AssemblyError && detail !== undefined) e.detail = detail;
      throw e;
    }
  }

  /**
   * @private An answer decoded by `call`'s shape, or the AssemblyError it carries.
   * @param {{call: CallSpec, bytes: Uint8Array, texts?: string[]}} options
   */
  answer({ call, bytes, texts }) {
    if (call.answer === "json") return checked(JSON.parse(textDecoder.decode(bytes)), bytes, true);
    if (call.answer !== "view") return this.read(bytes, texts, call.answer === "map");
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

const describe = (e) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));
