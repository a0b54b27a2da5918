"""Mistakes with the cache report and the export that ``mypy --strict`` must report: each line marked ``E:``
with an error code gets an error of that code, and no other line any (tests/test_typing.py)."""

from __future__ import annotations

import polyloop_assembly as pa

request: pa.AssembleRequest = {"observation_template": "{observation}"}
report = pa.cache_report([request, request])
call = report["calls"][0]
if "error" not in call and call["usage"] is not None:
    print(call["usage"]["clas"])  # E: [typeddict-item]
print(report["totals"]["cacheable_shares"])  # E: [typeddict-item]
pa.cache_report(request)  # E: [arg-type]
pa.cache_report([request], [{"cache_read_input_tokens": 3}], asembler=None)  # E: [call-arg]
pa.export(request, "anthropic", maxBreakpoints=2)  # E: [call-overload]
pa.export(request, "openai")  # E: [call-overload]
pa.export(request, "anthropic", ttl="10m")  # E: [call-overload]
options: pa.ExportOptions = {"maxBreakpoints": 2}  # E: [typeddict-unknown-key]
chat = pa.export(request, "openai-chat")
print(chat["system"])  # E: [typeddict-item]
responses = pa.export(request, "openai-responses")
print(responses["messages"])  # E: [typeddict-item]
anthropic_body = pa.export(request, "anthropic")
print(anthropic_body["messages"][0]["role"] == "system")  # E: [comparison-overlap]
