"""The agent loop end to end (issue 41): a Prompt exported as it grows, and each call's cache verdict as it happens,
equal to what the batch functions answer for the equivalent requests."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import pytest

import polyloop_assembly as pa

PROVIDERS = ["anthropic", "openai-chat", "openai-responses"]


def _request(steps: List[Dict[str, str]], memo: str) -> Dict[str, Any]:
    return {
        "run_messages": [{"role": "system", "content": [{"type": "text", "text": "You are a careful agent."}]}],
        "injections": {"memory": [{"entry_id": "m1", "content": memo}]},
        "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "Count the files in /data, café."}]}],
        "steps": steps,
        "observation_template": "Output:\n{observation}",
    }


def _step(i: int) -> Dict[str, str]:
    return {"raw_output": "Thought %d.\nAction: ls /data/%d" % (i, i), "observation": "%d files ✓" % (i * 7)}


def _usage(cached: int) -> Dict[str, Any]:
    return {"input_tokens": 900, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0, "output_tokens": 12}


def test_a_40_step_loop_verdicts_equal_the_report() -> None:
    """Condensed at call 20, an injection edited at call 30, a provider miss planted at call 35: each verdict as it
    happens equals cache_report's entry over the recorded requests and usage; the breaks are at 20 and 30 only."""
    run = pa.CacheRun()
    steps: List[Dict[str, str]] = []
    memo = "Prefer metric units."
    prompt = pa.Prompt(_request([], memo))
    requests: List[Dict[str, Any]] = []
    usages: List[Dict[str, Any]] = []
    verdicts: List[Dict[str, Any]] = []
    for call in range(40):
        if call == 20:  # the loop condenses its history: a new Prompt
            steps = [{"raw_output": "Summary of steps 0-14.", "observation": "condensed"}] + steps[15:]
            prompt = pa.Prompt(_request(steps, memo))
        if call == 30:  # an injection is edited mid-run: a new Prompt
            memo = "Prefer imperial units."
            prompt = pa.Prompt(_request(steps, memo))
        if call > 0 and call not in (20, 30):
            s = _step(call)
            prompt.add_step(s["raw_output"], s["observation"])
            steps.append(s)
        usage = _usage(0 if call in (0, 20, 30, 35) else 500)
        requests.append(_request(list(steps), memo))
        usages.append(usage)
        verdicts.append(run.call(prompt, usage))
    report = pa.cache_report(requests, usages)
    assert verdicts == report["calls"]
    assert run.report() == report
    assert [i for i, v in enumerate(verdicts) if v["break"] is not None] == [20, 30]
    assert verdicts[20]["break"]["cause"] == "history_rewritten" and verdicts[20]["break"]["segment"] == "history"
    assert verdicts[30]["break"]["cause"] == "injections_changed" and verdicts[30]["break"]["segment"] == "injections"
    classes = [v["usage"]["class"] for v in verdicts]
    assert classes[0] == "first" and classes[35] == "provider_miss"
    assert classes[20] == classes[30] == "prefix_break"
    assert [i for i, c in enumerate(classes) if c not in ("hit",)] == [0, 20, 30, 35]
    assert all(v["extends"] for i, v in enumerate(verdicts) if i not in (0, 20, 30))


def test_requests_and_prompts_mix_in_one_run() -> None:
    """A run fed requests (dicts, JSON text), Prompts and a bad request answers what cache_report answers."""
    run = pa.CacheRun()
    prompt = pa.Prompt(_request([], "m"))
    sent: List[Any] = []
    for i in range(8):
        prompt.add_step(**_step(i))
        as_request = _request([_step(k) for k in range(i + 1)], "m")
        value: Any = [prompt, as_request, json.dumps(as_request), {"bad": 1}][i % 4]
        sent.append(as_request if i % 4 == 0 else value)
        run.call(value, None)
    assert run.report() == pa.cache_report(sent, [None] * len(sent))
    assert run.report()["totals"]["errors"] == 2


@pytest.mark.parametrize("steps", [10, 100, 1000])
def test_prompt_export_equals_export_of_the_request(steps: int) -> None:
    prompt = pa.Prompt(_request([], "Prefer metric units."))
    all_steps = []
    for i in range(steps):
        s = _step(i)
        prompt.add_step(s["raw_output"], s["observation"])
        all_steps.append(s)
    request = _request(all_steps, "Prefer metric units.")
    for provider in PROVIDERS:
        for options in ({}, {"ttl": "1h", "lookback": 3, "body": {"model": "m", "max_tokens": 5}}):
            want = pa.export(request, provider, **options)  # type: ignore[arg-type]
            got = prompt.export(provider, **options)  # type: ignore[arg-type]
            dumps = dict(ensure_ascii=False, separators=(",", ":"))
            assert json.dumps(got, **dumps) == json.dumps(want, **dumps)  # type: ignore[arg-type]
            assert pa.export(prompt, provider, **options) == want  # type: ignore[arg-type]
    got = prompt.export("anthropic")
    got["messages"].clear()  # the caller's to edit
    assert prompt.export("anthropic") == pa.export(request, "anthropic")


