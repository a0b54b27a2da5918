"""The gemini export (the project's docs/SPEC.md §7.13) checked by google-genai's own request types (pydantic models
that forbid unknown fields): every body of the export vectors (testdata/gen/gen_export_vectors.py, the independent
reference) is read by types.Content, its systemInstruction too, and written back unchanged; the joined contents
hold the prompt's texts in order, each untouched; the recorded responses are the SDK's GenerateContentResponse."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, Dict, List

import msgpack
import pytest

import polyloop_assembly as pa

types = pytest.importorskip("google.genai.types")

REPO = Path(__file__).resolve().parents[3]
VECTORS = [
    case
    for name in ("export.json", "export-long.json")
    for case in json.loads((REPO / "testdata" / "export-vectors" / name).read_text(encoding="utf-8"))["cases"]
    if case["provider"] == "gemini" and case["name"].endswith("-gemini") and "answer" in case
]
PASSED = ("model", "max_tokens", "temperature", "tools")  # a vector's pass-through body fields (Anthropic's)


def content(c: Dict[str, Any]) -> Dict[str, Any]:
    """c read by the SDK's Content and written back as the REST API's JSON."""
    out: Dict[str, Any] = types.Content.model_validate(c).model_dump(by_alias=True, exclude_none=True, mode="json")
    return out


def test_every_body_is_google_genai_s_content() -> None:
    assert len(VECTORS) >= 100
    for case in VECTORS:
        body = json.loads(case["answer"])
        assert set(body) - set(PASSED) <= {"contents", "systemInstruction"}, case["name"]
        for c in body["contents"]:
            assert content(c) == c and c["role"] in ("user", "model"), case["name"]
        if "systemInstruction" in body:
            assert content(body["systemInstruction"]) == body["systemInstruction"], case["name"]
            types.GenerateContentConfig(system_instruction=body["systemInstruction"])


def test_the_sdk_s_types_refuse_what_the_export_never_writes() -> None:
    """The check can fail: an Anthropic block, a Bedrock cache point, a message's content key."""
    for bad in (
        {"role": "user", "parts": [{"type": "text", "text": "a"}]},
        {"role": "user", "parts": [{"text": "a"}, {"cachePoint": {"type": "default"}}]},
        {"role": "user", "content": [{"text": "a"}]},
    ):
        with pytest.raises(Exception, match="validation error"):
            types.Content.model_validate(bad)


def test_joined_contents_hold_the_prompt_s_texts_in_order() -> None:
    joined = 0
    for case in VECTORS:
        messages = msgpack.unpackb(pa.assemble_bytes(base64.b64decode(case["request"])))["messages"]
        body = json.loads(case["answer"])
        sent = [p["text"] for p in body.get("systemInstruction", {"parts": []})["parts"]]
        sent += [p["text"] for c in body["contents"] for p in c["parts"]]
        assert sent == [b["text"] for m in messages for b in m["content"]], case["name"]  # each text, once, in order
        sys_n = len(messages) - len([m for m in messages if m["role"] != "system"])
        rest = [{"assistant": "model"}.get(m["role"], m["role"]) for m in messages[sys_n:]]
        runs: List[str] = [r for k, r in enumerate(rest) if k == 0 or r != rest[k - 1]]
        assert [c["role"] for c in body["contents"]] == runs, case["name"]
        joined += len(body["contents"]) < len(rest)
    assert joined >= 50


def test_the_recorded_responses_are_the_sdk_s() -> None:
    recorded = json.loads((REPO / "testdata" / "provider-responses" / "gemini.json").read_text(encoding="utf-8"))
    got = [types.GenerateContentResponse.model_validate(r).usage_metadata.cached_content_token_count for r in recorded]
    assert got == [None, 1100, None]  # left out when 0, as the API writes it


def named(suffix: str) -> Dict[str, Dict[str, Any]]:
    """The export vectors whose name ends in -suffix, by the request's name."""
    out = {}
    for name in ("export.json", "export-long.json"):
        for case in json.loads((REPO / "testdata" / "export-vectors" / name).read_text(encoding="utf-8"))["cases"]:
            if case["name"].endswith("-" + suffix):
                out[case["name"][: -len(suffix) - 1]] = case
    return out


def test_the_explicit_cache_pair_is_google_genai_s() -> None:
    """gemini-cache's body is a CachedContent (CreateCachedContentConfig: contents, system_instruction); gemini's with
    cached_content names it (GenerateContentConfig's cached_content) beside the contents only."""
    create, call = named("gemini-cache"), named("gemini-cached")
    assert len(create) >= 200 and len(call) >= 200  # requests, a refusal among them
    made = 0
    for case in create.values():
        if "answer" in case:
            body = json.loads(case["answer"])
            assert set(body) - set(PASSED) <= {"contents", "systemInstruction"}, case["name"]
            cached = {k: body[k] for k in ("contents", "systemInstruction") if k in body}
            config = types.CreateCachedContentConfig.model_validate(cached)  # forbids a field it does not name
            assert config.model_dump(by_alias=True, exclude_none=True, mode="json") == cached, case["name"]
            made += 1
    assert made >= 150
    for case in call.values():
        if "answer" in case:
            body = json.loads(case["answer"])
            assert set(body) - set(PASSED) == {"contents", "cachedContent"}, case["name"]
            config = types.GenerateContentConfig.model_validate({"cachedContent": body["cachedContent"]})
            assert config.cached_content == "cachedContents/c-42", case["name"]
            assert all(content(c) == c for c in body["contents"]), case["name"]


def test_the_pair_holds_the_prompt_s_texts_in_order() -> None:
    """The cache's systemInstruction and contents, then the call's contents, are the prompt's texts, in order, each
    untouched; the cache ends where the injections end (the request's segments)."""
    create, call = named("gemini-cache"), named("gemini-cached")
    both = [k for k in create if "answer" in create[k] and "answer" in call.get(k, {})]
    assert len(both) >= 150
    for k in both:
        response = msgpack.unpackb(pa.assemble_bytes(base64.b64decode(create[k]["request"])))
        cache, sent = json.loads(create[k]["answer"]), json.loads(call[k]["answer"])
        texts = [p["text"] for p in cache.get("systemInstruction", {"parts": []})["parts"]]
        texts += [p["text"] for c in cache["contents"] for p in c["parts"]]
        cut = len(texts)
        texts += [p["text"] for c in sent["contents"] for p in c["parts"]]
        messages = response["messages"]
        assert texts == [b["text"] for m in messages for b in m["content"]], k
        request = msgpack.unpackb(base64.b64decode(create[k]["request"]))
        end = len(request.get("run_messages", [])) + len(response["injected"])  # the injections' end (§3)
        assert cut == sum(len(m["content"]) for m in messages[:end]), k
