"""Write testdata/export-vectors/export.json and export-long.json (the 1,000-step
histories): the provider request bodies of
docs/SPEC.md §7.13, from this independent Python reference.

Run with CPython 3.12 (`make vectors`); deterministic. The messages, segment
ends and digests come from reference.py's assembly; the export rules (the
leading system messages, the breakpoint policy, the block types, the cache
key) are written here again from the spec, and the body is json.dumps with
no spaces and ensure_ascii=False, the JSON every host answers. Each case is
a request (msgpack, base64), a provider and options (msgpack, base64), and
the answer: the body's JSON text, or the error's code and path (the message
is the core's own words).
"""

from __future__ import annotations

import base64
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import reference as R  # noqa: E402
from reference import inj, msg, pack, step  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "export-vectors", "export.json")
OUT_LONG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "export-vectors", "export-long.json")
PROVIDERS = ("anthropic", "openai-chat", "openai-responses")


def segments(req: dict) -> tuple[int, int, int]:
    run = len(req.get("run_messages", []))
    inj_n = sum(len(e) for e in req.get("injections", {}).values())
    return run, run + inj_n, run + inj_n + len(req.get("goal_messages", []))


def breakpoints(messages: list, segs: tuple[int, int, int], max_bp: int, lookback: int) -> list[int]:
    """The blocks (numbered in the prompt) Anthropic's cache_control marks."""
    starts = [0]
    for m in messages:
        starts.append(starts[-1] + len(m["content"]))
    run_end, inj_end, goal_end = segs
    n = len(messages)
    cands = []
    if n:
        cands.append(starts[n] - 1)
    if run_end:
        cands.append(starts[run_end] - 1)
    if goal_end > inj_end:
        cands.append(starts[goal_end] - 1)
    if inj_end > run_end:
        cands.append(starts[inj_end] - 1)
    bp: list[int] = []
    for c in cands:
        if c >= 0 and len(bp) < max_bp and c not in bp:
            bp.append(c)
    bp.sort()
    while lookback > 0 and bp and len(bp) < max_bp:
        at = -1
        for k in range(len(bp) - 1, -1, -1):
            lo = bp[k - 1] if k else -1
            if bp[k] - lo > lookback and bp[k] - lookback > lo and bp[k] - lookback >= starts[goal_end]:
                at = bp[k] - lookback
                break
        if at < 0:
            break
        bp = sorted(bp + [at])
    return bp


def export(req: dict, provider: str, options: dict) -> dict:
    """The body, or {"error": {"code", "path"}}."""
    resp = R.assemble(req)
    messages, segs = resp["messages"], segments(req)
    n = len(messages)
    sys_n = 0
    if provider == "anthropic":
        while sys_n < n and messages[sys_n]["role"] == "system":
            sys_n += 1
        for m in range(sys_n, n):
            if messages[m]["role"] == "system":
                path = f"request.run_messages[{m}]" if m < segs[0] else f"request.goal_messages[{m - segs[1]}]"
                return {"error": {"code": "malformed_request", "path": path}}
    bp = (
        breakpoints(messages, segs, options.get("max_breakpoints", 4), options.get("lookback", 20))
        if provider == "anthropic"
        else []
    )
    body: dict = dict(options.get("body", {}))
    blk = 0

    def block(b: dict, typ: str) -> dict:
        nonlocal blk
        out = {"type": typ, "text": b["text"]}
        if blk in bp:
            out["cache_control"] = {"type": "ephemeral"}
            if "ttl" in options:
                out["cache_control"]["ttl"] = options["ttl"]
        blk += 1
        return out

    if sys_n:
        body["system"] = [block(b, "text") for m in messages[:sys_n] for b in m["content"]]
    listed = []
    for m in messages[sys_n:]:
        typ = "text"
        if provider == "openai-responses":
            typ = "output_text" if m["role"] == "assistant" else "input_text"
        listed.append({"role": m["role"], "content": [block(b, typ) for b in m["content"]]})
    body["input" if provider == "openai-responses" else "messages"] = listed
    if provider != "anthropic":
        body["prompt_cache_key"] = options.get("prompt_cache_key", resp["prefix_digests"]["run"])
    return body


