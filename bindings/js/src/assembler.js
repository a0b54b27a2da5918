/**
 * The host-independent part of the binding: WebAssembly instances of the
 * assembly module under @bjorn3/browser_wasi_shim, a small pool of them, the
 * Assembler API and the incremental Prompt. `node.js` and `browser.js` only
 * differ in how they obtain the compiled WebAssembly.Module.
 *
 * @module
 */

import { WASI, OpenFile, File, ConsoleStdout } from "@bjorn3/browser_wasi_shim";
import {
  AssemblyError,
  MAX_REQUEST_BYTES,
  MAX_STRING_UNITS,
  RequestTooLarge,
  StringCeiling,
  decodeResponse,
  encodeRequest,
  acquireEncoder,
  encodeWtf8Into,
  wtf8Length,
} from "./wire.js";
import { MAX_RESPONSE_BYTES, RESPONSE_TOO_LARGE, ResponseSize } from "./size.js";
import * as consts from "./consts.js";

export { MAX_REQUEST_BYTES };

/** The largest buffer the module's 32-bit ABI can be handed. */
const MAX_MODULE_REQUEST = consts.MAX_MODULE_BUFFER_BYTES;

/** The `internal` messages, the same on every host (docs/SPEC.md §7). */
export const INTERNAL_MESSAGES = consts.INTERNAL_MESSAGES;

/** Defaults of the pool options (the same on every host). */
export const DEFAULT_RECYCLE_ABOVE_BYTES = consts.DEFAULT_RECYCLE_ABOVE_BYTES;
export const DEFAULT_MEMORY_LIMIT_BYTES = consts.DEFAULT_MEMORY_LIMIT_BYTES;
const WASM_PAGE = 65536;

const STDERR_KEEP = consts.STDERR_KEEP_BYTES;
const textDecoder = new TextDecoder();

/** @typedef {import("./index.js").AssemblerOptions} AssemblerOptions */

/**
 * One instance of the module, with its own WASI shim: no arguments, no
 * environment, no preopened directory; stdin empty; stdout dropped; stderr kept
 * (the last 4 KiB, never printed) so that a trap can say what the Go runtime
 * said before it died. Clocks and random bytes are the real ones.
 */
class ModuleInstance {
  /**
   * @param {WebAssembly.Instance} instance
   * @param {WASI} wasi
   * @param {{text: string}} stderr
   */
  constructor(instance, wasi, stderr) {
    this.exports = /** @type {any} */ (instance.exports);
    this.stderr = stderr;
    // The shim's debug logger is one flag for the whole page or process, and
    // any WASI constructed without {debug: false} (by another library, say)
    // turns it on; it logs from args_sizes_get and environ_sizes_get, which Go
    // calls in _initialize. Turn it off right before.
    new WASI([], [], [], { debug: false });
    wasi.initialize(instance); // runs _initialize once, before any other export
  }

  /**
   * Builds the imports of a new instance.
   * @returns {{imports: WebAssembly.Imports, wasi: WASI, stderr: {text: string}}}
   */
  static imports() {
    const stderr = { text: "" };
    const keep = (bytes) => {
      stderr.text = (stderr.text + textDecoder.decode(bytes)).slice(-STDERR_KEEP);
    };
    const fds = [new OpenFile(new File([])), new ConsoleStdout(() => {}), new ConsoleStdout(keep)];
    const wasi = new WASI([], [], fds, { debug: false });
    return { imports: { wasi_snapshot_preview1: wasi.wasiImport }, wasi, stderr };
  }

  /** @param {WebAssembly.Module} module */
  static create(module) {
    const { imports, wasi, stderr } = ModuleInstance.imports();
    return new ModuleInstance(new WebAssembly.Instance(module, imports), wasi, stderr);
  }

  /** @param {WebAssembly.Module} module */
  static async createAsync(module) {
    const { imports, wasi, stderr } = ModuleInstance.imports();
    return new ModuleInstance(await WebAssembly.instantiate(module, imports), wasi, stderr);
  }

  /** Bytes of linear memory the instance holds now. */
  get memoryBytes() {
    return this.exports.memory.buffer.byteLength;
  }

