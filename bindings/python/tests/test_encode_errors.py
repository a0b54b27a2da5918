"""Packing the request (docs/SPEC.md §7.6, and the fast encoder).

A value the binding cannot read is a coded error that says what happened (never
a bare ``BufferError``, never ``too_large`` for a user's ``ValueError``); the
fast per-thread packer gives the same bytes as the independent encoding rules
of ``strategies.to_wire`` for any value, lone surrogates included.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Iterator, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polyloop_assembly as pa
from polyloop_assembly import _codec

from conftest import load_reference
from strategies import to_wire

R = load_reference()
T = "{observation}"


def req(**fields: Any) -> dict:
    out = dict(fields)
    out.setdefault("observation_template", T)
    return out


def text_msg(text: Any) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


class BadSeq(Sequence):  # type: ignore[type-arg]
    """A user's Sequence whose reads raise."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def __len__(self) -> int:
        return 1

    def __getitem__(self, i: Any) -> Any:
        raise self.exc

    def __iter__(self) -> Iterator[Any]:
        raise self.exc


class BadMap(Mapping):  # type: ignore[type-arg]
    """A user's Mapping whose iteration raises."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def __len__(self) -> int:
        return 1

    def __getitem__(self, k: Any) -> Any:
        raise self.exc

    def __iter__(self) -> Iterator[Any]:
        raise self.exc


class BadDict(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        raise ValueError("items() of a dict subclass failed")


class BadList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Iterator[Any]:
        raise ValueError("__iter__ of a list subclass failed")


def _raises(request: Any) -> pa.AssemblyError:
    with pytest.raises(pa.AssemblyError) as info:
        pa.assemble(request)
    return info.value


@pytest.mark.parametrize(
    "request_, path, names",
    [
        (req(steps=BadSeq(ValueError("no rows today"))), "steps", ("BadSeq", "ValueError", "no rows today")),
        (req(steps=[BadMap(ValueError("bad step"))]), "steps[0]", ("BadMap", "ValueError", "bad step")),
        (req(run_messages=[text_msg("a"), BadMap(KeyError("role"))]), "run_messages[1]", ("BadMap", "KeyError")),
        (req(injections={"memory": BadSeq(ValueError("x"))}), 'injections["memory"]', ("BadSeq",)),
        (
            req(goal_messages=[{"role": "user", "content": BadList([1])}]),
            "goal_messages[0].content",
            ("BadList", "__iter__ of a list subclass failed"),
        ),
        (req(steps=[BadDict(raw_output="r", observation="o")]), "steps[0]", ("BadDict", "items()")),
        (BadMap(ValueError("top")), "", ("BadMap", "top")),
        (req(injections={"a b": BadSeq(ValueError("q"))}), 'injections["a b"]', ("BadSeq", "ValueError", "q")),
    ],
)
def test_a_failing_container_is_malformed_request_at_its_path(request_: Any, path: str, names: tuple) -> None:
    e = _raises(request_)
    assert (e.code, e.path) == ("malformed_request", path)
    for name in names:
        assert name in e.message
    assert "not sent" in e.message and "too_large" not in e.message and "1 GiB" not in e.message
    assert e.__cause__ is not None  # the user's exception, for the traceback


def test_the_first_problem_of_the_request_still_wins() -> None:
    """docs/SPEC.md §7.6: an unreadable value is judged where the core meets it,
    so an unknown key before it is that key's error (the path the core writes)."""
    e = _raises({"a b": BadSeq(ValueError("q")), "observation_template": T})
    assert (e.code, e.path) == ("unknown_field", '["a b"]')
    e = _raises({"observation_template": T, "steps": [{"raw_output": 5, "observation": BadMap(ValueError("later"))}]})
    assert (e.code, e.path) == ("malformed_request", "steps[0].raw_output")
    assert "BadMap" not in e.message and e.__cause__ is None


def test_a_failing_container_with_a_lone_surrogate_elsewhere() -> None:
    # the fast packer fails on the surrogate first; the slow way still writes the
    # container as unreadable, and the core reports whichever comes first
    e = _raises({"observation_template": T, "steps": BadSeq(ValueError("later")), "run_messages": [text_msg("x\udc80")]})
    assert (e.code, e.path) == ("malformed_request", "steps")
    assert isinstance(e.__cause__, ValueError)
    e = _raises({"observation_template": T, "run_messages": [text_msg("x\udc80")], "steps": BadSeq(ValueError("later"))})
    assert (e.code, e.path) == ("invalid_utf8", "run_messages[0].content[0].text")


