/**
 * WebAssembly instances of the assembly module under
 * @bjorn3/browser_wasi_shim, the pool of them (docs/SPEC.md §7.4), the pool
 * options and the memory cap written into the module.
 *
 * @module
 */

import { WASI, OpenFile, File, ConsoleStdout } from "@bjorn3/browser_wasi_shim";
import * as consts from "./consts.js";

/** Defaults of the pool options (the same on every host). */
export const DEFAULT_RECYCLE_ABOVE_BYTES = consts.DEFAULT_RECYCLE_ABOVE_BYTES;
export const DEFAULT_MEMORY_LIMIT_BYTES = consts.DEFAULT_MEMORY_LIMIT_BYTES;
const WASM_PAGE = 65536;

export const STDERR_KEEP = consts.STDERR_KEEP_BYTES;
const textDecoder = new TextDecoder();

/**
 * The module's stderr as every host keeps it (docs/SPEC.md §7.5): its first
 * STDERR_KEEP bytes, where the Go runtime writes why it died; the goroutine
 * traces after them are dropped. Emptied before each call.
 */
export class StderrHead {
  constructor() {
    this.bytes = new Uint8Array(STDERR_KEEP);
    /** How many bytes are kept. */
    this.n = 0;
  }

  /** @param {Uint8Array} b */
  write(b) {
    const k = Math.min(b.length, STDERR_KEEP - this.n);
    if (k > 0) {
      this.bytes.set(b.subarray(0, k), this.n);
      this.n += k;
    }
  }

  /** The kept bytes as text. */
  get text() {
    return textDecoder.decode(this.bytes.subarray(0, this.n));
  }

  /** Whether the module said it ran out of memory (consts.js STDERR_OUT_OF_MEMORY). */
  get outOfMemory() {
    return this.text.includes(consts.STDERR_OUT_OF_MEMORY);
  }
}

/** The module's exports the binding calls (wasm/README.md). */
const REQUIRED_EXPORTS = ["_initialize", "memory", "buffer", "call"];

/** @typedef {number} Op a call of the module's `call` export: one of consts.js `CALL_*` (wasm/README.md "ABI") */

/** @typedef {import("./index.js").AssemblerOptions} AssemblerOptions */

/**
 * One instance of the module, with its own WASI shim: no arguments, no
 * environment, no preopened directory; stdin empty; stdout dropped; stderr kept
 * (its first 4 KiB, never printed: StderrHead) so that a trap can say what the Go runtime
 * said before it died. Clocks and random bytes are the real ones.
 */
export class ModuleInstance {
  /**
   * @param {WebAssembly.Instance} instance
   * @param {WASI} wasi
   * @param {StderrHead} stderr
   */
  constructor(instance, wasi, stderr) {
    this.exports = /** @type {any} */ (instance.exports);
    this.stderr = stderr;
    /** Where the module's request buffer is, and its capacity (0: not asked yet). */
    this.ptr = 0;
    this.capacity = 0;
    // The shim's debug logger is one flag for the whole page or process, and
    // any WASI constructed without {debug: false} (by another library, say)
    // turns it on; it logs from args_sizes_get and environ_sizes_get, which Go
    // calls in _initialize. Turn it off right before.
    new WASI([], [], [], { debug: false });
    wasi.initialize(instance); // runs _initialize once, before any other export
  }

  /**
   * Builds the imports of a new instance.
   * @returns {{imports: WebAssembly.Imports, wasi: WASI, stderr: StderrHead}}
   */
  static imports() {
    const stderr = new StderrHead();
    const fds = [new OpenFile(new File([])), new ConsoleStdout(() => {}), new ConsoleStdout((b) => stderr.write(b))];
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
   * A view of the module's request buffer, made to hold at least `size`
   * bytes: the module is asked (`buffer`) only when `size` is over the
   * capacity it gave last (wasm/README.md "ABI"). Valid until the next call
   * into the instance.
   *
   * @param {number} size
   * @returns {Uint8Array}
   */
  requestBuffer(size) {
    if (size > this.capacity) {
      this.stderr.n = 0;
      const packed = this.exports.buffer(size);
      this.ptr = Number(BigInt.asUintN(32, packed >> 32n));
      this.capacity = Number(BigInt.asUintN(32, packed));
    }
    return new Uint8Array(this.exports.memory.buffer, this.ptr, size);
  }

  /**
   * Runs call `op` over the first `size` bytes of the request buffer (one
   * export call). Throws whatever the module or the engine throws (a trap,
   * proc_exit); then the instance is broken.
   *
   * @param {Op} op
   * @param {number} size
   * @returns {Uint8Array} the answer, a view of linear memory valid until the next call into the instance
   */
  callBuffer(op, size) {
    this.stderr.n = 0;
    const packed = this.exports.call(op, size);
    // Memory may have grown during the call: a fresh view of it.
    return new Uint8Array(this.exports.memory.buffer, Number(BigInt.asUintN(32, packed >> 32n)), Number(BigInt.asUintN(32, packed)));
  }

  /**
   * Copies `request` into the request buffer and runs call `op` over it.
   *
   * @param {Uint8Array} request
   * @param {Op} op
   * @returns {Uint8Array} the answer, valid until the next call into the instance
   */
  invoke(request, op) {
    this.requestBuffer(request.length).set(request);
    return this.callBuffer(op, request.length);
  }

  /**
   * One `assemble` request in, a copy of the response bytes out (for
   * benchmarks and tests; the Assembler reads responses in place).
   *
   * @param {Uint8Array} request
   * @returns {Uint8Array}
   */
  call(request) {
    return this.invoke(request, consts.CALL_ASSEMBLE).slice();
  }
}

/**
 * The pool of module instances (docs/SPEC.md §7.4). A thread runs one call at
 * a time and no caller code runs while a call holds an instance (a getter of
 * the request runs while it is encoded, before the instance is taken), so one
 * instance is in use at a time: the pool never has more than one alive, within
 * any `maxInstances`, and no call waits. It replaces an instance that trapped
 * and drops an instance whose memory grew past `recycleAboveBytes` (a huge
 * request) so that memory goes back to the engine.
 */
export class InstancePool {
  /**
   * @param {WebAssembly.Module} module
   * @param {number} maxInstances
   * @param {number} recycleAboveBytes
   */
  constructor(module, maxInstances, recycleAboveBytes) {
    checkExports(module);
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
 * Refuses a module without the exports the binding calls (a module of another
 * release), before any call.
 * @param {WebAssembly.Module} module
 */
function checkExports(module) {
  const have = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
  const missing = REQUIRED_EXPORTS.filter((name) => !have.has(name));
  if (missing.length) {
    throw new TypeError(`the assembly module has no export ${missing.join(", ")}; is the module from the same release as this binding?`);
  }
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
