"""The providers' official clients (anthropic, openai; pinned in constraints.txt), no network: every export
vector's body goes through ``client.messages.create(**body)``, ``client.chat.completions.create(**body)`` or
``client.responses.create(**body)`` over a mock transport (httpx2, the HTTP library of the pinned SDKs) and the
JSON the SDK puts on the wire is the export's; the mock answers recorded responses
(testdata/provider-responses/), and the SDK's response objects, their ``usage``, their ``model_dump()``, their
JSON text, given to cache_report or cache_rows, give what the recorded JSON gives (docs/SPEC.md §7.12, §7.13)."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple

import anthropic
import httpx2
import openai
import pytest

import polyloop_assembly as pa
from polyloop_assembly import data
from polyloop_assembly._codec import usage_value

REPO = Path(__file__).resolve().parents[3]
RESPONSES = REPO / "testdata" / "provider-responses"
# The fields an SDK's create() requires that a vector's body may lack (the export writes only what it is given).
REQUIRED = {
    "anthropic": {"model": "claude-sonnet-4-5", "max_tokens": 1024},
    "openai-chat": {"model": "gpt-4.1"},
    "openai-responses": {"model": "gpt-4.1"},
}
VECTORS = [
    case
    for name in ("export.json", "export-long.json")
    for case in json.loads((REPO / "testdata" / "export-vectors" / name).read_text(encoding="utf-8"))["cases"]
    if "answer" in case  # an error case has no body to send
]


def recorded(name: str) -> List[Dict[str, Any]]:
    """The recorded responses of a provider: a first call (a cache write), a hit, a miss."""
    out: List[Dict[str, Any]] = json.loads((RESPONSES / (name + ".json")).read_text(encoding="utf-8"))
    return out


class Wire:
    """A mock transport: what the SDK sent (its JSON text), answered with ``answers`` in turn."""

    def __init__(self, answers: List[Dict[str, Any]]) -> None:
        self.answers, self.sent = answers, []  # type: List[bytes]

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.sent.append(request.read())
        body = self.answers[(len(self.sent) - 1) % len(self.answers)]
        return httpx2.Response(200, json=body, headers={"request-id": "req_test", "x-request-id": "req_test"})

    def http(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self))


def create(provider: str, wire: Wire, base_url: str = "") -> Callable[..., Any]:
    """The create() of the provider's client over ``wire``."""
    options: Dict[str, Any] = dict(api_key="test-key", max_retries=0, http_client=wire.http())
    if base_url:
        options["base_url"] = base_url
    if provider == "anthropic":
        return anthropic.Anthropic(**options).messages.create
    client = openai.OpenAI(**options)
    return client.chat.completions.create if provider == "openai-chat" else client.responses.create


def strings(value: Any) -> Iterator[str]:
    """Every str of a JSON value, keys and values."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


@pytest.mark.parametrize("provider", sorted(REQUIRED))
def test_every_export_goes_on_the_wire_as_exported(provider: str) -> None:
    cases = [c for c in VECTORS if c["provider"] == provider]
    assert len(cases) >= 100  # the vectors of the provider with a body were read (export.json, export-long.json)
    wire = Wire(recorded("anthropic" if provider == "anthropic" else provider))
    send = create(provider, wire)
    named = set(inspect.signature(send).parameters)
    for case in cases:
        body = json.loads(case["answer"])
        added = {k: v for k, v in REQUIRED[provider].items() if k not in body}
        # A field the SDK's create() does not name (anthropic 2.17's takes no temperature) goes in extra_body.
        extra = {k: v for k, v in body.items() if k not in named}
        send(**{k: v for k, v in body.items() if k in named}, **added, **({"extra_body": extra} if extra else {}))
        sent = json.loads(wire.sent[-1])
        assert sent == dict(body, **added), case["name"]
        assert sorted(strings(sent)) == sorted([*strings(body), *strings(added)]), case["name"]  # each text, exactly


# A run of four calls: each extends the one before, the last changes its system message (a break).
def run() -> List[Dict[str, Any]]:
    out = []
    for i in range(4):
        system = "You are a careful agent." + (" Answer briefly." if i == 3 else "")
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


# The recorded answers of the four calls (first, hit, miss, miss) and the classes they get, by hand.
ANSWERS = [0, 1, 2, 2]
CLASSES = ["first", "hit", "provider_miss", "prefix_break"]
CACHED = {"anthropic": 1910, "openai-chat": 1920, "openai-responses": 1920, "deepseek-chat": 1920}
SHAPES: List[Tuple[str, str, str]] = [  # (recorded responses, export provider, base URL)
    ("anthropic", "anthropic", ""),
    ("openai-chat", "openai-chat", ""),
    ("openai-responses", "openai-responses", ""),
    ("deepseek-chat", "openai-chat", "https://api.deepseek.com"),  # its own usage fields, extras to the SDK
]


def calls(name: str, provider: str, base_url: str) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]], List[Any]]:
    """The run's requests, the recorded JSON of each call's answer, and the SDK's response objects."""
    answers = [recorded(name)[k] for k in ANSWERS]
    wire = Wire(answers)
    send = create(provider, wire, base_url)
    requests, objects = run(), []
    for request in requests:
        body = pa.export(request, provider, body=dict(REQUIRED[provider]))
        objects.append(send(**body))
        assert json.loads(wire.sent[-1]) == body
    return requests, answers, objects


