"""The private parts of the ``wasmtime`` package the fast call path uses, all here.

The library (``wasmtime._ffi.dll``) opened through ``ctypes.CDLL`` for
``wasmtime_func_call_unchecked`` (the GIL released around the module's work) and
``ctypes.PyDLL`` for the memory queries (kept: with two threads a release is a
hand-off); the C types and handles of wasmtime-py's objects. Whatever is missing,
:data:`MISSING` (or :class:`Handles`) says, and calls take the public API.
"""

from __future__ import annotations

import ctypes
from typing import Any, Optional

import wasmtime

_P = ctypes.c_void_p

try:
    from wasmtime import _bindings as _wb
    from wasmtime import _ffi

    _path = _ffi.dll._name
    # The GIL is released around this one: the module's work.
    call_unchecked: Any = ctypes.CDLL(_path).wasmtime_func_call_unchecked
    call_unchecked.argtypes = [_P, _P, _P, ctypes.c_size_t, _P]
    call_unchecked.restype = _P  # wasmtime_error_t *, None for no error
    _held = ctypes.PyDLL(_path)  # ... and kept around these: a few instructions each
    memory_data: Any = _held.wasmtime_memory_data
    memory_data.argtypes = [_P, _P]
    memory_data.restype = _P
    memory_data_size: Any = _held.wasmtime_memory_data_size
    memory_data_size.argtypes = [_P, _P]
    memory_data_size.restype = ctypes.c_size_t
    _raw_t = _wb.wasmtime_val_raw_t
    _context_p = ctypes.POINTER(_wb.wasmtime_context_t)
    _error_p = ctypes.POINTER(_wb.wasmtime_error_t)
    _trap_p = ctypes.POINTER(_wb.wasm_trap_t)
    _func_t = _wb.wasmtime_func_t
    _memory_t = _wb.wasmtime_memory_t
    for _cls, _name in ((wasmtime.WasmtimeError, "_from_ptr"), (wasmtime.Trap, "_from_ptr"), (wasmtime.Store, "_context")):
        if not callable(getattr(_cls, _name, None)):
            raise AttributeError("%s.%s is missing" % (_cls.__name__, _name))
    if ctypes.sizeof(_raw_t) != 16:  # wasmtime_val_raw_t: a union of 16 bytes (v128)
        raise TypeError("wasmtime_val_raw_t is %d bytes, not 16" % ctypes.sizeof(_raw_t))
    AVAILABLE = True
    MISSING = ""
except Exception as _e:  # pragma: no cover - other wasmtime versions
    AVAILABLE = False
    MISSING = "%s: %s" % (type(_e).__name__, _e)


def _attr(obj: Any, name: str, want: Any) -> Any:
    got = getattr(obj, name, None)
    if not isinstance(got, want):
        raise TypeError("%s.%s is %s, not a %s" % (type(obj).__name__, name, type(got).__name__, want.__name__))
    return got


class Handles:
    """The C handles of one instance (its store's context, ``buffer``, ``call``, memory, a call's argument
    and trap slots), each as an address, the objects kept alive. TypeError, AttributeError: wasmtime-py's
    objects no longer hold what they did."""

    def __init__(self, store: wasmtime.Store, buffer: wasmtime.Func, call: wasmtime.Func, memory: wasmtime.Memory) -> None:
        context = store._context()
        if not isinstance(context, _context_p) or not context:
            raise TypeError("Store._context() is %s, not a wasmtime_context_t pointer" % type(context).__name__)
        self._keep = (store, buffer, call, memory, context)
        self.context: int = ctypes.cast(context, _P).value or 0
        self.buffer: int = ctypes.addressof(_attr(buffer, "_func", _func_t))
        self.call: int = ctypes.addressof(_attr(call, "_func", _func_t))
        self.memory: int = ctypes.addressof(_attr(memory, "_memory", _memory_t))
        #: Two wasmtime_val_raw_t: the arguments in, the result out.
        self.raw = (_raw_t * 2)()
        self.raw_address: int = ctypes.addressof(self.raw)
        self.raw_view = memoryview(self.raw).cast("B")  # the same bytes, for struct
        self._new_trap_slot()

    def _new_trap_slot(self) -> None:
        self.trap = _trap_p()
        self.trap_address: int = ctypes.addressof(self.trap)

    def take_trap(self) -> Optional[wasmtime.Trap]:
        """The trap the last call left (the Trap owns it; the slot is fresh), or None."""
        if not self.trap:
            return None
        trap = wasmtime.Trap._from_ptr(self.trap)
        self._new_trap_slot()
        return trap


def error(address: int) -> wasmtime.WasmtimeError:
    """The exception wasmtime-py raises for the ``wasmtime_error_t`` at ``address`` (it owns the error)."""
    return wasmtime.WasmtimeError._from_ptr(ctypes.cast(address, _error_p))
