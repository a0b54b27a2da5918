"""A fake agent loop end to end: assemble, export for the provider, record
the provider's usage, then ask why each call did or did not hit the cache.

    python examples/caching/loop.py [anthropic|openai-chat]

No network: ``fake_provider`` stands in for the API and answers with the
usage a prefix cache would report (it caches what the previous call sent,
and "forgets" once, as a provider whose cache entry expired). At call 6 the
loop edits a memory entry (an injection): the report names that call, its
segment and cause; at call 9 the provider misses though the prompt kept its
prefix, and the report says so (``provider_miss``).
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, List, Optional

import polyloop_assembly as pa


def fake_provider(body: Dict[str, Any], previous: Optional[str], forget: bool) -> Dict[str, Any]:
    """The usage a prefix cache reports: the characters this call shares
    with the previous body's messages, as a rough count of cached tokens."""
    text = json.dumps(body.get("system", []) + body.get("messages", []), ensure_ascii=False)
    shared = 0
    if previous is not None and not forget:
        while shared < min(len(text), len(previous)) and text[shared] == previous[shared]:
            shared += 1
    return {"usage": {"input_tokens": len(text) // 4, "cache_read_input_tokens": shared // 4}, "_sent": text}


def main(provider: str = "anthropic") -> None:
    request: Dict[str, Any] = {
        "run_messages": [{"role": "system", "content": [{"type": "text", "text": "You are a careful research agent."}]}],
        "injections": {"memory": [{"entry_id": "m1", "content": "The user prefers metric units."}]},
        "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "Find the boiling point of water in Lyon."}]}],
        "steps": [],
        "observation_template": "Observation: {observation}",
    }
    sent: List[Dict[str, Any]] = []
    usage: List[Dict[str, Any]] = []
    previous = None
    for call in range(12):
        if call == 6:  # the loop rewrites its memory: the injection segment changes
            request["injections"]["memory"][0]["content"] = "The user prefers imperial units."
        body = pa.export(request, provider, body={"model": "some-model", "max_tokens": 512})
        answer = fake_provider(body, previous, forget=(call == 9))
        previous = answer.pop("_sent")
        sent.append(json.loads(json.dumps(request)))  # the request as it was at this call
        usage.append(answer)
        request["steps"].append(
            {"raw_output": f"Thought {call}: search.\nAction: search({call})", "observation": f"page {call}: 100 °C at sea level"}
        )

    report = pa.cache_report(sent, usage)
    print(f"{'call':>4}  {'extends':7}  {'cacheable':>9}  {'usage':13}  break")
    for i, c in enumerate(report["calls"]):
        b = c["break"]
        where = f"{b['segment']}: {b['cause']} at message {b['message']}, char {b['char']}" if b else ""
        print(f"{i:>4}  {str(c['extends']):7}  {c['cacheable_prefix_chars']:>9}  {c['usage']['class']:13}  {where}")
    t = report["totals"]
    print(f"{t['calls']} calls, {t['breaks']} break(s): {t['cacheable_chars']} of {t['prompt_chars']} prompt chars cacheable")


if __name__ == "__main__":
    main(*sys.argv[1:2])
