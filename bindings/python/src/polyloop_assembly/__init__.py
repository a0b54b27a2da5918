"""polyloop-assembly: the context-assembly engine of polyloop for Python.

The message list an agent loop sends to a model, byte for byte as every other
host makes it: the one Go core, compiled to WebAssembly, under wasmtime. The
API is the README's "API"; everything is thread-safe (a :class:`Prompt`
belongs to one loop).
"""

from ._errors import AssemblyError
from ._assembler import (
    Assembler,
    Prompt,
    assemble,
    assemble_bytes,
    assemble_json,
    assemble_json_bytes,
    compare,
    default_assembler,
    validate_template,
)
from ._batch import assemble_bytes_many, assemble_json_many, assemble_many
from ._module_cache import CACHE_DIR_ENV, cache_dir
from ._prompt_caching import CacheRun, RequestLike, UsageLike, cache_report, export
from ._runtime import CacheInfo, warm
from . import _types
from ._types import *  # noqa: F403 - the wire format's TypedDicts, generated: all of _types.__all__

from ._runtime import module_sha256 as _module_sha256
from ._runtime import version as _version

#: The release of this package and of the module it ships (the project's VERSION).
__version__: str = _version()


def __getattr__(name: str) -> str:
    # module_sha256 is computed on first use: hashing the module costs start-up time that most processes never need.
    if name == "module_sha256":
        return _module_sha256()
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


__all__ = [
    "CACHE_DIR_ENV",
    "Assembler",
    "AssemblyError",
    "CacheInfo",
    "CacheRun",
    "Prompt",
    "RequestLike",
    "UsageLike",
    "assemble",
    "assemble_bytes",
    "assemble_bytes_many",
    "assemble_json",
    "assemble_json_bytes",
    "assemble_json_many",
    "assemble_many",
    "cache_dir",
    "cache_report",
    "compare",
    "default_assembler",
    "export",
    "module_sha256",  # noqa: F405 - made on first use by __getattr__
    "validate_template",
    "warm",
]
__all__ += _types.__all__
