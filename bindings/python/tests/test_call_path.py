"""The one-crossing call path (wasm/README.md "ABI") and the private parts of
wasmtime-py it uses (``_capi``): the same answers as wasmtime-py's public
``Func.__call__`` on the same instance, one export call per request, and a
clear warning when those private parts are not what they were."""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys
import textwrap
from typing import Any, Dict, List, Tuple

import msgpack
import pytest
import wasmtime

import polyloop_assembly as pa
from polyloop_assembly import _capi, _consts, _instance, _runtime

from conftest import load_reference

R = load_reference()

TINY = {"observation_template": "{observation}"}
STEPPED = {
    "run_messages": [{"role": "system", "content": [{"type": "text", "text": "You are an agent."}]}],
    "steps": [{"raw_output": "Thought: look", "observation": "found 3 files é 🙂"}],
    "observation_template": "Observation: {observation!r:>20}",
    "max_prompt_chars": 40,
}
# Longer than the request buffer's first capacity (64 KiB), then much longer (memory grows).
BIG = {"observation_template": "{observation}", "steps": [{"raw_output": "r", "observation": "ü" * 50_000}]}
HUGE = {"observation_template": "{observation}", "steps": [{"raw_output": "r", "observation": "x" * 3_000_000}]}


def _expected(request: Dict[str, Any]) -> bytes:
    resp, err = R.assemble_bytes(R.pack(request))
    assert err is None
    return resp


def _public_call(inst: _instance.Instance, request: bytes, op: int) -> Tuple[Tuple[int, int], bytes]:
    """One call by wasmtime-py's public API alone (Func.__call__, Memory.read/write) on
    ``inst``: the request buffer's (ptr, capacity) that ``buffer`` gave, and the answer."""
    store = inst._store
    packed = inst._buffer(store, len(request)) & 0xFFFFFFFFFFFFFFFF
    ptr, capacity = packed >> 32, packed & 0xFFFFFFFF
    inst._memory.write(store, request, ptr)
    packed = inst._call(store, op, len(request)) & 0xFFFFFFFFFFFFFFFF
    rptr, rlen = packed >> 32, packed & 0xFFFFFFFF
    return (ptr, capacity), bytes(inst._memory.read(store, rptr, rptr + rlen))


def test_the_fast_path_answers_as_func_call_on_the_same_instance() -> None:
    inst = _runtime.get_runtime().new_instance()
    assert inst.fast
    cases: List[Tuple[bytes, int, bytes]] = [(R.pack(r), _consts.CALL_ASSEMBLE, _expected(r)) for r in (TINY, STEPPED, BIG)]
    # JSON text that says a valid request: the bytes of the same request in msgpack
    cases.append((json.dumps(STEPPED).encode(), _consts.CALL_ASSEMBLE_JSON, _expected(STEPPED)))
    for request, op, want in cases:
        fast = inst.call(request, op)
        (ptr, capacity), public = _public_call(inst, request, op)
        assert fast == public == want
        # buffer(n) for n within the capacity the fast path knows: the same place
        assert (ptr, capacity) == (inst._request_ptr, inst._capacity)
        assert inst.call(request, op) == want  # and the fast path goes on after public calls
    # an error response: the same bytes both ways, the reference's code and path
    fast = inst.call(b"\x80")
    assert _public_call(inst, b"\x80", _consts.CALL_ASSEMBLE)[1] == fast
    error = msgpack.unpackb(fast, raw=False)["error"]
    assert (error["code"], error["path"]) == R.assemble_bytes(b"\x80")[1]


def _count_buffer_calls(inst: _instance.Instance, monkeypatch: pytest.MonkeyPatch) -> List[int]:
    sizes: List[int] = []
    real = inst._request_buffer

    def counted(n: int) -> None:
        sizes.append(n)
        real(n)

    monkeypatch.setattr(inst, "_request_buffer", counted)
    return sizes


