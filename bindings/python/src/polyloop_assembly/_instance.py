"""One instance of the module in its own store, and the fast call path.

Module ABI (see ``wasm/README.md``): ``_initialize`` once per instance, then per
call ``alloc(size) -> ptr``, write the request at ``ptr``, ``assemble(ptr,
size) -> resp_ptr << 32 | resp_len`` (consumes the request buffer; or
``assemble_json``, the same for a request written as JSON text, or
``add_step``, the same for an add_step request of an incremental prompt:
the project's docs/SPEC.md §7.3.1, in the source repository), copy the
response out, ``free(resp_ptr)``.

The fast call path: wasmtime's ``Func.__call__`` re-reads the function type and
converts every value on each call (about 25 µs); the three calls of one
assembly go through the C API's ``wasmtime_func_call_unchecked`` instead (about
3 µs each), after the exports' signatures were checked once per instance. It
uses private names of the ``wasmtime`` package, so it is tied to the versions
it was tested with (:data:`FAST_PATH_TESTED`, the same bound as the package's
dependency); if the names are missing, calls take the public API with a
:class:`RuntimeWarning` saying so, once per process.
"""

from __future__ import annotations

import ctypes
import warnings
from typing import Any, Dict, Optional, Tuple

import wasmtime

from ._cache import wasmtime_version
from ._consts import STDERR_KEEP_BYTES as _STDERR_KEEP
from ._errors import InstanceFailure

__all__ = ["CALLS", "FAST_PATH_TESTED", "Instance", "fast_path_available"]

#: The wasmtime versions the fast call path was tested with (the dependency's bound).
FAST_PATH_TESTED = ">=50.0.1,<51"
_TESTED_MAJOR = 50

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF

try:
    from wasmtime import _bindings as _wb

    _c_call_unchecked = _wb._wasmtime_func_call_unchecked
    _c_memory_data = _wb._wasmtime_memory_data
    _c_memory_data_size = _wb._wasmtime_memory_data_size
    _c_raw_t = _wb.wasmtime_val_raw_t
    _c_trap_ptr_t = ctypes.POINTER(_wb.wasm_trap_t)
    _FAST_AVAILABLE = True
    _FAST_MISSING = ""
except Exception as _e:  # pragma: no cover - other wasmtime versions
    _FAST_AVAILABLE = False
    _FAST_MISSING = "%s: %s" % (type(_e).__name__, _e)

_warned = False


def fast_path_available() -> bool:
    """True if this wasmtime has the private names the fast call path uses."""
    return _FAST_AVAILABLE


