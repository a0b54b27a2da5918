"""Runs into training rows (issue 34, item 3): 1,000 synthetic runs of 5 to 40 calls, 5 % of them with a
condensed history; ``data.run_rows`` gives exactly the chains planted, each row the assembled messages of its
last call (TRL's ``{role, content: str}``), and every covered call's prompt a prefix of the row's (checked
here on the assembled messages, independently of the core's verdicts the row carries)."""

from __future__ import annotations

import json
import random
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import polyloop_assembly as pa
from polyloop_assembly import _codec, data

RUNS = 1000
TEXTS = ["ls -la", "cat a.txt", "line\u2028sep", "para\u2029sep", "nel\x85x", "cr\rlf\r\n", "é中😀", ""]


def _msg(role: str, text: str) -> Dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def planted_runs(seed: int = 34) -> Tuple[List[Tuple[int, Any]], Dict[int, List[Tuple[int, int]]]]:
    """The calls of every run in call order (run id, request) and each run's planted chains (first, last)."""
    r = random.Random(seed)
    condensed = set(r.sample(range(RUNS), RUNS // 20))  # 5 %
    calls: List[Tuple[int, Any]] = []
    chains: Dict[int, List[Tuple[int, int]]] = {}
    for run in range(RUNS):
        n = r.randint(5, 40)
        at = r.randint(1, n - 1) if run in condensed else None
        base = {
            "run_messages": [_msg("system", "agent %d" % (run % 7))],
            "goal_messages": [_msg("user", "task %d %s" % (run, r.choice(TEXTS)))],
            "observation_template": "Observation: {observation}",
        }
        steps: List[Dict[str, str]] = []
        for i in range(n):
            if i == at:  # the history condensed: one summary step in place of those before
                steps = [{"raw_output": "summary of %d steps" % len(steps), "observation": "condensed"}]
            steps.append({"raw_output": "%s %d" % (r.choice(TEXTS), i), "observation": r.choice(TEXTS) * r.randint(0, 3)})
            request: Any = dict(base, steps=list(steps))
            kind = r.random()
            if kind < 0.1:
                request = json.dumps(request, ensure_ascii=False)
            elif kind < 0.2:
                request = _codec.encode(request)
            calls.append((run, request))
        chains[run] = [(0, n - 1)] if at is None else [(0, at - 1), (at, n - 1)]
    return calls, chains


def _chat(messages: List[Any]) -> List[Dict[str, str]]:
    """The oracle of TRL's form: each message's block texts joined, by hand."""
    return [{"role": m["role"], "content": "".join(b["text"] for b in m["content"])} for m in messages]


def _assembled(request: Any) -> Any:
    if isinstance(request, str):
        return pa.assemble_json(request)
    if isinstance(request, bytes):
        return pa.default_assembler().call("assemble", request)
    return pa.assemble(request)


def test_runs_become_exactly_the_planted_chains() -> None:
    calls, chains = planted_runs()
    by_run: Dict[int, List[Any]] = {}
    for run, request in calls:
        by_run.setdefault(run, []).append(request)
    rows = list(data.run_rows(iter(calls)))
    assert [tuple(r) for r in rows] and all(list(r) == list(data.RUN_COLUMNS) for r in rows)
    got: Dict[int, List[Tuple[int, int]]] = {}
    for row in rows:
        got.setdefault(row["run_id"], []).append((row["first_call"], row["last_call"]))
    assert got == chains
    assert sum(len(c) for c in chains.values()) == RUNS + RUNS // 20
    for row in rows:
        run, first, last = row["run_id"], row["first_call"], row["last_call"]
        requests = by_run[run]
        assert row["ok"] is True and row["calls"] == list(range(first, last + 1))
        want = _assembled(requests[last])
        assert row["messages"] == _chat(want["messages"])  # byte-identical to assembling its last call
        assert row["message_chars"] == want["message_chars"] and row["prompt_chars"] == want["prompt_chars"]
        assert row["model_output"] == [m["role"] == "assistant" for m in want["messages"]]
        assert [len(m["content"]) for m in row["messages"]] == want["message_chars"]
        assert row["proof"] == [{"call": c, "previous": c - 1, "extends": True} for c in range(first + 1, last + 1)]
        if first == 0:
            assert row["break"] is None
        else:
            assert row["break"]["cause"] == "history_rewritten" and row["break"]["segment"] == "history"
            assert row["break"]["message"] == 2 and row["break"]["step"] == 0  # the first step's message
        for c in row["calls"]:  # every covered call's prompt a prefix of the row's
            prefix = _assembled(requests[c])["messages"]
            assert want["messages"][: len(prefix)] == prefix


def test_run_rows_is_lazy_and_reads_one_run_at_a_time() -> None:
    calls, chains = planted_runs()
    pulled = [0]

    def source() -> Iterator[Tuple[int, Any]]:
        for c in calls:
            pulled[0] += 1
            yield c

    rows = data.run_rows(source(), window=4)
    first = next(rows)
    first_run = sum(1 for run, _ in calls if run == 0)
    assert first["run_id"] == 0 and pulled[0] <= first_run + 1  # run 0 and the call that ends it
    assert len(list(rows)) + 1 == sum(len(c) for c in chains.values())


def test_windows_do_not_change_the_rows() -> None:
    calls, _ = planted_runs()
    calls = calls[:400]
    assert list(data.run_rows(calls, window=1)) == list(data.run_rows(calls, window=7)) == list(data.run_rows(calls))


def test_an_invalid_call_is_its_own_row_and_the_chain_goes_on() -> None:
    base = {"goal_messages": [_msg("user", "go")], "observation_template": "{observation}"}
    steps = [{"raw_output": "r%d" % i, "observation": "o%d" % i} for i in range(3)]
    calls = [("x", dict(base, steps=steps[:1])), ("x", {"oops": 1}), ("x", dict(base, steps=steps[:2]))]
    calls += [("x", dict(base, steps=steps[:3]))]
    rows = list(data.run_rows(calls))
    assert [(r["first_call"], r["last_call"], r["ok"]) for r in rows] == [(1, 1, False), (0, 3, True)]
    assert (rows[0]["error_code"], rows[0]["error_path"]) == ("unknown_field", "oops")
    assert rows[1]["calls"] == [0, 2, 3] and rows[1]["proof"][0] == {"call": 2, "previous": 0, "extends": True}


def test_a_run_met_again_is_an_error() -> None:
    req = {"observation_template": "{observation}"}
    with pytest.raises(ValueError, match="sort the calls by run id"):
        list(data.run_rows([("a", req), ("b", req), ("a", req)]))


def test_the_batched_adapter_gives_the_same_rows() -> None:
    """RunRows over one Arrow batch per run (Ray's map_groups), its rows shuffled and put back in order by the
    call column: the rows of run_rows, typed by run_arrow_schema whatever the batch holds."""
    pyarrow = pytest.importorskip("pyarrow")
    calls, _ = planted_runs()
    calls = [(run, req) for run, req in calls if run < 60]
    want = list(data.run_rows(calls))
    adapter = data.RunRows(call="step")
    r = random.Random(3)
    got: List[Dict[str, Any]] = []
    for run in range(60):
        rows = [(k, req) for k, (rid, req) in enumerate(c for c in calls if c[0] == run)]
        r.shuffle(rows)
        texts = [_as_json(req) for _, req in rows]  # one str column: every request as its JSON text
        out = adapter(pyarrow.table({"run_id": [run] * len(rows), "step": [k for k, _ in rows], "request": texts}))
        assert out.schema == data.run_arrow_schema(pyarrow.int64())
        got.extend(out.to_pylist())
    assert got == want
    with pytest.raises(ValueError, match="whole runs"):
        adapter(pyarrow.table({"run_id": [59], "step": [0], "request": ["{}"]}))


def _as_json(request: Any) -> str:
    if isinstance(request, bytes):
        import msgpack

        return json.dumps(msgpack.unpackb(request, raw=False), ensure_ascii=False)
    return request if isinstance(request, str) else json.dumps(request, ensure_ascii=False)


def test_run_rows_arrow_schema_has_no_null_type() -> None:
    pyarrow = pytest.importorskip("pyarrow")
    schema = data.run_arrow_schema()
    assert schema.names == list(data.RUN_COLUMNS)
    assert not any(pyarrow.types.is_null(f.type) for f in schema)
    errors = data.RunRows()({"run_id": ["a", "a"], "request": ["{", "[]"]})
    assert errors.schema == schema and errors.column("ok").to_pylist() == [False, False]
