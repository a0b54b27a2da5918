"""assemble() of a large request with much non-ASCII text takes the module's assemble_shared call
(docs/SPEC.md §7.11): the response's copied texts are the caller's own str objects, decoded by no one,
and the response equals the pure-Python reference's; smaller, ASCII or unusual requests keep the
assemble call, with the same responses."""

from __future__ import annotations

import collections
import copy
from typing import Any, Dict, List

import msgpack  # type: ignore[import-untyped]
import pytest

import polyloop_assembly as pa
from polyloop_assembly import _consts

from conftest import load_reference

R = load_reference()  # the independent oracle: the response as a dict, written by the reference in pure Python

WIDE = "row; naïve café Ünïcode 日本語 text — and plain ASCII filler to make it long. " * 60  # ~4,800 characters


def _request(template: str = "Page:\n{observation}", steps: int = 20, unit: str = WIDE) -> Any:
    """A ~100 KB request (~96,000 non-ASCII characters) with every kind of text: run messages of two blocks
    and none, injection channels out of code-point order, a goal of two blocks, steps."""
    return {
        "v": 1,
        "run_messages": [
            {"role": "system", "content": [{"type": "text", "text": "Sys ☃"}, {"type": "text", "text": "second block"}]},
            {"role": "user", "content": []},
        ],
        "injections": {
            "zeta": [{"entry_id": "z1", "content": "zeta's entry"}],
            "alpha": [{"entry_id": "a1", "content": "alpha one"}, {"entry_id": "a2", "content": "alpha two 🙂"}],
        },
        "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "goal"}, {"type": "text", "text": "ǵoal 2"}]}],
        "steps": [{"raw_output": "Thought: page %d ✓" % i, "observation": unit + str(i)} for i in range(steps)],
        "observation_template": template,
    }


def _texts(req: Dict[str, Any]) -> List[str]:
    """The request's texts in the order docs/SPEC.md §7.11 numbers them, written out here by hand."""
    out = [b["text"] for m in req["run_messages"] for b in m["content"]]
    out += [e["content"] for entries in req["injections"].values() for e in entries]
    out += [b["text"] for m in req["goal_messages"] for b in m["content"]]
    return out + [t for s in req["steps"] for t in (s["raw_output"], s["observation"])]


@pytest.mark.parametrize(
    "template",
    ["Page:\n{observation}", "{observation}", "<{observation}|{observation}>", "{observation!r}", "{observation:>9}"],
)
def test_copied_texts_are_the_caller_s_own_str(template: str) -> None:
    req = _request(template)
    got = pa.assemble(req)
    assert got == R.assemble(copy.deepcopy(req))
    own = {id(t) for t in _texts(req)}
    raw_outputs = [m["content"][0]["text"] for m in got["messages"][6::2]]
    assert all(id(t) in own for t in raw_outputs) and len(raw_outputs) == 20  # each step's raw_output, not a copy
    shared = sum(id(b["text"]) in own for m in got["messages"] for b in m["content"])
    assert shared == 2 + 3 + 2 + 20 + (20 if template == "{observation}" else 0)  # run, injections, goal, steps


def test_the_response_is_the_caller_s_to_edit() -> None:
    req = _request()
    first = pa.assemble(req)
    first["messages"][0]["content"].append({"type": "text", "text": "added"})
    first["messages"][7]["content"][0]["text"] = "edited"
    first["message_chars"][0] = -1
    assert pa.assemble(req) == R.assemble(copy.deepcopy(req)) != first
    assert req == _request()


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r.update(steps=tuple(r["steps"])),  # not a list: the codec writes it, no text is shared
        lambda r: r.update(injections=collections.OrderedDict(r["injections"])),
        lambda r: r["steps"].__setitem__(0, collections.UserDict(r["steps"][0])),
        lambda r: r["steps"].__setitem__(1, dict(r["steps"][1], raw_output=type("S", (str,), {})("a str subclass"))),
        lambda r: r.update(steps=r["steps"][:6]),  # below 64 KiB
        lambda r: r.update(steps=[dict(s, observation=s["observation"].encode("ascii", "replace").decode()) for s in r["steps"]]),
    ],
)
def test_other_requests_keep_the_assemble_call(change: Any) -> None:
    req = _request()
    change(req)
    plain = copy.deepcopy(req)
    plain["injections"] = dict(plain["injections"])
    plain["steps"] = [{k: str(v) for k, v in s.items()} for s in plain["steps"]]
    got = pa.assemble(req)
    assert got == R.assemble(plain)
    assert all(b["text"].__class__ is str for m in got["messages"] for b in m["content"])


def test_an_error_of_a_large_request_is_the_wire_s() -> None:
    req = _request()
    req["steps"][3]["observation"] = 7
    with pytest.raises(pa.AssemblyError) as info:
        pa.assemble(req)
    assert (info.value.code, info.value.path) == ("malformed_request", "steps[3].observation")


def test_an_answer_naming_a_text_the_request_lacks_is_no_response(monkeypatch: pytest.MonkeyPatch) -> None:
    asm = pa.Assembler(max_instances=1)
    ops: List[int] = []
    beyond = msgpack.ExtType(2, (10**6).to_bytes(4, "big"))
    answer = msgpack.packb({"v": 1, "ok": True, "messages": [{"role": "user", "content": [{"type": "text", "text": beyond}]}]})
    real = asm.pool.call

    def call(request: bytes, op: int = 0) -> bytes:
        ops.append(op & 0xFF)
        return real(request, op) if op == _consts.CALL_ERROR else answer

    monkeypatch.setattr(asm.pool, "call", call)
    with pytest.raises(pa.AssemblyError) as info:
        asm.assemble(_request())
    assert info.value.code == "internal" and "IndexError" in (info.value.detail or "")
    assert ops == [_consts.CALL_ASSEMBLE_SHARED, _consts.CALL_ERROR]


class _Rewriter:
    """A ``v`` whose ``__index__`` rewrites the request's first step while it is encoded (after that step
    was): the texts then held are not those the core was given."""

    def __init__(self, request: Dict[str, Any]) -> None:
        self.request = request

    def __index__(self) -> int:
        self.request["steps"][0]["raw_output"] = "EVIL" + "ö" * 70_000
        return 1


def test_a_text_rewritten_while_encoded_is_never_returned() -> None:
    original = "ö" * 70_000
    request: Dict[str, Any] = {"steps": [{"raw_output": original, "observation": "x"}], "observation_template": "{observation}"}
    request["v"] = _Rewriter(request)  # last: encoded after the step
    resp = pa.assemble(request)
    texts = [b["text"] for m in resp["messages"] for b in m["content"]]
    assert texts[0] == original and not any(t.startswith("EVIL") for t in texts)
    assert resp["message_chars"][0] == len(original)