def _warn_once(text: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn("polyloop_assembly: " + text, RuntimeWarning, stacklevel=4)


def _check_version() -> None:
    version = wasmtime_version()
    try:
        major = int(version.split(".")[0])
    except ValueError:
        major = -1
    if major != _TESTED_MAJOR:
        _warn_once(
            "wasmtime %s is outside the versions this binding was tested with (wasmtime%s); it runs, "
            "but install a tested version: pip install 'wasmtime%s'" % (version, FAST_PATH_TESTED, FAST_PATH_TESTED)
        )


#: The exports a call runs, each ``(ptr, size) -> resp_ptr << 32 | resp_len``:
#: a request in msgpack, one in JSON text, an add_step request, the request a prompt starts from,
#: a compare request (docs/SPEC.md §7.9, in the source repository).
CALLS = ("assemble", "assemble_json", "add_step", "prompt_start", "compare")

# The exports' signatures (wasm/main.go): the unchecked calls rely on them.
_SIGNATURES = {
    "alloc": (("i32",), ("i32",)),
    **{name: (("i32", "i32"), ("i64",)) for name in CALLS},
    "free": (("i32",), ()),
}

# Trap does not derive from WasmtimeError; ExitTrap (proc_exit) does.
_WASM_FAILURES = (wasmtime.WasmtimeError, wasmtime.Trap)


def _signature(func: wasmtime.Func, store: wasmtime.Store) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    ty = func.type(store)
    return tuple(str(t) for t in ty.params), tuple(str(t) for t in ty.results)


def _engine_text(exc: BaseException) -> str:
    if isinstance(exc, wasmtime.ExitTrap):
        return "the module exited with status %s" % exc.code
    if isinstance(exc, wasmtime.Trap):
        code = exc.trap_code
        return "the module trapped (%s): %s" % (code.name.lower() if code is not None else "trap", exc)
    return "the module failed: %s" % exc


class Instance:
    """One instantiated module in its own store. Not thread-safe: the pool
    hands each instance to one thread at a time.

    Attributes:
        memory_bytes: the size of its linear memory after the last call.
        fast: calls take the fast call path.
    """

    def __init__(self, engine: wasmtime.Engine, pre: wasmtime.InstancePre, memory_limit_bytes: Optional[int] = None) -> None:
        store = wasmtime.Store(engine)
        wasi = wasmtime.WasiConfig()  # no args, env, preopens; stdout goes nowhere
        self._stderr = bytearray()  # the Go runtime's words when it dies, kept for .detail
        wasi.stderr_custom = self._on_stderr
        store.set_wasi(wasi)
        if memory_limit_bytes is not None:
            store.set_limits(memory_size=memory_limit_bytes)
        try:
            instance = pre.instantiate(store)
            exports = instance.exports(store)
            funcs: Dict[str, wasmtime.Func] = {}
            for name in ("_initialize", *_SIGNATURES):
                func = exports.get(name)
                if not isinstance(func, wasmtime.Func):
                    raise RuntimeError(
                        "polyloop_assembly: the module has no function export %r; is assembly.wasm from the "
                        "same release as this binding?" % name
                    )
                funcs[name] = func
            memory = exports.get("memory")
            if not isinstance(memory, wasmtime.Memory):
                raise RuntimeError("polyloop_assembly: the module exports no memory named 'memory'")
            funcs["_initialize"](store)
        except _WASM_FAILURES as e:
            raise self._failure(e) from None
        self._store = store
        self._memory = memory
        self._alloc = funcs["alloc"]
        self._calls = {name: funcs[name] for name in CALLS}
        self._free = funcs["free"]
        self.memory_bytes = 0
        self.fast = False
        missing = _FAST_MISSING
        if _FAST_AVAILABLE:
            _check_version()
            try:
                self._setup_fast()
                self._call_fast(self._free_ref, 0, 0)  # free(0): unknown pointers are ignored
                self.fast = True
            except (InstanceFailure, RuntimeError):
                raise
            except Exception as e:  # pragma: no cover - other wasmtime versions
                missing = "%s: %s" % (type(e).__name__, e)
        if not self.fast:
            _warn_once(
                "wasmtime %s lacks the private C-API names of the fast call path (%s); every call takes "
                "the public API, about 5x slower per call. Install a tested version: pip install 'wasmtime%s'"
                % (wasmtime_version(), missing or "disabled", FAST_PATH_TESTED)
            )
        self.memory_bytes = self._memory_size()

    def _on_stderr(self, data: bytes) -> None:
        buf = self._stderr
        buf.extend(data)
        if len(buf) > 2 * _STDERR_KEEP:
            del buf[: len(buf) - _STDERR_KEEP]

    def _failure(self, exc: BaseException) -> InstanceFailure:
        """The InstanceFailure for an engine failure: out of memory or a trap, with the detail."""
        stderr = bytes(self._stderr[-_STDERR_KEEP:]).decode("utf-8", "replace").strip()
        detail = _engine_text(exc)
        if stderr:
            detail += "\nthe module's stderr:\n" + stderr
        oom = "out of memory" in stderr or "out of memory" in str(exc).lower()
        return InstanceFailure(detail, out_of_memory=oom)

    # the fast path -------------------------------------------------------

    def _setup_fast(self) -> None:
        for name, func in (("alloc", self._alloc), *self._calls.items(), ("free", self._free)):
            got = _signature(func, self._store)
            if got != _SIGNATURES[name]:
                raise RuntimeError(
                    "polyloop_assembly: the module's export %r has the signature %r, not %r; is "
                    "assembly.wasm from the same release as this binding?" % (name, got, _SIGNATURES[name])
                )
        self._ctx = self._store._context()
        self._mem_ref = ctypes.byref(self._memory._memory)
        self._alloc_ref = ctypes.byref(self._alloc._func)
        self._call_refs = {name: ctypes.byref(func._func) for name, func in self._calls.items()}
        self._free_ref = ctypes.byref(self._free._func)
        self._raw = (_c_raw_t * 2)()  # arguments in, results out
        self._trap = _c_trap_ptr_t()
        self._trap_ref = ctypes.byref(self._trap)
        self._view_base = 0
        self._view_size = -1

    def _call_fast(self, func_ref: Any, a: int, b: int) -> Any:
        """Call an export through the C API; return the raw value array."""
        raw = self._raw
        raw[0].i32 = a - (1 << 32) if a > 0x7FFFFFFF else a
        raw[1].i32 = b - (1 << 32) if b > 0x7FFFFFFF else b
        err = _c_call_unchecked(self._ctx, func_ref, raw, 2, self._trap_ref)
        if err:
            raise self._failure(wasmtime.WasmtimeError._from_ptr(err))
        if self._trap:
            trap = wasmtime.Trap._from_ptr(self._trap)
            self._trap = _c_trap_ptr_t()
            self._trap_ref = ctypes.byref(self._trap)
            raise self._failure(trap)
        return raw

    def _view(self) -> Tuple[int, int]:
        """(base address, size) of linear memory; the base is re-read only when
        the size changed (memory moves only when it grows)."""
        size = _c_memory_data_size(self._ctx, self._mem_ref)
        if size != self._view_size:
            self._view_base = ctypes.cast(_c_memory_data(self._ctx, self._mem_ref), ctypes.c_void_p).value or 0
            self._view_size = size
        return self._view_base, size

    # the public-API path -------------------------------------------------

    def _memory_size(self) -> int:
        if self.fast:
            return int(_c_memory_data_size(self._ctx, self._mem_ref))
        return int(self._memory.data_len(self._store))

    def _memory_base(self) -> int:
        return ctypes.cast(self._memory.data_ptr(self._store), ctypes.c_void_p).value or 0

    def _call_public(self, func: wasmtime.Func, *args: int) -> int:
        try:
            out = func(self._store, *(x - (1 << 32) if x > 0x7FFFFFFF else x for x in args))
        except _WASM_FAILURES as e:
            raise self._failure(e) from None
        return 0 if out is None else int(out)

    # the call ------------------------------------------------------------

    def call(self, request: bytes, export: str = "assemble") -> bytes:
        """Run the export ``export`` (one of :data:`CALLS`) on one request (at
        most 4 GiB - 1 bytes); return the response bytes.

        Raises:
            InstanceFailure: the instance trapped, exited or ran out of memory; discard it.
        """
        n = len(request)
        if self.fast:
            call = self._call_fast
            ptr = call(self._alloc_ref, n, 0)[0].i32 & _MASK32
            base, size = self._view()
            if ptr + n > size:
                raise InstanceFailure("alloc returned a buffer outside linear memory")
            if n:
                ctypes.memmove(base + ptr, request, n)
            packed = call(self._call_refs[export], ptr, n)[0].i64 & _MASK64
            rptr, rlen = packed >> 32, packed & _MASK32
            base, size = self._view()
            if rptr + rlen > size:
                raise InstanceFailure("assemble returned a response outside linear memory")
            out = ctypes.string_at(base + rptr, rlen)
            call(self._free_ref, rptr, 0)
            self.memory_bytes = size
            return out
        call_public = self._call_public
        ptr = call_public(self._alloc, n) & _MASK32
        if ptr + n > self._memory_size():
            raise InstanceFailure("alloc returned a buffer outside linear memory")
        if n:
            ctypes.memmove(self._memory_base() + ptr, request, n)
        packed = call_public(self._calls[export], ptr, n) & _MASK64
        rptr, rlen = packed >> 32, packed & _MASK32
        size = self._memory_size()
        if rptr + rlen > size:
            raise InstanceFailure("assemble returned a response outside linear memory")
        out = ctypes.string_at(self._memory_base() + rptr, rlen)
        call_public(self._free, rptr)
        self.memory_bytes = size
        return out
