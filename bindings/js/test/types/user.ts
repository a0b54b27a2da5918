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
  type ChatMessage,
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
  const body: Record<string, unknown> = p.export("anthropic", { ttl: "1h" });
  // @ts-expect-error a provider the export does not write
  p.export("gemini");
  const cacheRun: CacheRun = asm.cacheRun();
  const entry: Record<string, unknown> = cacheRun.call(p, { cache_read_input_tokens: 0 });
  cacheRun.call(request, null);
  const report: Record<string, unknown> = cacheRun.report();
  console.log(body, entry, report, asm.cacheReport([p, request]), asm.compare(p, request), asm.export(p, "openai-chat"));
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
  console.log(version, moduleSha256, ERROR_CODES.length, MAX_REQUEST_BYTES, asm.options.memoryLimitBytes);
  return r.prompt_chars + fromJSON.message_chars.length + bytes.length + p.prompt_chars + asm.instancesCreated + chat.length;
}
