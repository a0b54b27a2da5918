"""The data adapters under hostile input (issue 44): rows in the documented order, run ids told apart by
type, one reading of a request's bytes in every entry point, no raise mid-iteration for a bad row, and a
run met again refused at every batch size."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import msgpack
import pytest

import polyloop_assembly as pa
from polyloop_assembly import data


def _msg(role: str, text: str) -> Dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def _req(goal: str, steps: int) -> Dict[str, Any]:
    return {
        "goal_messages": [_msg("user", goal)],
        "steps": [{"raw_output": "step %d" % i, "observation": "seen %d" % i} for i in range(steps)],
        "observation_template": "{observation}",
    }


BAD = {"observation_template": 5}  # not a str: malformed_request at observation_template


def test_run_rows_come_in_order_of_their_last_call() -> None:
    # Calls 0-1 a chain, 2 invalid, 3 a new goal (a break), 4 invalid, 5 extends 3, 6 invalid at the end.
    calls = [_req("a", 1), _req("a", 2), BAD, _req("b", 1), BAD, _req("b", 2), BAD]
    rows = list(data.run_rows(("r", c) for c in calls))
    assert [(r["first_call"], r["last_call"], r["ok"]) for r in rows] == [
        (0, 1, True),
        (2, 2, False),
        (4, 4, False),
        (3, 5, True),
        (6, 6, False),
    ]


def test_run_ids_equal_in_value_but_not_in_type_are_three_runs() -> None:
    calls = [(1, _req("a", 1)), (True, _req("a", 2)), (1.0, _req("a", 3))]
    rows = list(data.run_rows(calls))
    assert [(type(r["run_id"]), r["first_call"]) for r in rows] == [(int, 0), (bool, 0), (float, 0)]
    rows = list(data.cache_rows(calls))
    assert [(type(r["run_id"]), r["call_index"], r["previous_call"]) for r in rows] == [
        (int, 0, None),
        (bool, 0, None),
        (float, 0, None),
    ]
    with pytest.raises(ValueError, match="not together"):
        list(data.run_rows([(1, _req("a", 1)), (True, _req("a", 1)), (1, _req("a", 2))]))


@pytest.mark.parametrize("batch_size", [1, 2, 3, 4])
def test_cache_rows_adapter_refuses_interleaved_runs_at_every_batch_size(batch_size: int) -> None:
    ids = ["a", "b", "a", "b"]
    requests = [json.dumps(_req(i, 1 + k)) for k, i in enumerate(ids)]
    adapter = data.CacheRows()
    with pytest.raises(ValueError, match="not together"):
        for start in range(0, len(ids), batch_size):
            adapter({"run_id": ids[start : start + batch_size], "request": requests[start : start + batch_size]})


@pytest.mark.parametrize("form", ["json bytes", "msgpack bytes", "msgpack str of json", "str"])
def test_a_request_s_bytes_are_read_by_one_rule_everywhere(form: str) -> None:
    reqs = [_req("a", 1), _req("a", 2)]
    encode = {
        "json bytes": lambda r: json.dumps(r).encode(),
        "msgpack bytes": msgpack.packb,
        "msgpack str of json": lambda r: msgpack.packb(json.dumps(r)),
        "str": json.dumps,
    }[form]
    given = [encode(r) for r in reqs]
    report = pa.cache_report(given)
    assert [("error" in c, c.get("extends")) for c in report["calls"]] == [(False, False), (False, True)]
    rows = list(data.run_rows(("r", g) for g in given))
    want = list(data.run_rows(("r", r) for r in reqs))
    assert rows == want and rows[0]["ok"]
    rows = list(data.cache_rows((("r", g, None) for g in given), tokenizer=len))
    assert rows == list(data.cache_rows((("r", r, None) for r in reqs), tokenizer=len))
    assert rows[1]["cacheable_prefix_tokens"] > 0 and rows[1]["error_code"] is None


def test_cache_rows_never_raises_for_a_bad_row() -> None:
    bad: List[Any] = [b"{not json", b"\xc1", b"", "[", msgpack.packb([1]), BAD]
    rows = list(data.cache_rows((("r", b, None) for b in bad + [_req("a", 1)]), tokenizer=len))
    assert [r["error_code"] is not None for r in rows] == [True] * len(bad) + [False]
    rows = list(data.run_rows(("r", b) for b in bad + [_req("a", 1)]))
    assert [r["ok"] for r in rows] == [False] * len(bad) + [True]


def test_one_request_where_the_list_belongs_is_refused_at_requests() -> None:
    with pytest.raises(pa.AssemblyError) as e:
        pa.cache_report(_req("a", 1))  # type: ignore[arg-type]
    assert (e.value.code, e.value.path) == ("malformed_request", "requests")
