"""Python's own bad values get the core's code and path (docs/SPEC.md §7.6).

Each row gives a Python request and the equivalent wire request written by
hand with the reference's node types (``BadStr`` for invalid UTF-8, ``Float``,
``Ext``, ``Bin``, ``Map`` with non-str keys...). The expected (code, path) is
what the pure-Python reference decides for the hand-made bytes; the core must
give the same for those bytes through ``assemble_bytes``, and ``assemble`` of
the Python value must raise that same error (message included).
"""

from __future__ import annotations

import datetime
import types
from typing import Any, Callable, List, NamedTuple

import msgpack
import pytest

import polyloop_assembly as pa
from polyloop_assembly import _codec, _consts

from conftest import load_reference

R = load_reference()
T = "{observation}"


def big(n: int) -> object:
    """The wire form of an int beyond 64 bits: ext EXT_BIG_INT, its decimal text."""
    return R.Ext(_consts.EXT_BIG_INT, str(n).encode("ascii"))


def py_req(**fields: Any) -> dict:
    """A Python request with fields in the given order, the template last unless given."""
    out = dict(fields)
    if "observation_template" not in out:
        out["observation_template"] = T
    return out


def text_msg(text: Any, role: Any = "user") -> dict:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def step(raw: Any, obs: Any) -> dict:
    return {"raw_output": raw, "observation": obs}


class Row(NamedTuple):
    id: str
    python: Callable[[], Any]  # builds the Python request (lazily: some are cyclic)
    wire: bytes  # the same request written by hand
    same_bytes: bool = True  # the binding must encode ``python`` to exactly ``wire``
    ok: bool = False  # the request is valid


def _cyclic_list() -> List[Any]:
    lst: List[Any] = []
    lst.append(lst)
    return lst


def _deep(n: int) -> Any:
    v: Any = "x"
    for _ in range(n):
        v = [v]
    return v


