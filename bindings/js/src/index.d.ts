/**
 * @polyloop/assembly: the polyloop core as WebAssembly for Node (≥ 20) and
 * browsers, the same bytes as every other host. The wire: docs/SPEC.md of
 * https://github.com/polyloop/assembly.
 */

import type { ErrorCode } from "./consts.js";

// Generated from the core (consts.d.ts).
export type { ErrorCode } from "./consts.js";
export { ERROR_CODES, INTERNAL_MESSAGES, INVISIBLE_RANGES, MAX_REQUEST_BYTES, MAX_STRING_UNITS, PROVIDERS } from "./consts.js";

/** msgpack bytes (a request the module takes, or an answer) as a value: every code point kept (a leading U+FEFF too), an integer past 2^53 a bigint. */
export function decodeMsgpack(bytes: Uint8Array): unknown;

/** The project's version (one for the Go module, the wheel, this package, the CLI and the module). */
export const version: string;

/** Lowercase hex SHA-256 of the packaged `assembly.wasm`. */
export const moduleSha256: string;

// A Node-only project (`--lib es2022 --types node`) has no WebAssembly namespace:
// the one type used here, merged with lib.dom's where that is present.
declare global {
  namespace WebAssembly {
    interface Module {}
  }
}

// The wire's request and response types, generated from the core's Go types.
export * from "./types.js";
import type {
  AssembleRequest,
  AssembleResponse,
  CacheCall,
  CacheCallError,
  CacheReport,
  CompareInput,
  Comparison,
  ExportBodyOf,
  ExportOptions,
  Injected,
  Message,
  PrefixDigests,
  Provider,
} from "./types.js";

/** A request as {@link Assembler.cacheReport} and {@link Assembler.export} take it: an object, its JSON text, or its msgpack bytes. */
export type RequestLike = AssembleRequest | Prompt | string | Uint8Array;
/** A provider's recorded usage of one call: its usage object (`cache_read_input_tokens`, `prompt_tokens_details`…), or a whole response holding one under `usage`. */
export type UsageLike = object;

/** The error of every failed assembly: the wire's {@link ErrorDetail} as an Error, and for `internal` the host's `detail`. */
export class AssemblyError extends Error {
  constructor(code: ErrorCode | string, path: string, message: string, options?: { offset?: number; detail?: string });
  readonly name: "AssemblyError";
  code: ErrorCode;
  /** The offending value, like `steps[3].observation`; empty for the whole request. */
  path: string;
  /** The core's message, unchanged; for `internal`, one of {@link INTERNAL_MESSAGES}. */
  message: string;
  /** For `invalid_template`: the code-point offset of the problem in the template (from the wire's `offset` key); otherwise undefined. */
  offset: number | undefined;
  /** For `internal`: what the engine and the module said (trap text, the end of the Go runtime's stderr). Never part of the message. */
  detail: string | undefined;
  /** From a view call: where the error is, its path's keys and indexes and a JSON syntax error's byte (docs/SPEC.md §7.8). */
  at?: { path: (string | number)[]; byte: number | null };
}

/** Options of {@link loadAssembler}; the pool options have the same names and meanings on every host. */
export interface AssemblerOptions {
  /** Browsers: where `assembly.wasm` is served (default: beside the package, `../assembly.wasm` from `src/`). Node: a path or file: URL. */
  url?: string | URL;
  /** Node: a path or file: URL of `assembly.wasm` (default: the packaged one). */
  wasm?: string | URL;
  /** An already compiled module, e.g. posted to a worker (its memory limit is the one it was compiled with). */
  module?: WebAssembly.Module;
  /** Most module instances alive at once (default: the number of CPUs; docs/SPEC.md §7.4). A thread has one in use at a time: use Workers for parallelism. */
  maxInstances?: number;
  /** An instance whose linear memory exceeds this many bytes after a call is discarded (default 256 MiB). */
  recycleAboveBytes?: number;
  /** Cap on one instance's linear memory (default 4 GiB); a call that needs more is `internal` (out of memory). */
  memoryLimitBytes?: number;
}

/** An incremental prompt; see {@link Assembler.prompt}. */
export class Prompt {
  private constructor();
  /** Steps held: those of the request plus those added. */
  readonly stepCount: number;
  /** A read-only Array view made in O(1) (docs/JS.md), each message read a new object; the rest are fresh copies on every read. */
  readonly messages: readonly Message[];
  readonly message_chars: number[];
  readonly prompt_chars: number;
  readonly context_overflow: boolean;
  readonly injected: Injected[];
  readonly prefix_digests: PrefixDigests;
  /** The size in bytes of the prompt's canonical response: what `assembleBytes()` returns for the request with the same steps. */
  readonly responseBytes: number;
  /**
   * Appends one step through the module's `add_step` (docs/SPEC.md §7.3.1), at a cost that does not grow
   * with the history; returns the prompt.
   * @throws {AssemblyError} as one `assemble()` of the request with this step would (its path in the whole
   * request); the prompt is unchanged then.
   */
  addStep(rawOutput: string, observation: string): this;
  /**
   * The body the provider's API takes for this prompt as it is now: what {@link Assembler.export} gives for
   * the request with the same steps, byte for byte (a fresh object).
   */
  export<P extends Provider, B extends Record<string, unknown> = {}>(
    provider: P,
    options?: (ExportOptions & { body?: B }) | null,
  ): ExportBodyOf<P> & B;
  /** The messages as {@link chatMessages} gives them. */
  chatMessages(): ChatMessage[];
  /** The prompt as the response `assemble()` gives for the request with the same steps (fresh arrays). */
  response(): AssembleResponse;
  toJSON(): AssembleResponse;
}

