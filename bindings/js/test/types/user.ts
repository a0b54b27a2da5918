// A user's file: every public name of @polyloop/assembly used as documented.
// Type-checked with `tsc --strict --noEmit` in a Node-only project (no DOM
// types) and in a browser project (test/types.test.mjs).
import {
  AssemblyError,
  ERROR_CODES,
  INTERNAL_MESSAGES,
  MAX_REQUEST_BYTES,
  chatMessages,
  compileModule,
  loadAssembler,
  moduleSha256,
  version,
  type AssembleRequest,
  type AssembleResponse,
  type CacheRun,
  type AnthropicBody,
  type CacheBreakCause,
  type CacheReport,
  type CacheUsageClass,
  type ChatMessage,
  type ExportBody,
  type ExportOptions,
  type OpenAIChatBody,
  type OpenAIResponsesBody,
  type Provider,
  type ErrorCode,
  type Prompt,
} from "@polyloop/assembly";

export async function main(): Promise<number> {
  const module: WebAssembly.Module = await compileModule(undefined, { memoryLimitBytes: 2 ** 31 });
  const asm = await loadAssembler({ module, maxInstances: 2, recycleAboveBytes: 64 * 1024 * 1024 });
  const request: AssembleRequest = {
    observation_template: "Observation: {observation}",
    goal_messages: [{ role: "user", content: [{ type: "text", text: "Count the files." }] }],
    steps: [{ raw_output: "ls | wc -l", observation: "42" }],
    max_prompt_chars: 4000,
  };
  const r: AssembleResponse = asm.assemble(request);
  const fromJSON: AssembleResponse = asm.assembleJSON(JSON.stringify(request));
  const bytes: Uint8Array = asm.assembleBytes(new Uint8Array([0x80]));
  const p: Prompt = asm.prompt(request).addStep("cat a", "b");
  const chat: ChatMessage[] = chatMessages(p.messages).concat(p.chatMessages());
  // @ts-expect-error the prompt's messages are a read-only view
  p.messages.push(chat[0]);
  const body: AnthropicBody = p.export("anthropic", { ttl: "1h" });
  // @ts-expect-error a provider the export does not write
  p.export("mistral");
  const cacheRun: CacheRun = asm.cacheRun();
  const entry = cacheRun.call(p, { cache_read_input_tokens: 0 });
  const breakCause: CacheBreakCause | undefined = "error" in entry ? undefined : entry.break?.cause;
  cacheRun.call(request, null);
  const runReport: CacheReport = cacheRun.report();
  console.log(body, breakCause, runReport, asm.cacheReport([p, request]), asm.compare(p, request), asm.export(p, "openai-chat"));
  try {
    asm.validateTemplate("{");
  } catch (e) {
    if (e instanceof AssemblyError) {
      const code: ErrorCode = e.code;
      const offset: number | undefined = e.offset;
      const detail: string | undefined = e.detail;
      console.log(code, e.path, offset, detail, e.message === INTERNAL_MESSAGES.trapped);
    }
  }
  const report: CacheReport = asm.cacheReport([request, JSON.stringify(request), bytes], [null, { usage: {} }, null]);
  for (const call of report.calls) {
    if ("error" in call) {
      const errorCode: ErrorCode = call.error.code;
      console.log(errorCode);
    } else {
      const cause: CacheBreakCause | undefined = call.break?.cause;
      const usageClass: CacheUsageClass | undefined = call.usage?.class;
      console.log(call.extends, call.cacheable_share, cause, usageClass, call.break?.step);
    }
  }
  const options: ExportOptions = { ttl: "1h", max_breakpoints: 2, lookback: 0, body: { model: "m", max_tokens: 100 } };
  const anthropic: AnthropicBody = asm.export(request, "anthropic", options);
  const withModel = asm.export(request, "openai-chat", { body: { model: "gpt", max_tokens: 10 } });
  const model: string = withModel.model;
  const tokens: number = withModel.max_tokens;
  console.log(model, tokens, withModel.messages.length);
  const marked = anthropic.messages.flatMap((m) => m.content).filter((b) => b.cache_control !== undefined);
  const chatBody: OpenAIChatBody = asm.export(request, "openai-chat", { prompt_cache_key: "run-1" });
  const responses: OpenAIResponsesBody = asm.export(bytes, "openai-responses");
  const outputs = responses.input.filter((m) => m.role === "assistant").map((m) => m.content[0].type === "output_text");
  const provider: Provider = "openai-chat";
  const anyBody: ExportBody = asm.export(request, provider, null);
  console.log(report.totals.cacheable_share, report.groups[0].cacheable_chars, marked.length, chatBody.prompt_cache_key, outputs, anyBody);
  console.log(version, moduleSha256, ERROR_CODES.length, MAX_REQUEST_BYTES, asm.options.memoryLimitBytes);
  return r.prompt_chars + fromJSON.message_chars.length + bytes.length + p.prompt_chars + asm.instancesCreated + chat.length;
}