class Indexable:
    """Like a NumPy integer: not an int, but has __index__."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __index__(self) -> int:
        return self.n


ROWS: List[Row] = [
    # --- lone surrogates: invalid_utf8 at their path
    Row(
        "surrogate-in-text",
        lambda: py_req(run_messages=[text_msg("a\udc80b")]),
        R.request(run_messages=[text_msg(R.BadStr(b"a\xed\xb2\x80b"))]),
    ),
    Row(
        "surrogateescape-in-observation",
        lambda: py_req(steps=[step("r", b"caf\xe9".decode("utf-8", "surrogateescape"))]),
        R.request(steps=[step("r", R.BadStr(b"caf\xed\xb3\xa9"))]),
    ),
    Row(
        "high-surrogate-in-raw-output",
        lambda: py_req(steps=[step("x\ud83d", "o")]),
        R.request(steps=[step(R.BadStr(b"x\xed\xa0\xbd"), "o")]),
    ),
    Row(
        "surrogate-pair-as-two-code-points",
        lambda: py_req(goal_messages=[text_msg("\ud83d\ude00")]),
        R.request(goal_messages=[text_msg(R.BadStr(b"\xed\xa0\xbd\xed\xb8\x80"))]),
    ),
    Row(
        "surrogate-in-channel-name",
        lambda: py_req(injections={"t\udc80": [{"entry_id": "e", "content": "c"}]}),
        R.request(injections=R.Map([(R.BadStr(b"t\xed\xb2\x80"), [{"entry_id": "e", "content": "c"}])])),
    ),
    Row(
        "surrogate-in-top-level-key",
        lambda: {"observation_template": T, "k\udc80": 1},
        R.pack(R.Map([("observation_template", T), (R.BadStr(b"k\xed\xb2\x80"), 1)])),
    ),
    Row(
        "surrogate-in-nested-key",
        lambda: py_req(steps=[{"raw_output": "r", "\udc80": "o"}]),
        R.request(steps=[R.Map([("raw_output", "r"), (R.BadStr(b"\xed\xb2\x80"), "o")])]),
    ),
    Row(
        "surrogate-in-template",
        lambda: py_req(observation_template="{observation}\udfff"),
        R.request(observation_template=R.BadStr(b"{observation}\xed\xbf\xbf")),
    ),
    Row(
        "surrogate-in-entry-id",
        lambda: py_req(injections={"c": [{"entry_id": "\ud800", "content": "x"}]}),
        R.request(injections={"c": [{"entry_id": R.BadStr(b"\xed\xa0\x80"), "content": "x"}]}),
    ),
    # --- a non-str where a str belongs: malformed_request at the value
    Row("int-as-text", lambda: py_req(run_messages=[text_msg(123)]), R.request(run_messages=[text_msg(123)])),
    Row(
        "none-as-role",
        lambda: py_req(run_messages=[text_msg("a", role=None)]),
        R.request(run_messages=[text_msg("a", role=R.Nil)]),
    ),
    Row("bytes-as-observation", lambda: py_req(steps=[step("r", b"obs")]), R.request(steps=[step("r", R.Bin(b"obs"))])),
    Row("bytearray-as-raw-output", lambda: py_req(steps=[step(bytearray(b"r"), "o")]), R.request(steps=[step(R.Bin(b"r"), "o")])),
    Row("list-as-raw-output", lambda: py_req(steps=[step(["r"], "o")]), R.request(steps=[step(["r"], "o")])),
    Row("int-as-template", lambda: py_req(observation_template=5), R.request(observation_template=5)),
    Row(
        "dict-as-entry-id",
        lambda: py_req(injections={"c": [{"entry_id": {"a": 1}, "content": "x"}]}),
        R.request(injections={"c": [{"entry_id": {"a": 1}, "content": "x"}]}),
    ),
    Row("bool-as-text", lambda: py_req(goal_messages=[text_msg(False)]), R.request(goal_messages=[text_msg(False)])),
    Row(
        "float-as-type",
        lambda: py_req(run_messages=[{"role": "user", "content": [{"type": 1.5, "text": "a"}]}]),
        R.request(run_messages=[{"role": "user", "content": [{"type": R.Float(1.5), "text": "a"}]}]),
    ),
    # --- None where a str belongs (nil is "absent" only for max_prompt_chars)
    Row("none-as-raw-output", lambda: py_req(steps=[step(None, "o")]), R.request(steps=[step(R.Nil, "o")])),
    Row("none-as-template", lambda: py_req(observation_template=None), R.request(observation_template=R.Nil)),
    Row("none-as-steps", lambda: py_req(steps=None), R.request(steps=R.Nil)),
    # --- a bool or float where an int belongs
    Row("bool-as-version", lambda: py_req(v=True), R.request(v=True)),
    Row("bool-as-budget", lambda: py_req(max_prompt_chars=False), R.request(max_prompt_chars=False)),
    Row("float-as-version", lambda: py_req(v=1.0), R.request(v=R.Float(1.0))),
    Row("float-as-budget", lambda: py_req(max_prompt_chars=100.0), R.request(max_prompt_chars=R.Float(100.0))),
    Row("str-as-budget", lambda: py_req(max_prompt_chars="100"), R.request(max_prompt_chars="100")),
    # --- the value's own rules
    Row("negative-budget", lambda: py_req(max_prompt_chars=-1), R.request(max_prompt_chars=-1)),
    Row("version-2", lambda: py_req(v=2), R.request(v=2)),
    Row(
        "empty-entry-id",
        lambda: py_req(injections={"c": [{"entry_id": "", "content": "x"}]}),
        R.request(injections={"c": [{"entry_id": "", "content": "x"}]}),
    ),
    Row(
        "bad-role",
        lambda: py_req(run_messages=[text_msg("a", role="robot")]),
        R.request(run_messages=[text_msg("a", role="robot")]),
    ),
    Row("bad-template", lambda: py_req(observation_template="Output:"), R.request(observation_template="Output:")),
    # --- unknown keys
    Row("unknown-top-level-key", lambda: py_req(foo=1), R.request(foo=1)),
    Row(
        "unknown-top-level-key-quoted",
        lambda: {"observation_template": T, "a b": 1},
        R.pack({"observation_template": T, "a b": 1}),
    ),
    Row(
        "unknown-nested-key",
        lambda: py_req(steps=[{"raw_output": "r", "observation": "o", "extra": ""}]),
        R.request(steps=[{"raw_output": "r", "observation": "o", "extra": ""}]),
    ),
    Row(
        "unknown-message-key",
        lambda: py_req(goal_messages=[{"role": "user", "name": "x"}]),
        R.request(goal_messages=[{"role": "user", "name": "x"}]),
    ),
    # --- non-str dict keys: malformed_request at the map
    Row("int-key-top-level", lambda: {1: "x", "observation_template": T}, R.pack(R.Map([(1, "x"), ("observation_template", T)]))),
    Row("int-channel-name", lambda: py_req(injections={7: []}), R.request(injections=R.Map([(7, [])]))),
    Row("none-key-in-message", lambda: py_req(run_messages=[{None: "user"}]), R.request(run_messages=[R.Map([(R.Nil, "user")])])),
    Row("tuple-key-in-step", lambda: py_req(steps=[{(1, 2): "r"}]), R.request(steps=[R.Map([([1, 2], "r")])])),
    Row("bytes-key-top-level", lambda: {b"observation_template": T}, R.pack(R.Map([(R.Bin(b"observation_template"), T)]))),
    # --- ints the wire cannot carry (outside [-2**63, 2**64)): never clamped; packed
    # as the ext value EXT_BIG_INT holding their decimal text, so the core says
    # malformed_request at the value's path, "an int beyond 64 bits" (docs/SPEC.md §7.6)
    Row("huge-version", lambda: py_req(v=2**70), R.request(v=big(2**70))),
    Row("huge-negative-version", lambda: py_req(v=-(2**100)), R.request(v=big(-(2**100)))),
    Row("huge-negative-budget", lambda: py_req(max_prompt_chars=-(2**70)), R.request(max_prompt_chars=big(-(2**70)))),
    Row(
        "huge-int-as-text",
        lambda: py_req(run_messages=[text_msg(2**100)]),
        R.request(run_messages=[text_msg(big(2**100))]),
    ),
    Row(
        "huge-budget-is-not-a-budget",
        lambda: py_req(steps=[step("r", "o")], max_prompt_chars=2**70),
        R.request(steps=[step("r", "o")], max_prompt_chars=big(2**70)),
    ),
    Row("huge-budget-just-past-uint64", lambda: py_req(max_prompt_chars=2**64), R.request(max_prompt_chars=big(2**64))),
    Row(
        "huge-budget-just-past-int64",
        lambda: py_req(max_prompt_chars=-(2**63) - 1),
        R.request(max_prompt_chars=big(-(2**63) - 1)),
    ),
    Row("huge-beyond-float-range", lambda: py_req(v=10**200), R.request(v=big(10**200))),
    Row(
        "huge-negative-beyond-float-range",
        lambda: py_req(max_prompt_chars=-(10**200)),
        R.request(max_prompt_chars=big(-(10**200))),
    ),
    Row("huge-int-key", lambda: py_req(injections={2**70: []}), R.request(injections=R.Map([(big(2**70), [])]))),
    Row("huge-index-budget", lambda: py_req(max_prompt_chars=Indexable(2**70)), R.request(max_prompt_chars=big(2**70))),
    # --- the ends of the 64-bit range are carried as they are
    Row(
        "uint64-max-budget-is-a-budget",
        lambda: py_req(steps=[step("r", "o")], max_prompt_chars=2**64 - 1),
        R.request(steps=[step("r", "o")], max_prompt_chars=R.Int(2**64 - 1)),
        ok=True,
    ),
    Row("uint64-max-version", lambda: py_req(v=2**64 - 1), R.request(v=R.Int(2**64 - 1))),
    Row("int64-min-budget", lambda: py_req(max_prompt_chars=-(2**63)), R.request(max_prompt_chars=R.Int(-(2**63)))),
    # --- objects msgpack cannot pack: an ext value, malformed_request at the path
    Row("object-as-text", lambda: py_req(run_messages=[text_msg(object())]), R.request(run_messages=[text_msg(R.Ext(0, b""))])),
    Row("set-as-steps", lambda: py_req(steps={"a"}), R.request(steps=R.Ext(0, b""))),
    Row(
        "datetime-as-observation",
        lambda: py_req(steps=[step("r", datetime.datetime(2024, 1, 1))]),
        R.request(steps=[step("r", R.Ext(0, b""))]),
    ),
    Row("complex-as-budget", lambda: py_req(max_prompt_chars=1j), R.request(max_prompt_chars=R.Ext(0, b""))),
    Row("function-as-version", lambda: py_req(v=len), R.request(v=R.Ext(0, b""))),
    # --- wrong containers
    Row("str-as-run-messages", lambda: py_req(run_messages="abc"), R.request(run_messages="abc")),
    Row("int-as-steps", lambda: py_req(steps=5), R.request(steps=5)),
    Row("list-as-injections", lambda: py_req(injections=[]), R.request(injections=[])),
    Row("list-as-top-level", lambda: [T], R.pack([T])),
    Row("bytes-as-top-level", lambda: b"\x80", R.pack(R.Bin(b"\x80"))),
    Row("none-as-top-level", lambda: None, R.pack(R.Nil)),
    # --- structures msgpack refuses (cycles, depth): cut deep down; the core
    # meets the shallow problem first
    Row("cyclic-steps", lambda: py_req(steps=_cyclic_list()), R.request(steps=[[]]), same_bytes=False),
    Row("deep-unknown-field", lambda: py_req(deep=_deep(2000)), R.request(deep=[]), same_bytes=False),
    Row(
        "deep-text", lambda: py_req(run_messages=[text_msg(_deep(600))]), R.request(run_messages=[text_msg([])]), same_bytes=False
    ),
    # --- Pythonic containers that are valid
    Row(
        "mapping-proxy-request",
        lambda: types.MappingProxyType(py_req(steps=[step("r", "o")])),
        R.request(steps=[step("r", "o")]),
        ok=True,
    ),
    Row("tuple-steps", lambda: py_req(steps=(step("r", "o"),)), R.request(steps=[step("r", "o")]), ok=True),
    Row(
        "index-budget",
        lambda: py_req(steps=[step("r", "o")], max_prompt_chars=Indexable(1)),
        R.request(steps=[step("r", "o")], max_prompt_chars=1),
        ok=True,
    ),
    Row(
        "str-subclass-text",
        lambda: py_req(run_messages=[text_msg(type("S", (str,), {})("héllo"))]),
        R.request(run_messages=[text_msg("héllo")]),
        ok=True,
    ),
]


def _core_wire(wire: bytes) -> dict:
    """The core's answer to the hand-made bytes, its messages in Python's words (the words
    assemble() raises in; assemble_bytes() answers the wire's, every host's bytes)."""
    answer = pa.default_assembler()._pool.call(wire, _consts.CALL_ASSEMBLE | _consts.WORDS_PYTHON)
    return msgpack.unpackb(answer, raw=False)


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_bad_value(row: Row) -> None:
    ref_resp, ref_err = R.assemble_bytes(row.wire)
    core = _core_wire(row.wire)
    if row.ok:
        assert ref_err is None, "the hand-made request should be valid: %r" % (ref_err,)
        assert pa.assemble_bytes(row.wire) == ref_resp
        assert pa.assemble(row.python()) == msgpack.unpackb(ref_resp, raw=False)
    else:
        assert ref_err is not None, "the hand-made request should be rejected"
        # the core on the hand-made bytes agrees with the reference ...
        assert core["ok"] is False
        assert (core["error"]["code"], core["error"]["path"]) == ref_err
        # ... and assemble() of the Python value raises exactly that error
        with pytest.raises(pa.AssemblyError) as info:
            pa.assemble(row.python())
        assert (info.value.code, info.value.path) == ref_err
        assert info.value.message == core["error"]["message"]
    if row.same_bytes:
        assert _codec.encode(row.python()) == row.wire


def test_every_row_id_is_unique() -> None:
    assert len({r.id for r in ROWS}) == len(ROWS)


def test_rows_cover_the_issue_table() -> None:
    """The bad-value table (docs/SPEC.md §7.6): every kind has a row."""
    kinds = {
        "surrogate": "invalid_utf8",
        "as-text": "malformed_request",
        "bool-as-version": "malformed_request",
        "float-as-budget": "malformed_request",
        "negative-budget": "invalid_budget",
        "unknown-": "unknown_field",
        "none-as-": "malformed_request",
        "key": "malformed_request",
        "huge-": None,
        "object-as-text": "malformed_request",
    }
    for prefix in kinds:
        assert any(prefix in r.id for r in ROWS), prefix


def test_validate_template_of_bad_values() -> None:
    for bad, code in (
        ("{observation}\udc80", "invalid_utf8"),
        (5, "malformed_request"),
        (None, "malformed_request"),
        ("{obs}", "invalid_template"),
        ("{{observation}}", "invalid_template"),
    ):
        with pytest.raises(pa.AssemblyError) as info:
            pa.validate_template(bad)  # type: ignore[arg-type]
        assert info.value.code == code
        assert info.value.path == "observation_template"
    assert pa.validate_template("Observation: {observation!r:>20}") is None


def test_assemble_bytes_refuses_non_bytes() -> None:
    with pytest.raises(TypeError, match="bytes"):
        pa.assemble_bytes("\x80")  # type: ignore[arg-type]
    assert pa.assemble_bytes(bytearray(b"\x80")) == pa.assemble_bytes(memoryview(b"\x80")) == pa.assemble_bytes(b"\x80")


def test_error_attributes_and_str() -> None:
    with pytest.raises(pa.AssemblyError) as info:
        pa.assemble(py_req(max_prompt_chars=-5))
    e = info.value
    assert (e.code, e.path) == ("invalid_budget", "max_prompt_chars")
    assert str(e) == "invalid_budget at max_prompt_chars: " + e.message
    assert e.args == (e.code, e.path, e.message)
    import pickle

    again = pickle.loads(pickle.dumps(e))
    assert (again.code, again.path, again.message) == (e.code, e.path, e.message)
