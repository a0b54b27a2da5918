"""Deterministic recorded trajectories (valid and invalid) for the data-set examples and tests.

    python examples/datasets/trajectories.py 10000 trajectories.jsonl

writes one request per line (JSON). About one line in eight is an invalid
request (each kind of mistake in turn: a bad role, an unknown field, a
negative budget, a bad template, a lone surrogate, an int beyond 64 bits, a
float version, a missing template...), and one in a hundred is not JSON at
all. Texts include U+FEFF, NUL, U+FFFE, combining marks and astral
characters. The same ``n`` and ``seed`` always give the same lines.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any, Dict, Iterator, List, Tuple

_WORDS = ["grep", "total", "région", "naïve", "café", "数据", "🙂", "\ufeff", "a\x00b", "\ufffe", "e\u0301", "𝄞", "ok"]


def _text(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi)))


def _msg(role: str, text: str) -> Dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def valid_request(rng: random.Random, i: int) -> Dict[str, Any]:
    steps = [
        {"raw_output": "Thought: %d.%d %s\nAction: run()" % (i, k, _text(rng, 0, 6)), "observation": _text(rng, 0, 40)}
        for k in range(rng.randint(0, 12))
    ]
    req: Dict[str, Any] = {
        "v": 1,
        "run_messages": [
            _msg("system", "You are agent %d. %s" % (i % 7, _text(rng, 0, 5))),
            _msg("user", "Task %d: %s" % (i, _text(rng, 1, 8))),
        ],
        "injections": {"memory": [{"entry_id": "m-%d" % k, "content": _text(rng, 1, 6)} for k in range(i % 3)]},
        "goal_messages": [_msg("user", "Goal: " + _text(rng, 1, 6))],
        "steps": steps,
        "observation_template": rng.choice(
            ["Observation: {observation}", "{observation}", "Out:\n{observation!r:>20}\n", "[{observation:.50}]"]
        ),
    }
    if rng.random() < 0.7:
        req["max_prompt_chars"] = rng.randint(100, 3000)
    return req


def _invalid(rng: random.Random, i: int, kind: int) -> Dict[str, Any]:
    req = valid_request(rng, i)
    if kind == 0:
        req["run_messages"][0]["role"] = "robot"
    elif kind == 1:
        req["extra_field"] = True
    elif kind == 2:
        req["max_prompt_chars"] = -5
    elif kind == 3:
        req["observation_template"] = "Output: {obs}"
    elif kind == 4:
        req["goal_messages"][0]["content"][0]["text"] = "half \ud83d of a pair"
    elif kind == 5:
        req["max_prompt_chars"] = 2**70
    elif kind == 6:
        req["v"] = 1.0
    elif kind == 7:
        del req["observation_template"]
    elif kind == 8:
        req["steps"] = [{"raw_output": "r", "observation": 5}]
    elif kind == 9:
        req["injections"] = {"memory": [{"entry_id": "", "content": "x"}]}
    else:
        req["v"] = 2
    return req


def requests(n: int, seed: int = 13) -> Iterator[Tuple[str, Any]]:
    """``n`` items ``(kind, request)``: kind "valid", "invalid" or "not-json"
    (then request is a str that is not JSON)."""
    rng = random.Random(seed)
    for i in range(n):
        roll = rng.random()
        if roll < 0.01:
            yield "not-json", '{"v": 1, "steps": [' + _text(rng, 0, 3)
        elif roll < 0.13:
            yield "invalid", _invalid(rng, i, i % 11)
        else:
            yield "valid", valid_request(rng, i)


# The mistakes a JSON reader cannot type into columns (a lone surrogate, an
# int beyond 64 bits, a float version, a number where a str belongs): not in
# column_requests.
_UNTYPED_KINDS = (4, 5, 6, 8)


def column_requests(n: int, seed: int = 17) -> List[Dict[str, Any]]:
    """``n`` requests with an ``id`` key (first), as a data set of request
    columns holds them (``read_json``, ``load_dataset("json")``): valid ones
    whose channels vary (memory, skills, tools: each row lacks some) and the
    invalid kinds Arrow can carry."""
    rng = random.Random(seed)
    out: List[Dict[str, Any]] = []
    for i in range(n):
        if rng.random() < 0.12 and i % 11 not in _UNTYPED_KINDS:
            req = _invalid(rng, i, i % 11)
        else:
            req = valid_request(rng, i)
            channels = {
                name: [{"entry_id": "%s-%d" % (name[0], k), "content": _text(rng, 1, 4)} for k in range(rng.randint(0, 2))]
                for name in ("memory", "skills", "tools")
                if rng.random() < 0.5
            }
            if channels or rng.random() < 0.5:
                req["injections"] = channels
            else:
                del req["injections"]
        out.append(dict({"id": i}, **req))
    return out


def lines(n: int, seed: int = 13) -> List[str]:
    """The JSON lines of :func:`requests` (lone surrogates as \\u escapes)."""
    return [r if kind == "not-json" else json.dumps(r) for kind, r in requests(n, seed)]


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: trajectories.py N OUT.jsonl")
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        for line in lines(int(sys.argv[1])):
            f.write(line + "\n")