/** A message as chat templates, TRL and the providers' SDKs take it: `content` its blocks' texts joined. */
export type ChatMessage = { role: Message["role"]; content: string };
/** Messages as the core answers them, as {@link ChatMessage}s. @throws {TypeError} a block that is not `{type: "text", text: string}`. */
export function chatMessages(messages: Iterable<Message>): ChatMessage[];

/** Assembles prompts. Every method is synchronous and safe to call from any number of async tasks. */
export class Assembler {
  private constructor();
  /** The compiled module (share it with workers through `loadAssembler({module})`). */
  readonly module: WebAssembly.Module;
  /** Module instances created so far (a trap or a recycled instance makes one more). */
  readonly instancesCreated: number;
  /**
   * Assembles a request.
   * @throws {AssemblyError} the core's; `too_large` also for a response string longer than this engine's strings
   * allow (`assembleBytes` still works then).
   */
  assemble(request: AssembleRequest): AssembleResponse;
  /**
   * The wire function: msgpack request bytes in, the core's response bytes out (ok or error).
   * @throws {AssemblyError} `internal` only if the module itself failed (a trap, out of memory).
   */
  assembleBytes(request: Uint8Array): Uint8Array;
  /** Assembles a request written as JSON text (a string, or UTF-8 bytes) with the command-line tool's verdict (docs/SPEC.md §2.3). */
  assembleJSON(text: string | Uint8Array): AssembleResponse;
  /** The pool options in effect. */
  readonly options: Readonly<{ maxInstances: number; recycleAboveBytes: number; memoryLimitBytes: number }>;
  /** Checks an observation template as `assemble()` does (`invalid_template` with its `offset`). */
  validateTemplate(template: string): void;
  /** Assembles `request` once and returns a {@link Prompt} that grows one step at a time. */
  prompt(request: AssembleRequest): Prompt;
  /** Compares two prompts (docs/SPEC.md §7.9). @throws {AssemblyError} a side is invalid (its path prefixed with `a` or `b`). */
  compare(a: CompareInput | Prompt, b: CompareInput | Prompt): Comparison;
  /**
   * The generic call: a call of the module by its name in the contract table (`CALLS`, wasm/README.md).
   * The request is `{params[i]: args[i]}` for a call with params, else `args[0]` (msgpack bytes and, for a
   * JSON call, a string go as they are); the answer is decoded by the call's answer shape (a view call:
   * `{response, view}`).
   * @throws {AssemblyError} the error the answer carries; TypeError for a name that is no such call.
   */
  call(name: string, ...args: unknown[]): any;
  /**
   * A run's cache report (docs/SPEC.md §7.12): `requests` in call order (a {@link Prompt} as its messages are now;
   * one request where the list belongs: `malformed_request` at `requests`); `usage`, the provider's of each call
   * (`null` where none): its usage object or the whole response, as the provider's SDK answers it, its JSON text,
   * or an object with toJSON(); any other value throws `malformed_request` at `usage[i]`. An invalid request is its
   * call's `{error}`: narrow with `"error" in call`.
   */
  cacheReport(requests: readonly RequestLike[], usage?: readonly (UsageLike | null)[] | null): CacheReport;
  /** Starts a run's cache report made call by call, as the loop makes its calls (docs/SPEC.md §7.15). */
  cacheRun(): CacheRun;
  /**
   * The body the provider's API takes for the request's prompt, cache breakpoints or key placed (docs/SPEC.md §7.13),
   * typed by `provider`, with `options.body`'s fields (written first).
   * @throws {AssemblyError} e.g. a system message after another role, for Anthropic, at its request path.
   */
  export<P extends Provider, B extends Record<string, unknown> = {}>(
    request: RequestLike,
    provider: P,
    options?: (ExportOptions & { body?: B }) | null,
  ): ExportBodyOf<P> & B;
}

/** The providers {@link Assembler.export} writes a body for. */
/** The providers {@link Assembler.export} writes a body for. */
export type ExportProvider = Provider;

/**
 * A run's cache report made call by call (docs/SPEC.md §7.15); see {@link Assembler.cacheRun}. Each call costs
 * what its prompt adds when it is the same {@link Prompt} as the last valid call's, grown.
 */
export class CacheRun {
  private constructor();
  /**
   * Reports on the run's next call: its prompt (a {@link Prompt} as it is now, or a request, its JSON text or
   * msgpack bytes) and the provider's usage or response (null: none recorded, class `no_usage`). Returns the
   * call's entry, as {@link Assembler.cacheReport} gives it over the same calls; an invalid request's is
   * `{error}` and leaves the run's last valid call as it was.
   */
  call(prompt: RequestLike, usage?: UsageLike | string | null): CacheCall | CacheCallError;
  /** The report so far, `{calls, groups, totals}`: what {@link Assembler.cacheReport} gives over the same calls (fresh). */
  report(): CacheReport;
}

/** The module packaged with this binding. */
export const DEFAULT_WASM_URL: URL;

/** Compiles (once per process or page, per memory limit) the module at `source`. */
export function compileModule(source?: string | URL, options?: { memoryLimitBytes?: number }): Promise<WebAssembly.Module>;

/**
 * Loads the assembler: compiles `assembly.wasm` once per process or page
 * (browsers: streaming compilation from `options.url`) and prepares an instance.
 */
export function loadAssembler(options?: AssemblerOptions): Promise<Assembler>;
