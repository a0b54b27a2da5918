"""Why did each recorded call hit or miss the provider's cache? A log of calls as data-set columns.

    python examples/caching/usage_columns.py [calls.jsonl]

A log line is one call: ``{"run_id", "step", "request", "usage"}``, the request the loop assembled and the
usage the provider answered (Anthropic's, OpenAI's or DeepSeek's field names, or null). Without a file, a
small log is made up: two runs, one with a memory entry edited at step 4 (our prefix broke: the report
says where), one whose provider missed at step 3 though the prefix was kept. Each call becomes a row of
``polyloop_assembly.data.cache_rows`` (serially), and the same rows come from ``datasets`` when it is
installed (``CacheRows``, batched, typed). Prints the calls that did not hit, and why.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, Iterator, List

from polyloop_assembly import data


def made_up_log() -> List[Dict[str, Any]]:
    log = []
    for run, provider in (("run-a", "anthropic"), ("run-b", "openai")):
        request: Dict[str, Any] = {
            "run_messages": [{"role": "system", "content": [{"type": "text", "text": "You are a careful agent."}]}],
            "injections": {"memory": [{"entry_id": "m1", "content": "The user prefers metric units."}]},
            "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "Find the boiling point in Lyon."}]}],
            "steps": [],
            "observation_template": "Observation: {observation}",
        }
        for step in range(6):
            if run == "run-a" and step == 4:
                request["injections"]["memory"][0]["content"] = "The user prefers imperial units."
            cached = 0 if step == 0 or (run, step) in (("run-a", 4), ("run-b", 3)) else 300 + 50 * step
            if provider == "anthropic":
                usage = {"input_tokens": 20, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 50}
            else:
                usage = {"prompt_tokens": 320 + 50 * step, "prompt_tokens_details": {"cached_tokens": cached}}
            log.append({"run_id": run, "step": step, "request": json.dumps(request), "usage": usage})
            request["steps"].append({"raw_output": f"Action: search({step})", "observation": f"page {step}: 100 °C"})
    return log


def read_log(path: str) -> Iterator[Dict[str, Any]]:
    with open(path, "rb") as f:
        for line in f.read().split(b"\n"):  # JSON lines end at "\n" alone
            if line.strip():
                yield json.loads(line)


def main(path: str = "") -> int:
    log = list(read_log(path)) if path else made_up_log()
    log.sort(key=lambda c: (c["run_id"], c["step"]))  # each run's calls together, in call order
    rows = list(data.cache_rows((c["run_id"], c["request"], c["usage"]) for c in log))
    print(f"{'run':8} {'call':>4}  {'class':13} {'cached':>6} {'cacheable':>9}  why")
    for r in rows:
        if r["usage_class"] in ("hit", "first"):
            continue
        why = f"{r['break_segment']}: {r['break_cause']} at message {r['break_message']}, char {r['break_char']}"
        why = why if r["break_cause"] else (r["error_message"] or "prefix kept: a TTL, routing or minimum length")
        print(
            f"{r['run_id']:8} {r['call_index']:>4}  {r['usage_class']!s:13} {r['cached_tokens']!s:>6} {r['cacheable_prefix_chars']!s:>9}  {why}"
        )
    try:
        import datasets  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        return 0
    ds = datasets.Dataset.from_list([dict(c, usage=json.dumps(c["usage"])) for c in log])  # usage as JSON text
    out = ds.map(data.CacheRows(usage="usage"), batched=True, with_indices=True)
    assert out["usage_class"] == [r["usage_class"] for r in rows]  # the same rows, typed
    print(f"datasets: {out.num_rows} rows, columns {', '.join(data.CACHE_COLUMNS[:4])}, ...")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
