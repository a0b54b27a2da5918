"""Write testdata/export-vectors/export.json and export-long.json (the 1,000-step
histories): the provider request bodies of
docs/SPEC.md §7.13, from this independent Python reference.

Run with CPython 3.12 (`make vectors`); deterministic. The messages, segment
ends and digests come from reference.py's assembly; the export rules (the
leading system messages, the breakpoint policy, the block types, the cache
key, the provider rules a prompt alone can break) are written here again
from the spec, and the body is json.dumps with no spaces and
ensure_ascii=False, the JSON every host answers. Each case is a request
(msgpack, base64), a provider and options (msgpack, base64), and the answer:
the body's JSON text, or the error's code and path, and for a refusal by a
provider rule its message (docs/SPEC.md §7.13 words them).
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
PROVIDERS = ("anthropic", "openai-chat", "openai-responses", "bedrock-converse", "gemini")
# The variants after them: (name, provider, options added to the case's).
VARIANTS = (
    ("openai-chat-explicit", "openai-chat", {"explicit_breakpoints": True}),
    ("openai-responses-explicit", "openai-responses", {"explicit_breakpoints": True}),
    ("openrouter", "openrouter", {}),
    ("anthropic-explicit", "anthropic", {"explicit_breakpoints": True}),  # refused: OpenAI's option
    ("gemini-cache", "gemini-cache", {}),
    ("gemini-cached", "gemini", {"cached_content": "cachedContents/c-42"}),
    ("openai-chat-cached", "openai-chat", {"cached_content": "cachedContents/c-42"}),  # refused: Gemini's option
)


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


# Unicode's White_Space property (PropList.txt): what "whitespace" means in
# the provider rules (docs/SPEC.md §7.13). Not str.isspace, which also
# takes U+001C..U+001F.
WHITE_SPACE = frozenset(
    [*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000]
)

# The refusals' messages (docs/SPEC.md §7.13).
EMPTY_TEXT = (
    'Anthropic refuses an empty text block (400 "text content blocks must be non-empty"; '
    '"cache_control cannot be set for empty text blocks" at a breakpoint); write at least one character '
    "that is not whitespace in this text: the export sends every text as it is"
)
BLANK_TEXT = (
    'Anthropic refuses a text block of whitespace only (400 "text content blocks must contain '
    'non-whitespace text"); write at least one character that is not whitespace in this text: the export '
    "sends every text as it is"
)
EMPTY_CONTENT = (
    "Anthropic refuses a message with no content block unless it is the final assistant "
    'message (400 "all messages must have non-empty content except for the optional final assistant '
    'message"); give this message a text block, or leave the message out'
)
TRAILING_SPACE = (
    'Anthropic refuses a final assistant message that ends in whitespace (400 "final '
    'assistant content cannot end with trailing whitespace"); end this text without whitespace, or follow '
    "the message with a user message"
)
NO_MESSAGE = (
    "Anthropic needs a user or assistant message besides its top-level system (400 "
    '"messages: at least one message is required"), and this prompt has none; add a goal message'
)
OPENAI_NO_MESSAGE = (
    "OpenAI's Chat Completions needs at least one message (400 \"Invalid 'messages': empty "
    'array"), and this prompt has none; add a run or goal message'
)


def blank(s: str) -> bool:
    return all(ord(c) in WHITE_SPACE for c in s)


def text_path(resp: dict, segs: tuple[int, int, int], m: int, j: int | None) -> str:
    """The request path of block j of message m (j None: its content list)."""
    run_end, inj_end, goal_end = segs
    content = ".content" if j is None else f".content[{j}].text"
    if m < run_end:
        return f"request.run_messages[{m}]{content}"
    if m < inj_end:
        entry = next(e for e in resp["injected"] if e["message_index"] == m)
        k = sum(1 for e in resp["injected"] if e["channel"] == entry["channel"] and e["message_index"] < m)
        return f"request.{R.channel_path(entry['channel'])}[{k}].content"
    if m < goal_end:
        return f"request.goal_messages[{m - inj_end}]{content}"
    s = m - goal_end
    return f"request.steps[{s // 2}]." + ("raw_output" if s % 2 == 0 else "observation")


def refusal(resp: dict, segs: tuple[int, int, int], provider: str, sys_n: int) -> dict | None:
    """The provider rule the prompt breaks: the first offending text in prompt
    order (a message's blocks, then the message), then the prompt as a whole."""
    messages = resp["messages"]
    if provider == "openai-chat":
        return None if messages else {"code": "malformed_request", "path": "request", "message": OPENAI_NO_MESSAGE}
    if provider != "anthropic":
        return None
    n = len(messages)
    for m, message in enumerate(messages):
        content = message["content"]
        for j, b in enumerate(content):
            if b["text"] == "" or blank(b["text"]):
                why = EMPTY_TEXT if b["text"] == "" else BLANK_TEXT
                return {"code": "malformed_request", "path": text_path(resp, segs, m, j), "message": why}
        if m < sys_n:
            continue
        final = m == n - 1 and message["role"] == "assistant"
        if not content and not final:
            return {"code": "malformed_request", "path": text_path(resp, segs, m, None), "message": EMPTY_CONTENT}
        if content and final and ord(content[-1]["text"][-1]) in WHITE_SPACE:
            path = text_path(resp, segs, m, len(content) - 1)
            return {"code": "malformed_request", "path": path, "message": TRAILING_SPACE}
    if n == sys_n:
        return {"code": "malformed_request", "path": "request", "message": NO_MESSAGE}
    return None


BEDROCK = "Bedrock's Converse"
BEDROCK_BLANK = (
    BEDROCK + ' refuses a text block that is empty or of whitespace only (ValidationException "The text '
    'field in the ContentBlock object … is blank"); write at least one character that is not whitespace in this '
    "text: the export sends every text as it is"
)
BEDROCK_EMPTY = (
    BEDROCK + " refuses a message with no content block, and this message and the messages of its role "
    "next to it (joined into one) have none; give this message a text block, or leave the message out"
)
BEDROCK_ASSISTANT_FIRST = (
    BEDROCK + ' refuses a conversation that starts with an assistant message (ValidationException "A '
    'conversation must start with a user message"); put a user message (a goal message) before it'
)
BEDROCK_NO_MESSAGE = (
    BEDROCK + " needs a user or assistant message besides its top-level system, and this prompt has none; add a goal message"
)


GEMINI = "Gemini's generateContent"
GEMINI_EMPTY_TEXT = (
    GEMINI + " refuses an empty text part (400 \"required oneof field 'data' must have one initialized "
    'field"); write at least one character in this text: the export sends every text as it is'
)
GEMINI_NO_MESSAGE = (
    GEMINI + ' needs a user or model content besides its systemInstruction (400 "contents is not '
    'specified"), and this prompt has none; add a goal message'
)
GEMINI_EMPTY = (
    GEMINI + ' refuses a content with no part (400 "contents.parts must not be empty"), and this '
    "message and the messages of its role next to it (joined into one) have none; give this message a text "
    "block, or leave the message out"
)


def gemini(resp: dict, segs: tuple[int, int, int], options: dict, part: str = "") -> dict:
    """Gemini's generateContent body: systemInstruction {parts} of the leading system messages' texts, contents
    of {role: user or model, parts}, every run of consecutive messages of one role joined; no cache points. It
    refuses an empty text (not a blank one), no content, an empty run; not a model message first. part "cache":
    the cachedContents body of the run and the injections (no content needed); "call": the goal and the history,
    no systemInstruction, and cachedContent naming the cache."""
    return bedrock(resp, segs, options, gemini_shape=True, part=part)


GEMINI_CACHED_SYSTEM = (
    "Gemini's generateContent takes no systemInstruction beside a cachedContent (400 \"CachedContent can not be used "
    'with GenerateContent request setting system_instruction, tools or tool_config"), and this system message is not '
    "in the run or the injections, which the cache holds; move it to the start of run_messages"
)


def bedrock(resp: dict, segs: tuple[int, int, int], options: dict, gemini_shape: bool = False, part: str = "") -> dict:
    """Bedrock Converse's body: the leading system messages' texts as system blocks, every run of consecutive
    messages of one role one message of their blocks in order, a cachePoint block after each block at a
    breakpoint (Anthropic's policy)."""
    messages = resp["messages"]
    n = len(messages)
    sys_n = 0
    while sys_n < n and messages[sys_n]["role"] == "system":
        sys_n += 1
    for m in range(sys_n, n):
        if messages[m]["role"] == "system":
            path = f"request.run_messages[{m}]" if m < segs[0] else f"request.goal_messages[{m - segs[1]}]"
            return {"error": {"code": "malformed_request", "path": path}}

    def refuse(path: str, message: str) -> dict:
        if part == "cache" and message.startswith(GEMINI):  # the cachedContents body's refusals name it
            message = "Gemini's cachedContents" + message[len(GEMINI) :]
        return {"error": {"code": "malformed_request", "path": path, "message": message}}

    if part and sys_n > segs[1]:
        return {"error": {"code": "malformed_request", "path": "request.goal_messages[0]", "message": GEMINI_CACHED_SYSTEM}}
    lo_all, hi_all = sys_n, n  # the messages sent after the system ones
    if part == "cache":
        hi_all = segs[1]
    elif part == "call":
        lo_all, sys_n = segs[1], 0
    sent = list(range(sys_n)) + list(range(lo_all, hi_all))
    for m in sent:
        for j, b in enumerate(messages[m]["content"]):
            if b["text"] == "" if gemini_shape else blank(b["text"]):
                return refuse(text_path(resp, segs, m, j), GEMINI_EMPTY_TEXT if gemini_shape else BEDROCK_BLANK)
    if lo_all == hi_all and part != "cache":
        return refuse("request", GEMINI_NO_MESSAGE if gemini_shape else BEDROCK_NO_MESSAGE)
    if not gemini_shape and messages[sys_n]["role"] == "assistant":
        return refuse(text_path(resp, segs, sys_n, None), BEDROCK_ASSISTANT_FIRST)
    groups: list[tuple[int, int]] = []
    for m in range(lo_all, hi_all):
        if groups and messages[groups[-1][0]]["role"] == messages[m]["role"]:
            groups[-1] = (groups[-1][0], m + 1)
        else:
            groups.append((m, m + 1))
    for lo, hi in groups:
        if not any(messages[m]["content"] for m in range(lo, hi)):
            return refuse(text_path(resp, segs, lo, None), GEMINI_EMPTY if gemini_shape else BEDROCK_EMPTY)
    if gemini_shape:
        parts = [[{"text": b["text"]} for m in range(lo, hi) for b in messages[m]["content"]] for lo, hi in groups]
        out: dict = dict(options.get("body", {}))
        if sys_n:
            out["systemInstruction"] = {"parts": [{"text": b["text"]} for m in messages[:sys_n] for b in m["content"]]}
        role = {"user": "user", "assistant": "model"}
        out["contents"] = [{"role": role[messages[lo]["role"]], "parts": p} for (lo, _), p in zip(groups, parts)]
        if part == "call":
            out["cachedContent"] = options["cached_content"]
        return out
    bp = breakpoints(messages, segs, options.get("max_breakpoints", 4), options.get("lookback", 20))
    first = [0]
    for message in messages:
        first.append(first[-1] + len(message["content"]))

    def blocks(lo: int, hi: int) -> list:
        out: list = []
        for m in range(lo, hi):
            for j, b in enumerate(messages[m]["content"]):
                out.append({"text": b["text"]})
                if first[m] + j in bp:
                    point = {"type": "default"}
                    if "ttl" in options:
                        point["ttl"] = options["ttl"]
                    out.append({"cachePoint": point})
        return out

    body: dict = dict(options.get("body", {}))
    if sys_n:
        body["system"] = blocks(0, sys_n)
    body["messages"] = [{"role": messages[lo]["role"], "content": blocks(lo, hi)} for lo, hi in groups]
    return body


def export(req: dict, provider: str, options: dict) -> dict:
    """The body, or {"error": {"code", "path"[, "message"]}}."""
    resp = R.assemble(req)
    messages, segs = resp["messages"], segments(req)
    explicit = options.get("explicit_breakpoints", False)
    if explicit and provider not in ("openai-chat", "openai-responses"):
        return {"error": {"code": "malformed_request", "path": "options.explicit_breakpoints"}}
    if provider == "bedrock-converse":
        return bedrock(resp, segs, options)
    if "cached_content" in options and provider != "gemini":
        return {"error": {"code": "malformed_request", "path": "options.cached_content"}}
    if provider == "gemini":
        return gemini(resp, segs, options, "call" if "cached_content" in options else "")
    if provider == "gemini-cache":
        return gemini(resp, segs, options, "cache")
    n = len(messages)
    sys_n = 0
    if provider == "anthropic":
        while sys_n < n and messages[sys_n]["role"] == "system":
            sys_n += 1
        for m in range(sys_n, n):
            if messages[m]["role"] == "system":
                path = f"request.run_messages[{m}]" if m < segs[0] else f"request.goal_messages[{m - segs[1]}]"
                return {"error": {"code": "malformed_request", "path": path}}
    refused = refusal(resp, segs, provider, sys_n)
    if refused:
        return {"error": refused}
    bp = []
    if provider in ("anthropic", "openrouter") or explicit:
        bp = breakpoints(messages, segs, options.get("max_breakpoints", 4), options.get("lookback", 20))
    if explicit:
        bp = off_assistant(messages, bp)
    body: dict = dict(options.get("body", {}))
    blk = 0

    def block(b: dict, typ: str) -> dict:
        nonlocal blk
        out = {"type": typ, "text": b["text"]}
        if blk in bp and explicit:
            out["prompt_cache_breakpoint"] = {"mode": "explicit"}
        elif blk in bp:
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
    if provider in ("openai-chat", "openai-responses"):
        body["prompt_cache_key"] = options.get("prompt_cache_key", resp["prefix_digests"]["run"])
    if explicit:
        body["prompt_cache_options"] = {"mode": "explicit"}
    return body


def off_assistant(messages: list, bp: list[int]) -> list[int]:
    """OpenAI's explicit breakpoints: each on an assistant's block moves to the last block of the nearest earlier
    message that is not an assistant's and has a block; none such, it is not placed; one block holds one."""
    owner = [m for m, message in enumerate(messages) for _ in message["content"]]  # the message of each block
    out: list[int] = []
    for b in bp:
        m = owner[b]
        while m >= 0 and (messages[m]["role"] == "assistant" or not messages[m]["content"]):
            m -= 1
        if m >= 0:
            last = sum(len(x["content"]) for x in messages[: m + 1]) - 1
            if last not in out:
                out.append(last)
    return sorted(out)


def requests() -> list[tuple[str, dict]]:
    r = random.Random(2026_35)
    # words hold no white space at their ends (a text ends in a word) and
    # code points that are not White_Space (U+200B, U+FEFF, U+001C); a few
    # texts are empty or blank, which Anthropic refuses
    words = [
        "café",
        "naïve",
        "日本語",
        "🙂",
        "a\u2028b",
        "tab\there",
        "plain text",
        "x" * 40,
        "\u202e",
        "\u200b",
        "\ufeff",
        "\x1c",
    ]
    blanks = ["", " ", "\n\t", "\u00a0", "\u3000 ", "\u2028", "\u0085\u1680\u205f"]

    def t() -> str:
        if r.random() < 0.02:
            return r.choice(blanks)
        return " ".join(r.choice(words) for _ in range(r.randint(1, 2)))

    def m(role: str) -> dict:
        return msg(role, *[t() for _ in range(0 if r.random() < 0.04 else r.choice([1, 1, 1, 2, 3]))])

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
    # prompts a provider that joins same-role messages takes (Bedrock): a user message first, consecutive user
    # messages (injections, goal), no blank text
    for i in range(60):
        req = {
            "run_messages": [msg("system", t().strip() or "s")] * r.randint(0, 2)
            + [msg(r.choice(["user", "assistant"]) if k else "user", "r%d" % k) for k in range(r.randint(0, 3))],
            "injections": {"memo": [inj(f"e{k}", "note %d" % k) for k in range(r.randint(0, 3))]},
            "goal_messages": [msg("user", "goal", *(["more"] * r.randint(0, 2))) for _ in range(r.randint(1, 3))],
            "steps": [step("T%d" % s, "o%d" % s) for s in range(r.choice([0, 1, 3, 30]))],
            "observation_template": "Observation: {observation}",
        }
        out.append((f"joined-{i}", req))
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
    # the provider rules: each refused text where it can be, and texts that
    # pass them (docs/SPEC.md §7.13)
    obs = "{observation}"
    refused: list[tuple[str, dict]] = [
        ("empty-raw-output", {"goal_messages": [msg("user", "g")], "steps": [step("a", "b"), step("", "o")]}),
        ("blank-raw-output", {"goal_messages": [msg("user", "g")], "steps": [step("\u3000\n", "o")]}),
        ("empty-observation", {"goal_messages": [msg("user", "g")], "steps": [step("a", "")]}),
        ("blank-observation", {"goal_messages": [msg("user", "g")], "steps": [step("a", "b"), step("c", " \t\u00a0")]}),
        ("blank-observation-padded", {"goal_messages": [msg("user", "g")], "steps": [step("a", "")], "t": "{observation:>8}"}),
        (
            "blank-observation-fill",
            {"goal_messages": [msg("user", "g")], "steps": [step("a", "xyz")], "t": "{observation:\u3000^3.0}"},
        ),
        (
            "blank-observation-repr",
            {"goal_messages": [msg("user", "g")], "steps": [step("a", "xyz")], "t": "{observation!r: <4.0}\n"},
        ),
        (
            "blank-observation-prefix",
            {"goal_messages": [msg("user", "g")], "steps": [step("a", "  xyz")], "t": " {observation:.2}"},
        ),
        (
            "observation-prefix-not-blank",
            {"goal_messages": [msg("user", "g")], "steps": [step("a", " xyz")], "t": " {observation:.2}"},
        ),
        (
            "observation-literal",
            {"goal_messages": [msg("user", "g")], "steps": [step("a", "")], "t": "Observation: {observation}"},
        ),
        ("observation-repr", {"goal_messages": [msg("user", "g")], "steps": [step("a", "")], "t": "{observation!r}"}),
        ("observation-fill", {"goal_messages": [msg("user", "g")], "steps": [step("a", "")], "t": "{observation:*>3}"}),
        ("empty-goal-content", {"goal_messages": [{"role": "user", "content": []}, msg("user", "g")]}),
        (
            "empty-run-text-block",
            {"run_messages": [msg("system", "s"), msg("user", "a", "")], "goal_messages": [msg("user", "g")]},
        ),
        ("blank-run-text-block", {"run_messages": [msg("user", "a", "b", "\u2029")], "goal_messages": [msg("user", "g")]}),
        ("empty-run-content", {"run_messages": [msg("user", "a"), {"role": "assistant", "content": []}]}),
        ("blank-system", {"run_messages": [msg("system", "s", "\u3000"), msg("user", "u")]}),
        ("empty-system", {"run_messages": [msg("system", ""), msg("user", "u")]}),
        (
            "empty-injection",
            {"injections": {"b": [inj("1", "x"), inj("2", "")], "a": [inj("3", "y")]}, "goal_messages": [msg("user", "g")]},
        ),
        ("blank-injection-quoted-channel", {"injections": {'m"q\\': [inj("1", "\u2028")]}, "goal_messages": [msg("user", "g")]}),
        ("final-assistant-trailing-space", {"goal_messages": [msg("user", "q"), msg("assistant", "Sure,", "here ")]}),
        ("final-assistant-trailing-nbsp", {"run_messages": [msg("user", "q"), msg("assistant", "A\u00a0")]}),
        ("final-assistant-no-trailing-space", {"goal_messages": [msg("user", "q"), msg("assistant", " Sure")]}),
        ("final-assistant-empty-content", {"goal_messages": [msg("user", "q"), {"role": "assistant", "content": []}]}),
        ("final-user-empty-content", {"goal_messages": [msg("user", "q"), {"role": "user", "content": []}]}),
        ("not-white-space", {"goal_messages": [msg("user", "\u200b", "\ufeff", "\x1c\x1d\x1e\x1f", "\u180e")]}),
        ("assistant-trailing-space-not-final", {"goal_messages": [msg("assistant", "a "), msg("user", "q ")]}),
        ("only-system", {"run_messages": [msg("system", "s")]}),
    ]
    for name, fields in refused:
        req = {k: v for k, v in fields.items() if k != "t"}
        req["observation_template"] = fields.get("t", obs)
        out.append((name, req))
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
        runs = [(p, p, {}) for p in PROVIDERS] + list(VARIANTS)
        for j, (label, provider, extra) in enumerate(runs):
            if label in ("anthropic-explicit", "openai-chat-cached") and k % 25:
                continue  # a few suffice
            options = dict(OPTIONS[(k + j) % len(OPTIONS)], **extra)
            answer = export(decoded, provider, options)
            case = {
                "name": f"{name}-{label}",
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
