/**
 * The runtime: instances under @bjorn3/browser_wasi_shim, their pool (docs/SPEC.md §7.4), its options, the
 * compile cache and the memory cap written into the module. The crossing is wasm/README.md "ABI".
 * @module
 */

import { WASI, OpenFile, File, ConsoleStdout } from "@bjorn3/browser_wasi_shim";
import { DEFAULT_MEMORY_LIMIT_BYTES, DEFAULT_RECYCLE_ABOVE_BYTES, STDERR_KEEP_BYTES as STDERR_KEEP } from "./consts.js";

/** The module packaged with this binding: beside the package root. */
export const DEFAULT_WASM_URL = new URL("../assembly.wasm", import.meta.url);
const WASM_PAGE = 65536;
const REQUIRED_EXPORTS = ["_initialize", "memory", "buffer", "call"];
const RENAMED_OPTIONS = { poolSize: "maxInstances", retireAboveBytes: "recycleAboveBytes" };
const textDecoder = new TextDecoder();

/** The module's stderr as every host keeps it: its first STDERR_KEEP bytes (docs/SPEC.md §7.5). */
export class StderrHead {
  constructor() {
    this.bytes = new Uint8Array(STDERR_KEEP);
    this.n = 0;
  }

  write(b) {
    const k = Math.min(b.length, STDERR_KEEP - this.n);
    this.bytes.set(b.subarray(0, k), this.n);
    this.n += k;
  }

  get text() {
    return textDecoder.decode(this.bytes.subarray(0, this.n));
  }
}

/**
 * One instance with its own WASI shim: no arguments, environment or directory; stdout dropped; stderr kept (never printed) for what a
 * trap's Go runtime said. Clocks and random bytes are the real ones.
 */
export class ModuleInstance {
  constructor(instance, wasi, stderr) {
    this.exports = /** @type {any} */ (instance.exports);
    this.stderr = stderr;
    this.ptr = 0; // the module's request buffer, and its capacity
    this.capacity = 0;
    // The shim's debug logger is one flag for the whole process, which any
    // WASI made without {debug: false} turns on: off right before _initialize.
    new WASI([], [], [], { debug: false });
    wasi.initialize(instance);
  }

  /** A new instance, which `make` instantiates with the imports (at once or in a Promise). @param {(imports: WebAssembly.Imports) => any} make @returns {any} */
  static create(make) {
    const stderr = new StderrHead();
    const fds = [new OpenFile(new File([])), new ConsoleStdout(() => {}), new ConsoleStdout((b) => stderr.write(b))];
    const wasi = new WASI([], [], fds, { debug: false });
    const made = make({ wasi_snapshot_preview1: wasi.wasiImport });
    const wrap = (/** @type {WebAssembly.Instance} */ i) => new ModuleInstance(i, wasi, stderr);
    return made instanceof Promise ? made.then(wrap) : wrap(made);
  }

  get memoryBytes() {
    return this.exports.memory.buffer.byteLength;
  }

  /**
   * Copies `request` into the module's buffer (asked for a bigger one only past its capacity) and runs call `op` over it. Throws what the
   * module or the engine throws; the instance is broken then.
   * @param {Uint8Array} request
   * @param {number} op consts.js `CALL_*`
   * @returns {Uint8Array} the answer, a view of linear memory valid until the next call into the instance
   */
  invoke(request, op) {
    const size = request.length;
    this.stderr.n = 0;
    if (size > this.capacity) [this.ptr, this.capacity] = split(this.exports.buffer(size));
    new Uint8Array(this.exports.memory.buffer, this.ptr, size).set(request);
    const [ptr, len] = split(this.exports.call(op, size));
    return new Uint8Array(this.exports.memory.buffer, ptr, len); // memory may have grown: a fresh view
  }
}

/** @param {bigint} packed a pointer and a length, packed in an i64 @returns {[number, number]} */
const split = (packed) => [Number(BigInt.asUintN(32, packed >> 32n)), Number(BigInt.asUintN(32, packed))];

/**
 * The pool (docs/SPEC.md §7.4). No caller code runs while a call holds an instance, so one is in use at a time and no call waits. An
 * instance that trapped is dropped, and one whose memory grew past `recycleAboveBytes`.
 */
