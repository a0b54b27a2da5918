"""The usage shapes of every provider the report reads (the project's docs/SPEC.md §7.12), on recorded responses
(testdata/provider-responses/: Bedrock Converse, Gemini, Anthropic with its cache diagnostics), each given whole and
as its bare usage object, through cache_report and CacheRun alike. The expected classes and counts are written here
by hand from the recorded files; a usage of no known shape is unknown_usage, never a miss."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import anthropic
import pytest

import polyloop_assembly as pa

RESPONSES = Path(__file__).resolve().parents[3] / "testdata" / "provider-responses"


def recorded(name: str) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = json.loads((RESPONSES / (name + ".json")).read_text(encoding="utf-8"))
    return out


def run() -> List[Dict[str, Any]]:
    """Five calls: each of the first four extends the one before; the fifth changes the system message (a break)."""
    out = []
    for i in range(5):
        system = "You are a careful agent." + (" Answer briefly." if i == 4 else "")
        steps = [{"raw_output": f"Thought {s}.\nAction: look({s})", "observation": f"result {s}: café ✓"} for s in range(i + 1)]
        out.append(
            {
                "run_messages": [{"role": "system", "content": [{"type": "text", "text": system}]}],
                "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "Find the build command."}]}],
                "steps": steps,
                "observation_template": "Observation: {observation}",
            }
        )
    return out


# (recorded responses, the response each call got, the key a bare usage is under) and, per call, by hand:
# (class, cached_tokens, written_tokens, miss_reason, miss_reason_disagrees) for the whole response.
Want = Tuple[str, Optional[int], Optional[int], Optional[str], Optional[bool]]
CASES: List[Tuple[str, List[int], str, List[Want]]] = [
    (
        "bedrock-converse",
        [0, 1, 2, 3, 2],
        "usage",
        [
            ("first", 0, 1024, None, None),
            ("hit", 1024, 96, None, None),
            ("write_only", 0, 1120, None, None),  # nothing read, the prefix written again
            ("provider_miss", 0, 0, None, None),  # nothing read nor written
            ("prefix_break", 0, 1120, None, None),
        ],
    ),
    (
        "gemini",
        [0, 1, 2, 1, 2],
        "usageMetadata",
        [
            ("first", 0, None, None, None),
            ("hit", 1100, None, None, None),
            ("provider_miss", 0, None, None, None),  # cachedContentTokenCount left out: 0
            ("hit", 1100, None, None, None),
            ("prefix_break", 0, None, None, None),
        ],
    ),
    (
        "anthropic-diagnostics",
        [0, 1, 2, 3, 3],
        "usage",
        [
            ("first", 0, 1910, None, None),
            ("hit", 1910, 210, None, None),  # cache_miss_reason null: no divergence
            ("write_only", 0, 2150, "tools_changed", True),  # the tools are no part of the prompt
            ("write_only", 0, 2236, "messages_changed", True),  # our prefix was kept
            ("prefix_break", 0, 2236, "messages_changed", False),  # our break too
        ],
    ),
]


def usage_of(entry: Dict[str, Any]) -> Want:
    u = entry["usage"]
    return (u["class"], u["cached_tokens"], u["written_tokens"], u.get("miss_reason"), u.get("miss_reason_disagrees"))


@pytest.mark.parametrize("name,answers,key,want", CASES, ids=[c[0] for c in CASES])
def test_recorded_responses_whole_and_bare(name: str, answers: List[int], key: str, want: List[Want]) -> None:
    requests, responses = run(), [recorded(name)[k] for k in answers]
    report = pa.cache_report(requests, responses)
    assert [usage_of(c) for c in report["calls"]] == want
    cache_run = pa.CacheRun()
    assert [usage_of(cache_run.call(q, r)) for q, r in zip(requests, responses)] == want
    assert cache_run.report() == report
    bare = pa.cache_report(requests, [r[key] for r in responses])  # the usage alone: no miss reason there
    assert [usage_of(c) for c in bare["calls"]] == [w[:3] + (None, None) for w in want]
    assert pa.cache_report(requests, [json.dumps(r) for r in responses]) == report


def test_the_anthropic_sdk_s_message_keeps_the_miss_reason() -> None:
    requests, responses = run(), [recorded("anthropic-diagnostics")[k] for k in (0, 1, 2, 3, 3)]
    objects = [anthropic.types.Message.model_validate(r) for r in responses]
    assert pa.cache_report(requests, objects) == pa.cache_report(requests, responses)


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912},  # an OpenAI-compatible usage, no cache fields
        {"inputTokens": 40, "outputTokens": 12},  # Bedrock without its cache fields
        {},
        {"usage": {"prompt_tokens_details": None}},
    ],
)
def test_a_usage_of_no_known_shape_is_unknown_never_a_miss(usage: Dict[str, Any]) -> None:
    requests = run()[:2]
    report = pa.cache_report(requests, [usage, usage])
    for c in report["calls"]:
        assert (c["usage"]["class"], c["usage"]["cached_tokens"], c["usage"]["written_tokens"]) == ("unknown_usage", None, None)
        assert "Bedrock Converse's cacheReadInputTokens" in c["usage"]["note"] and "error" not in c["usage"]
    assert report["totals"]["usage_errors"] == 0
