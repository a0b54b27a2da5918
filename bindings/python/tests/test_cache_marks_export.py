"""OpenAI's explicit breakpoints (the option ``explicit_breakpoints`` of openai-chat and openai-responses) and
OpenRouter's ``cache_control`` (the project's docs/SPEC.md §7.13) checked by the providers' own request types: every
such body of the export vectors (testdata/gen/gen_export_vectors.py, the independent reference) is read by the
``openai`` SDK's TypedDicts (pydantic validates them and keeps only the fields they name, so a body read back
unchanged has no field the SDK does not know, and each Literal holds), an OpenRouter block by ``anthropic``'s
TextBlockParam (OpenRouter takes Anthropic's ``cache_control``) and by ``openai``'s text part without it; and no
request holds more than 4 breakpoints, none on an assistant's block."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, Dict, List

import msgpack
import pytest
from pydantic import TypeAdapter

import polyloop_assembly as pa

openai_types = pytest.importorskip("openai.types")
from anthropic.types import TextBlockParam  # noqa: E402
from openai.types.chat import ChatCompletionContentPartTextParam  # noqa: E402
from openai.types.chat.completion_create_params import PromptCacheOptions as ChatCacheOptions  # noqa: E402
from openai.types.responses import EasyInputMessageParam  # noqa: E402
from openai.types.responses.response_create_params import PromptCacheOptions as ResponsesCacheOptions  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
CASES = [
    case
    for name in ("export.json", "export-long.json")
    for case in json.loads((REPO / "testdata" / "export-vectors" / name).read_text(encoding="utf-8"))["cases"]
]
PART = TypeAdapter(ChatCompletionContentPartTextParam)
RESPONSES_MESSAGE = TypeAdapter(EasyInputMessageParam)
ANTHROPIC_BLOCK = TypeAdapter(TextBlockParam)


def bodies(suffix: str) -> List[Dict[str, Any]]:
    out = [json.loads(c["answer"]) for c in CASES if c["name"].endswith(suffix) and "answer" in c]
    assert len(out) >= 200, suffix
    return out


def same(adapter: TypeAdapter, value: Any) -> bool:  # type: ignore[type-arg]
    """value read by the SDK's type is value: every field known, every Literal held."""
    return bool(adapter.validate_python(value) == value)


def test_openai_chat_breakpoints_are_the_sdk_s() -> None:
    marked = 0
    for body in bodies("-openai-chat-explicit"):
        assert TypeAdapter(ChatCacheOptions).validate_python(body["prompt_cache_options"]) == {"mode": "explicit"}
        parts = [(m["role"], p) for m in body["messages"] for p in m["content"]]
        for role, part in parts:
            assert same(PART, part)
            assert "prompt_cache_breakpoint" not in part or role != "assistant"
        n = sum("prompt_cache_breakpoint" in p for _, p in parts)
        assert n <= 4
        marked += n > 0
    assert marked >= 100


def test_openai_responses_breakpoints_are_the_sdk_s() -> None:
    marked = 0
    for body in bodies("-openai-responses-explicit"):
        assert TypeAdapter(ResponsesCacheOptions).validate_python(body["prompt_cache_options"]) == {"mode": "explicit"}
        n = 0
        for m in body["input"]:
            if m["role"] == "assistant":  # output_text: the SDK's output text takes no breakpoint
                assert all(set(p) == {"type", "text"} and p["type"] == "output_text" for p in m["content"])
                continue
            assert same(RESPONSES_MESSAGE, m)
            n += sum("prompt_cache_breakpoint" in p for p in m["content"])
        assert n <= 4
        marked += n > 0
    assert marked >= 100


def test_openrouter_blocks_are_anthropic_s_on_openai_s_messages() -> None:
    marked = 0
    for body in bodies("-openrouter"):
        assert set(body) - {"model", "max_tokens", "temperature", "tools", "prompt_cache_key"} == {"messages"}
        n = 0
        for m in body["messages"]:
            assert m["role"] in ("system", "user", "assistant")
            for block in m["content"]:
                assert same(ANTHROPIC_BLOCK, block)
                assert same(PART, {k: v for k, v in block.items() if k != "cache_control"})
                n += "cache_control" in block
        assert n <= 4
        marked += n > 0
    assert marked >= 100


def valid(adapter: TypeAdapter, value: Any) -> bool:  # type: ignore[type-arg]
    try:
        return same(adapter, value)
    except ValueError:  # pydantic's ValidationError
        return False


def test_the_sdk_s_types_refuse_what_the_export_never_writes() -> None:
    """The checks can fail: Anthropic's mark on an OpenAI part, an implicit breakpoint, a TTL OpenAI has not, a
    field of no input text, Anthropic's mark of another type."""
    for bad in (
        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "a", "prompt_cache_breakpoint": {"mode": "implicit"}},
        {"type": "text", "text": "a", "prompt_cache_breakpoint": {"mode": "explicit", "ttl": "5m"}},
    ):
        assert not valid(PART, bad)
    assert valid(PART, {"type": "text", "text": "a", "prompt_cache_breakpoint": {"mode": "explicit"}})
    assert not valid(RESPONSES_MESSAGE, {"role": "user", "content": [{"type": "input_text", "text": "a", "x": 1}]})
    assert not valid(ANTHROPIC_BLOCK, {"type": "text", "text": "a", "cache_control": {"type": "persistent"}})


def test_every_text_once_in_order_unchanged() -> None:
    """The marked bodies hold the prompt's texts, in order, each untouched; each message is the prompt's."""
    for suffix, key in (
        ("-openai-chat-explicit", "messages"),
        ("-openai-responses-explicit", "input"),
        ("-openrouter", "messages"),
    ):
        cases = [c for c in CASES if c["name"].endswith(suffix) and "answer" in c]
        assert len(cases) >= 200, suffix
        for case in cases:
            messages = msgpack.unpackb(pa.assemble_bytes(base64.b64decode(case["request"])))["messages"]
            body = json.loads(case["answer"])
            assert [m["role"] for m in body[key]] == [m["role"] for m in messages], case["name"]
            sent = [b["text"] for m in body[key] for b in m["content"]]
            assert sent == [b["text"] for m in messages for b in m["content"]], case["name"]