export class InstancePool {
  constructor(module, maxInstances, recycleAboveBytes) {
    const have = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
    const missing = REQUIRED_EXPORTS.filter((name) => !have.has(name));
    if (missing.length) {
      throw new TypeError(`the assembly module has no export ${missing.join(", ")}; is the module from the same release as this binding?`);
    }
    this.module = module;
    this.maxInstances = maxInstances;
    this.recycleAboveBytes = recycleAboveBytes;
    this.idle = [];
    this.created = 0;
  }

  /** One ready instance, made asynchronously (browsers allow it on the main thread). */
  async warm() {
    if (this.idle.length === 0) {
      this.idle.push(await ModuleInstance.create((imports) => WebAssembly.instantiate(this.module, imports)));
      this.created++;
    }
  }

  acquire() {
    const inst = this.idle.pop();
    if (inst) return inst;
    this.created++;
    return ModuleInstance.create((imports) => new WebAssembly.Instance(this.module, imports));
  }

  release(inst) {
    if (this.idle.length < this.maxInstances && inst.memoryBytes <= this.recycleAboveBytes) this.idle.push(inst);
  }
}

const compiled = new Map();

/** The compile of `key`, made once by `make` (again after a failure). @param {string} key @param {() => Promise<WebAssembly.Module>} make */
export function compileOnce(key, make) {
  if (!compiled.has(key)) {
    const p = make();
    p.catch(() => compiled.delete(key));
    compiled.set(key, p);
  }
  return compiled.get(key);
}

/** Lets the compile of `key` go. @param {string} key */
export const forgetCompile = (key) => compiled.delete(key);

/** The pool options checked (the names and meanings every host shares). @param {import("./index.js").AssemblerOptions} options */
export function poolOptions(options) {
  for (const [old, now] of Object.entries(RENAMED_OPTIONS)) {
    if (old in options) throw new TypeError(`the option ${old} was renamed ${now} (the same name on every host)`);
  }
  const maxInstances = options.maxInstances ?? (Number(globalThis.navigator?.hardwareConcurrency) || 1);
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
 * The module's bytes with a maximum of `limitBytes` (whole 64 KiB pages) on its linear memory, so growing past it fails inside the module
 * (Go says out of memory). Only the memory section changes; 4 GiB returns `bytes`.
 * @param {Uint8Array} bytes @param {number} limitBytes @returns {Uint8Array}
 */
export function limitModuleMemory(bytes, limitBytes) {
  if (limitBytes >= DEFAULT_MEMORY_LIMIT_BYTES) return bytes;
  /** @param {number} i @returns {[number, number]} the LEB128 at i and its end */
  const leb = (i) => {
    let r = 0;
    for (let shift = 0; ; shift += 7) {
      const x = bytes[i++];
      r += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) return [r, i];
    }
  };
  const put = (n) => {
    const out = [];
    do {
      out.push((n & 0x7f) | (n >= 128 ? 0x80 : 0));
      n = Math.floor(n / 128);
    } while (n);
    return out;
  };
  const pages = Math.floor(limitBytes / WASM_PAGE);
  for (let i = 8; i < bytes.length;) {
    const [size, body] = leb(i + 1);
    if (bytes[i] !== 5) {
      i = body + size;
      continue;
    }
    const [count, p] = leb(body);
    const flags = bytes[p];
    if (count !== 1 || (flags & ~1) !== 0) throw new Error("the module's memory section is not one 32-bit memory");
    const [min, q] = leb(p + 1);
    if (pages < min) throw new TypeError(`memoryLimitBytes must be at least the module's initial memory (${min * WASM_PAGE} bytes)`);
    const max = flags & 1 ? leb(q)[0] : Infinity;
    const content = [1, 1, ...put(min), ...put(Math.min(max, pages))];
    const section = [5, ...put(content.length), ...content];
    const out = new Uint8Array(i + section.length + bytes.length - (body + size));
    out.set(bytes.subarray(0, i));
    out.set(section, i);
    out.set(bytes.subarray(body + size), i + section.length);
    return out;
  }
  throw new Error("the module has no memory section");
}