  /**
   * Runs one request through the module's ABI: alloc, copy in, the entry
   * point (which releases the request buffer). Throws whatever the module or
   * the engine throws (a trap, proc_exit); then the instance is broken.
   *
   * @param {Uint8Array} request
   * @param {"assemble" | "assemble_json"} entry
   * @returns {{ptr: number, len: number}} the response, in linear memory until {@link ModuleInstance#free}
   */
  invoke(request, entry) {
    const ex = this.exports;
    this.stderr.text = "";
    const size = request.length;
    const ptr = ex.alloc(size) >>> 0;
    new Uint8Array(ex.memory.buffer, ptr, size).set(request);
    const packed = BigInt.asUintN(64, ex[entry](ptr, size));
    return { ptr: Number(packed >> 32n), len: Number(packed & 0xffffffffn) };
  }

  /** A view of `len` bytes at `ptr` (valid until the next call into the module). */
  view(ptr, len) {
    return new Uint8Array(this.exports.memory.buffer, ptr, len);
  }

  /** Gives a response buffer back to the module. */
  free(ptr) {
    this.exports.free(ptr);
  }

  /**
   * One request in, a copy of the response bytes out (for benchmarks and
   * tests; the Assembler reads responses in place).
   *
   * @param {Uint8Array} request
   * @returns {Uint8Array}
   */
  call(request) {
    const { ptr, len } = this.invoke(request, "assemble");
    const out = this.view(ptr, len).slice();
    this.free(ptr);
    return out;
  }
}

/**
 * A small pool of module instances. JavaScript runs each call to completion,
 * so one thread uses one instance at a time; the pool keeps up to
 * `maxInstances` idle ones ready, replaces an instance that trapped, and drops
 * an instance whose memory grew past `recycleAboveBytes` (a huge request) so
 * that memory goes back to the engine.
 */
class InstancePool {
  /**
   * @param {WebAssembly.Module} module
   * @param {number} maxInstances
   * @param {number} recycleAboveBytes
   */
  constructor(module, maxInstances, recycleAboveBytes) {
    this.module = module;
    this.maxInstances = maxInstances;
    this.recycleAboveBytes = recycleAboveBytes;
    /** @type {ModuleInstance[]} */
    this.idle = [];
    /** Instances created since the pool started (for tests and monitoring). */
    this.created = 0;
  }

  /** Fills the pool with one ready instance (asynchronous instantiation, which
   * browsers allow on the main thread for modules of any size). */
  async warm() {
    if (this.idle.length === 0) {
      const inst = await ModuleInstance.createAsync(this.module);
      this.created++;
      this.idle.push(inst);
    }
  }

  /** @returns {ModuleInstance} */
  acquire() {
    const inst = this.idle.pop();
    if (inst) return inst;
    this.created++;
    return ModuleInstance.create(this.module);
  }

  /** @param {ModuleInstance} inst */
  release(inst) {
    if (this.idle.length < this.maxInstances && inst.memoryBytes <= this.recycleAboveBytes) this.idle.push(inst);
  }

  /** Drops an instance that trapped; a fresh one is made on demand. */
  discard(_inst) {}
}

/**
 * Checks the pool options (the names and meanings every host shares).
 *
 * @param {AssemblerOptions} options
 * @returns {{maxInstances: number, recycleAboveBytes: number, memoryLimitBytes: number}}
 */