def requests() -> list[tuple[str, dict]]:
    r = random.Random(2026_35)
    words = ["café", "naïve", "日本語", "🙂", "a\u2028b", "tab\there", "", "plain text", "x" * 40, "\u202e"]

    def t() -> str:
        return " ".join(r.choice(words) for _ in range(r.randint(0, 2)))

    def m(role: str) -> dict:
        return msg(role, *[t() for _ in range(r.choice([1, 1, 1, 2, 3, 0]))])

    out: list[tuple[str, dict]] = []
    roles = ["system", "user", "assistant"]
    for i in range(190):
        req: dict = {}
        if r.random() < 0.85:
            req["run_messages"] = [
                m(r.choice(roles) if k else r.choice(["system", "system", "user"])) for k in range(r.randint(0, 4))
            ]
        if r.random() < 0.5:
            req["injections"] = {f"ch{c}": [inj(f"e{c}{k}", t()) for k in range(r.randint(0, 3))] for c in range(r.randint(0, 3))}
        if r.random() < 0.85:
            req["goal_messages"] = [m(r.choice(["user", "user", "system", "assistant"])) for _ in range(r.randint(0, 3))]
        if r.random() < 0.8:
            req["steps"] = [step(t(), t()) for _ in range(r.choice([0, 1, 2, 5, 12]))]
        req["observation_template"] = r.choice(
            ["{observation}", "Observation: {observation}", "<{observation!r}>", "{observation:>8}|{observation}"]
        )
        out.append((f"random-{i}", req))
    # every position of a system message, and empty slots
    for pos in range(5):
        run = [msg("user", "u"), msg("assistant", "a"), msg("user", "v")]
        run.insert(min(pos, 3), msg("system", "late system" if pos else "first system"))
        out.append((f"system-at-{pos}", {"run_messages": run, "observation_template": "{observation}"}))
    out.append(
        (
            "system-in-goal",
            {
                "run_messages": [msg("system", "s")],
                "goal_messages": [msg("user", "g"), msg("system", "g2")],
                "observation_template": "{observation}",
            },
        )
    )
    out.append(
        ("system-only", {"run_messages": [msg("system", "a", "b"), msg("system", "c")], "observation_template": "{observation}"})
    )
    out.append(
        (
            "system-empty-content",
            {"run_messages": [{"role": "system", "content": []}, msg("user", "u")], "observation_template": "{observation}"},
        )
    )
    out.append(("nothing", {"observation_template": "{observation}"}))
    out.append(("only-injections", {"injections": {"memo": [inj("1", "remember")]}, "observation_template": "{observation}"}))
    out.append(
        (
            "empty-channel",
            {"injections": {"memo": []}, "goal_messages": [msg("user", "g")], "observation_template": "{observation}"},
        )
    )
    for k, n in enumerate((1000, 40)):
        req = {
            "run_messages": [msg("system", "You are an agent."), msg("user", "example")],
            "goal_messages": [msg("user", "Do it.")],
            "steps": [step(f"T{s}", f"o{s}é") for s in range(n)],
            "observation_template": "Observation: {observation}",
        }
        if k == 0:
            req["injections"] = {"memory": [inj("m", "note")]}
        out.append((f"history-{n}-{k}", req))
    return out


OPTIONS = [
    {},
    {"ttl": "1h"},
    {"ttl": "5m", "max_breakpoints": 2},
    {"max_breakpoints": 0},
    {"lookback": 5},
    {"lookback": 0, "max_breakpoints": 3},
    {
        "prompt_cache_key": "run-42",
        "body": {
            "model": "m-1",
            "max_tokens": 1024,
            "temperature": 0.5,
            "tools": [{"name": "t", "input_schema": {"type": "object"}}],
        },
    },
]


def floats(v):
    """v with its floats as reference.py packs them (a double)."""
    if isinstance(v, float):
        return R.Float(v, True)
    if isinstance(v, dict):
        return {k: floats(x) for k, x in v.items()}
    if isinstance(v, list):
        return [floats(x) for x in v]
    return v


def main() -> None:
    cases = []
    for k, (name, req) in enumerate(requests()):
        wire = R.request(**req)
        decoded = R.decode_request(wire)
        for j, provider in enumerate(PROVIDERS):
            options = OPTIONS[(k + j) % len(OPTIONS)]
            answer = export(decoded, provider, options)
            case = {
                "name": f"{name}-{provider}",
                "request": base64.b64encode(wire).decode(),
                "provider": provider,
                "options": base64.b64encode(pack(floats(options))).decode(),
            }
            if "error" in answer:
                case["error"] = answer["error"]
            else:
                case["answer"] = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
            cases.append(case)
    # Two files, each under 1 MiB: the 1,000-step histories apart.
    for path, part in (
        (OUT, [c for c in cases if "-1000-" not in c["name"]]),
        (OUT_LONG, [c for c in cases if "-1000-" in c["name"]]),
    ):
        doc = {
            "description": "Provider request bodies (docs/SPEC.md §7.13) from testdata/gen/gen_export_vectors.py; an ok answer is compared byte for byte, an error by code and path.",
            "cases": part,
        }
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            json.dump(doc, f, ensure_ascii=False, indent=1)
            f.write("\n")
    print(f"{OUT}: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
