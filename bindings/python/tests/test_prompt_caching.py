"""cache_report() and export() (docs/SPEC.md §7.12, §7.13): the planted run
against what was planted, the same report as the command-line tool's, every
export vector of the independent Python reference, and a property over
random requests: every text untouched, at most four breakpoints."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import msgpack  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings

import polyloop_assembly as pa

from strategies import request as any_request

REPO = Path(__file__).resolve().parents[3]


def planted_run(calls: int) -> List[Dict[str, Any]]:
    """Call i has i+1 steps; an injection edited at 50, a run message's
    trailing space at 120, the history condensed at 170."""
    out = []
    for i in range(calls):
        steps = [{"raw_output": f"Thought {s}.\nAction: look({s})", "observation": f"result {s}: café"} for s in range(i + 1)]
        if i >= 170:
            steps = [{"raw_output": "Summary of steps 0-99.", "observation": "condensed"}] + steps[100:]
        out.append(
            {
                "run_messages": [
                    {
                        "role": "system",
                        "content": [{"type": "text", "text": "You are a careful agent." + (" " if i >= 120 else "")}],
                    }
                ],
                "injections": {
                    "memory": [{"entry_id": "m1", "content": "Prefer imperial units." if i >= 50 else "Prefer metric units."}]
                },
                "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "Find the price."}]}],
                "steps": steps,
                "observation_template": "Observation: {observation}",
            }
        )
    return out


def test_the_report_names_exactly_the_planted_breaks() -> None:
    run = planted_run(200)
    report = pa.cache_report(run)
    breaks = {i: (c["break"]["segment"], c["break"]["cause"]) for i, c in enumerate(report["calls"]) if c["break"]}
    assert breaks == {
        50: ("injections", "injections_changed"),
        120: ("run", "run_changed"),
        170: ("history", "history_rewritten"),
    }
    for i, c in enumerate(report["calls"][1:], 1):
        if i not in breaks:  # the whole previous prompt is the cacheable prefix
            assert c["extends"] and c["cacheable_prefix_chars"] == pa.assemble(run[i - 1])["prompt_chars"]
    assert report["totals"]["calls"] == 200 and report["totals"]["breaks"] == 3


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("POLYLOOP_CLI"):
        return Path(os.environ["POLYLOOP_CLI"])
    go = shutil.which("go")
    if go is None:
        pytest.skip("the command-line tool is built from the Go source: go is missing")
    exe = tmp_path_factory.mktemp("cli") / "polyloop-assemble"
    subprocess.run(
        [go, "build", "-o", str(exe), "./cmd/polyloop-assemble"], cwd=REPO, check=True, env=dict(os.environ, CGO_ENABLED="0")
    )
    return exe


def test_the_report_is_the_cli_s(cli: Path, tmp_path: Path) -> None:
    """The same JSON as the command-line tool's (the native core), usage
    included; JSON lines written with raw U+2028, U+0085 inside strings split
    nothing."""
    run = planted_run(200)
    run[3]["steps"][0]["observation"] = "a\u2028b\u0085c\rd"
    usage: List[Any] = [
        {"cache_read_input_tokens": i % 3} if i % 5 else {"usage": {"prompt_tokens_details": {"cached_tokens": 0}}}
        for i in range(200)
    ]
    usage[7] = None
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in run), encoding="utf-8")
    (tmp_path / "usage.jsonl").write_text("".join(json.dumps(u) + "\n" for u in usage))
    out = subprocess.run(
        [str(cli), "cache", "--usage", str(tmp_path / "usage.jsonl"), str(tmp_path / "run.jsonl")],
        capture_output=True,
        check=True,
    )
    assert json.loads(out.stdout) == pa.cache_report(run, usage)


def test_usage_classes() -> None:
    run = planted_run(6)
    calls = [run[3], run[4], run[2], run[3], run[4]]
    usage = [
        {"input_tokens": 50, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 10},
        {"usage": {"prompt_tokens": 900, "prompt_tokens_details": {"cached_tokens": 640}}},
        {"cache_read_input_tokens": 0},
        None,
        {"usage": {"input_tokens_details": {"cached_tokens": 0}}},  # Responses: kept prefix, nothing read
    ]
    report = pa.cache_report(calls, usage)
    assert [c["usage"]["class"] for c in report["calls"]] == ["first", "hit", "prefix_break", "no_usage", "provider_miss"]
    assert report["calls"][2]["break"]["cause"] == "steps_removed"


def test_an_invalid_request_is_its_call_s_error() -> None:
    report = pa.cache_report([planted_run(1)[0], {"steps": []}, planted_run(2)[1]])
    assert report["calls"][1]["error"]["code"] == "missing_field"
    assert report["calls"][2]["previous"] == 0 and report["calls"][2]["extends"]


@pytest.mark.parametrize("requests", [planted_run(1)[0], "{}", b"\x80"], ids=["dict", "str", "bytes"])
def test_one_request_where_the_list_belongs_is_refused(requests: Any) -> None:
    """Never read as a list of its keys (or characters, or bytes): the core refuses it, coded, at requests."""
    with pytest.raises(pa.AssemblyError) as e:
        pa.cache_report(requests)
    assert (e.value.code, e.value.path) == ("malformed_request", "requests")
    if isinstance(requests, dict):
        assert e.value.message == (
            "expected a list of requests (a list), found one request (a dict): give the run's requests in a list, in call order"
        )


def _nested_usage(n: int) -> Any:
    v: Any = "leaf"
    for _ in range(n):
        v = [v]
    return v


OVER = (
    "a count of tokens over 2^53 − 1 (9007199254740991), more than any provider records and more than every host "
    "holds exactly; give the provider's recorded usage as it is"
)


@pytest.mark.parametrize(
    "usage, path, message",
    [
        ({"cache_read_input_tokens": 2**64}, "usage.cache_read_input_tokens", OVER),
        ({"cache_read_input_tokens": 2**64 - 1}, "usage.cache_read_input_tokens", OVER),
        ({"usage": {"prompt_tokens_details": {"cached_tokens": 2**53}}}, "usage.usage.prompt_tokens_details.cached_tokens", OVER),
        ({1: 2, "cache_read_input_tokens": 5}, "usage", "dict keys must be str, found an int"),
        ({"x": _nested_usage(65)}, "usage.x" + "[0]" * 65, "this value nests deeper than 64 levels"),
    ],
)
def test_an_unreadable_usage_is_its_call_s_invalid_usage(usage: Any, path: str, message: str) -> None:
    run = planted_run(3)
    report = pa.cache_report(run, [None, usage, {"cache_read_input_tokens": 7}])
    assert report["calls"][1]["usage"] == {
        "cached_tokens": None,
        "written_tokens": None,
        "class": "invalid_usage",
        "error": {"code": "malformed_request", "message": message, "path": path},
    }
    assert report["calls"][2]["usage"] == {"cached_tokens": 7, "written_tokens": None, "class": "hit"}
    assert report["totals"]["usage_errors"] == 1


def test_a_count_up_to_2_53_minus_1_comes_back_exactly() -> None:
    run = planted_run(2)
    for n in (2**53 - 1, 2**53 - 2, 2**40 + 1):
        report = pa.cache_report(run, [None, {"cache_read_input_tokens": n}])
        assert report["calls"][1]["usage"] == {"cached_tokens": n, "written_tokens": None, "class": "hit"}


def _nested(n: int) -> Any:
    v: Any = "leaf"
    for _ in range(n):
        v = [v]
    return v


@pytest.mark.parametrize("n", [65, 70, 100, 200])
def test_a_body_deeper_than_64_is_the_core_s_error(n: int) -> None:
    # One verdict on every host: the value 65 levels into the field, at its path (as the CLI and JS say).
    req = planted_run(1)[0]
    assert '"leaf"' in json.dumps(pa.export(req, "openai-chat", body={"x": _nested(64)}))
    with pytest.raises(pa.AssemblyError) as e:
        pa.export(req, "openai-chat", body={"x": _nested(n)})
    assert (e.value.code, e.value.path, e.value.message) == (
        "malformed_request",
        "options.body.x" + "[0]" * 65,
        "this value nests deeper than 64 levels",
    )


@pytest.mark.parametrize("ok", [False, True, None, 0])
def test_a_body_field_named_ok_is_the_body_s(ok: Any) -> None:
    # An export answer is judged by its "error" key only (docs/SPEC.md §7.13), as on every host.
    req = planted_run(1)[0]
    assert list(pa.export(req, "openai-chat", body={"model": "m", "ok": ok}).items())[:2] == [("model", "m"), ("ok", ok)]
    assert pa.Assembler().prompt(req).export("anthropic", body={"ok": ok, "max_tokens": 8})["ok"] == ok


VECTORS = [
    case
    for name in ("export.json", "export-long.json")
    for case in json.loads((REPO / "testdata" / "export-vectors" / name).read_text(encoding="utf-8"))["cases"]
]


def test_every_export_vector() -> None:
    assert len(VECTORS) >= 200
    for case in VECTORS:
        options = msgpack.unpackb(base64.b64decode(case["options"]))
        request = base64.b64decode(case["request"])
        if "error" in case:
            with pytest.raises(pa.AssemblyError) as e:
                pa.export(request, case["provider"], **options)
            assert (e.value.code, e.value.path) == (case["error"]["code"], case["error"]["path"]), case["name"]
            if "message" in case["error"]:  # a provider rule's refusal, worded by docs/SPEC.md §7.13
                assert e.value.message == case["error"]["message"], case["name"]
        else:
            got = pa.export(request, case["provider"], **options)
            assert json.dumps(got, ensure_ascii=False, separators=(",", ":")) == case["answer"], case["name"]


def texts_of(body: Dict[str, Any]) -> List[str]:
    msgs = [{"content": body.get("system", [])}] if body.get("system") else []
    return [b["text"] for m in msgs + body.get("messages", body.get("input", [])) for b in m["content"]]


@settings(max_examples=2000, deadline=None)
@given(any_request())
def test_export_keeps_every_text(req: Dict[str, Any]) -> None:
    try:
        resp = pa.assemble(req)
    except pa.AssemblyError:
        return
    want = [b["text"] for m in resp["messages"] for b in m["content"]]
    for provider in ("anthropic", "openai-chat", "openai-responses"):
        try:
            body = pa.export(req, provider)  # type: ignore[arg-type]
        except pa.AssemblyError as e:
            # a system message after another role, or a provider rule (docs/SPEC.md §7.13): Anthropic's at
            # a text of the request or the request, OpenAI Chat's (no message) at the request
            assert e.code == "malformed_request"
            if provider == "anthropic":
                assert e.path == "request" or e.path.startswith("request.")
            else:
                assert provider == "openai-chat" and e.path == "request" and not want
            continue
        assert texts_of(body) == want
        assert json.dumps(body).count('"cache_control"') <= 4
