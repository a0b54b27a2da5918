"""The binding as a codec, a runtime and facades that forward (issue 31):
compare reaches the module through the generic call and the table's params;
every error answer, those only this host sees included, is made by the
core's ``error`` call (docs/SPEC.md §7.10), never packed in Python; the
package's modules import one another without a cycle."""

from __future__ import annotations

import ast
import mmap
from pathlib import Path
from typing import Any, List, Tuple

import pytest

import polyloop_assembly as pa
from polyloop_assembly import _codec
from polyloop_assembly._consts import WORDS_PYTHON

from conftest import load_reference

R = load_reference()  # the pure-Python reference: an independent msgpack writer
PKG = Path(pa.__file__).parent
OP_COMPARE, OP_ERROR = 6, 8  # the op numbers of wasm/README.md, "ABI", written out
TRAPPED = "the assembly module trapped; the instance was discarded and the next call gets a fresh one"
OUT_OF_MEMORY = "the assembly module ran out of memory; the instance was discarded and the next call gets a fresh one"
NOT_A_RESPONSE = (
    "the assembly module returned bytes that are not a response; is the module from the same release as this binding?"
)
REQ = {"observation_template": "{observation}", "steps": [{"raw_output": "a", "observation": "b"}]}


def _spied(monkeypatch: pytest.MonkeyPatch, answer: Any = None) -> Tuple[pa.Assembler, List[Tuple[int, bytes]]]:
    """An assembler whose crossings are recorded; ``answer(op, request)``, if given, answers
    every call but the error call in the module's place."""
    asm = pa.Assembler(max_instances=1)
    real, crossed = asm.pool.call, []

    def call(request: bytes, op: int = 0) -> bytes:
        crossed.append((op, bytes(request)))
        return real(request, op) if answer is None or op == OP_ERROR else answer(op, request)

    monkeypatch.setattr(asm.pool, "call", call)
    return asm, crossed


def test_compare_forwards_through_the_generic_call(monkeypatch: pytest.MonkeyPatch) -> None:
    asm, crossed = _spied(monkeypatch)
    a, b = [{"role": "user", "content": "hi"}], dict(REQ)
    got = asm.call("compare", a, b)
    assert crossed == [(OP_COMPARE | WORDS_PYTHON, R.pack({"a": a, "b": b}))]  # {params[i]: args[i]}, nothing else; Python words
    assert got == pa.compare(a, b, assembler=asm) and got["first_difference"]["message"] == 0
    with pytest.raises(TypeError, match=r"compare\(\) takes 2 arguments \(a, b\), got 1"):
        asm.call("compare", a)


def test_a_side_of_no_supported_type_is_judged_by_the_core() -> None:
    with pytest.raises(pa.AssemblyError) as info:  # was a TypeError raised in Python
        pa.compare(5, [])
    assert (info.value.code, info.value.path) == ("malformed_request", "a")
    assert info.value.message.endswith("found an int")


def test_a_request_over_1_gib_is_answered_by_the_core_without_copying_it(monkeypatch: pytest.MonkeyPatch) -> None:
    size = (1 << 30) + 1
    with mmap.mmap(-1, size) as big:  # pages never touched: no memory spent
        asm, crossed = _spied(monkeypatch)
        view = memoryview(big)
        try:
            answer = asm.assemble_bytes(view)
        finally:
            view.release()
    assert [op for op, _ in crossed] == [OP_ERROR]
    assert _codec.decode(answer)["error"] == {
        "code": "too_large",
        "path": "",
        "message": "the request is 1073741825 bytes, over the 1 GiB limit; split it into smaller requests",
    }


def test_a_value_too_long_for_msgpack_is_answered_by_the_core(monkeypatch: pytest.MonkeyPatch) -> None:
    real = _codec.encode
    request = dict(REQ)

    def encode(value: Any, caught: Any = None) -> bytes:
        if value is request:  # as if a str of 5 GiB were in it
            raise _codec.EncodeError("str", 5 << 30)
        return real(value, caught)

    monkeypatch.setattr(_codec, "encode", encode)
    asm, crossed = _spied(monkeypatch)
    with pytest.raises(pa.AssemblyError) as info:
        asm.assemble(request)  # type: ignore[arg-type]
    assert [op for op, _ in crossed] == [OP_ERROR]
    assert (info.value.code, info.value.path, info.value.message) == (
        "too_large",
        "",
        "a str of 5368709120 bytes cannot be encoded (msgpack holds at most 4 GiB), so the request is over the "
        "1 GiB limit; split it into smaller requests",
    )


@pytest.mark.parametrize("oom, message", [(False, TRAPPED), (True, OUT_OF_MEMORY)])
def test_a_failed_instance_is_worded_by_the_core(monkeypatch: pytest.MonkeyPatch, oom: bool, message: str) -> None:
    def fail(op: int, request: bytes) -> bytes:
        raise pa._errors.InstanceFailure("the engine's words", out_of_memory=oom)

    asm, crossed = _spied(monkeypatch, fail)
    for call in (lambda: asm.assemble(REQ), lambda: asm.call("compare", [], []), lambda: asm.assemble_bytes(R.pack(REQ))):
        crossed.clear()
        with pytest.raises(pa.AssemblyError) as info:
            call()
        assert (info.value.code, info.value.path, info.value.message, info.value.detail) == (
            "internal",
            "",
            message,
            "the engine's words",
        )
        assert [op for op, _ in crossed][-1] == OP_ERROR


@pytest.mark.parametrize("bad", [b"\xc1", b"", R.pack([1]), b"not json"])
def test_an_answer_that_is_not_one_is_worded_by_the_core(monkeypatch: pytest.MonkeyPatch, bad: bytes) -> None:
    asm, crossed = _spied(monkeypatch, lambda op, request: bad)
    for call in (lambda: asm.assemble(REQ), lambda: asm.call("compare", [], [])):
        crossed.clear()
        with pytest.raises(pa.AssemblyError) as info:
            call()
        assert (info.value.code, info.value.path, info.value.message) == ("internal", "", NOT_A_RESPONSE)
        assert info.value.detail and [op for op, _ in crossed][-1] == OP_ERROR


def _imports(path: Path) -> List[str]:
    """The package modules a module imports, anywhere in it (functions and TYPE_CHECKING blocks included)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            out += [node.module] if node.module else [a.name for a in node.names]
    return out


def test_the_package_has_no_import_cycle() -> None:
    graph = {p.stem: set(_imports(p)) for p in PKG.glob("*.py")}

    def reaches(start: str, goal: str, seen: set) -> bool:
        return any(m == goal or (m not in seen and not seen.add(m) and reaches(m, goal, seen)) for m in graph.get(start, ()))

    assert [m for m in graph if reaches(m, m, set())] == []


def test_no_msgpack_header_or_error_answer_is_spelled_in_the_package() -> None:
    for path in PKG.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not [h for h in ("\\x82", "\\x84", "\\x85", "\\xa1") if h in text], path.name
        assert "too_large_response" not in text and '"ok": False' not in text, path.name
