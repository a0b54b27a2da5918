// The wire types as version 0.2 wrote them by hand in index.d.ts: an
// independent oracle for the generated ones (src/types.d.ts). Each generated
// type must be assignable to the hand-written one and back, so that user
// code type-checks the same (test/types.test.mjs runs tsc --strict on it).
import type {
  Role,
  TextBlock,
  Message,
  Injection,
  Step,
  AssembleRequest,
  Injected,
  PrefixDigests,
  AssembleResponse,
  RecordedMessage,
  CompareInput,
  Difference,
  Comparison,
} from "@polyloop/assembly";

/** true when every A is a B. */
type Same<A, B> = [A] extends [B] ? true : false;

type OldRole = "system" | "user" | "assistant";

/** A content block; `text` is the only block type of wire version 1. */
interface OldTextBlock {
  type: "text";
  text: string;
}

interface OldMessage {
  role: OldRole;
  content: OldTextBlock[];
}

/** One entry of an injection channel. */
interface OldInjection {
  /** Non-empty identifier recorded in the trajectory. */
  entry_id: string;
  /** The text pasted as one user message. */
  content: string;
}

/** One completed step of the loop. */
interface OldStep {
  /** The text the decision interpreter hands back, pasted as given. */
  raw_output: string;
  /** Rendered through `observation_template`. */
  observation: string;
}

/**
 * A request (docs/SPEC.md §2). Plain objects, arrays and strings; `injections` may
 * also be a `Map`. Any other JavaScript value is encoded faithfully (or as a
 * value the core rejects) so that a mistake gets the core's own error code and
 * path; see README "JavaScript values".
 */
interface OldAssembleRequest {
  /** Wire version; 1 (the default). */
  v?: number | bigint;
  run_messages?: OldMessage[];
  /** Channel name → entries. Channels are pasted in code-point order of their names. */
  injections?: Record<string, OldInjection[]> | Map<string, OldInjection[]>;
  goal_messages?: OldMessage[];
  steps?: OldStep[];
  /** A CPython `str.format` template with at least one `{observation}` field. */
  observation_template: string;
  /** Budget in code points; `null` or absent: no budget. */
  max_prompt_chars?: number | bigint | null;
}

/** What the injection slot pasted. */
interface OldInjected {
  channel: string;
  entry_id: string;
  /** Index of the pasted message in `messages`. */
  message_index: number;
}

/** Lowercase hex SHA-256 of the canonical encoding of `messages` up to the end of each segment. */
interface OldPrefixDigests {
  run: string;
  injections: string;
  goal: string;
}

/** A successful response (docs/SPEC.md §6). */
interface OldAssembleResponse {
  v: 1;
  ok: true;
  messages: OldMessage[];
  /** Code points of each message, parallel to `messages`. */
  message_chars: number[];
  /** Sum of `message_chars` (code points, not UTF-16 units). */
  prompt_chars: number;
  /** A budget was given and `prompt_chars` exceeds it. */
  context_overflow: boolean;
  injected: OldInjected[];
  prefix_digests: OldPrefixDigests;
}

/** A recorded message: what a legacy loop sent. */
interface OldRecordedMessage {
  role: string;
  content: string | OldTextBlock[];
}
/** One side of compare. */
type OldCompareInput = OldAssembleRequest | OldRecordedMessage[] | string | Uint8Array;
/** Where two prompts first differ (docs/SPEC.md §7.9). */
interface OldDifference {
  message: number;
  char: number;
  kind: "role" | "text" | "blocks" | "length";
  segment: "run" | "injections" | "goal" | "history" | null;
  step: number | null;
  role_a: string | null;
  role_b: string | null;
  excerpt_before: string;
  excerpt_a: string | null;
  excerpt_b: string | null;
}
/** The answer of compare. */
interface OldComparison {
  identical: boolean;
  a: { kind: "request" | "messages"; messages: number; prompt_chars: number };
  b: { kind: "request" | "messages"; messages: number; prompt_chars: number };
  first_difference: OldDifference | null;
  prefix_digests: { run: boolean | null; injections: boolean | null; goal: boolean | null };
  cacheable_prefix_chars: number;
}

export const sameRole: [Same<Role, OldRole>, Same<OldRole, Role>] = [true, true];
export const sameTextBlock: [Same<TextBlock, OldTextBlock>, Same<OldTextBlock, TextBlock>] = [true, true];
export const sameMessage: [Same<Message, OldMessage>, Same<OldMessage, Message>] = [true, true];
export const sameInjection: [Same<Injection, OldInjection>, Same<OldInjection, Injection>] = [true, true];
export const sameStep: [Same<Step, OldStep>, Same<OldStep, Step>] = [true, true];
export const sameAssembleRequest: [Same<AssembleRequest, OldAssembleRequest>, Same<OldAssembleRequest, AssembleRequest>] = [true, true];
export const sameInjected: [Same<Injected, OldInjected>, Same<OldInjected, Injected>] = [true, true];
export const samePrefixDigests: [Same<PrefixDigests, OldPrefixDigests>, Same<OldPrefixDigests, PrefixDigests>] = [true, true];
export const sameAssembleResponse: [Same<AssembleResponse, OldAssembleResponse>, Same<OldAssembleResponse, AssembleResponse>] = [
  true,
  true,
];
export const sameRecordedMessage: [Same<RecordedMessage, OldRecordedMessage>, Same<OldRecordedMessage, RecordedMessage>] = [true, true];
export const sameCompareInput: [Same<CompareInput, OldCompareInput>, Same<OldCompareInput, CompareInput>] = [true, true];
export const sameDifference: [Same<Difference, OldDifference>, Same<OldDifference, Difference>] = [true, true];
export const sameComparison: [Same<Comparison, OldComparison>, Same<OldComparison, Comparison>] = [true, true];
