"""AssemblyError as users meet it: a ValueError with code, path, message,
offset (template errors, from the wire's ``offset`` key) and detail
(``internal``: the engine's words, never in the message)."""

from __future__ import annotations

import pickle
import msgpack
import pytest
import wasmtime

import polyloop_assembly as pa
from polyloop_assembly import _consts, _crossing, _runtime

from conftest import load_reference

R = load_reference()


def test_assembly_error_is_a_value_error() -> None:
    with pytest.raises(ValueError) as info:
        pa.assemble({"observation_template": "{observation}", "v": 2})
    e = info.value
    assert isinstance(e, pa.AssemblyError)
    assert (e.code, e.path, e.offset, e.detail) == ("unsupported_version", "v", None, None)
    back = pickle.loads(pickle.dumps(e))
    assert (back.code, back.path, back.message, back.offset, back.detail, str(back)) == (
        e.code,
        e.path,
        e.message,
        e.offset,
        e.detail,
        str(e),
    )


@pytest.mark.parametrize("template", ["abc {", "{observation", "{observation:>>>}", "x}", "{nope}", "é{observation!z}"])
def test_template_offset_follows_the_wire(template: str) -> None:
    """offset is the error map's ``offset`` key as the core sends it, and
    agrees with the reference (None where the wire carries none)."""
    raw = msgpack.unpackb(pa.assemble_bytes(R.pack({"observation_template": template})), raw=False)
    assert raw["error"]["code"] == "invalid_template"
    with pytest.raises(pa.AssemblyError) as info:
        pa.validate_template(template)
    assert info.value.code == "invalid_template" and info.value.path == "observation_template"
    assert info.value.offset == raw["error"].get("offset")


def _answering(monkeypatch: pytest.MonkeyPatch, response: bytes) -> pa.Assembler:
    asm = pa.Assembler(max_instances=1)
    real = asm.pool.call  # the error call answers; every other call answers ``response``
    monkeypatch.setattr(asm.pool, "call", lambda request, op=0: real(request, op) if op == _consts.CALL_ERROR else response)
    return asm


def test_offset_is_read_from_the_error_map(monkeypatch: pytest.MonkeyPatch) -> None:
    error = {"code": "invalid_template", "message": "single '}' at offset 7", "path": "observation_template", "offset": 3}
    asm = _answering(monkeypatch, msgpack.packb({"v": 1, "ok": False, "error": error}))
    with pytest.raises(pa.AssemblyError) as info:
        asm.validate_template("anything")
    assert info.value.offset == 3  # the key, not the number in the message
    prompt_asm = pa.Assembler(max_instances=1)
    prompt = prompt_asm.prompt({"observation_template": "{observation}"})
    monkeypatch.setattr(
        prompt_asm.pool,
        "call",
        lambda request, op=0: msgpack.packb({"v": 1, "ok": False, "error": dict(error, path="steps[0].observation")}),
    )
    with pytest.raises(pa.AssemblyError) as info:
        prompt.add_step("a", "b")
    assert (info.value.path, info.value.offset) == ("steps[0].observation", 3)


@pytest.mark.parametrize(
    "response",
    [
        b"\xc1",  # never used in msgpack
        b"",
        msgpack.packb([1, 2]),
        msgpack.packb({"v": 1, "ok": False}),
        msgpack.packb({"v": 1, "ok": False, "error": {"code": 7, "message": "m", "path": ""}}),
        msgpack.packb({"v": 1, "ok": False, "error": {"code": "x", "message": "m", "path": "", "offset": -1}}),
        msgpack.packb({"v": 1, "ok": False, "error": {"code": "x", "message": "m", "path": "", "extra": 1}}),
    ],
    ids=["reserved-byte", "empty", "array", "no-error", "int-code", "negative-offset", "extra-key"],
)
def test_bytes_that_are_not_a_response(monkeypatch: pytest.MonkeyPatch, response: bytes) -> None:
    asm = _answering(monkeypatch, response)
    with pytest.raises(pa.AssemblyError) as info:
        asm.assemble({"observation_template": "{observation}"})
    e = info.value
    assert (e.code, e.path, e.message) == ("internal", "", _consts.MSG_BAD_RESPONSE)
    assert e.detail  # what was wrong, for whoever asks


def test_a_trap_that_is_not_out_of_memory() -> None:
    inst = _runtime.get_runtime().new_instance()
    failure = inst._failure(wasmtime.Trap("wasm `unreachable` instruction executed"))
    e = _crossing.error_answer(pa.default_assembler().pool, op=_consts.CALL_ASSEMBLE, error=failure.kind, detail=failure.detail)
    assert (e.code, e.path, e.message) == ("internal", "", _consts.MSG_TRAPPED)
    assert e.detail is not None and "unreachable" in e.detail and "unreachable" not in e.message
    inst._on_stderr(b"fatal error: out of memory\n")
    # the Go runtime's stderr names the kind: out of memory
    assert inst._failure(wasmtime.Trap("x")).kind == "out_of_memory"


def test_out_of_memory_is_named_however_long_the_trace_after_it() -> None:
    # docs/SPEC.md §7.5: every host keeps the FIRST STDERR_KEEP_BYTES of the
    # module's stderr; the Go runtime says why it died before its traces.
    inst = _runtime.get_runtime().new_instance()
    inst._on_stderr(b"runtime: out of memory: cannot allocate 8192-byte block\nfatal error: out of memory\n\n")
    for k in range(400):  # ~20 KB of goroutine trace, in the chunks the runtime writes
        inst._on_stderr(b"goroutine %d [running]:\nmain.f(0x%x)\n\t/src/x.go:%d +0x1f\n" % (k, k, k))
    failure = inst._failure(wasmtime.Trap("wasm trap: wasm `unreachable` instruction executed"))
    e = _crossing.error_answer(pa.default_assembler().pool, op=_consts.CALL_ASSEMBLE, error=failure.kind, detail=failure.detail)
    assert (e.code, e.message) == ("internal", _consts.MSG_OUT_OF_MEMORY)
    assert e.detail is not None and "fatal error: out of memory" in e.detail
    assert "goroutine 399" not in e.detail  # the tail past the kept bytes is dropped


def test_messages_of_internal_errors_are_the_shared_ones() -> None:
    # docs/SPEC.md §6: exactly these words in every host
    assert _consts.MSG_OUT_OF_MEMORY == (
        "the assembly module ran out of memory; the instance was discarded and the next call gets a fresh one"
    )
    assert _consts.MSG_TRAPPED == "the assembly module trapped; the instance was discarded and the next call gets a fresh one"
    assert _consts.MSG_BAD_RESPONSE == (
        "the assembly module returned bytes that are not a response; is the module from the same release as this binding?"
    )
