"""The WebAssembly side of the binding: one engine and compiled module per
process, cached on disk, and a pool of instances that each serve one call at a
time.

Module ABI (see ``wasm/main.go``): ``_initialize`` once per instance, then per
call ``alloc(size) -> ptr``, write the request at ``ptr``, ``assemble(ptr,
size) -> resp_ptr << 32 | resp_len`` (consumes the request buffer), copy the
response out, ``free(resp_ptr)``.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import sys
import tempfile
import threading
import weakref
from importlib import metadata, resources
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

import wasmtime

__all__ = [
    "CACHE_DIR_ENV",
    "DEFAULT_RECYCLE_BYTES",
    "InstanceFailure",
    "Pool",
    "Runtime",
    "cache_dir",
    "get_runtime",
]

#: Environment variable that overrides the directory of the compiled-module cache.
CACHE_DIR_ENV = "POLYLOOP_ASSEMBLY_CACHE_DIR"

#: An instance whose linear memory grew past this many bytes is discarded after
#: the call instead of going back to the pool (Go's heap never shrinks).
DEFAULT_RECYCLE_BYTES = 256 << 20

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF
_MODULE_RESOURCE = "assembly.wasm"


class InstanceFailure(Exception):
    """The instance trapped, exited or ran out of memory; it must be discarded."""


def cache_dir() -> Path:
    """Directory of the compiled-module cache.

    ``$POLYLOOP_ASSEMBLY_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/polyloop-assembly``,
    else ``~/.cache/polyloop-assembly``.
    """
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "polyloop-assembly"
    return Path.home() / ".cache" / "polyloop-assembly"


def _read_module_bytes() -> bytes:
    try:
        return (resources.files(__package__) / _MODULE_RESOURCE).read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(
            "polyloop_assembly: the WebAssembly module assembly.wasm is missing from the "
            "package; in a source checkout run `make python.wasm` (it builds wasm/assembly.wasm "
            "and copies it into bindings/python/src/polyloop_assembly/), then reinstall"
        ) from None


def _wasmtime_version() -> str:
    try:
        return metadata.version("wasmtime")
    except metadata.PackageNotFoundError:  # pragma: no cover - vendored wasmtime
        return "unknown"


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


#: Compiled modules kept in the cache directory (the newest ones); each is about 8 MB.
_CACHE_KEEP = 4


def _evict(keep: Path) -> None:
    """Remove this binding's older compiled modules beyond the newest _CACHE_KEEP.

    Unlinking is safe for processes that still map a removed file.
    """
    try:
        ours = [p for p in keep.parent.glob("*-wasmtime*.cwasm") if p.is_file() and p != keep]
        ours.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in ours[_CACHE_KEEP - 1:]:
            old.unlink()
    except OSError:
        pass


class Runtime:
    """The process-wide engine, compiled module and pre-linked WASI instance template.

    Attributes:
        module_sha256: hex SHA-256 of the module bytes (the cache key).
        cache_path: where the compiled module is (or would be) cached.
        cache_status: ``"warm"`` (deserialized from the cache), ``"cold"``
            (compiled, then written to the cache) or ``"uncached"`` (compiled;
            the cache could not be written).
    """

    def __init__(self, wasm: Optional[bytes] = None) -> None:
        if wasm is None:
            wasm = _read_module_bytes()
        self.engine = wasmtime.Engine()
        self.module_sha256 = hashlib.sha256(wasm).hexdigest()
        name = "%s-wasmtime%s-%s.cwasm" % (self.module_sha256, _wasmtime_version(), platform.machine() or "any")
        self.cache_path = cache_dir() / name
        self.module, self.cache_status = self._load(wasm)
        linker = wasmtime.Linker(self.engine)
        linker.define_wasi()
        self.pre = linker.instantiate_pre(self.module)

    def _load(self, wasm: bytes) -> Tuple[wasmtime.Module, str]:
        path = self.cache_path
        # deserialize_file maps the file (about 1 ms, against 10-60 ms to copy
        # 8 MB of code in): the cache is therefore only ever replaced whole
        # (_atomic_write), never rewritten in place under a running process.
        if path.is_file():
            try:
                return wasmtime.Module.deserialize_file(self.engine, str(path)), "warm"
            except Exception:  # stale, foreign or corrupt: compile afresh below
                pass
        sys.stderr.write(
            "polyloop_assembly: compiling the WebAssembly module (first use, a few seconds); "
            "caching it in %s\n" % path.parent
        )
        sys.stderr.flush()
        module = wasmtime.Module(self.engine, wasm)
        try:
            _atomic_write(path, bytes(module.serialize()))
        except OSError:
            return module, "uncached"
        _evict(path)
        return module, "cold"


_runtime: Optional[Runtime] = None
_runtime_lock = threading.Lock()


def get_runtime() -> Runtime:
    """The process-wide :class:`Runtime`, created (and the module loaded) on first use."""
    global _runtime
    rt = _runtime
    if rt is None:
        with _runtime_lock:
            rt = _runtime
            if rt is None:
                rt = _runtime = Runtime()
    return rt


# --- raw calls -------------------------------------------------------------
#
# wasmtime's ``Func.__call__`` re-reads the function type and converts every
# value on each call (about 25 µs); the three calls of one assembly go through
# the C API's ``wasmtime_func_call_unchecked`` instead (about 3 µs each), after
# the export's signature was checked once per instance. If this wasmtime's
# private ctypes names differ, the public API is used.

try:
    from wasmtime import _bindings as _wb

    _c_call_unchecked = _wb._wasmtime_func_call_unchecked
    _c_memory_data = _wb._wasmtime_memory_data
    _c_memory_data_size = _wb._wasmtime_memory_data_size
    _c_raw_t = _wb.wasmtime_val_raw_t
    _c_trap_ptr_t = ctypes.POINTER(_wb.wasm_trap_t)
    _FAST_AVAILABLE = True
except Exception:  # pragma: no cover - other wasmtime versions
    _FAST_AVAILABLE = False

# The exports' signatures (wasm/main.go): the unchecked calls rely on them.
_SIGNATURES = {
    "alloc": (("i32",), ("i32",)),
    "assemble": (("i32", "i32"), ("i64",)),
    "free": (("i32",), ()),
}


def _signature(func: "wasmtime.Func", store: "wasmtime.Store") -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    ty = func.type(store)
    return tuple(str(t) for t in ty.params), tuple(str(t) for t in ty.results)


# Trap does not derive from WasmtimeError; ExitTrap (proc_exit) does.
_WASM_FAILURES = (wasmtime.WasmtimeError, wasmtime.Trap)


def _describe(exc: BaseException) -> str:
    """One line saying how the instance failed."""
    if isinstance(exc, wasmtime.ExitTrap):
        return "the module exited with status %s (a Go runtime fatal error, such as running out of memory)" % exc.code
    if isinstance(exc, wasmtime.Trap):
        code = exc.trap_code
        what = code.name.lower() if code is not None else "trap"
        return "the module trapped (%s; the Go runtime aborts this way when it runs out of memory or panics)" % what
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return "the module failed: %s" % (lines[-1] if lines else type(exc).__name__)


class Instance:
    """One instantiated module in its own store. Not thread-safe: the pool
    hands each instance to one thread at a time."""

    def __init__(self, runtime: Runtime, memory_limit: Optional[int] = None) -> None:
        store = wasmtime.Store(runtime.engine)
        store.set_wasi(wasmtime.WasiConfig())  # no args, env, preopens; stdio go nowhere
        if memory_limit is not None:
            store.set_limits(memory_size=memory_limit)
        try:
            instance = runtime.pre.instantiate(store)
            exports = instance.exports(store)
            funcs = {}
            for name in ("_initialize", "alloc", "assemble", "free"):
                func = exports.get(name)
                if not isinstance(func, wasmtime.Func):
                    raise RuntimeError(
                        "polyloop_assembly: the module has no function export %r; is assembly.wasm the "
                        "output of this project's `make wasm`?" % name
                    )
                funcs[name] = func
            memory = exports.get("memory")
            if not isinstance(memory, wasmtime.Memory):
                raise RuntimeError("polyloop_assembly: the module exports no memory named 'memory'")
            funcs["_initialize"](store)
        except _WASM_FAILURES as e:
            raise InstanceFailure("instantiating the module failed: %s" % _describe(e)) from None
        self._store = store
        self._memory = memory
        self._alloc = funcs["alloc"]
        self._assemble = funcs["assemble"]
        self._free = funcs["free"]
        self.memory_bytes = 0
        self._fast = False
        if _FAST_AVAILABLE:
            try:
                self._setup_fast()
                self._call_fast(self._free_ref, 0, 0)  # free(0): unknown pointers are ignored
                self._fast = True
            except (InstanceFailure, RuntimeError):
                raise
            except Exception:  # pragma: no cover - other wasmtime versions
                self._fast = False
        self.memory_bytes = self._memory_size()

    # fast path -----------------------------------------------------------

    def _setup_fast(self) -> None:
        for name, func in (("alloc", self._alloc), ("assemble", self._assemble), ("free", self._free)):
            got = _signature(func, self._store)
            if got != _SIGNATURES[name]:
                raise RuntimeError(
                    "polyloop_assembly: the module's export %r has the signature %r, not %r; is "
                    "assembly.wasm the output of this project's `make wasm`?" % (name, got, _SIGNATURES[name])
                )
        self._ctx = self._store._context()
        self._mem_ref = ctypes.byref(self._memory._memory)
        self._alloc_ref = ctypes.byref(self._alloc._func)
        self._assemble_ref = ctypes.byref(self._assemble._func)
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
            raise InstanceFailure(_describe(wasmtime.WasmtimeError._from_ptr(err)))
        if self._trap:
            trap = wasmtime.Trap._from_ptr(self._trap)
            raise InstanceFailure(_describe(trap))
        return raw

    def _view(self) -> Tuple[int, int]:
        """(base address, size) of linear memory; the base is re-read only when
        the size changed (memory moves only when it grows)."""
        size = _c_memory_data_size(self._ctx, self._mem_ref)
        if size != self._view_size:
            self._view_base = ctypes.cast(_c_memory_data(self._ctx, self._mem_ref), ctypes.c_void_p).value or 0
            self._view_size = size
        return self._view_base, size

    def _memory_size(self) -> int:
        if self._fast:
            return int(_c_memory_data_size(self._ctx, self._mem_ref))
        return int(self._memory.data_len(self._store))

    def _memory_base(self) -> int:
        if self._fast:
            return ctypes.cast(_c_memory_data(self._ctx, self._mem_ref), ctypes.c_void_p).value or 0
        return ctypes.cast(self._memory.data_ptr(self._store), ctypes.c_void_p).value or 0

    # the call ------------------------------------------------------------

    def _call(self, name: str, a: int, b: int = 0) -> int:
        func = {"alloc": self._alloc, "assemble": self._assemble, "free": self._free}[name]
        args = tuple(x - (1 << 32) if x > 0x7FFFFFFF else x for x in ((a, b) if name == "assemble" else (a,)))
        try:
            out = func(self._store, *args)
        except _WASM_FAILURES as e:
            raise InstanceFailure(_describe(e)) from None
        return 0 if out is None else int(out)

    def call(self, request: bytes) -> bytes:
        """Run ``assemble`` on one request; return the response bytes.

        Raises:
            InstanceFailure: the instance trapped or exited; discard it.
        """
        n = len(request)
        if n > _MASK32:
            raise ValueError("request of %d bytes does not fit the module's 32-bit address space" % n)
        if self._fast:
            call = self._call_fast
            ptr = call(self._alloc_ref, n, 0)[0].i32 & _MASK32
            base, size = self._view()
            if ptr + n > size:
                raise InstanceFailure("alloc returned a buffer outside linear memory")
            if n:
                ctypes.memmove(base + ptr, request, n)
            packed = call(self._assemble_ref, ptr, n)[0].i64 & _MASK64
            rptr, rlen = packed >> 32, packed & _MASK32
            base, size = self._view()
            if rptr + rlen > size:
                raise InstanceFailure("assemble returned a response outside linear memory")
            out = ctypes.string_at(base + rptr, rlen)
            call(self._free_ref, rptr, 0)
            self.memory_bytes = size
            return out
        # public-API path
        ptr = self._call("alloc", n) & _MASK32
        if ptr + n > self._memory_size():
            raise InstanceFailure("alloc returned a buffer outside linear memory")
        if n:
            ctypes.memmove(self._memory_base() + ptr, request, n)
        packed = self._call("assemble", ptr, n) & _MASK64
        rptr, rlen = packed >> 32, packed & _MASK32
        size = self._memory_size()
        if rptr + rlen > size:
            raise InstanceFailure("assemble returned a response outside linear memory")
        out = ctypes.string_at(self._memory_base() + rptr, rlen)
        self._call("free", rptr)
        self.memory_bytes = size
        return out


_pools: "weakref.WeakSet[Pool]" = weakref.WeakSet()


class Pool:
    """A pool of at most ``max_instances`` instances of the module.

    Thread-safe: each call takes an idle instance (or creates one while fewer
    than ``max_instances`` exist, else waits for one), runs on it alone and
    gives it back. An instance that trapped, exited or ran out of memory is
    discarded, as is one whose linear memory grew past ``recycle_bytes``.
    """

    def __init__(
        self,
        max_instances: Optional[int] = None,
        memory_limit: Optional[int] = None,
        recycle_bytes: int = DEFAULT_RECYCLE_BYTES,
        runtime: Optional[Callable[[], Runtime]] = None,
    ) -> None:
        if max_instances is None:
            max_instances = min(8, max(2, os.cpu_count() or 2))
        if max_instances < 1:
            raise ValueError("max_instances must be at least 1, got %d" % max_instances)
        self.max_instances = max_instances
        self.memory_limit = memory_limit
        self.recycle_bytes = recycle_bytes
        self._runtime = runtime or get_runtime
        self._cond = threading.Condition(threading.Lock())
        self._idle: List[Instance] = []
        self._live = 0
        #: Instances discarded after a failure (for tests and monitoring).
        self.discarded_failed = 0
        #: Instances discarded because their memory outgrew ``recycle_bytes``.
        self.discarded_grown = 0
        _pools.add(self)

    def _acquire(self) -> Instance:
        with self._cond:
            while True:
                if self._idle:
                    return self._idle.pop()
                if self._live < self.max_instances:
                    self._live += 1
                    break
                self._cond.wait()
        try:
            return Instance(self._runtime(), self.memory_limit)
        except BaseException:
            with self._cond:
                self._live -= 1
                self._cond.notify()
            raise

    def _release(self, instance: Instance, keep: bool) -> None:
        with self._cond:
            if keep:
                self._idle.append(instance)
            else:
                self._live -= 1
            self._cond.notify()

    def call(self, request: bytes) -> bytes:
        """Run one request on a pooled instance.

        Raises:
            InstanceFailure: the instance failed (it has been discarded; the
                next call gets a fresh one).
        """
        instance = self._acquire()
        keep = False
        try:
            out = instance.call(request)
            if instance.memory_bytes > self.recycle_bytes:
                self.discarded_grown += 1
            else:
                keep = True
            return out
        except InstanceFailure:
            self.discarded_failed += 1
            raise
        finally:
            self._release(instance, keep)

    def clear(self) -> None:
        """Drop the idle instances (busy ones are dropped when given back)."""
        with self._cond:
            self._live -= len(self._idle)
            self._idle.clear()
            self._cond.notify_all()

    def _after_fork(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._idle = []
        self._live = 0


def _after_fork_in_child() -> None:
    global _runtime_lock
    _runtime_lock = threading.Lock()
    for pool in list(_pools):
        pool._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
