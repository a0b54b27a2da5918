"""The bedrock-converse export (the project's docs/SPEC.md §7.13) checked by botocore's own parameter validation of
bedrock-runtime Converse: every body of the export vectors (testdata/gen/gen_export_vectors.py, the independent
reference) is sent through a botocore client whose Stubber answers a recorded Converse response (no network), so
the client validates the body against its service model and the Stubber checks it arrives unchanged. And the one
place a body's messages differ from the prompt's: consecutive messages of one role joined, their blocks the
prompt's texts in order, each untouched."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, Dict, List

import msgpack
import pytest

import polyloop_assembly as pa

botocore = pytest.importorskip("botocore")
from botocore.session import Session  # noqa: E402
from botocore.stub import Stubber  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
VECTORS = [
    case
    for name in ("export.json", "export-long.json")
    for case in json.loads((REPO / "testdata" / "export-vectors" / name).read_text(encoding="utf-8"))["cases"]
    if case["provider"] == "bedrock-converse" and "answer" in case
]
RESPONSE = json.loads((REPO / "testdata" / "provider-responses" / "bedrock-converse.json").read_text(encoding="utf-8"))[0]
MODEL = {"modelId": "anthropic.claude-sonnet-4-5-20250929-v1:0"}


def client() -> Any:
    return Session().create_client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test"
    )


ENUMS = {n: client().meta.service_model.shape_for(n).enum for n in ("CachePointType", "CacheTTL")}


def test_the_vectors_hold_enough_bodies() -> None:
    assert len(VECTORS) >= 100


def test_every_body_passes_botocore_s_validation_of_converse() -> None:
    c = client()
    with Stubber(c) as stub:
        for case in VECTORS:
            body: Dict[str, Any] = json.loads(case["answer"])
            for k in ("model", "max_tokens", "temperature", "tools"):  # a vector's pass-through fields (Anthropic's)
                body.pop(k, None)
            body.update(MODEL)
            stub.add_response("converse", RESPONSE, expected_params=body)
            points = [
                b["cachePoint"]
                for b in body.get("system", []) + [b for m in body["messages"] for b in m["content"]]
                if "cachePoint" in b
            ]
            assert len(points) <= 4, case["name"]  # Bedrock's limit of cache checkpoints per request
            for p in points:  # botocore checks no enum: the service model's values, here
                assert p["type"] in ENUMS["CachePointType"] and p.get("ttl", "5m") in ENUMS["CacheTTL"], case["name"]
            assert c.converse(**body)["usage"]["cacheWriteInputTokens"] == 1024, case["name"]
        stub.assert_no_pending_responses()


def test_botocore_refuses_what_the_export_never_writes() -> None:
    """The check can fail: a block with a key Converse does not know, a text and a cache point in one block (a
    union), an empty system text."""
    c = client()
    for bad in (
        {"messages": [{"role": "user", "content": [{"text": "a", "cache_control": {"type": "ephemeral"}}]}]},
        {"messages": [{"role": "user", "content": [{"text": "a", "cachePoint": {"type": "default"}}]}]},
        {"system": [{"text": ""}], "messages": [{"role": "user", "content": [{"text": "a"}]}]},
    ):
        with Stubber(c) as stub, pytest.raises(botocore.exceptions.ParamValidationError):
            stub.add_response("converse", RESPONSE)
            c.converse(**MODEL, **bad)


def texts(blocks: List[Dict[str, Any]]) -> List[str]:
    return [b["text"] for b in blocks if "cachePoint" not in b]


def test_joined_messages_hold_the_prompt_s_texts_in_order() -> None:
    joined = 0
    for case in VECTORS:
        messages = msgpack.unpackb(pa.assemble_bytes(base64.b64decode(case["request"])))["messages"]
        body = json.loads(case["answer"])
        sent = texts(body.get("system", [])) + [t for m in body["messages"] for t in texts(m["content"])]
        assert sent == [b["text"] for m in messages for b in m["content"]], case["name"]  # each text, once, in order
        roles = [m["role"] for m in body["messages"]]
        assert all(a != b for a, b in zip(roles, roles[1:])), case["name"]  # alternating: the runs joined
        sys_n = len(messages) - len([m for m in messages if m["role"] != "system"])
        runs = [r for k, r in enumerate(m["role"] for m in messages[sys_n:]) if k == 0 or r != messages[sys_n + k - 1]["role"]]
        assert roles == runs, case["name"]
        joined += len(body["messages"]) < len(messages) - sys_n
    assert joined >= 50  # the vectors do join messages
