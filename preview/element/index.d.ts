// Types of `@polyloop/preview`: the <polyloop-prompt-view> element.
import type { AssembleRequest, Comparison, Provider } from "@polyloop/assembly";

/** One side of {@link PromptView.compare}: JSON text, the bytes of JSON text, msgpack bytes, or the element's request as it stands. */
export type CompareSide =
  { kind: "text"; text: string } | { kind: "jsonBytes"; bytes: Uint8Array } | { kind: "bytes"; bytes: Uint8Array } | { kind: "current" };

/** A position in the request's JSON text (UTF-16 indexes), for an editor. */
export interface TextRange {
  from: number;
  to: number;
  /** false when the path leads to a value that does not exist (a missing field): the range is its deepest existing container */
  exact: boolean;
}

/** `detail` of `polyloop-result`. */
export interface PromptViewResult {
  /** the generation of the request this result is for (see {@link PromptView.generation}) */
  gen: number;
  /** messages shown (all of them, or those before the chosen step) */
  messages: number;
  /** code points of the messages shown */
  promptChars: number;
  contextOverflow: boolean;
  stale: boolean;
  /** milliseconds the worker spent assembling */
  ms: number;
  /** steps of the request */
  stepCount: number | null;
}

/** `detail` of `polyloop-error` (and {@link PromptView.error}). */
export interface PromptViewError {
  gen: number;
  /** a wire error code (docs/SPEC.md §6), e.g. `invalid_template`, `malformed_request`; or `worker_failed`: the element's worker
   * did not load (its message names the URL and what to do: the `worker-url` attribute, docs/PREVIEW.md "Bundlers") */
  code: string;
  /** the offending value, e.g. `steps[3].observation`; "" for the whole request */
  path: string;
  message: string;
  /** code-point offset into the template, for `invalid_template` */
  offset?: number;
  /** where the error is in the request's JSON text, when the request was set as text */
  location: TextRange | null;
  /** true for a JSON syntax error */
  syntax: boolean;
  /** the template and the offending code point, for `invalid_template` */
  template: { text: string; offset: number } | null;
}

/** `detail` of `polyloop-locate`: the user asked to see the error in the editor. */
export interface PromptViewLocate extends TextRange {
  code: string;
  path: string;
}

/** `detail` of `polyloop-search` (and {@link PromptView.searchState}). */
export interface PromptViewSearch {
  query: string;
  count: number;
  /** the current hit, 0-based; -1 for none */
  current: number;
  /** the message of the current hit; -1 for none */
  message: number;
}

/** The most hits a search marks. */
export declare const MAX_HITS: number;
/** Texts longer than this many UTF-16 units are collapsed (with a button to expand). */
export declare const COLLAPSE_CHARS: number;
/** Texts with more lines than this are collapsed. */
export declare const COLLAPSE_LINES: number;

/**
 * `<polyloop-prompt-view>`: the prompt a request assembles to, assembled in a
 * Web Worker by the same WebAssembly module every host runs, in a virtualised
 * list. Every element of a page with the same `worker-url` and `wasm-url`
 * shares one worker (the module compiled once). Invisible characters (bidi
 * controls, zero-width characters, the BOM, controls, look-alike spaces:
 * the CLI's set, `INVISIBLE_RANGES`) are marked with their code point; the
 * text itself, copied or read, is unchanged. Importing this module where
 * there is no DOM (Node) is safe; definePromptView needs one.
 * Attributes: `request` (JSON text), `step`, `theme` (`light` | `dark`;
 * absent: the system's), `worker-url`, `wasm-url`. Events (bubbling,
 * composed): `polyloop-result`, `polyloop-error`, `polyloop-rendered`,
 * `polyloop-locate`.
 */
