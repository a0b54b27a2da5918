// Mistakes with the cache report and the export that `tsc --strict` must report: each line marked `E:` with
// an error code gets an error of that code, and no other line any (test/types.test.mjs).
import { loadAssembler, type AssembleRequest, type ExportOptions } from "@polyloop/assembly";

export async function mistakes(): Promise<void> {
  const asm = await loadAssembler();
  const request: AssembleRequest = { observation_template: "{observation}" };
  const report = asm.cacheReport([request, request]);
  const call = report.calls[0];
  if (!("error" in call) && call.usage !== null) {
    console.log(call.usage.clas); // E: TS2551
  }
  console.log(report.totals.cacheable_shares); // E: TS2551
  asm.cacheReport(request); // E: TS2740
  asm.export(request, "anthropic", { maxBreakpoints: 2 }); // E: TS2561
  asm.export(request, "openai"); // E: TS2345
  asm.export(request, "anthropic", { ttl: "10m" }); // E: TS2322
  const options: ExportOptions = { prompt_cache_key: "k", promptCacheKey: "k" }; // E: TS2561
  console.log(options, asm.export(request, "openai-chat").system); // E: TS2339
  console.log(asm.export(request, "openai-responses").messages); // E: TS2339
  console.log(asm.export(request, "anthropic").messages[0].role === "system"); // E: TS2367
  asm.cacheReport([request], [42]); // E: TS2322
  console.log(asm.export(request, "openai-chat", { body: { model: "m" } }).modle); // E: TS2551
}
