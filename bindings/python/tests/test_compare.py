"""compare() and data.CompareRecorded (docs/SPEC.md §7.9) against a plain
Python reference written from the spec: random requests, their rendered
messages recorded and then changed at a random place (a character replaced,
inserted or removed, a role changed, a block split, a message dropped)."""

from __future__ import annotations

import json
import random
from typing import Any, Dict, List, Optional

import pytest

import polyloop_assembly as pa
from polyloop_assembly.data import COMPARE_COLUMNS, CompareRecorded

ALPHABET = "ab é€😀\n\u202e"


def rand_text(r: random.Random) -> str:
    return "".join(r.choice(ALPHABET) for _ in range(r.randrange(0, 80)))


def rand_request(r: random.Random) -> Dict[str, Any]:
    def msgs() -> List[Dict[str, Any]]:
        return [
            {
                "role": r.choice(["system", "user", "assistant"]),
                "content": [{"type": "text", "text": rand_text(r)} for _ in range(r.randrange(1, 3))],
            }
            for _ in range(r.randrange(0, 3))
        ]

    inj = {
        c: [{"entry_id": c + str(k), "content": rand_text(r)} for k in range(r.randrange(0, 3))]
        for c in r.sample("bac", r.randrange(0, 3))
    }
    steps = [{"raw_output": rand_text(r), "observation": rand_text(r)} for _ in range(r.randrange(0, 4))]
    return {
        "v": 1,
        "run_messages": msgs(),
        "injections": inj,
        "goal_messages": msgs(),
        "steps": steps,
        "observation_template": "Obs {observation}",
    }


def segment_ends(req: Dict[str, Any]) -> List[int]:
    run = len(req["run_messages"])
    inj = run + sum(len(v) for v in req["injections"].values())
    return [run, inj, inj + len(req["goal_messages"])]


