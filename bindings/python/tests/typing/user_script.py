"""A user's script, type-checked with ``mypy --strict`` in make test (tests/test_typing.py):
the public API as documented must type-check without casts or ignores."""

from __future__ import annotations

import copy
from typing import List, Optional

import polyloop_assembly as pa

request: pa.AssembleRequest = {
    "run_messages": [{"role": "system", "content": [{"type": "text", "text": "You are an agent."}]}],
    "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "Find the file."}]}],
    "observation_template": "Observation: {observation}",
    "max_prompt_chars": 60_000,
}

response: pa.AssembleResponse = pa.assemble(request)
first: pa.Message = response["messages"][0]
text: str = first["content"][0]["text"]
chars: List[int] = response["message_chars"]

pa.assemble({"observation_template": "{observation}", "steps": [{"raw_output": "a", "observation": "b"}]})
raw: bytes = pa.assemble_bytes(b"\x81\xb4observation_template\xad{observation}")
from_json: pa.AssembleResponse = pa.assemble_json('{"observation_template": "{observation}"}')
raw_json: bytes = pa.assemble_json_bytes(b'{"observation_template": "{observation}"}')
for line_response in pa.assemble_json_many(['{"observation_template": "{observation}"}'], errors="raise"):
    line_messages: List[pa.Message] = line_response["messages"]

try:
    pa.validate_template("{observation")
except pa.AssemblyError as e:
    code: pa.ErrorCode = e.code
    if e.code == "invalid_template":
        where: Optional[int] = e.offset
    detail: Optional[str] = e.detail
    as_value_error: ValueError = e

asm = pa.Assembler(max_instances=2, recycle_above_bytes=64 << 20, memory_limit_bytes=1 << 30)
prompt: pa.Prompt = asm.prompt(request)
prompt.add_step("Thought: list it.", "a.txt")
chained: pa.Prompt = prompt.add_step("Thought: read it.", "hello").add_step("Thought: done.", "ok")
count: int = prompt.step_count
whole: pa.AssembleResponse = prompt.response()
new_request: pa.AssembleRequest = {"observation_template": "{observation}"}
new_response: pa.AssembleResponse = pa.assemble(new_request)
for ok_response in pa.assemble_many([new_request], errors="raise"):
    ok_chars: int = ok_response["prompt_chars"]
for wire_result in pa.assemble_bytes_many([b"\x81\xb4observation_template\xad{observation}"]):
    if isinstance(wire_result, bytes):
        wire_len: int = len(wire_result)
branch: pa.Prompt = prompt.copy()
other: pa.Prompt = copy.copy(prompt)
overflow: bool = branch.context_overflow
digests: pa.PrefixDigests = branch.prefix_digests

version: str = pa.__version__
sha: str = pa.module_sha256
info: pa.CacheInfo = pa.warm()
status: str = info.status

report: pa.CacheReport = pa.cache_report([request, '{"observation_template": "{observation}"}'], [None, {"usage": {}}])
for call in report["calls"]:
    if "error" in call:
        error_code: pa.ErrorCode = call["error"]["code"]
    else:
        extends: bool = call["extends"]
        if call["break"] is not None:
            cause: pa.CacheBreakCause = call["break"]["cause"]
            at_step: Optional[int] = call["break"]["step"]
        if call["usage"] is not None:
            usage_class: pa.CacheUsageClass = call["usage"]["class"]
share: float = report["totals"]["cacheable_share"]
group_chars: int = report["groups"][0]["cacheable_chars"]
anthropic: pa.AnthropicBody = pa.export(request, "anthropic", ttl="1h", max_breakpoints=2, body={"model": "m"})
marked = [b for m in anthropic["messages"] for b in m["content"] if "cache_control" in b]
system_blocks: List[pa.AnthropicBlock] = anthropic.get("system", [])
chat_body: pa.OpenAIChatBody = pa.export(request, "openai-chat", prompt_cache_key="run-1")
cache_key: str = chat_body["prompt_cache_key"]
responses_body: pa.OpenAIResponsesBody = pa.export(b"\x81\xb4observation_template\xad{observation}", "openai-responses")
for item in responses_body["input"]:
    if item["role"] == "assistant":
        output_type: str = item["content"][0]["type"]
provider: pa.Provider = "openai-chat"
any_body: pa.ExportBody = pa.export(request, provider, lookback=0)
export_options: pa.ExportOptions = {"ttl": "5m", "max_breakpoints": 4, "lookback": 20}
from_options: pa.ExportBody = pa.export(request, "anthropic", **export_options)
