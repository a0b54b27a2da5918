"""An agent loop end to end with the official ``anthropic`` client, no network: each call's prompt is sent as the
library exports it, and the verdict of the provider's cache is printed as the call happens.

    python examples/caching/loop.py

``FakeAnthropic`` stands in for the API behind the SDK's own HTTP layer (a mock transport): it answers each request
with the usage a prefix cache would report, caching what the previous request sent and forgetting once, as a
provider whose cache entry expired. At call 6 the loop edits a memory entry (an injection), at call 9 it condenses
its history (a new Prompt), and at call 11 the provider misses though the prefix was kept: the verdicts name each.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import anthropic
import httpx2

import polyloop_assembly as pa


class FakeAnthropic:
    """The Messages API as a mock transport: a ``Message`` whose usage reads, from cache, the characters this
    request shares with the previous one (a rough count of tokens), except once, at ``forget_at``."""

    def __init__(self, forget_at: int) -> None:
        self.previous: Optional[str] = None
        self.calls, self.forget_at = 0, forget_at

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        sent = json.dumps([body.get("system", []), body["messages"]], ensure_ascii=False)
        shared = 0
        if self.previous is not None and self.calls != self.forget_at:
            while shared < min(len(sent), len(self.previous)) and sent[shared] == self.previous[shared]:
                shared += 1
        self.previous, self.calls = sent, self.calls + 1
        usage = {"input_tokens": (len(sent) - shared) // 4, "output_tokens": 9, "cache_read_input_tokens": shared // 4}
        message = {"id": "msg_%d" % self.calls, "type": "message", "role": "assistant", "model": body["model"]}
        message.update(content=[{"type": "text", "text": "Action: search"}], stop_reason="end_turn", usage=usage)
        return httpx2.Response(200, json=message)


def request(memo: str, steps: List[Dict[str, str]]) -> pa.AssembleRequest:
    return {
        "run_messages": [{"role": "system", "content": [{"type": "text", "text": "You are a careful research agent."}]}],
        "injections": {"memory": [{"entry_id": "m1", "content": memo}]},
        "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "Find the boiling point of water in Lyon."}]}],
        "steps": steps,
        "observation_template": "Observation: {observation}",
    }


def observe(response: Any) -> str:
    """The tool the model asked for, run: a fake search result."""
    return "page %s: 100 °C at sea level" % response.id


def main() -> List[Dict[str, Any]]:
    http = httpx2.Client(transport=httpx2.MockTransport(FakeAnthropic(forget_at=11)))
    memo, steps = "The user prefers metric units.", []
    client = anthropic.Anthropic(api_key="no-network", http_client=http, max_retries=0)  # the official SDK
    prompt, run = pa.Prompt(request(memo, steps)), pa.CacheRun()
    for call in range(14):
        if call == 6:  # the loop rewrites its memory: a new Prompt, its injection segment changed
            prompt = pa.Prompt(request("The user prefers imperial units.", steps))
        if call == 9:  # the loop condenses its history: a new Prompt, its history rewritten
            steps = [{"raw_output": "Summary: searched 8 pages.", "observation": "100 °C at sea level"}]
            prompt = pa.Prompt(request("The user prefers imperial units.", steps))
        body = prompt.export("anthropic", body={"model": "claude-x", "max_tokens": 512})
        response = client.messages.create(**body)  # the SDK's own Message
        verdict = run.call(prompt, response)  # this call's entry of the cache report, now
        print(call, verdict["usage"]["class"], verdict["break"] and verdict["break"]["cause"])
        prompt.add_step(response.content[0].text, observe(response))
        steps = steps + [{"raw_output": response.content[0].text, "observation": observe(response)}]
    totals = run.report()["totals"]
    print("%(calls)d calls, %(breaks)d breaks: %(cacheable_chars)d of %(prompt_chars)d prompt chars cacheable" % totals)
    return run.report()["calls"]


if __name__ == "__main__":
    main()