export function poolOptions(options) {
  for (const [old, now] of [
    ["poolSize", "maxInstances"],
    ["retireAboveBytes", "recycleAboveBytes"],
  ]) {
    if (old in options) throw new TypeError(`the option ${old} was renamed ${now} (the same name on every host)`);
  }
  const dflt = Number(globalThis.navigator?.hardwareConcurrency) || 1;
  const maxInstances = options.maxInstances ?? dflt;
  const recycleAboveBytes = options.recycleAboveBytes ?? DEFAULT_RECYCLE_ABOVE_BYTES;
  const memoryLimitBytes = options.memoryLimitBytes ?? DEFAULT_MEMORY_LIMIT_BYTES;
  if (!Number.isInteger(maxInstances) || maxInstances < 1) throw new TypeError("maxInstances must be an integer ≥ 1");
  if (!(typeof recycleAboveBytes === "number" && recycleAboveBytes >= 0))
    throw new TypeError("recycleAboveBytes must be a number of bytes ≥ 0");
  if (!Number.isInteger(memoryLimitBytes) || memoryLimitBytes < WASM_PAGE || memoryLimitBytes > DEFAULT_MEMORY_LIMIT_BYTES) {
    throw new TypeError("memoryLimitBytes must be an integer number of bytes from 65536 to 4 GiB (the most a 32-bit module can address)");
  }
  return { maxInstances, recycleAboveBytes, memoryLimitBytes };
}

/**
 * Returns the module's bytes with a maximum on its linear memory of
 * `limitBytes` (rounded down to whole 64 KiB pages), so that growing past it
 * fails inside the module (Go reports out of memory and the instance is
 * discarded). The module defines its memory without a maximum; only the
 * memory section changes. 4 GiB (the default) returns `bytes` unchanged.
 *
 * @param {Uint8Array} bytes
 * @param {number} limitBytes
 * @returns {Uint8Array}
 */
export function limitModuleMemory(bytes, limitBytes) {
  if (limitBytes >= DEFAULT_MEMORY_LIMIT_BYTES) return bytes;
  const leb = (i) => {
    let r = 0;
    let shift = 0;
    for (;;) {
      const x = bytes[i++];
      r += (x & 0x7f) * 2 ** shift;
      shift += 7;
      if (x < 0x80) return [r, i];
    }
  };
  const put = (n) => {
    const out = [];
    do {
      let x = n & 0x7f;
      n = Math.floor(n / 128);
      if (n) x |= 0x80;
      out.push(x);
    } while (n);
    return out;
  };
  const pages = Math.floor(limitBytes / WASM_PAGE);
  for (let i = 8; i < bytes.length;) {
    const id = bytes[i];
    const [size, body] = leb(i + 1);
    if (id === 5) {
      const [count, p] = leb(body);
      const flags = bytes[p];
      if (count !== 1 || (flags & ~1) !== 0) throw new Error("the module's memory section is not one 32-bit memory");
      const [min, q] = leb(p + 1);
      if (pages < min) {
        throw new TypeError(`memoryLimitBytes must be at least the module's initial memory (${min * WASM_PAGE} bytes)`);
      }
      const [max, end] = flags & 1 ? leb(q) : [Infinity, q];
      const section = [1, 1, ...put(min), ...put(Math.min(max, pages))];
      const rest = bytes.subarray(end === body + size ? end : body + size);
      const head = bytes.subarray(0, i);
      const out = new Uint8Array(head.length + 1 + put(section.length).length + section.length + rest.length);
      out.set(head, 0);
      out.set([5, ...put(section.length), ...section], head.length);
      out.set(rest, out.length - rest.length);
      return out;
    }
    i = body + size;
  }
  throw new Error("the module has no memory section");
}

/**
 * The core's own `too_large` response for a request of `size` bytes (docs/SPEC.md
 * §4), answered without copying the request into the module.
 *
 * @param {number} size
 * @returns {Uint8Array}
 */
export function tooLargeResponse(size) {
  return encodeRequest({
    v: 1,
    ok: false,
    error: { code: "too_large", message: consts.msgRequestTooLarge(size), path: "" },
  });
}

/** @param {Uint8Array} bytes */
const copyOf = (bytes) => bytes.slice();

const textEncoderJSON = new TextEncoder();

/**
 * Assembles prompts with the WebAssembly build of the core. Obtain one with
 * `await loadAssembler()`. Every method is synchronous, safe to call from any
 * number of async tasks, and gives the same bytes as every other host.
 */
