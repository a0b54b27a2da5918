/**
 * The host-independent part of the binding: WebAssembly instances of the
 * assembly module under @bjorn3/browser_wasi_shim, a small pool of them, the
 * Assembler API and the incremental Prompt. `node.js` and `browser.js` only
 * differ in how they obtain the compiled WebAssembly.Module.
 *
 * @module
 */

import { WASI, OpenFile, File, ConsoleStdout } from "@bjorn3/browser_wasi_shim";
import { AssemblyError, decodeResponse, encodeRequestShared } from "./wire.js";

/** The largest request the core decodes (SPEC §6, `too_large`). */
export const MAX_REQUEST_BYTES = 1 << 30;

/** The largest buffer the module's 32-bit ABI can be handed. */
const MAX_MODULE_REQUEST = 0xffffffff;

const STDERR_KEEP = 4096;
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
   * Runs one request through the module's ABI: alloc, copy in, assemble
   * (which releases the request buffer), copy the response out, free.
   * Throws whatever the module or the engine throws (a trap, proc_exit).
   *
   * @param {Uint8Array} request
   * @returns {Uint8Array} a copy of the response bytes
   */
  call(request) {
    const ex = this.exports;
    this.stderr.text = "";
    const size = request.length;
    const ptr = ex.alloc(size) >>> 0;
    new Uint8Array(ex.memory.buffer, ptr, size).set(request);
    const packed = BigInt.asUintN(64, ex.assemble(ptr, size));
    const respPtr = Number(packed >> 32n);
    const respLen = Number(packed & 0xffffffffn);
    const response = new Uint8Array(ex.memory.buffer, respPtr, respLen).slice();
    ex.free(respPtr);
    return response;
  }
}

/**
 * A small pool of module instances. JavaScript runs each call to completion,
 * so one thread needs one instance at a time; the pool keeps up to `size` idle
 * ones ready, replaces an instance that trapped, and retires an instance whose
 * memory grew past `retireAboveBytes` (a huge request) so that memory goes
 * back to the engine.
 */
class InstancePool {
  /**
   * @param {WebAssembly.Module} module
   * @param {number} size
   * @param {number} retireAboveBytes
   */
  constructor(module, size, retireAboveBytes) {
    this.module = module;
    this.size = size;
    this.retireAboveBytes = retireAboveBytes;
    /** @type {ModuleInstance[]} */
    this.idle = [];
    /** Instances created since the pool started (for tests and monitoring). */
    this.created = 0;
    /** @type {Promise<void> | null} */
    this.refilling = null;
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
    if (this.idle.length < this.size && inst.memoryBytes <= this.retireAboveBytes) this.idle.push(inst);
  }

  /** Drops an instance that trapped; a fresh one is made on demand. */
  discard(_inst) {}
}

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
    const size = options.poolSize ?? 2;
    const retire = options.retireAboveBytes ?? 256 * 1024 * 1024;
    if (!Number.isInteger(size) || size < 1) throw new TypeError("poolSize must be an integer ≥ 1");
    /** The compiled module (share it with workers: loadAssembler({module})). */
    this.module = module;
    /** @private */
    this.pool = new InstancePool(module, size, retire);
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
    return this.run(request);
  }

  /**
   * Assembles a request object (SPEC §2; see README for how JavaScript values
   * map to msgpack) and returns the response object
   * `{v, ok: true, messages, message_chars, prompt_chars, context_overflow,
   * injected, prefix_digests}`.
   *
   * @param {object} request
   * @returns {import("./index.js").AssembleResponse}
   * @throws {AssemblyError} with the core's code, path and message
   */
  assemble(request) {
    const response = decode(this.run(encodeRequestShared(request)));
    if (response.ok !== true) throw toError(response);
    return response;
  }

  /**
   * Checks an observation template the way assemble() does (it is assembled as
   * `{observation_template: template}`), so a host can fail before a run
   * starts.
   *
   * @param {string} template
   * @throws {AssemblyError} `invalid_template` (the message gives the
   *   code-point offset), or `malformed_request` / `invalid_utf8` for a value
   *   that is not a valid string
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
    return new Prompt(this, request, this.assemble(request));
  }

  /**
   * @private
   * @param {Uint8Array} request
   * @returns {Uint8Array}
   */
  run(request) {
    if (request.length > MAX_MODULE_REQUEST) {
      // The core would say too_large (over 1 GiB); a 32-bit module cannot even
      // be handed this many bytes, so the binding says it.
      throw new AssemblyError(
        "too_large",
        "",
        `the request is ${request.length} bytes, over the 1 GiB limit (and more than a 32-bit WebAssembly module can address); split it into smaller requests`,
      );
    }
    let inst;
    try {
      inst = this.pool.acquire();
    } catch (e) {
      throw new AssemblyError("internal", "", `could not instantiate the assembly module: ${describe(e)}`);
    }
    let response;
    try {
      response = inst.call(request);
    } catch (e) {
      this.pool.discard(inst);
      const said = inst.stderr.text.trim();
      throw new AssemblyError(
        "internal",
        "",
        `the assembly module failed on a request of ${request.length} bytes (${describe(e)})` +
          (said ? `; it said: ${said}` : "") +
          ". The instance was dropped; the next call runs on a fresh one.",
      );
    }
    this.pool.release(inst);
    return response;
  }
}

/**
 * An incremental prompt (SPEC §7): after k calls of addStep its messages,
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
   */
  constructor(assembler, request, response) {
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
   *   (`steps[k].observation`); the prompt is unchanged then.
   */
  addStep(rawOutput, observation) {
    let r;
    try {
      r = this.assembler.assemble({
        v: 1,
        observation_template: this.template,
        steps: [{ raw_output: rawOutput, observation }],
      });
    } catch (e) {
      if (e instanceof AssemblyError && e.path.startsWith("steps[0]")) {
        throw new AssemblyError(e.code, `steps[${this.stepCount}]` + e.path.slice("steps[0]".length), e.message);
      }
      throw e;
    }
    this.messages.push(r.messages[0], r.messages[1]);
    this.message_chars.push(r.message_chars[0], r.message_chars[1]);
    this.prompt_chars += r.prompt_chars;
    this.context_overflow = this.budget !== null && this.prompt_chars > this.budget;
    this.stepCount++;
    return this;
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

/** @param {Uint8Array} bytes */
function decode(bytes) {
  try {
    const r = decodeResponse(bytes);
    if (r !== null && typeof r === "object" && (r.ok === true || (r.ok === false && r.error))) return r;
  } catch {
    // fall through
  }
  throw new AssemblyError(
    "internal",
    "",
    `the assembly module returned ${bytes.length} bytes that are not a response; is assembly.wasm from the same release as this package?`,
  );
}

/** @param {any} response */
function toError(response) {
  const e = response.error;
  return new AssemblyError(String(e.code), String(e.path ?? ""), String(e.message ?? ""));
}

/** @param {unknown} e */
function describe(e) {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}
