"""The process-wide runtime: one wasmtime engine, the compiled module (``_module_cache``) and a pre-linked WASI
instance template; the package's data (module, version)."""

from __future__ import annotations

import hashlib
import time
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import NamedTuple, Optional

import wasmtime

from . import _fork, _module_cache
from ._instance import Instance

_MODULE_RESOURCE = "assembly.wasm"
_VERSION_RESOURCE = "VERSION"


def _read_resource(name: str) -> bytes:
    try:
        return (resources.files(__package__) / name).read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(
            "polyloop_assembly: %s is missing from the installed package, so this installation is "
            "broken; reinstall polyloop-assembly from PyPI, or in a source checkout build the package "
            "with `make dist` and install dist/*.whl" % name
        ) from None


@lru_cache(maxsize=1)
def version() -> str:
    """The release of the package and of its module (the project's VERSION)."""
    return _read_resource(_VERSION_RESOURCE).decode("ascii").strip()


@lru_cache(maxsize=1)
def module_sha256() -> str:
    """Hex SHA-256 of the packaged module (``assembly.wasm``), the cache key."""
    return hashlib.sha256(_read_resource(_MODULE_RESOURCE)).hexdigest()


class Runtime:
    """The engine, compiled module and pre-linked WASI instance template; ``module_sha256``,
    ``cache_path``, ``cache_status`` (``_module_cache.Status``) and ``load_seconds`` say how it was obtained."""

    def __init__(self, wasm: Optional[bytes] = None) -> None:
        module_bytes = _read_resource(_MODULE_RESOURCE) if wasm is None else wasm
        t0 = time.perf_counter()
        self.engine = wasmtime.Engine()
        self.module_sha256 = hashlib.sha256(module_bytes).hexdigest()
        self.module, self.cache_status, self.cache_path = _module_cache.load_module(
            self.engine, self.module_sha256, lambda: wasmtime.Module(self.engine, module_bytes), len(module_bytes)
        )
        self.load_seconds = time.perf_counter() - t0
        linker = wasmtime.Linker(self.engine)
        linker.define_wasi()
        self.pre = linker.instantiate_pre(self.module)

    def new_instance(self, memory_limit_bytes: Optional[int] = None) -> Instance:
        """A fresh instance of the module."""
        return Instance(self.engine, self.pre, memory_limit_bytes)


_runtime: "_fork.Lazy[Runtime]" = _fork.Lazy(Runtime)


def get_runtime() -> Runtime:
    """The process-wide :class:`Runtime`, created (and the module loaded) on first use."""
    return _runtime.get()


def release() -> None:
    """Drop the process-wide runtime (at exit); a later call would load it again."""
    _runtime.value = None


def new_instance(memory_limit_bytes: Optional[int] = None) -> Instance:
    """A fresh instance of the process-wide runtime's module."""
    return get_runtime().new_instance(memory_limit_bytes)


class CacheInfo(NamedTuple):
    """What :func:`warm` did."""

    status: str
    """``"warm"``, ``"cold"``, ``"uncached"`` or ``"disabled"`` (see :class:`Runtime`)."""
    path: Optional[Path]
    """The compiled module's file; None if the cache is disabled."""
    seconds: float
    """How long loading or compiling took."""


def warm() -> CacheInfo:
    """Compile the module into the disk cache now unless it is there (and load it here): run it (or
    ``python -m polyloop_assembly warm``) at install or deploy time, so no process pays the compile
    (a few seconds) on its first call. Many processes at once compile once."""
    rt = get_runtime()
    return CacheInfo(rt.cache_status, rt.cache_path, rt.load_seconds)