def test_non_contiguous_memoryview_is_bin_like_a_contiguous_one() -> None:
    data = memoryview(b"o-b-s")[::2]
    assert not data.contiguous
    e = _raises(req(steps=[{"raw_output": "r", "observation": data}]))
    want = _raises(req(steps=[{"raw_output": "r", "observation": memoryview(b"obs")}]))
    assert (
        (e.code, e.path, e.message)
        == (want.code, want.path, want.message)
        == ("malformed_request", "steps[0].observation", want.message)
    )
    assert _codec.encode([data]) == _codec.encode([b"obs"]) == R.pack([R.Bin(b"obs")])


def test_non_contiguous_memoryview_through_assemble_bytes() -> None:
    wire = R.pack(req(steps=[{"raw_output": "r", "observation": "o"}]))
    padded = bytes(b for c in wire for b in (c, 0))
    assert pa.assemble_bytes(memoryview(padded)[::2]) == pa.assemble_bytes(wire)


def test_released_memoryview() -> None:
    view = memoryview(b"abc")
    view.release()
    e = _raises(req(steps=[{"raw_output": view, "observation": "o"}]))
    assert (e.code, e.path) == ("malformed_request", "steps[0].raw_output")
    assert "memoryview" in e.message and "released" in e.message


def test_huge_int_message_is_the_cores() -> None:
    e = _raises(req(max_prompt_chars=2**70))
    assert (e.code, e.path) == ("malformed_request", "max_prompt_chars")
    assert e.message == "expected an int, found an int beyond 64 bits"


class Reentrant(Mapping):  # type: ignore[type-arg]
    """A Mapping whose iteration assembles another request on the same thread."""

    def __init__(self, inner: dict) -> None:
        self.inner = inner

    def __len__(self) -> int:
        return len(self.inner)

    def __getitem__(self, k: str) -> Any:
        return self.inner[k]

    def __iter__(self) -> Iterator[str]:
        pa.assemble(req(steps=[{"raw_output": "nested " * 50, "observation": "call"}]))
        return iter(self.inner)


def test_a_nested_call_from_a_container_does_not_share_the_packer() -> None:
    plain = req(steps=[{"raw_output": "r", "observation": "o"}], max_prompt_chars=10)
    tricky = req(steps=[Reentrant({"raw_output": "r", "observation": "o"})], max_prompt_chars=10)
    assert _codec.encode(tricky) == _codec.encode(plain)


def test_packer_per_thread() -> None:
    reqs = [req(steps=[{"raw_output": "r%d" % i * (i % 7 + 1), "observation": "é" * i}]) for i in range(200)]
    want = [R.pack(to_wire(r, R)) for r in reqs]
    got: List[List[bytes]] = [[], [], [], []]

    def run(k: int) -> None:
        got[k] = [_codec.encode(r) for r in reqs]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(g == want for g in got)


def test_a_large_request_does_not_keep_a_large_buffer() -> None:
    big = req(steps=[{"raw_output": "x" * (3 << 20), "observation": "o"}])
    small = req(steps=[{"raw_output": "r", "observation": "o"}])
    assert _codec.encode(big) == R.pack(to_wire(big, R))
    assert _codec.encode(small) == R.pack(to_wire(small, R))


# Any value: the encoder's bytes are those of the independent rules (to_wire).
_TEXT = st.text(st.characters(codec=None, categories=None), max_size=40) | st.sampled_from(
    ["\ufeff", "\ufeffabc", "a\x00b", "\ud800", "x\udfff", "\ud83d\ude00", "é" * 30, "\U0010ffff"]
)
_LEAF = (
    st.none()
    | st.booleans()
    | _TEXT
    | st.binary(max_size=8)
    | st.floats(allow_nan=False)
    | st.integers(-(2**70), 2**70)
    | st.integers(-(10**400), 10**400)
    | st.sampled_from([2**64 - 1, 2**64, -(2**63), -(2**63) - 1])
)
_VALUE = st.recursive(
    _LEAF,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(_TEXT, kids, max_size=4) | st.lists(kids, max_size=3).map(tuple),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_VALUE)
def test_encode_equals_the_rules(value: Any) -> None:
    assert _codec.encode(value) == R.pack(to_wire(value, R))