export class Assembler {
  /**
   * @param {WebAssembly.Module} module
   * @param {AssemblerOptions} [options]
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
   * The wire function: msgpack request bytes in, the core's canonical msgpack
   * response bytes out (ok or error, exactly as every other host returns them).
   * A request over 1 GiB gets the core's `too_large` response without being
   * copied into the module.
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
    if (request.length > MAX_REQUEST_BYTES) return tooLargeResponse(request.length);
    return this.run(request, "assemble", copyOf);
  }

  /**
   * Assembles a request object (docs/SPEC.md §2; see README for how JavaScript values
   * map to msgpack) and returns the response object
   * `{v, ok: true, messages, message_chars, prompt_chars, context_overflow,
   * injected, prefix_digests}`.
   *
   * @param {object} request
   * @returns {import("./index.js").AssembleResponse}
   * @throws {AssemblyError} with the core's code, path and message; `too_large`
   *   also when the response holds a string longer than this JavaScript engine
   *   allows (`assembleBytes` still works then)
   */
  assemble(request) {
    return this.assembleSized(request, undefined);
  }

  /**
   * @private
   * assemble(), and the size of the response bytes in `sized.bytes` (set
   * before they are decoded, so also when decoding throws).
   * @param {object} request
   * @param {{bytes: number} | undefined} sized
   * @returns {import("./index.js").AssembleResponse}
   */
  assembleSized(request, sized) {
    const encoder = acquireEncoder();
    try {
      let bytes;
      try {
        bytes = encoder.encodeShared(request);
      } catch (e) {
        if (e instanceof RequestTooLarge) return this.read(tooLargeResponse(e.size));
        throw e;
      }
      const template = request instanceof Map ? request.get("observation_template") : /** @type {any} */ (request)?.observation_template;
      const source = encoder.requestStrings(bytes, template);
      return this.run(bytes, "assemble", (r) => {
        if (sized) sized.bytes = r.length;
        return this.read(r, source);
      });
    } finally {
      encoder.done();
    }
  }

  /**
   * Assembles a request written as JSON text (UTF-8 bytes, or a string), with
   * the same verdict on JSON text as the command-line tool: a repeated key is
   * `duplicate_key`, `1.0` or `1e2` where an integer belongs is
   * `malformed_request`, integers are exact to 64 bits, and a syntax error is
   * `malformed_request` at path "" with `invalid JSON at byte N: …`.
   *
   * @param {string | Uint8Array} text
   * @returns {import("./index.js").AssembleResponse}
   * @throws {AssemblyError}
   */
  assembleJSON(text) {
    let bytes;
    if (typeof text === "string") {
      // A lone surrogate goes in as its WTF-8 bytes, so the core says
      // invalid_utf8 as it does for assemble(); TextEncoder would change it
      // into U+FFFD.
      if (text.isWellFormed?.() ?? !/[\uD800-\uDFFF]/.test(text)) {
        bytes = textEncoderJSON.encode(text);
      } else {
        bytes = new Uint8Array(wtf8Length(text));
        encodeWtf8Into(text, bytes, 0);
      }
    } else if (text instanceof Uint8Array) {
      bytes = text;
    } else {
      throw new TypeError("assembleJSON takes the JSON text of one request, as a string or a Uint8Array of UTF-8");
    }
    if (bytes.length > MAX_MODULE_REQUEST) return this.read(tooLargeResponse(bytes.length));
    return this.run(bytes, "assemble_json", (r) => this.read(r));
  }

  /**
   * Checks an observation template the way assemble() does (it is assembled as
   * `{observation_template: template}`), so a host can fail before a run
   * starts.
   *
   * @param {string} template
   * @throws {AssemblyError} `invalid_template` (`offset` is the code-point
   *   offset), or `malformed_request` / `invalid_utf8` for a value that is
   *   not a valid string
   */
  validateTemplate(template) {
    this.assemble({ observation_template: template });
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
    const sized = { bytes: 0 };
    const response = this.assembleSized(request, sized);
    return new Prompt(this, request, response, sized.bytes);
  }