@pytest.mark.parametrize("fast", [True, False], ids=["c-api", "public-api"])
def test_one_export_call_per_request(fast: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each request is one ``call``; ``buffer`` only when a request is longer
    than the capacity known; never alloc, free or the named exports."""
    if not fast:
        monkeypatch.setattr(_instance, "_FAST_AVAILABLE", False)
        monkeypatch.setattr(_instance, "_warned", True)
    inst = _runtime.get_runtime().new_instance()
    assert inst.fast is fast
    names = {id(f): name for name, f in _exports(inst).items()}
    called: List[str] = []
    real_func_call = wasmtime.Func.__call__
    real_c_call = _capi.call_unchecked
    addresses = {ctypes.addressof(f._func): name for name, f in _exports(inst).items()}

    def func_call(self: wasmtime.Func, *args: Any) -> Any:
        called.append(names[id(self)])
        return real_func_call(self, *args)

    def c_call(context: int, func: int, *args: Any) -> Any:
        called.append(addresses[func])
        return real_c_call(context, func, *args)

    monkeypatch.setattr(wasmtime.Func, "__call__", func_call)
    monkeypatch.setattr(_capi, "call_unchecked", c_call)
    buffers = _count_buffer_calls(inst, monkeypatch)
    requests = [TINY, STEPPED, TINY, BIG, BIG, STEPPED, HUGE, TINY]
    for r in requests:
        assert inst.call(R.pack(r)) == _expected(r)
    big, huge = len(R.pack(BIG)), len(R.pack(HUGE))
    assert buffers == [big, huge]  # the first capacity (64 KiB) holds TINY and STEPPED
    assert called == ["call"] * 3 + ["buffer"] + ["call"] * 3 + ["buffer"] + ["call"] * 2


def _exports(inst: _instance.Instance) -> Dict[str, wasmtime.Func]:
    return {"buffer": inst._buffer, "call": inst._call}


def test_the_gil_is_released_around_call_alone() -> None:
    """ctypes releases the GIL around a CDLL function and keeps it around a
    PyDLL one: ``call`` releases it, the memory queries do not."""
    pythonapi = ctypes._FUNCFLAG_PYTHONAPI  # type: ignore[attr-defined]
    assert not _capi.call_unchecked._flags_ & pythonapi
    assert _capi.memory_data._flags_ & pythonapi
    assert _capi.memory_data_size._flags_ & pythonapi


def test_a_changed_handle_warns_and_takes_the_public_api(monkeypatch: pytest.MonkeyPatch) -> None:
    """Func._func no longer a wasmtime_func_t: the instance says so and answers through the public API."""

    class Other(ctypes.Structure):
        _fields_ = [("x", ctypes.c_uint64)]

    monkeypatch.setattr(_capi, "_func_t", Other)
    monkeypatch.setattr(_instance, "_warned", False)
    with pytest.warns(RuntimeWarning, match=r"fast call path uses \(TypeError: Func\._func is wasmtime_func, not a Other\)"):
        inst = _runtime.get_runtime().new_instance()
    assert not inst.fast
    for r in (TINY, BIG):
        assert inst.call(R.pack(r)) == _expected(r)


_CHILD = textwrap.dedent(
    """
    import json, sys, warnings
    import wasmtime._bindings
    del wasmtime._bindings.wasmtime_val_raw_t  # as if a wasmtime release renamed it
    import polyloop_assembly as pa
    from polyloop_assembly import _capi
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = pa.assemble_bytes(bytes.fromhex(sys.argv[1]))
    print(json.dumps({"available": _capi.AVAILABLE, "missing": _capi.MISSING,
                      "warnings": [str(w.message) for w in caught], "out": out.hex()}))
    """
)


def test_a_missing_private_name_warns_and_takes_the_public_api() -> None:
    child = subprocess.run([sys.executable, "-c", _CHILD, R.pack(STEPPED).hex()], capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    got = json.loads(child.stdout)
    assert got["available"] is False and "wasmtime_val_raw_t" in got["missing"]
    assert len(got["warnings"]) == 1
    assert "does not have the private C-API parts the fast call path uses" in got["warnings"][0]
    assert "wasmtime_val_raw_t" in got["warnings"][0]
    assert bytes.fromhex(got["out"]) == _expected(STEPPED)


def test_the_module_call_numbers_are_the_binding_s() -> None:
    """Every Assembler entry point reaches the module as its call number (its words, WORDS_PYTHON, in the
    bits above: the calls whose errors the binding raises)."""
    asm = pa.Assembler(max_instances=1)
    ops: List[int] = []
    real = asm.pool.call

    def record(request: bytes, op: int = _consts.CALL_ASSEMBLE) -> bytes:
        ops.append(op)
        return real(request, op)

    asm.pool.call = record  # type: ignore[method-assign]
    asm.assemble(TINY)
    asm.assemble_json(json.dumps(TINY))
    prompt = asm.prompt(STEPPED)
    prompt.add_step("a", "b")
    pa.compare(TINY, TINY, assembler=asm)
    assert [op & 0xFF for op in ops] == [
        _consts.CALL_ASSEMBLE,
        _consts.CALL_ASSEMBLE_JSON,
        _consts.CALL_PROMPT_START,
        _consts.CALL_ADD_STEP,
        _consts.CALL_COMPARE,
    ]
    assert all(op & ~0xFF == _consts.WORDS_PYTHON for op in ops)
    assert asm.assemble_bytes(b"\x90")  # the bytes APIs: the wire's words
    assert ops[-1] == _consts.CALL_ASSEMBLE
