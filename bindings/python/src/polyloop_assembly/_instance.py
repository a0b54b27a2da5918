"""One instance of the module in its own store, and the one crossing (the module's wasm/README.md, "ABI").

A call writes the request into the module's buffer, runs ``call(op, size)`` and
copies the answer out, through ``wasmtime_func_call_unchecked`` (``_capi``:
wasmtime-py's ``Func.__call__`` costs ~25 µs), tested with :data:`FAST_PATH_TESTED`;
without those private names, through the public API, with one warning.
"""

from __future__ import annotations

import ctypes
import struct
import sys
import warnings
import weakref
from typing import Any, Dict, List, Optional, Sequence, Tuple

import wasmtime

from . import _capi
from ._module_cache import wasmtime_version
from ._consts import CALL_ASSEMBLE, CALL_BATCH
from ._consts import STDERR_KEEP_BYTES as _STDERR_KEEP
from ._consts import STDERR_OUT_OF_MEMORY as _STDERR_OOM
from ._errors import InstanceFailure

#: The wasmtime versions the fast call path was tested with (the dependency's bound).
FAST_PATH_TESTED = ">=50.0.1,<51"
_TESTED_MAJOR = 50

_MASK32 = 0xFFFFFFFF
_ITEM = struct.Struct("<II")  # a batch item's op and size
_LEN = struct.Struct("<I")  # a batch answer item's length
_MASK64 = 0xFFFFFFFFFFFFFFFF
_ARGS = struct.Struct("<I12xI")  # call's two i32 arguments, each the first 4 bytes of a 16-byte wasmtime_val_raw_t
_RESULT = struct.Struct("<Q")  # its i64 result, in the first slot

_FAST_AVAILABLE = _capi.AVAILABLE
_FAST_MISSING = _capi.MISSING

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
    if version.split(".")[0] != str(_TESTED_MAJOR):
        _warn_once(
            "wasmtime %s is outside the versions this binding was tested with (wasmtime%s); it runs, "
            "but install a tested version: pip install 'wasmtime%s'" % (version, FAST_PATH_TESTED, FAST_PATH_TESTED)
        )


# The exports' signatures (wasm/main.go): the unchecked calls rely on them.
_SIGNATURES = {"buffer": (("i32",), ("i64",)), "call": (("i32", "i32"), ("i64",))}
_SIGNED: "weakref.WeakSet[wasmtime.InstancePre]" = weakref.WeakSet()  # the modules whose signatures were checked


def _quiet_interrupts_in_finalizers() -> None:
    """A KeyboardInterrupt that lands in a finalizer of wasmtime's objects (an instance dropped after an
    interrupted call, the FuncType a public ``Func`` call makes) is dropped by CPython, which printed its
    traceback ("Exception ignored in Managed.__del__": 114 in a Ctrl-C storm, issue 44). It is dropped
    quietly now: the unraisable hook in place is given every other report, this hook's own too."""
    previous = sys.unraisablehook

    def hook(u: Any) -> None:
        obj = u.object
        if (
            isinstance(u.exc_value, KeyboardInterrupt)
            and getattr(obj, "__qualname__", "") == "Managed.__del__"
            and getattr(obj, "__module__", "").startswith("wasmtime")
        ):
            return
        previous(u)

    sys.unraisablehook = hook


_quiet_interrupts_in_finalizers()

# Trap does not derive from WasmtimeError; ExitTrap (proc_exit) does.
_WASM_FAILURES = (wasmtime.WasmtimeError, wasmtime.Trap)


def _engine_text(exc: BaseException) -> str:
    if isinstance(exc, wasmtime.ExitTrap):
        return "the module exited with status %s" % exc.code
    if isinstance(exc, wasmtime.Trap):
        code = exc.trap_code
        return "the module trapped (%s): %s" % (code.name.lower() if code is not None else "trap", exc)
    return "the module failed: %s" % exc


def _i32(x: int) -> int:
    """An unsigned 32-bit argument as the signed value an i32 holds."""
    return x - (1 << 32) if x > 0x7FFFFFFF else x


