"""The agent loop's two speed lines (issue 41), measured side by side in rounds, for ``make bench``:

- ``Prompt.export`` at step 1,000 against building the same Anthropic body by hand from ``prompt.messages``, and
  against ``export`` of the equivalent request;
- the per-call verdict (``CacheRun.call``) at call 1,000 of a run against the same at call 10.

    python loop_bench.py --json OUT [--quick]

Writes {"export_over_hand": [min, median, max], "export_over_request": [...], "verdict_1000_over_10": [...]}: each
the ratio of the two sides timed in the same round, alternating which goes first.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Callable, Dict, List

import polyloop_assembly as pa


def request(steps: List[Dict[str, str]]) -> Dict[str, Any]:
    return {
        "run_messages": [{"role": "system", "content": [{"type": "text", "text": "You are a careful agent. " * 40}]}],
        "injections": {"memory": [{"entry_id": "m1", "content": "Prefer metric units."}]},
        "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "Count the files in /data."}]}],
        "steps": steps,
        "observation_template": "Output:\n{observation}",
    }


STEPS = [
    {"raw_output": "Thought %d: list it.\nAction: ls -la /data/%d" % (i, i), "observation": "%d files ✓\n" % (i * 7) * 8}
    for i in range(1050)
]


def by_hand(prompt: pa.Prompt) -> Dict[str, Any]:
    """The Anthropic body a user writes from prompt.messages: system, messages, the last block marked."""
    messages = list(prompt.messages)
    system: List[Dict[str, Any]] = []
    i = 0
    while i < len(messages) and messages[i]["role"] == "system":
        system += [{"type": "text", "text": b["text"]} for b in messages[i]["content"]]
        i += 1
    out = [{"role": m["role"], "content": [{"type": "text", "text": b["text"]} for b in m["content"]]} for m in messages[i:]]
    out[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return {"system": system, "messages": out}


def paired(rounds: int, a: Callable[[], Any], b: Callable[[], Any], k: int = 1) -> List[float]:
    """b's time over a's, per round (each run k times), alternating which goes first: min, median, max."""
    a(), b()
    ratios = []
    for r in range(rounds):
        times = []
        for f in (a, b) if r % 2 == 0 else (b, a):
            t = time.perf_counter()
            for _ in range(k):
                f()
            times.append(time.perf_counter() - t)
        ta, tb = times if r % 2 == 0 else times[::-1]
        ratios.append(tb / ta)
    ratios.sort()
    return [ratios[0], ratios[len(ratios) // 2], ratios[-1]]


VERDICT_CALLS = 50  # the calls timed from call 10 and from call 1,000, the Prompt one step longer at each


def verdicts(start: int) -> Callable[[], float]:
    """A side that builds a run up to call ``start`` (untimed), then times ``CacheRun.call`` alone over the next
    VERDICT_CALLS calls, a step added before each."""

    def side() -> float:
        prompt, run = pa.Prompt(request([])), pa.CacheRun()
        usage = {"cache_read_input_tokens": 100}
        for s in STEPS[:start]:
            prompt.add_step(**s)
            run.call(prompt, usage)
        took = 0.0
        for s in STEPS[start : start + VERDICT_CALLS]:
            prompt.add_step(**s)
            t = time.perf_counter()
            run.call(prompt, usage)
            took += time.perf_counter() - t
        return took

    return side


def paired_timed(rounds: int, a: Callable[[], float], b: Callable[[], float]) -> List[float]:
    """b's time over a's per round, each side timing itself, alternating which goes first: min, median, max."""
    ratios = []
    for r in range(rounds):
        if r % 2 == 0:
            ta, tb = a(), b()
        else:
            tb, ta = b(), a()
        ratios.append(tb / ta)
    ratios.sort()
    return [ratios[0], ratios[len(ratios) // 2], ratios[-1]]


def main(argv: List[str]) -> None:
    out = argv[argv.index("--json") + 1]
    rounds = 5 if "--quick" in argv else 15
    prompt = pa.Prompt(request([]))
    for s in STEPS[:1000]:
        prompt.add_step(**s)
    equivalent = request(STEPS[:1000])
    result = {
        "export_over_hand": paired(rounds, lambda: by_hand(prompt), lambda: prompt.export("anthropic"), 5),
        "export_over_request": paired(rounds, lambda: pa.export(equivalent, "anthropic"), lambda: prompt.export("anthropic"), 5),
    }
    result["verdict_1000_over_10"] = paired_timed(rounds, verdicts(10), verdicts(1000))
    with open(out, "w") as f:
        json.dump(result, f)
    print("loop_bench: %s" % json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