@pytest.mark.parametrize("name,provider,base_url", SHAPES, ids=[s[0] for s in SHAPES])
def test_the_sdk_s_answer_as_the_user_holds_it(name: str, provider: str, base_url: str) -> None:
    requests, answers, objects = calls(name, provider, base_url)
    want = pa.cache_report(requests, answers)
    assert [c["usage"]["class"] for c in want["calls"]] == CLASSES
    assert [c["usage"]["cached_tokens"] for c in want["calls"]] == [0, CACHED[name], 0, 0]
    assert type(objects[0]).__module__.split(".")[0] in ("anthropic", "openai")
    for given in (
        objects,  # the SDK's own objects
        [o.model_dump() for o in objects],  # the user's model_dump(), its defaults
        [o.model_dump(mode="json") for o in objects],
        [o.to_dict() for o in objects],
        [o.usage for o in objects],  # the usage object alone
        [o.to_json() for o in objects],  # JSON text
        [o.model_dump_json().encode() for o in objects],  # JSON bytes
        [json.dumps(a) for a in answers],
    ):
        assert pa.cache_report(requests, given) == want
    assert pa.cache_report(requests, [a["usage"] for a in answers]) == want
    # The model_dump() read: the recorded JSON itself, every field and number as the provider wrote it.
    for obj, answer in zip(objects, answers):
        assert usage_value(obj, "usage[0]") == answer
        assert usage_value(obj.usage, "usage[0]") == answer["usage"]


@pytest.mark.parametrize("name,provider,base_url", SHAPES, ids=[s[0] for s in SHAPES])
def test_cache_rows_read_the_sdk_s_objects(name: str, provider: str, base_url: str) -> None:
    requests, answers, objects = calls(name, provider, base_url)
    want = list(data.cache_rows([("r", q, a) for q, a in zip(requests, answers)]))
    assert [r["usage_class"] for r in want] == CLASSES and all(r["error_code"] is None for r in want)
    assert [r["input_tokens"] for r in want] == [a["usage"].get("input_tokens", a["usage"].get("prompt_tokens")) for a in answers]
    assert list(data.cache_rows([("r", q, o) for q, o in zip(requests, objects)])) == want
    assert list(data.cache_rows([("r", q, o.to_json()) for q, o in zip(requests, objects)])) == want


class Unreadable:
    def model_dump(self, **options: Any) -> Dict[str, Any]:
        raise RuntimeError("no fields")


def test_a_usage_that_is_none_of_these_is_a_coded_error() -> None:
    requests = run()
    usage: List[Any] = [None] * 4
    expected = "expected a usage dict, a response, its JSON text, or an SDK object with model_dump()"
    for i, value, found, cause in [
        (0, object(), "found a object", None),
        (2, "cached: 4", "found text that is not JSON", json.JSONDecodeError),
        (3, b"\xff{}", "found text that is not JSON", UnicodeDecodeError),
        (1, {1, 2}, "found a set", None),
        (2, Unreadable(), "found a Unreadable whose model_dump() raised RuntimeError: no fields", RuntimeError),
    ]:
        with pytest.raises(pa.AssemblyError) as info:
            pa.cache_report(requests, usage[:i] + [value] + usage[i + 1 :])
        e = info.value
        assert (e.code, e.path, e.message) == ("malformed_request", "usage[%d]" % i, expected + "; " + found)
        assert type(e.__cause__) is cause if cause else e.__cause__ is None


def test_an_unawaited_call_is_named() -> None:
    wire = Wire(recorded("anthropic"))
    client = anthropic.AsyncAnthropic(
        api_key="k", max_retries=0, http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(wire))
    )
    pending = client.messages.create(model="claude-sonnet-4-5", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    try:
        with pytest.raises(pa.AssemblyError, match=r"usage\[0\]: .*found a coroutine, not awaited: await the client's call"):
            pa.cache_report(run()[:1], [pending])
    finally:
        pending.close()
    assert wire.sent == []


def test_the_core_still_judges_the_content() -> None:
    """A JSON value that is no usage (a list, a number; as object or as text) is the core's invalid_usage, the
    report still made; so is a count that is not an int."""
    requests = run()[:3]
    report = pa.cache_report(requests, [[1, 2], "7", {"usage": {"prompt_tokens_details": {"cached_tokens": "12"}}}])
    got = [(c["usage"]["class"], c["usage"]["error"]["code"], c["usage"]["error"]["path"]) for c in report["calls"]]
    assert got == [
        ("invalid_usage", "malformed_request", "usage"),
        ("invalid_usage", "malformed_request", "usage"),
        ("invalid_usage", "malformed_request", "usage.usage.prompt_tokens_details.cached_tokens"),
    ]


def test_a_row_whose_usage_is_none_of_these_is_its_error() -> None:
    requests = run()
    usage = [None, object(), "cached: 4", json.dumps("{}")]  # the last: JSON text of a str, parsed once (the core's)
    rows = list(data.cache_rows([("r", q, u) for q, u in zip(requests, usage)]))
    assert [r["usage_class"] for r in rows] == ["no_usage", "invalid_usage", "invalid_usage", "invalid_usage"]
    assert [(r["error_code"], r["error_path"]) for r in rows[1:]] == [("malformed_request", "usage")] * 3
    assert rows[1]["error_message"].endswith("found a object") and rows[2]["extends"] is True
    assert rows[2]["error_message"].endswith("found text that is not JSON") and "found a str" in rows[3]["error_message"]
