/**
 * @polyloop/assembly — context assembly for agent loops, the polyloop Go core
 * compiled to WebAssembly, for Node (≥ 20) and browsers. Same request bytes,
 * same response bytes as every other host (Go, Python, the CLI).
 *
 * Wire format v1: see SPEC.md §2–7.
 */

/** Every error code of the wire format (SPEC §6). */
export type ErrorCode =
  | "malformed_request"
  | "unsupported_version"
  | "unknown_field"
  | "missing_field"
  | "duplicate_key"
  | "invalid_utf8"
  | "invalid_role"
  | "unknown_block_type"
  | "invalid_entry_id"
  | "invalid_budget"
  | "invalid_template"
  | "too_large"
  | "internal";

/** The error codes, in SPEC order. */
export const ERROR_CODES: readonly ErrorCode[];

/** The largest request the core decodes (1 GiB); a larger one is `too_large`. */
export const MAX_REQUEST_BYTES: number;

export type Role = "system" | "user" | "assistant";

/** A content block; `text` is the only block type of wire version 1. */
export interface TextBlock {
  type: "text";
  text: string;
}

export interface Message {
  role: Role;
  content: TextBlock[];
}

/** One entry of an injection channel. */
export interface Injection {
  /** Non-empty identifier recorded in the trajectory. */
  entry_id: string;
  /** The text pasted as one user message. */
  content: string;
}

/** One completed step of the loop. */
export interface Step {
  /** The text the decision interpreter hands back, pasted as given. */
  raw_output: string;
  /** Rendered through `observation_template`. */
  observation: string;
}

/**
 * A request (SPEC §2). Plain objects, arrays and strings; `injections` may
 * also be a `Map`. Any other JavaScript value is encoded faithfully (or as a
 * value the core rejects) so that a mistake gets the core's own error code and
 * path; see README "JavaScript values".
 */
export interface AssembleRequest {
  /** Wire version; 1 (the default). */
  v?: number | bigint;
  run_messages?: Message[];
  /** Channel name → entries. Channels are pasted in code-point order of their names. */
  injections?: Record<string, Injection[]> | Map<string, Injection[]>;
  goal_messages?: Message[];
  steps?: Step[];
  /** A CPython `str.format` template with at least one `{observation}` field. */
  observation_template: string;
  /** Budget in code points; `null` or absent: no budget. */
  max_prompt_chars?: number | bigint | null;
}

/** What the injection slot pasted. */
export interface Injected {
  channel: string;
  entry_id: string;
  /** Index of the pasted message in `messages`. */
  message_index: number;
}

/** Lowercase hex SHA-256 of the canonical encoding of `messages` up to the end of each segment. */
export interface PrefixDigests {
  run: string;
  injections: string;
  goal: string;
}

/** A successful response (SPEC §6). */
export interface AssembleResponse {
  v: 1;
  ok: true;
  messages: Message[];
  /** Code points of each message, parallel to `messages`. */
  message_chars: number[];
  /** Sum of `message_chars` (code points, not UTF-16 units). */
  prompt_chars: number;
  /** A budget was given and `prompt_chars` exceeds it. */
  context_overflow: boolean;
  injected: Injected[];
  prefix_digests: PrefixDigests;
}

/** The error of every failed assembly. */
export class AssemblyError extends Error {
  constructor(code: ErrorCode | string, path: string, message: string);
  readonly name: "AssemblyError";
  /** One of {@link ErrorCode}. */
  code: ErrorCode;
  /** The offending value, like `steps[3].observation`; empty for the whole request. */
  path: string;
  /** The core's message, unchanged (for `invalid_template` it gives the code-point offset). */
  message: string;
}

export interface AssemblerOptions {
  /** Browsers: where `assembly.wasm` is served (default: beside the package, `../assembly.wasm` from `src/`). Node: a path or file: URL. */
  url?: string | URL;
  /** Node: a path or file: URL of `assembly.wasm` (default: the packaged one). */
  wasm?: string | URL;
  /** An already compiled module, e.g. posted to a worker. */
  module?: WebAssembly.Module;
  /** Idle instances kept ready (default 2). */
  poolSize?: number;
  /** An instance whose linear memory grew past this many bytes is dropped after its call (default 256 MiB). */
  retireAboveBytes?: number;
}

/** An incremental prompt; see {@link Assembler.prompt}. */
export class Prompt {
  private constructor();
  /** Steps held: those of the request plus those added. */
  readonly stepCount: number;
  readonly messages: Message[];
  readonly message_chars: number[];
  readonly prompt_chars: number;
  readonly context_overflow: boolean;
  readonly injected: Injected[];
  readonly prefix_digests: PrefixDigests;
  /**
   * Appends one step (assistant `rawOutput`, then the user message rendered
   * from `observation`). Sends only this step to the module: the cost does not
   * grow with the history.
   * @throws {AssemblyError} with the path of this step in the whole request (`steps[k].observation`); the prompt is unchanged then.
   */
  addStep(rawOutput: string, observation: string): this;
  /** The prompt as the response `assemble()` gives for the request with the same steps. */
  toResponse(): AssembleResponse;
  toJSON(): AssembleResponse;
}

/** Assembles prompts. Every method is synchronous and safe to call from any number of async tasks. */
export class Assembler {
  private constructor();
  /** The compiled module (share it with workers through `loadAssembler({module})`). */
  readonly module: WebAssembly.Module;
  /** Module instances created so far (a trap or a retired instance makes one more). */
  readonly instancesCreated: number;
  /**
   * Assembles a request.
   * @throws {AssemblyError} with the core's code, path and message.
   */
  assemble(request: AssembleRequest): AssembleResponse;
  /**
   * The wire function: msgpack request bytes in, the core's canonical msgpack
   * response out (ok or error), byte-identical to every other host.
   * @throws {AssemblyError} `internal` only if the module itself failed (a trap); `too_large` for 4 GiB or more.
   */
  assembleBytes(request: Uint8Array): Uint8Array;
  /**
   * Checks an observation template as `assemble()` does.
   * @throws {AssemblyError} `invalid_template` with the code-point offset in the message.
   */
  validateTemplate(template: string): void;
  /** Assembles `request` once and returns a {@link Prompt} that grows one step at a time. */
  prompt(request: AssembleRequest): Prompt;
}

/** The module packaged with this binding. */
export const DEFAULT_WASM_URL: URL;

/** Compiles (once per process or page) the module at `source`. */
export function compileModule(source?: string | URL): Promise<WebAssembly.Module>;

/**
 * Loads the assembler: compiles `assembly.wasm` once per process or page
 * (browsers: streaming compilation from `options.url`) and prepares an instance.
 */
export function loadAssembler(options?: AssemblerOptions): Promise<Assembler>;