class Instance:
    """One instantiated module in its own store, for one thread at a time; ``memory_bytes``: its linear
    memory's size after the last call; ``fast``: calls take the fast call path."""

    def __init__(self, engine: wasmtime.Engine, pre: wasmtime.InstancePre, memory_limit_bytes: Optional[int] = None) -> None:
        store = wasmtime.Store(engine)
        wasi = wasmtime.WasiConfig()  # no args, env, preopens; stdout goes nowhere
        self._stderr = bytearray()  # the Go runtime's words when it dies, kept for .detail
        wasi.stderr_custom = self._on_stderr
        store.set_wasi(wasi)
        if memory_limit_bytes is not None:
            store.set_limits(memory_size=memory_limit_bytes)
        try:
            funcs, memory = self._exports(pre.instantiate(store), store)
            funcs["_initialize"](store)
        except _WASM_FAILURES as e:
            raise self._failure(e) from None
        self._store = store
        self._memory = memory
        self._buffer = funcs["buffer"]
        self._call = funcs["call"]
        self._fast: Optional[_capi.Handles] = None
        self.fast = False
        self._view = memoryview(b"")  # linear memory, re-made when its size changes
        self.memory_bytes = -1  # none read yet
        self._request_ptr = self._capacity = 0
        self._setup_fast(pre)
        self._request_buffer(0)  # the buffer's place and capacity (at least 64 KiB); reads the memory's size

    @staticmethod
    def _exports(instance: wasmtime.Instance, store: wasmtime.Store) -> Tuple[Dict[str, wasmtime.Func], wasmtime.Memory]:
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
        return funcs, memory

    def _on_stderr(self, data: bytes) -> None:
        # The first STDERR_KEEP_BYTES, as every host: the Go runtime writes why it died before its traces.
        room = _STDERR_KEEP - len(self._stderr)
        if room > 0:
            self._stderr += data[:room]

    def _failure(self, exc: BaseException) -> InstanceFailure:
        """The InstanceFailure of an engine failure, with its detail."""
        stderr = bytes(self._stderr).decode("utf-8", "replace").strip()
        detail = _engine_text(exc)
        if stderr:
            detail += "\nthe module's stderr (first %d bytes):\n%s" % (_STDERR_KEEP, stderr)
        # GAP: wasmtime's own words for a failed memory.grow are the engine's.
        oom = _STDERR_OOM in stderr or "out of memory" in str(exc).lower()
        return InstanceFailure(detail, out_of_memory=oom)

    def _setup_fast(self, pre: wasmtime.InstancePre) -> None:
        """Take the fast call path if this wasmtime has what it needs; else warn once. The exports' signatures
        are the module's: checked on its first instance only (their FuncType and ValType objects, made and
        dropped on every instance, were finalizers a Ctrl-C storm interrupted: "Exception ignored in
        Managed.__del__", issue 44)."""
        missing = _FAST_MISSING
        if _FAST_AVAILABLE:
            _check_version()
            for name, func in () if pre in _SIGNED else (("buffer", self._buffer), ("call", self._call)):
                ty = func.type(self._store)
                got = tuple(map(str, ty.params)), tuple(map(str, ty.results))
                if got != _SIGNATURES[name]:
                    raise RuntimeError(
                        "polyloop_assembly: the module's export %r has the signature %r, not %r; is "
                        "assembly.wasm from the same release as this binding?" % (name, got, _SIGNATURES[name])
                    )
            _SIGNED.add(pre)
            try:
                self._fast = _capi.Handles(self._store, self._buffer, self._call, self._memory)
                self.fast = True
                return
            except Exception as e:  # pragma: no cover - other wasmtime versions
                missing = "%s: %s" % (type(e).__name__, e)
        _warn_once(
            "wasmtime %s does not have the private C-API parts the fast call path uses (%s); every call takes "
            "the public API, about 5x slower per call. Install a tested version: pip install 'wasmtime%s'"
            % (wasmtime_version(), missing or "disabled", FAST_PATH_TESTED)
        )

    def _fast_failure(self, h: _capi.Handles, err: Optional[int]) -> InstanceFailure:
        """The InstanceFailure of a fast call that failed."""
        trap = h.take_trap()
        return self._failure(_capi.error(err) if err else trap if trap is not None else wasmtime.WasmtimeError("no trap"))

    def _export(self, func: wasmtime.Func, address: int, *args: int) -> int:
        """An export's i64 result, unsigned, for one or two i32 arguments (at its C ``address`` on the fast
        path, where both argument slots are written: ``buffer`` reads one)."""
        h = self._fast
        if h is None:
            try:
                out = func(self._store, *(_i32(x) for x in args))
            except _WASM_FAILURES as e:
                raise self._failure(e) from None
            return int(out) & _MASK64
        _ARGS.pack_into(h.raw_view, 0, args[0], args[-1])
        err = _capi.call_unchecked(h.context, address, h.raw_address, 2, h.trap_address)
        if err or h.trap:
            raise self._fast_failure(h, err)
        return int(_RESULT.unpack_from(h.raw_view)[0])

    def _sync_memory(self) -> int:
        """Linear memory's size after a call (which may have grown it: then the view of it is re-made)."""
        h = self._fast
        if h is not None:
            size: int = _capi.memory_data_size(h.context, h.memory)
        else:
            size = int(self._memory.data_len(self._store))
        if size != self.memory_bytes:
            if h is not None:
                base = _capi.memory_data(h.context, h.memory) or 0
            else:
                base = ctypes.cast(self._memory.data_ptr(self._store), ctypes.c_void_p).value or 0
            self._view = memoryview((ctypes.c_ubyte * size).from_address(base)).cast("B") if size else memoryview(b"")
            self.memory_bytes = size
        return size

    def _request_buffer(self, n: int) -> None:
        """Make the module's request buffer hold ``n`` bytes (``buffer(n)``)."""
        packed = self._export(self._buffer, self._fast.buffer if self._fast else 0, n)
        ptr, capacity = packed >> 32, packed & _MASK32
        if capacity < n or ptr + capacity > self._sync_memory():
            raise InstanceFailure("buffer returned a request buffer outside linear memory")
        self._request_ptr, self._capacity = ptr, capacity

    def call(self, request: bytes, op: int = CALL_ASSEMBLE) -> bytes:
        """The answer of call ``op`` to one request (at most 4 GiB - 1 bytes); InstanceFailure: discard the instance."""
        n = len(request)
        if n > self._capacity:
            self._request_buffer(n)
        if n:
            self._view[self._request_ptr : self._request_ptr + n] = request
        rptr, rlen = self._crossing(op, n)
        return self._view[rptr : rptr + rlen].tobytes()

    def call_batch(self, items: Sequence[Tuple[int, bytes]]) -> Optional[List[bytes]]:
        """The answers of the module's ``batch`` call on ``(op, request)`` items, framed straight into its
        buffer and copied straight out (the module's wasm/README.md, "Batches"); None if it is not a batch
        answer of as many items. InstanceFailure: as :meth:`call`."""
        n = 8 * len(items) + sum(len(data) for _, data in items)
        if n > self._capacity:
            self._request_buffer(n)
        view, at = self._view, self._request_ptr
        for op, data in items:
            size = len(data)
            _ITEM.pack_into(view, at, op, size)
            at += 8
            view[at : at + size] = data
            at += size
        rptr, rlen = self._crossing(CALL_BATCH, n)
        view, at, end = self._view, rptr, rptr + rlen
        out: List[bytes] = []
        while at + 4 <= end:
            (size,) = _LEN.unpack_from(view, at)
            at += 4
            if size > end - at:
                return None
            out.append(view[at : at + size].tobytes())
            at += size
        return out if at == end and len(out) == len(items) else None

    def _crossing(self, op: int, n: int) -> Tuple[int, int]:
        """The module's ``call(op, n)`` on the request in its buffer: the answer's place and length."""
        packed = self._export(self._call, self._fast.call if self._fast else 0, op, n)
        rptr, rlen = packed >> 32, packed & _MASK32
        if rptr + rlen > self._sync_memory():
            raise InstanceFailure("call returned an answer outside linear memory")
        return rptr, rlen