  /**
   * @private
   * Response bytes to the response object, or the AssemblyError it carries.
   * @param {Uint8Array} bytes
   * @param {import("./wire.js").RequestStrings} [source] the request's strings, reused where they come back unchanged
   */
  read(bytes, source) {
    let r;
    try {
      r = decodeResponse(bytes, { source, maxStringUnits: this.maxStringUnits === MAX_STRING_UNITS ? undefined : this.maxStringUnits });
    } catch (e) {
      if (e instanceof StringCeiling) {
        throw new AssemblyError("too_large", e.path, consts.msgStringCeiling(e.bytes, e.path || "the top", MAX_STRING_UNITS));
      }
      throw new AssemblyError("internal", "", INTERNAL_MESSAGES.notAResponse, { detail: `${bytes.length} bytes: ${describe(e)}` });
    }
    if (r !== null && typeof r === "object" && r.ok === true) return r;
    if (r !== null && typeof r === "object" && r.ok === false && r.error && typeof r.error === "object") throw toError(r);
    throw new AssemblyError("internal", "", INTERNAL_MESSAGES.notAResponse, { detail: `${bytes.length} bytes that decode to no response` });
  }

  /**
   * @private
   * One call into an instance; `read` gets the response in place (before it
   * is freed).
   * @template T
   * @param {Uint8Array} request
   * @param {"assemble" | "assemble_json"} entry
   * @param {(response: Uint8Array) => T} read
   * @returns {T}
   */
  run(request, entry, read) {
    let inst;
    try {
      inst = this.pool.acquire();
    } catch (e) {
      throw failure(e, "", "could not instantiate the module");
    }
    let resp;
    try {
      resp = inst.invoke(request, entry);
    } catch (e) {
      this.pool.discard(inst);
      throw failure(e, inst.stderr.text, `a request of ${request.length} bytes`);
    }
    try {
      return read(inst.view(resp.ptr, resp.len));
    } finally {
      try {
        inst.free(resp.ptr);
        this.pool.release(inst);
      } catch {
        this.pool.discard(inst);
      }
    }
  }
}

/**
 * The `internal` error of a module that failed: out of memory when the Go
 * runtime or the engine said so, a trap otherwise; what they said goes into
 * `detail`, never the message.
 *
 * @param {unknown} e
 * @param {string} stderr
 * @param {string} what
 */
function failure(e, stderr, what) {
  const said = stderr.trim();
  const oom = /out of memory/i.test(said) || (e instanceof RangeError && /memory|allocation failed/i.test(e.message));
  return new AssemblyError("internal", "", oom ? INTERNAL_MESSAGES.outOfMemory : INTERNAL_MESSAGES.trapped, {
    detail: `${what}: ${describe(e)}` + (said ? `\nthe module's stderr (last ${STDERR_KEEP} bytes):\n${said}` : ""),
  });
}

/**
 * An incremental prompt (docs/SPEC.md §7): after k calls of addStep its messages,
 * message_chars, prompt_chars, context_overflow, injected and prefix_digests
 * equal those of one assemble() of the request with those k steps added.
 * addStep sends only `{v: 1, observation_template, steps: [the new step]}` to
 * the core, never the history.
 */
export class Prompt {
  /**
   * @param {Assembler} assembler
   * @param {any} request
   * @param {import("./index.js").AssembleResponse} response
   * @param {number} responseBytes the size of `response`'s bytes
   */
  constructor(assembler, request, response, responseBytes) {
    // The core accepted the request, so these fields are what it read: a
    // string, an array, an int or nil (the request may be a plain object or
    // a Map).
    const field = (k) => (request instanceof Map ? request.get(k) : request[k]);
    /** @private */
    this.assembler = assembler;
    /** @private */
    this.template = field("observation_template");
    /** @private */
    this.budget = field("max_prompt_chars") ?? null;
    /** Number of steps held (those of the request plus those added). */
    this.stepCount = field("steps")?.length ?? 0;
    /** @private The exact size of the whole response (the 1.5 GiB limit; src/size.js). */
    this.size = new ResponseSize(responseBytes, response.messages.length, response.prompt_chars);
    /** @type {import("./index.js").Message[]} */
    this.messages = response.messages;
    /** @type {number[]} */
    this.message_chars = response.message_chars;
    /** @type {number} */
    this.prompt_chars = response.prompt_chars;
    /** @type {boolean} */
    this.context_overflow = response.context_overflow;
    /** @type {import("./index.js").Injected[]} */
    this.injected = response.injected;
    /** @type {import("./index.js").PrefixDigests} */
    this.prefix_digests = response.prefix_digests;
  }