def reference(recorded: List[Dict[str, Any]], req: Dict[str, Any], rendered: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The comparison of docs/SPEC.md §7.9 for a recorded list (a) and a request (b)."""

    def blocks(m: Dict[str, Any]) -> List[str]:
        c = m["content"]
        return [c] if isinstance(c, str) else [b["text"] for b in c]

    a, b = [(m["role"], blocks(m)) for m in recorded], [(m["role"], blocks(m)) for m in rendered]
    ends = segment_ends(req)
    first: Optional[Dict[str, Any]] = None
    for i in range(max(len(a), len(b))):
        ra, ta = (a[i][0], "".join(a[i][1])) if i < len(a) else (None, None)
        rb, tb = (b[i][0], "".join(b[i][1])) if i < len(b) else (None, None)
        if ta is None or tb is None:
            kind, p = "length", 0
        elif ra != rb:
            kind, p = "role", 0
        elif ta != tb:
            kind, p = "text", next((k for k in range(min(len(ta), len(tb))) if ta[k] != tb[k]), min(len(ta), len(tb)))
        elif a[i][1] != b[i][1]:
            kind, p = "blocks", first_cut(a[i][1], b[i][1])
        else:
            continue
        common = (ta or tb or "")[:p]
        seg = "run" if i < ends[0] else "injections" if i < ends[1] else "goal" if i < ends[2] else "history"
        first = {
            "message": i, "char": p, "kind": kind, "segment": seg, "step": (i - ends[2]) // 2 if seg == "history" else None,
            "role_a": ra, "role_b": rb,
            "excerpt_before": common if len(common) <= 32 else "…" + common[-32:],
            "excerpt_a": None if ta is None else ta[p : p + 64] + ("…" if len(ta) - p > 64 else ""),
            "excerpt_b": None if tb is None else tb[p : p + 64] + ("…" if len(tb) - p > 64 else ""),
        }  # fmt: skip
        break
    chars = [sum(len(t) for t in blk) for _, blk in b]
    keep = sum(chars) if first is None else sum(chars[: first["message"]]) + first["char"]
    digests = {k: first is None or first["message"] >= e for k, e in zip(["run", "injections", "goal"], ends)}
    return {
        "identical": first is None,
        "a": {"kind": "messages", "messages": len(a), "prompt_chars": sum(sum(len(t) for t in blk) for _, blk in a)},
        "b": {"kind": "request", "messages": len(b), "prompt_chars": sum(chars)},
        "first_difference": first, "prefix_digests": digests, "cacheable_prefix_chars": keep,
    }  # fmt: skip


def first_cut(a: List[str], b: List[str]) -> int:
    """The first block boundary (in code points) two splits of one text do not share."""
    cuts_a = [sum(len(x) for x in a[: k + 1]) for k in range(len(a) - 1)]
    cuts_b = [sum(len(x) for x in b[: k + 1]) for k in range(len(b) - 1)]
    for k in range(max(len(cuts_a), len(cuts_b))):
        x, y = cuts_a[k] if k < len(cuts_a) else None, cuts_b[k] if k < len(cuts_b) else None
        if x != y:
            return min(v for v in (x, y) if v is not None)
    return 0  # [] against [""]: the same cuts, not the same blocks


def change(r: random.Random, msgs: List[Dict[str, Any]]) -> None:
    """One change at a random place of a recorded list (content as block lists)."""
    if not msgs:
        msgs.append({"role": "user", "content": "new"})
        return
    m = r.choice(msgs)
    blk = r.choice(m["content"])
    t, k = blk["text"], r.randrange(0, len(blk["text"]) + 1)
    how = r.randrange(6)
    if how == 0:
        blk["text"] = t[:k] + "Z" + t[k:]
    elif how == 1 and t:
        k = min(k, len(t) - 1)
        blk["text"] = t[:k] + ("Y" if t[k] != "Y" else "X") + t[k + 1 :]
    elif how == 2 and t:
        k = min(k, len(t) - 1)
        blk["text"] = t[:k] + t[k + 1 :]
    elif how == 3:
        m["role"] = "assistant" if m["role"] != "assistant" else "user"
    elif how == 4:
        j = m["content"].index(blk)
        m["content"][j : j + 1] = [{"type": "text", "text": t[:k]}, {"type": "text", "text": t[k:]}]
    else:
        del msgs[r.randrange(len(msgs))]


def test_compare_matches_the_reference() -> None:
    r = random.Random(2026)
    kinds = set()
    for n in range(400):
        req = rand_request(r)
        rendered = pa.assemble(req)["messages"]
        recorded = json.loads(json.dumps(rendered))
        if n % 3 == 0:  # a one-block content as a str, as chat APIs send it
            for m in recorded:
                if len(m["content"]) == 1:
                    m["content"] = m["content"][0]["text"]
        assert pa.compare(recorded, req) == reference(recorded, req, rendered)
        recorded = json.loads(json.dumps(rendered))
        change(r, recorded)
        got, want = pa.compare(recorded, req), reference(recorded, req, rendered)
        assert got == want, (n, recorded, req)
        kinds.add(None if got["first_difference"] is None else got["first_difference"]["kind"])
        assert pa.compare(json.dumps(recorded), json.dumps(req)) == want  # JSON text sides: the same answer
    assert {"role", "text", "blocks", "length"} <= kinds


def test_two_requests_compare_their_digests() -> None:
    req = rand_request(random.Random(5))
    req["run_messages"] = [{"role": "system", "content": [{"type": "text", "text": "Be brief."}]}]
    other = json.loads(json.dumps(req))
    other["steps"] = [{"raw_output": "done", "observation": "ok"}]
    c = pa.compare(req, other)
    assert c["prefix_digests"] == {"run": True, "injections": True, "goal": True}
    assert c["a"]["kind"] == c["b"]["kind"] == "request"
    other["run_messages"][0]["content"][0]["text"] = "Be brief!"
    d = pa.compare(req, other)
    assert d["prefix_digests"]["run"] is False
    assert (d["first_difference"]["message"], d["first_difference"]["char"], d["first_difference"]["segment"]) == (0, 8, "run")
    assert d["cacheable_prefix_chars"] == 8


def test_an_invalid_side_raises_with_its_side_in_the_path() -> None:
    with pytest.raises(pa.AssemblyError) as e:
        pa.compare([{"role": "user"}], {"v": 1, "observation_template": "{observation}"})
    assert (e.value.code, e.value.path) == ("missing_field", "a[0].content")
    with pytest.raises(pa.AssemblyError) as e:
        pa.compare([], {"v": 1, "observation_template": "{x}"})
    assert (e.value.code, e.value.path) == ("invalid_template", "b.observation_template")
    assert e.value.offset is not None


@pytest.mark.parametrize(
    ("side", "words"),
    [
        (b"", "this side is empty (0 bytes)"),
        (bytearray(), "this side is empty (0 bytes)"),
        ("", "this side is empty (0 bytes)"),
        (" \r\n\t", "this side is empty (only white space)"),
        (b"\x90\x90", "this side's bytes go on past its msgpack value (which ends at byte 1 of 2)"),
        (b"  ", "this side is empty (only white space)"),  # bytes of JSON text, read as the CLI reads a file
    ],
)
def test_an_empty_or_overfull_side_is_said_as_such(side: object, words: str) -> None:
    # Bytes are one side on their own (sent as a bin); never a cut or
    # misread compare request.
    for a, b, path in (([], side, "b"), (side, [], "a")):
        with pytest.raises(pa.AssemblyError) as e:
            pa.compare(a, b)
        assert (e.value.code, e.value.path) == ("malformed_request", path)
        assert words in e.value.message
    assert pa.compare(b"\x90", [])["identical"]  # msgpack bytes of [] are the list []


def test_compare_recorded_is_one_map_and_one_filter() -> None:
    r = random.Random(7)
    reqs = [rand_request(r) for _ in range(20)]
    recorded = [pa.assemble(q)["messages"] for q in reqs]
    changed = set(r.sample(range(20), 6))
    for k in changed:
        recorded[k] = recorded[k] + [{"role": "user", "content": "extra"}]
    batch = {"sent": recorded, "request": [json.dumps(q) for q in reqs], "id": list(range(20))}
    out = _columns(CompareRecorded(recorded="sent", request="request")(batch))
    assert set(COMPARE_COLUMNS) <= set(out) and out["id"] == list(range(20))
    assert {i for i in out["id"] if not out["identical"][i]} == changed
    for k in changed:
        assert (out["first_message"][k], out["first_char"][k], out["segment"][k]) == (len(recorded[k]) - 1, 0, "history")
    bad = _columns(CompareRecorded(recorded="sent", request="request")({"sent": [[]], "request": ['{"v": 2}']}))
    assert bad["identical"] == [False] and "unsupported_version" in bad["compare_error"][0] and "b.v" in bad["compare_error"][0]


def _columns(out: Any) -> Any:
    """A batch's answer as a dict of lists (a pyarrow.Table's, or the dict of a batch Arrow cannot hold)."""
    return out.to_pydict() if hasattr(out, "to_pydict") else out


def test_compare_recorded_refuses_misuse() -> None:
    f = CompareRecorded(recorded="sent", request="request")
    with pytest.raises(TypeError, match="batched=True"):
        f({"sent": [{"role": "user", "content": "x"}], "request": {}})  # one row: a request, not a column
    with pytest.raises(KeyError, match="recorded="):
        f({"prompt": [], "request": []})


def test_compare_recorded_single_dict_first_is_a_row_error() -> None:
    """The first row's recorded value one message dict (not a list): that row's compare_error, the batch
    still rendered (the issue: it was taken for one row and failed the job)."""
    reqs = [{"steps": [{"raw_output": "r%d" % i, "observation": "o"}], "observation_template": "{observation}"} for i in range(3)]
    recorded: List[Any] = [pa.assemble(q)["messages"] for q in reqs]
    recorded[0] = recorded[0][0]
    out = _columns(CompareRecorded(recorded="sent", request="request")({"sent": recorded, "request": reqs}))
    assert out["identical"] == [False, True, True] and out["compare_error"][0] and out["compare_error"][1:] == [None, None]


def test_the_migration_check_example_finds_the_altered_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "datasets"))
    import migration_check

    assert migration_check.main() == 1
    out = capsys.readouterr().out
    assert "row 2: first difference in message 5, char 24 (history)" in out and "changed rows: [2]" in out
