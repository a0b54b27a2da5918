"""Usage reconciled as data-set columns (issue 35, item 3): ``data.cache_rows`` and ``data.CacheRows`` over
planted runs, against an independent oracle: each prompt assembled by the pure-Python reference
(``testdata/gen/reference.py``, no code shared with the core), the previous prompt compared here by hand, and
the breaks, causes and usage classes checked against what was planted (an injection edited, a whitespace
change in a run message, the history condensed, a provider miss with an unchanged prefix), with recorded usage
in Anthropic's, OpenAI's (Chat Completions, Responses) and DeepSeek's field names."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Tuple

import pytest

from polyloop_assembly import data


def load_reference() -> Any:
    """testdata/gen/reference.py by path (conftest's loader, which tests_data cannot import by that name)."""
    import importlib.util
    import sys
    from pathlib import Path

    if "polyloop_reference" not in sys.modules:
        path = Path(__file__).resolve().parents[3] / "testdata" / "gen" / "reference.py"
        spec = importlib.util.spec_from_file_location("polyloop_reference", path)
        assert spec is not None and spec.loader is not None
        sys.modules["polyloop_reference"] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules["polyloop_reference"]


PROVIDERS = ("anthropic", "openai-chat", "openai-responses", "deepseek")
CALLS = 24
# What is planted in every run, at these calls (shifted by the run's number), and what the report must say.
INJECTION, RUN_SPACE, CONDENSED, MISS, NO_USAGE = 5, 10, 15, 19, 21
PLANTED = {
    INJECTION: ("injections", "injections_changed"),
    RUN_SPACE: ("run", "run_changed"),
    CONDENSED: ("history", "history_rewritten"),
}
INVALID = 8  # run 1's call 8 is an invalid request (a template without {observation})


def _msg(role: str, text: str) -> Dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def planted_request(run: int, call: int) -> Dict[str, Any]:
    steps = [
        {"raw_output": "Thought %d.\nAction: look(%d)" % (s, s), "observation": "résultat %d\u2028ok" % s}
        for s in range(call + 1)
    ]
    if call >= CONDENSED:  # one summary in place of the first ten steps
        steps = [{"raw_output": "Summary of steps 0-9.", "observation": "condensed"}] + steps[10:]
    return {
        "run_messages": [_msg("system", "You are agent %d." % run + (" " if call >= RUN_SPACE else ""))],
        "injections": {
            "memory": [{"entry_id": "m1", "content": "Prefer %s units." % ("imperial" if call >= INJECTION else "metric")}]
        },
        "goal_messages": [_msg("user", "Task %d: find the price." % run)],
        "steps": steps,
        "observation_template": "Observation: {observation}",
    }


def recorded_usage(provider: str, prompt_tokens: int, cached: int, whole: bool) -> Dict[str, Any]:
    """A provider's usage object in its own field names (``whole``: inside a whole response)."""
    if provider == "anthropic":
        usage: Dict[str, Any] = {"input_tokens": prompt_tokens - cached, "cache_read_input_tokens": cached}
        usage.update(cache_creation_input_tokens=prompt_tokens - cached, output_tokens=7)
    elif provider == "openai-chat":
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": cached}}
    elif provider == "openai-responses":
        usage = {"input_tokens": prompt_tokens, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": 7}
    else:  # DeepSeek
        usage = {
            "prompt_tokens": prompt_tokens,
            "prompt_cache_hit_tokens": cached,
            "prompt_cache_miss_tokens": prompt_tokens - cached,
        }
    return {"id": "resp", "usage": usage} if whole else usage


def planted_calls(runs: int, *, whole: bool = True) -> List[Tuple[str, Any, Any]]:
    """``(run_id, request, usage)`` for ``runs`` runs of :data:`CALLS` calls; the request as JSON text, the
    usage as a fake provider records it: a cached count wherever the prefix was kept (a quarter of the
    previous prompt's characters), nothing read at the run-message and history breaks and at the planted
    miss, a partial read at the injection edit (the run segment stays cached), none recorded at NO_USAGE."""
    out = []
    for run in range(runs):
        provider = PROVIDERS[run % len(PROVIDERS)]
        for call in range(CALLS):
            request: Any = json.dumps(planted_request(run, call), ensure_ascii=False)
            if run == 1 and call == INVALID:
                request = json.dumps(dict(planted_request(run, call), observation_template="no placeholder"))
            prompt = 100 + 40 * call
            cached = 0 if call in (0, RUN_SPACE, CONDENSED, MISS) else (5 if call == INJECTION else 25 + 10 * call)
            usage = None if call == NO_USAGE else recorded_usage(provider, prompt, cached, whole and call % 2 == 0)
            out.append(("run-%d" % run, request, usage))
    return out


def _texts(request: str) -> Optional[Tuple[List[Tuple[str, str]], Dict[str, int]]]:
    """The reference's prompt: (role, text) per message and the segment ends; None for an invalid request."""
    ref = load_reference()
    req = json.loads(request)
    if "{observation}" not in req["observation_template"]:
        return None
    messages = [(m["role"], "".join(b["text"] for b in m["content"])) for m in ref.assemble(req)["messages"]]
    ends = {"run": len(req["run_messages"]), "injections": len(req["run_messages"]) + len(req["injections"]["memory"])}
    ends["goal"] = ends["injections"] + len(req["goal_messages"])
    return messages, ends


def oracle(calls: List[Tuple[Any, ...]]) -> List[Dict[str, Any]]:
    """The rows, by hand: each valid call compared with the run's last valid one on the reference's texts."""
    rows: List[Dict[str, Any]] = []
    prev: Dict[str, Tuple[int, List[Tuple[str, str]]]] = {}
    index: Dict[str, int] = {}
    for item in calls:
        run_id, request, usage = item if len(item) == 3 else (*item, None)
        call = index[run_id] = index.get(run_id, -1) + 1
        row: Dict[str, Any] = dict.fromkeys(data.CACHE_COLUMNS)
        row.update(run_id=run_id, call_index=call)
        prompt = _texts(request)
        if prompt is None:
            row.update(error_code="invalid_template", error_path="observation_template")
            rows.append(row)
            continue
        cur, ends = prompt
        row["prompt_chars"] = sum(len(t) for _, t in cur)
        p = prev.get(run_id)
        if p is None:
            row.update(extends=False, cacheable_prefix_chars=0)
        else:
            row["previous_call"], before = p
            if cur[: len(before)] == before:
                row.update(extends=True, cacheable_prefix_chars=sum(len(t) for _, t in before))
            else:
                m = next(i for i in range(len(cur)) if cur[i] != before[i])
                char = len(os.path.commonprefix([cur[m][1], before[m][1]]))
                segment = next((s for s in ("run", "injections", "goal") if cur[: ends[s]] != before[: ends[s]]), "history")
                row.update(extends=False, cacheable_prefix_chars=sum(len(t) for _, t in cur[:m]) + char)
                row.update(break_segment=segment, break_message=m, break_char=char)
                row["break_cause"] = "history_rewritten" if segment == "history" else segment + "_changed"
                row["break_step"] = (m - ends["goal"]) // 2 if segment == "history" else None
        if usage is not None:
            u = usage.get("usage", usage)
            cached = max(u.get("cache_read_input_tokens", 0), u.get("prompt_cache_hit_tokens", 0))
            cached = max(cached, u.get("prompt_tokens_details", u.get("input_tokens_details", {})).get("cached_tokens", 0))
            written = u.get("cache_creation_input_tokens")  # the only field of writes these usages hold
            first, broke = p is None, row["break_cause"] is not None
            cls = (
                "first"
                if first
                else "hit"
                if cached
                else "prefix_break"
                if broke
                else "write_only"
                if written
                else "provider_miss"
            )
            row.update(usage_class=cls, cached_tokens=cached, written_tokens=written)
            row["input_tokens"] = u.get("input_tokens", u.get("prompt_tokens"))
        elif len(item) == 3:
            row["usage_class"] = "no_usage"
        prev[run_id] = (call, cur)
        rows.append(row)
    return rows


def comparable(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The rows without the error message (the oracle knows the code and path, not the core's wording)."""
    return [{k: v for k, v in r.items() if k != "error_message"} for r in rows]


def test_planted_breaks_and_usage_classes_are_exactly_the_planted() -> None:
    calls = planted_calls(8)
    rows = list(data.cache_rows(calls, window=5))
    assert comparable(rows) == comparable(oracle(calls))
    for run in range(8):
        mine = [r for r in rows if r["run_id"] == "run-%d" % run]
        breaks = {r["call_index"]: (r["break_segment"], r["break_cause"]) for r in mine if r["break_cause"]}
        assert breaks == PLANTED, run
        classes = {r["call_index"]: r["usage_class"] for r in mine if r["usage_class"] not in ("hit", None)}
        assert classes == {
            0: "first",
            RUN_SPACE: "prefix_break",
            CONDENSED: "prefix_break",
            MISS: "write_only" if PROVIDERS[run % len(PROVIDERS)] == "anthropic" else "provider_miss",  # it wrote again
            NO_USAGE: "no_usage",
        }
        assert mine[INJECTION]["usage_class"] == "hit" and mine[INJECTION]["cached_tokens"] == 5  # the run segment read
        assert mine[MISS]["extends"] is True and mine[MISS]["cached_tokens"] == 0  # prefix kept, nothing read
    bad = rows[CALLS + INVALID]
    assert (bad["run_id"], bad["error_code"], bad["extends"]) == ("run-1", "invalid_template", None)
    assert rows[CALLS + INVALID + 1]["previous_call"] == INVALID - 1  # compared with the last valid call


def test_input_tokens_are_the_provider_s_as_recorded() -> None:
    """Anthropic's input_tokens leave the cached ones out; OpenAI's and DeepSeek's prompt/input count them."""
    calls = planted_calls(4)
    rows = list(data.cache_rows(calls))
    at = 3  # 100 + 40 * 3 prompt tokens, 25 + 10 * 3 cached
    assert [(r["input_tokens"], r["cached_tokens"]) for r in rows[at::CALLS]] == [(165, 55), (220, 55), (220, 55), (220, 55)]


def test_windows_and_pairs() -> None:
    calls = planted_calls(3)
    whole = list(data.cache_rows(calls, window=10_000))
    assert list(data.cache_rows(calls, window=1)) == whole == list(data.cache_rows(calls, window=7))
    pairs = list(data.cache_rows([(run, request) for run, request, _ in calls], window=3))
    assert comparable(pairs) == comparable(oracle([(run, request) for run, request, _ in calls]))
    assert {r["usage_class"] for r in pairs} == {None}


def test_an_invalid_usage_is_its_row_s_error_and_no_other() -> None:
    calls = planted_calls(1, whole=False)
    calls[3] = (calls[3][0], calls[3][1], [1, 2])  # a list, not a usage object
    calls[4] = (calls[4][0], calls[4][1], "cached: 4")
    rows = list(data.cache_rows(calls, window=6))
    want = comparable(oracle(planted_calls(1, whole=False)))
    got = comparable(rows)
    for k in (3, 4):
        assert (got[k]["error_code"], got[k]["error_path"], got[k]["usage_class"]) == (
            "malformed_request",
            "usage",
            "invalid_usage",
        )
        assert got[k]["extends"] is True and got[k]["cacheable_prefix_chars"] == want[k]["cacheable_prefix_chars"]
        assert "usage" in rows[k]["error_message"]
    assert got[:3] + got[5:] == want[:3] + want[5:]


def test_an_unreadable_usage_value_is_its_row_s_error_and_no_other() -> None:
    """A count past what the report holds exactly (2^53 - 1), past 64 bits, an int key: that row's
    invalid_usage at the value's path, never every row of the window."""
    calls = planted_calls(1, whole=False)
    calls[2] = (calls[2][0], calls[2][1], {"cache_read_input_tokens": 2**64})
    calls[3] = (calls[3][0], calls[3][1], {"prompt_cache_hit_tokens": 2**53})
    calls[4] = (calls[4][0], calls[4][1], {1: 2, "cache_read_input_tokens": 4})
    rows = list(data.cache_rows(calls, window=6))
    want = comparable(oracle(planted_calls(1, whole=False)))
    got = comparable(rows)
    for k, path in ((2, "usage.cache_read_input_tokens"), (3, "usage.prompt_cache_hit_tokens"), (4, "usage")):
        assert (got[k]["error_code"], got[k]["error_path"], got[k]["usage_class"]) == ("malformed_request", path, "invalid_usage")
        assert got[k]["extends"] is True and got[k]["cacheable_prefix_chars"] == want[k]["cacheable_prefix_chars"]
    assert "2^53" in rows[2]["error_message"] and "2^53" in rows[3]["error_message"]
    assert got[:2] + got[5:] == want[:2] + want[5:]


def test_a_run_met_again_is_an_error() -> None:
    calls = planted_calls(2)
    with pytest.raises(ValueError, match="sort the calls by run id"):
        list(data.cache_rows(calls[:3] + calls[CALLS : CALLS + 2] + calls[3:5]))


def test_tokenizer_counts_the_cacheable_prefix_text() -> None:
    """The tokenizer sees the text the reference's prompt shares with the previous one (the previous prompt
    whole when it extends), and its count is the column, beside the characters."""
    calls = planted_calls(2)
    seen: List[str] = []

    def tokenizer(text: str) -> List[str]:
        seen.append(text)
        return text.split()

    rows = list(data.cache_rows(calls, tokenizer=tokenizer, window=4))
    want: List[str] = []
    prev: Dict[str, str] = {}
    for run_id, request, _ in calls:
        prompt = _texts(request)
        if prompt is None:
            continue
        text = "".join(t for _, t in prompt[0])
        if run_id in prev:
            want.append(os.path.commonprefix([prev[run_id], text]))
        prev[run_id] = text
    assert seen == want and all(want)
    assert [r["cacheable_prefix_tokens"] for r in rows if r["previous_call"] is not None] == [len(t.split()) for t in want]
    assert [r["cacheable_prefix_tokens"] for r in rows if r["call_index"] == 0] == [0, 0]
    assert list(rows[0])[list(rows[0]).index("cacheable_prefix_chars") + 1] == "cacheable_prefix_tokens"
    with pytest.raises(TypeError, match="tok.encode"):
        list(data.cache_rows(calls[:2], tokenizer=lambda text: {"input_ids": [1]}))  # type: ignore[arg-type, return-value]


def test_batches_of_every_form_give_the_serial_rows() -> None:
    """CacheRows over a Table, a DataFrame, NumPy and lists, the rows shuffled within the batch and put in
    call order by the call column: the serial rows, in the batch's own order, typed by cache_arrow_schema."""
    pyarrow = pytest.importorskip("pyarrow")
    import random

    calls = planted_calls(4, whole=False)
    want = list(data.cache_rows(calls))
    order = list(range(len(calls)))
    random.Random(35).shuffle(order)
    cols = {"run_id": [calls[i][0] for i in order], "step": [want[i]["call_index"] for i in order]}
    cols.update(request=[calls[i][1] for i in order], usage=[calls[i][2] for i in order])
    table = pyarrow.table(cols)
    adapter = data.CacheRows(usage="usage", call="step")
    for batch in (table, table.to_pandas(), {k: table.column(k).to_numpy(zero_copy_only=False) for k in cols}, cols):
        out = data.CacheRows(usage="usage", call="step")(batch)
        out = out if hasattr(out, "to_pylist") else pyarrow.Table.from_pandas(out, preserve_index=False)
        assert out.schema.names == list(cols) + list(data.CACHE_COLUMNS), type(batch)
        assert out.select(list(data.CACHE_COLUMNS)).schema == data.cache_arrow_schema()
        got = out.to_pylist()
        assert [{k: g[k] for k in want[0]} for g in got] == [want[i] for i in order]
    with pytest.raises(ValueError, match="already has"):
        adapter(out)
    with pytest.raises(TypeError, match="batched=True"):
        adapter({"run_id": "a", "request": "{}", "usage": None, "step": 0})


def test_a_run_goes_on_across_batches() -> None:
    """Batches of one call (``batch_size=1``) give the rows of the whole run; a new map from index 0 starts
    afresh."""
    calls = planted_calls(2)
    want = list(data.cache_rows(calls))
    adapter = data.CacheRows(usage="usage")
    for _ in range(2):
        got = []
        for i, (run, request, usage) in enumerate(calls):
            out = adapter({"run_id": [run], "request": [request], "usage": [usage]}, indices=[i])
            got.append({k: out.column(k)[0].as_py() for k in data.CACHE_COLUMNS})
        assert got == [{k: r[k] for k in data.CACHE_COLUMNS} for r in want]


def test_the_example_names_the_planted_break_and_the_miss(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """examples/caching/usage_columns.py: the made-up log, and the same log read back from a JSON-lines file."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "examples" / "caching" / "usage_columns.py"
    spec = importlib.util.spec_from_file_location("usage_columns", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    log = tmp_path / "calls.jsonl"
    log.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in example.made_up_log()), encoding="utf-8")
    for args in ([], [str(log)]):
        assert example.main(*args) == 0
        lines = [line.split() for line in capsys.readouterr().out.splitlines()]
        assert [line[:3] for line in lines[1:3]] == [["run-a", "4", "prefix_break"], ["run-b", "3", "provider_miss"]]
        assert lines[1][5:7] == ["injections:", "injections_changed"]
