/**
 * The Assembler: the host-independent API of the binding over a pool of
 * module instances (src/instance.js). `node.js` and `browser.js` only differ
 * in how they obtain the compiled WebAssembly.Module.
 *
 * @module
 */
import { AssemblyError } from "./errors.js";
import { MAX_REQUEST_BYTES, RequestTooLarge, acquireEncoder, encodeRequest } from "./encode.js";
import { encodeWtf8Into, wtf8Length } from "./strings.js";
import { MAX_STRING_UNITS, StringCeiling, decodeResponse } from "./decode.js";
import { InstancePool, STDERR_KEEP, poolOptions } from "./instance.js";
import { Prompt } from "./prompt.js";
import * as consts from "./consts.js";

export { MAX_REQUEST_BYTES };

/** The largest buffer the module's 32-bit ABI can be handed. */
const MAX_MODULE_REQUEST = consts.MAX_MODULE_BUFFER_BYTES;

/** The `internal` messages, the same on every host (docs/SPEC.md §7). */
export const INTERNAL_MESSAGES = consts.INTERNAL_MESSAGES;

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
    return this.run(request, consts.CALL_ASSEMBLE, copyOf);
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
    return this.send(request, consts.CALL_ASSEMBLE, templateOf(request), sized, 0);
  }

  /**
   * @private
   * One request object through an entry point of the module: encoded with the
   * shared encoder, run, its response decoded (reusing the request's strings).
   * @param {unknown} request
   * @param {import("./instance.js").Op} op consts.CALL_ASSEMBLE, CALL_ADD_STEP or CALL_PROMPT_START
   * @param {unknown} template the request's observation_template (for the strings it renders)
   * @param {{bytes: number} | undefined} sized receives the size of the response bytes
   * @param {number} messageBase where the response's messages go in the whole prompt (see {@link Assembler#read})
   * @returns {any} the ok response
   */
  send(request, op, template, sized, messageBase) {
    const encoder = acquireEncoder();
    try {
      let bytes;
      try {
        bytes = encoder.encodeShared(request);
      } catch (e) {
        if (e instanceof RequestTooLarge) return this.read(tooLargeResponse(e.size));
        throw e;
      }
      const source = encoder.requestStrings(bytes, template);
      return this.run(bytes, op, (r) => {
        if (sized) sized.bytes = r.length;
        return this.read(r, source, messageBase);
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
    return this.run(bytes, consts.CALL_ASSEMBLE_JSON, (r) => this.read(r));
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
   * Compares two prompts (docs/SPEC.md §7.9): where they first differ
   * (message, character, segment, an excerpt of each side), which prefix
   * digests still match, and how many characters of cacheable prefix `b`
   * keeps. Each side is a request object (assembled first), a recorded
   * message list (`[{role, content}]`, content a string or text blocks),
   * either as JSON text (a string), or msgpack bytes (a Uint8Array). The
   * answer is the core's, field for field as the CLI's and Python's.
   *
   * @param {unknown} a
   * @param {unknown} b
   * @returns {import("./index.js").Comparison}
   * @throws {AssemblyError} a side is invalid (its path prefixed with `a` or `b`)
   */
  compare(a, b) {
    // Bytes go as a bin: the core judges them as one side on their own.
    const sa = encodeRequest(a);
    const sb = encodeRequest(b);
    const request = new Uint8Array(5 + sa.length + sb.length);
    request.set([0x82, 0xa1, 0x61]);
    request.set(sa, 3);
    request.set([0xa1, 0x62], 3 + sa.length);
    request.set(sb, 5 + sa.length);
    return this.run(request, consts.CALL_COMPARE, (r) => {
      const answer = JSON.parse(textDecoder.decode(r));
      if (answer.error) throw toError(answer);
      return answer;
    });
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
    const response = this.send(request, consts.CALL_PROMPT_START, templateOf(request), undefined, 0);
    return new Prompt(this, request, response);
  }

  /**
   * @private
   * Response bytes to the response object, or the AssemblyError it carries.
   * @param {Uint8Array} bytes
   * @param {import("./strings.js").RequestStrings} [source] the request's strings, reused where they come back unchanged
   * @param {number} [messageBase] the number of messages before the response's own (an add_step response)
   */
  read(bytes, source, messageBase = 0) {
    let r;
    try {
      r = decodeResponse(bytes, { source, maxStringUnits: this.maxStringUnits === MAX_STRING_UNITS ? undefined : this.maxStringUnits });
    } catch (e) {
      if (e instanceof StringCeiling) throw ceilingError(e, messageBase);
      throw new AssemblyError("internal", "", INTERNAL_MESSAGES.notAResponse, { detail: `${bytes.length} bytes: ${describe(e)}` });
    }
    if (r !== null && typeof r === "object" && r.ok === true) return r;
    if (r !== null && typeof r === "object" && r.ok === false && r.error && typeof r.error === "object") throw toError(r);
    throw new AssemblyError("internal", "", INTERNAL_MESSAGES.notAResponse, { detail: `${bytes.length} bytes that decode to no response` });
  }

  /**
   * @private
   * One call into an instance (one export call, wasm/README.md "ABI");
   * `read` gets the answer in place, before the next call into the instance.
   * @template T
   * @param {Uint8Array} request
   * @param {import("./instance.js").Op} op one of consts.js `CALL_*`
   * @param {(response: Uint8Array) => T} read
   * @returns {T}
   */
  run(request, op, read) {
    let inst;
    try {
      inst = this.pool.acquire();
    } catch (e) {
      throw failure(e, null, "could not instantiate the module");
    }
    let resp;
    try {
      resp = inst.invoke(request, op);
    } catch (e) {
      this.pool.discard(inst);
      throw failure(e, inst.stderr, `a request of ${request.length} bytes`);
    }
    try {
      return read(resp);
    } finally {
      this.pool.release(inst);
    }
  }
}

/**
 * The `internal` error of a module that failed: out of memory when the Go
 * runtime or the engine said so, a trap otherwise; what they said goes into
 * `detail`, never the message.
 *
 * @param {unknown} e
 * @param {import("./instance.js").StderrHead | null} stderr what the module wrote, kept as every host keeps it
 * @param {string} what
 */
function failure(e, stderr, what) {
  const said = stderr ? stderr.text.trim() : "";
  // GAP: the engine's own words for a failed allocation are V8's.
  const oom = (stderr !== null && stderr.outOfMemory) || (e instanceof RangeError && /memory|allocation failed/i.test(e.message));
  return new AssemblyError("internal", "", oom ? INTERNAL_MESSAGES.outOfMemory : INTERNAL_MESSAGES.trapped, {
    detail: `${what}: ${describe(e)}` + (said ? `\nthe module's stderr (first ${STDERR_KEEP} bytes):\n${said}` : ""),
  });
}

/**
 * The `too_large` error of a response string this engine cannot make.
 *
 * GAP: a host rule, not the core's. The string ceiling is V8's (2^29 − 24
 * UTF-16 units), which the core cannot know; the response is valid and
 * assembleBytes() returns it. The path is built while decoding
 * (src/decode.js) in the core's path syntax (docs/SPEC.md §2.2; a test
 * compares it with the core's paths for the same positions), and a step's
 * messages are numbered in the whole prompt: the response of add_step holds
 * only the step's two, after `messageBase` others.
 *
 * @param {StringCeiling} e
 * @param {number} messageBase
 */
function ceilingError(e, messageBase) {
  const path = messageBase ? e.path.replace(/^messages\[(\d+)\]/, (_, k) => `messages[${messageBase + Number(k)}]`) : e.path;
  return new AssemblyError("too_large", path, consts.msgStringCeiling(e.bytes, path || "the top", MAX_STRING_UNITS));
}

/**
 * The request's observation_template, read again for the strings it
 * renders (undefined when it cannot be read: the core has judged it then).
 * @param {unknown} request
 */
function templateOf(request) {
  try {
    return request instanceof Map ? request.get("observation_template") : /** @type {any} */ (request)?.observation_template;
  } catch {
    return undefined;
  }
}

/** @param {any} response */
const textDecoder = new TextDecoder();

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