def test_a_prompt_is_taken_where_a_request_is() -> None:
    prompt = pa.Prompt(_request([_step(0)], "m"))
    request = _request([_step(0)], "m")
    assert pa.compare(prompt, request)["identical"]
    other = _request([_step(0)], "n")
    assert pa.compare(prompt, other) == pa.compare(request, other)
    assert pa.cache_report([prompt, other], None) == pa.cache_report([request, other], None)


def test_one_request_where_a_run_belongs_is_refused() -> None:
    with pytest.raises(pa.AssemblyError) as e:
        pa.cache_report(_request([], "m"))  # type: ignore[arg-type]
    assert e.value.code == "malformed_request" and e.value.path == "requests"


def test_a_run_whose_usage_cannot_be_read_counts_it() -> None:
    report = pa.cache_report([_request([], "m")] * 3, [{"cache_read_input_tokens": "x"}] * 3)
    assert report["totals"]["usage_errors"] == 3


def test_a_prompt_form_that_cannot_be_read_is_a_coded_error() -> None:
    bad: Optional[Dict[str, Any]] = {"messages": [], "segments": {"run_end": 1, "injections_end": 0, "goal_end": 0}}
    with pytest.raises(pa.AssemblyError) as e:
        pa.export(bad, "anthropic")
    assert e.value.code == "malformed_request" and e.value.path == "request.segments"


def test_the_caching_example_runs_and_the_readme_shows_its_lines(capsys: Any) -> None:
    """examples/caching/loop.py (the README's caching lines, each of them the example's own) runs on the anthropic
    client with a fake transport: the injection edit at call 6 and the condensed history at 9 are named, and the
    provider's own miss at 11."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    spec = importlib.util.spec_from_file_location("caching_loop", root / "examples" / "caching" / "loop.py")
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    calls = example.main()
    assert [(i, c["break"]["cause"]) for i, c in enumerate(calls) if c["break"]] == [
        (6, "injections_changed"),
        (9, "history_rewritten"),
    ]
    assert [i for i, c in enumerate(calls) if c["usage"]["class"] != "hit"] == [0, 11]
    readme = (root / "README.md").read_text(encoding="utf-8")
    block = readme.split("```python\nclient = anthropic", 1)[1].split("```", 1)[0]
    source = (root / "examples" / "caching" / "loop.py").read_text(encoding="utf-8")
    lines = [line.strip() for line in ("client = anthropic" + block).splitlines() if line.strip()]
    assert len(lines) == 10 and all(line in source for line in lines), [line for line in lines if line not in source]


def test_a_request_changed_after_its_call_is_compared_as_it_was() -> None:
    """The run keeps each request as it was at its call: editing the dict afterwards changes nothing."""
    run = pa.CacheRun()
    first = _request([_step(0)], "m")
    run.call(first, None)
    first["steps"].clear()  # the loop reuses its dict
    second = _request([_step(0), _step(1)], "n")
    entry = run.call(second, None)
    assert entry == pa.cache_report([_request([_step(0)], "m"), second], [None, None])["calls"][1]
    assert entry["break"] is not None and entry["break"]["cause"] == "injections_changed"


def test_an_entry_the_caller_edits_leaves_the_run_as_it_was() -> None:
    run = pa.CacheRun()
    prompt = pa.Prompt(_request([], "m"))
    for i in range(3):
        prompt.add_step(**_step(i))
        entry: Any = run.call(prompt, _usage(100))
        entry["usage"]["class"] = "edited"
        entry.clear()
    report = run.report()
    assert [c["usage"]["class"] for c in report["calls"]] == ["first", "hit", "hit"]  # type: ignore[index]
    report["groups"].clear()
    assert len(run.report()["groups"]) == 1


def test_a_prompt_where_the_run_belongs_is_refused_coded() -> None:
    with pytest.raises(pa.AssemblyError) as e:
        pa.cache_report(pa.Prompt(_request([], "m")))  # type: ignore[arg-type]
    assert (e.value.code, e.value.path) == ("malformed_request", "requests")
    assert "found one request" in e.value.message