  /**
   * Appends one completed step: the assistant message `rawOutput` as given and
   * the user message rendered from the observation template.
   *
   * @param {string} rawOutput
   * @param {string} observation
   * @returns {this}
   * @throws {AssemblyError} with the path of this step in the whole request
   *   (`steps[k].observation`); `too_large` at path "" when the whole
   *   response would be over 1.5 GiB, as one assemble() of the same steps
   *   would be. The prompt is unchanged then.
   */
  addStep(rawOutput, observation) {
    const sized = { bytes: 0 };
    let r;
    try {
      r = this.assembler.assembleSized(
        {
          v: 1,
          observation_template: this.template,
          steps: [{ raw_output: rawOutput, observation }],
        },
        sized,
      );
    } catch (e) {
      if (e instanceof AssemblyError && e.path.startsWith("steps[0]")) {
        throw new AssemblyError(e.code, `steps[${this.stepCount}]` + e.path.slice("steps[0]".length), e.message, {
          offset: e.offset,
          detail: e.detail,
        });
      }
      const m = e instanceof AssemblyError && e.code === "too_large" ? /^messages\[(\d+)\]/.exec(e.path) : null;
      if (m) {
        // A string of this step's response over the engine's ceiling. The
        // core refuses a whole response over 1.5 GiB before any string is
        // made, so that comes first. The string has at least 2^28 code points
        // (V8's ceiling is 2^29 − 24 UTF-16 units) and the response under
        // 1.5 GiB fewer than 2^32, so prompt_chars takes 5 bytes either way.
        if (this.size.after(sized.bytes, 2, 2 ** 28) > MAX_RESPONSE_BYTES) throw new AssemblyError("too_large", "", RESPONSE_TOO_LARGE);
        // Else its place in the whole prompt.
        const at = `messages[${this.messages.length + Number(m[1])}]`;
        throw new AssemblyError(e.code, at + e.path.slice(m[0].length), e.message.replace(e.path, at + e.path.slice(m[0].length)), {
          offset: e.offset,
          detail: e.detail,
        });
      }
      throw e;
    }
    // The limit on the whole response, as one assemble() of all the steps has it.
    if (!this.size.add(sized.bytes, r.messages.length, r.prompt_chars)) throw new AssemblyError("too_large", "", RESPONSE_TOO_LARGE);
    this.messages.push(r.messages[0], r.messages[1]);
    this.message_chars.push(r.message_chars[0], r.message_chars[1]);
    this.prompt_chars += r.prompt_chars;
    this.context_overflow = this.budget !== null && this.prompt_chars > this.budget;
    this.stepCount++;
    return this;
  }

  /**
   * The size in bytes of the prompt's canonical response: what
   * assembleBytes() returns for the request with the same steps.
   *
   * @returns {number}
   */
  get responseBytes() {
    return this.size.bytes;
  }

  /**
   * The prompt as a response object, equal to what assemble() returns for the
   * request with the same steps (fresh arrays; the messages are shared).
   *
   * @returns {import("./index.js").AssembleResponse}
   */
  toResponse() {
    return {
      v: 1,
      ok: true,
      messages: this.messages.slice(),
      message_chars: this.message_chars.slice(),
      prompt_chars: this.prompt_chars,
      context_overflow: this.context_overflow,
      injected: this.injected.slice(),
      prefix_digests: { ...this.prefix_digests },
    };
  }

  toJSON() {
    return this.toResponse();
  }
}

/** @param {any} response */
function toError(response) {
  const e = response.error;
  const offset = e.offset;
  return new AssemblyError(String(e.code), String(e.path ?? ""), String(e.message ?? ""), {
    offset: typeof offset === "number" ? offset : typeof offset === "bigint" ? Number(offset) : undefined,
  });
}

/** @param {unknown} e */
function describe(e) {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}
