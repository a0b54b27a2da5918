"""Write testdata/prompt-vectors/prompts.json from the pure-Python reference.

Run with CPython 3.12 (`make vectors`). Deterministic: running it twice gives
identical files. The format and the runners' rules are in
testdata/prompt-vectors/README.md.

A case is a request and steps added one at a time. The expected response
after k steps is reference.py's answer to ONE request holding the request's
own steps and those k steps: the incremental prompt of every host must equal
it, so every host's copy of the incremental rules (budget and overflow,
message sizes, the steps[k] path of a refused step) is checked against the
plain definition. A bad step states its code and path by hand (checked
against the reference's answer for the request with that step appended); the
prompt is unchanged after it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import reference as R  # noqa: E402
import schema  # noqa: E402
from reference import inj, msg, pack, step  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "prompt-vectors", "prompts.json")
NAME_RE = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
HIGH, LOW = "\ud800", "\udfff"  # lone surrogates: invalid_utf8 in every host

CASES: list[dict] = []


def b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


def wire_text(s: str) -> bytes:
    """A text as the wire carries it; a lone surrogate becomes its three-byte
    form, which no UTF-8 decoder accepts (what Go, Python and JS hosts send)."""
    return s.encode("utf-8", "surrogatepass")


def request_bytes(req: dict, steps: list) -> bytes:
    """The canonical request of req with steps, texts as the wire carries them."""
    full = dict(req)
    full["steps"] = list(req.get("steps", [])) + steps
    out = {
        k: full[k]
        for k in ("v", "run_messages", "injections", "goal_messages", "steps", "observation_template", "max_prompt_chars")
        if k in full
    }
    if not out["steps"]:
        del out["steps"]

    def raw(v):
        if isinstance(v, str):
            return R.BadStr(wire_text(v)) if any(0xD800 <= ord(c) <= 0xDFFF for c in v) else v
        if isinstance(v, list):
            return [raw(x) for x in v]
        if isinstance(v, dict):
            return {k: raw(x) for k, x in v.items()}
        return v

    return pack(raw(out))


def case(name: str, description: str, req: dict, steps: list):
    """steps: (raw_output, observation) for a good step, or (raw_output,
    observation, code, path) for a refused one."""
    assert NAME_RE.fullmatch(name) and name not in {c["name"] for c in CASES}, name
    first, err = R.assemble_bytes(request_bytes(req, []))
    assert err is None, f"{name}: the request itself is refused: {err}"
    added: list = []
    out_steps = []
    for s in steps:
        raw_output, observation = s[0], s[1]
        resp, err = R.assemble_bytes(request_bytes(req, added + [step(raw_output, observation)]))
        entry = {"raw_output": raw_output, "observation": observation}
        if len(s) == 4:
            assert resp is None and err == (s[2], s[3]), f"{name}: expected {s[2:]}, reference says {err}"
            entry["error"] = {"code": s[2], "path": s[3]}
        else:
            assert err is None, f"{name}: step {raw_output!r}: reference says {err}"
            added.append(step(raw_output, observation))
            entry["response"] = b64(resp)
        out_steps.append(entry)
    CASES.append({"name": name, "description": description, "request": req, "response": b64(first), "steps": out_steps})


T = "{observation}"

case(
    "minimal",
    "one template, three steps, empty texts included",
    {"observation_template": T},
    [("a", "b"), ("", ""), ("\U0001f600 x", "\u00e9\u0301")],
)

case(
    "overflow-flips",
    "budget 10: under, equal (not over), one over, then over for good",
    {"run_messages": [msg("system", "hello")], "observation_template": T, "max_prompt_chars": 10},
    [("ab", "cd"), ("x", ""), ("y", ""), ("z", HIGH, "invalid_utf8", "steps[3].observation"), ("", "")],
)

case(
    "budget-zero",
    "budget 0: an empty prompt fits, the first rendered character overflows",
    {"observation_template": "[{observation}]", "max_prompt_chars": 0},
    [("", ""), ("", "a")],
)

case(
    "budget-absent-never-overflows",
    "no budget: never context_overflow",
    {"observation_template": "{observation:1000}"},
    [("", ""), ("r", "o")],
)

case(
    "steps-in-request-path",
    "two steps in the request: the next is steps[2], a refused one keeps the count",
    {"observation_template": T, "steps": [step("r0", "o0"), step("r1", "o1")], "max_prompt_chars": 8},
    [
        ("r2", "o2"),
        ("r3", HIGH, "invalid_utf8", "steps[3].observation"),
        (LOW, "o3", "invalid_utf8", "steps[3].raw_output"),
        (HIGH, LOW, "invalid_utf8", "steps[3].raw_output"),
        ("ok" + LOW + "ok", "fine", "invalid_utf8", "steps[3].raw_output"),
        ("r3", "o3"),
    ],
)

case(
    "first-step-refused",
    "the very first added step is refused: steps[0], the prompt is unchanged",
    {"observation_template": T},
    [("bad " + HIGH, "", "invalid_utf8", "steps[0].raw_output"), ("good", "step")],
)

case(
    "template-rendering",
    "conversions, fill, align, width and precision count code points",
    {
        "observation_template": "Output:\n```\n{observation!r:*>14.9}\n```\n{observation!a:^7}|{observation:.2}",
        "max_prompt_chars": 120,
    },
    [("cmd", 'it\'s "q"\n\t\U0001f600\u00e9'), ("", ""), ("\u0000", "\u0301\ufeff\U0010ffff"), ("x", "long " * 20)],
)

case(
    "all-segments",
    "run, injections (channels in code-point order), goal: digests and injected never change",
    {
        "run_messages": [msg("system", "You are", " a shell agent."), msg("user")],
        "injections": {
            "\U0001f600": [inj("e2", "emoji channel")],
            "\uffff": [inj("e1", "bmp channel")],
            "": [inj("e0", "empty name")],
            "tools": [],
        },
        "goal_messages": [msg("user", "Count the files.")],
        "observation_template": "Observation: {observation}\n",
        "max_prompt_chars": 100,
    },
    [("```bash\nls | wc -l\n```", "42"), ("done", ""), ("", LOW, "invalid_utf8", "steps[2].observation"), ("more", "x" * 40)],
)

case(
    "long-texts",
    "texts past 255 bytes and past 16 messages, a leading U+FEFF and U+FFFE, NUL",
    {"goal_messages": [msg("user", "goal")], "observation_template": T},
    [("\ufeff" + "x" * 300, "\ufeff" + "y" * 300), ("\ufffe" + "\u4e2d" * 100, "\u0000" * 40)]
    + [(f"step {i}", "\U0001f468\u200d\U0001f469" * i) for i in range(8)]
    + [("\ufeff", "\ufeff")],
)

case(
    "many-steps-budget",
    "twenty steps against a budget met exactly at step 12",
    {"observation_template": "<{observation}>", "max_prompt_chars": 12 * 5},
    [(f"r{i:02d}", "") for i in range(20)],
)


def main() -> int:
    doc = {
        "description": "Prompt vectors: a request, steps added one at a time, the expected "
        "response after each (the response of one request with all those steps), "
        "refused steps with their code and path. See README.md.",
        "cases": sorted(CASES, key=lambda c: c["name"]),
    }
    text = json.dumps(doc, indent=1, ensure_ascii=True) + "\n"
    schema.check_texts("prompt-vectors", {os.path.basename(OUT): text})
    with open(OUT, "w", encoding="ascii", newline="\n") as f:
        f.write(text)
    steps = sum(len(c["steps"]) for c in CASES)
    bad = sum(1 for c in CASES for s in c["steps"] if "error" in s)
    print(f"prompts.json: {len(CASES)} cases, {steps} steps ({bad} refused)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