export declare class PromptView extends HTMLElement {
  /** The request: an object (encoded by the binding), JSON text (judged by the module as the CLI judges it) or msgpack bytes. */
  request: AssembleRequest | string | Uint8Array | undefined;
  /**
   * Sets the request as JSON text; returns the generation its result will carry.
   * `fresh`: a new document (nothing of the one before stays shown).
   * `lineBreak: "\r\n"`: the text is a CRLF file as an editor holds it (LF);
   * it is judged with CRLF line breaks, so byte offsets are the file's.
   */
  setText(text: string, opts?: { fresh?: boolean; lineBreak?: "\n" | "\r\n" }): number;
  /** Sets the request as the bytes of JSON text, judged as they are (a file that is not valid UTF-8: the CLI's verdict). */
  setJSONBytes(bytes: Uint8Array, opts?: { fresh?: boolean }): number;
  /** Sets the request as msgpack bytes; `fresh` as for setText. */
  setBytes(bytes: Uint8Array, opts?: { fresh?: boolean }): number;
  /** The module's comparison of two sides (docs/SPEC.md §7.9), in the element's worker. */
  compare(a: CompareSide, b: CompareSide): Promise<{ answer: Comparison } | { error: { code: string; path: string; message: string } }>;
  /** The module's verdict on each item (UTF-8 bytes of one JSON request), computed in the worker in the background, slice by slice; a newer call supersedes an older one. */
  verdicts(
    items: (Uint8Array | { msgpack: Uint8Array })[],
    onProgress: (p: { from: number; codes: string[]; steps: number[]; done: boolean }) => void,
  ): void;
  /**
   * Draw the cache breakpoints of the Anthropic export (default policy, docs/SPEC.md §7.13) on the prompt: the blocks the
   * export marks with `cache_control`, each followed by "cache breakpoint k of n" (not in step mode, nor past a 4 MB response).
   */
  cacheBreakpoints: boolean;
  /** The breakpoints drawn for the result shown: `[message, block]` pairs in prompt order, or the export's error; null: none asked. */
  readonly breakpoints: {
    list: [number, number][] | null;
    error: { code: string; path: string; message: string } | null;
    reason: string | null;
  } | null;
  /** Highlights "new since the previous call" (from code point `chars` of the prompt) in the result of generation `gen`; null clears. */
  markNew(gen: number, chars: number | null): void;
  /** The request as a provider's request body (docs/SPEC.md §7.13), exported in the worker: its JSON text, or the error. */
  exportRequest(
    provider: Provider,
    options?: object | null,
  ): Promise<{
    gen: number;
    text?: string;
    error?: { code: string; path: string; message: string };
    location?: { from: number; to: number; exact: boolean } | null;
  }>;
  /** A run's cache report (docs/SPEC.md §7.12) over `items` in call order, in the worker, slice by slice; a newer call
   * supersedes it. `runs`: the run of each item (each run's items together), each run reported on its own. */
  cacheReport(
    items: (Uint8Array | { msgpack: Uint8Array })[],
    onProgress: (p: { from: number; calls: any[]; done: boolean; error?: { code: string; path: string; message: string } }) => void,
    runs?: ArrayLike<number>,
  ): void;
  /** Applies editor changes `[from, to, insert]` (ascending, positions before the edit) to the text set with setText. */
  applyChanges(changes: [number, number, string][]): number;
  /** Show the prompt as sent after `step` completed steps (the first step_start[step] messages, docs/SPEC.md §7.8); null: the whole request. */
  step: number | null;
  /** Whether the step slider's mode is on (set by `step`). */
  trajectory: boolean;
  /** Steps of the request shown (null before a result). */
  readonly stepCount: number | null;
  /** Scrolls to step `k` (1-based: `steps[k - 1]`); false when there is no such step shown. */
  goToStep(k: number): boolean;
  /**
   * Searches the messages shown (decoded text, any case), marks every hit and goes to the first (its message expanded when
   * the hit is past the fold); the hits follow new results until cleared with "". Returns the number of hits (at most MAX_HITS).
   */
  search(query: string): number;
  /** Goes to the next hit (1) or the previous one (-1), wrapping. */
  nextHit(dir?: 1 | -1): void;
  /** The search: its text, its number of hits, the current one (-1: none) and the message it is in. */
  readonly searchState: PromptViewSearch;
  readonly generation: number;
  readonly shownGeneration: number;
  /** "empty" | "loading" | "ok" | "stale" (an older prompt shown: the request does not parse or is rejected) | "error" */
  readonly state: "empty" | "loading" | "ok" | "stale" | "error";
  readonly error: PromptViewError | null;
  readonly summary: { messages: number; promptChars: number; contextOverflow: boolean; stale: boolean } | null;
  /** Resolves once the result of generation `gen` (default: the newest) is in the DOM. */
  whenRendered(gen?: number): Promise<number>;
  /** The full response of the last accepted request as JSON text (null if none). */
  responseJSON(): Promise<string | null>;
  /** The exact response bytes (msgpack) of the last accepted request (null if none). */
  responseBytes(): Promise<Uint8Array | null>;
  scrollToMessage(index: number): void;
  /** The block texts of message `index`, or null. */
  messageTexts(index: number): string[] | null;
  /** The module as the element's worker compiled it: `loadAssembler({ module })` builds an assembler without compiling it again. */
  compiledModule(): Promise<WebAssembly.Module>;
  /** Leaves the page's shared worker (stopped once no element uses it). */
  terminate(): void;
}

/**
 * Registers the element as `name` (default `polyloop-prompt-view`) once; returns its class. `urls`: where the element's worker
 * (preview/element/worker.js, bundled) and assembly.wasm are when a bundler does not emit them (esbuild); the `worker-url` and
 * `wasm-url` attributes override them. A worker that does not load is a `polyloop-error` with code `worker_failed`.
 */
export declare function definePromptView(name?: string, urls?: { workerUrl?: string | URL; wasmUrl?: string | URL }): typeof PromptView;

declare global {
  interface HTMLElementTagNameMap {
    "polyloop-prompt-view": PromptView;
  }
  interface HTMLElementEventMap {
    "polyloop-result": CustomEvent<PromptViewResult>;
    "polyloop-error": CustomEvent<PromptViewError>;
    "polyloop-rendered": CustomEvent<{ gen: number }>;
    "polyloop-locate": CustomEvent<PromptViewLocate>;
    "polyloop-search": CustomEvent<PromptViewSearch>;
  }
}
