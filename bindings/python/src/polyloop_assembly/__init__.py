"""polyloop-assembly: the context-assembly engine of polyloop for Python.

Turns run messages, injected entries, goal messages and step history into the
message list an agent loop sends to a model, byte for byte as every other host
does: it runs the one Go core, compiled to WebAssembly, under wasmtime.

Entry points (the README's "API"):

- :func:`assemble` ``(request: AssembleRequest) -> AssembleResponse`` — raises
  :class:`AssemblyError`.
- :func:`assemble_bytes` ``(bytes) -> bytes`` — the msgpack wire function.
- :func:`assemble_json` ``(str | bytes) -> dict`` — a request written as JSON
  text, judged as the command-line tool judges it (``assemble_json_bytes``:
  the response bytes).
- :func:`validate_template` ``(str) -> None`` — check a template before a run.
- :class:`Prompt` ``(request)`` with ``add_step(raw_output, observation)`` — the
  incremental form for agent loops (``add_step`` returns the prompt;
  ``response()`` and ``step_count`` read it).
- :class:`Assembler` — the same functions on a pool with its own settings.
- :func:`warm` (or ``python -m polyloop_assembly warm``) — compile the module
  into the disk cache ahead of the first call.
- ``__version__`` (the release) and ``module_sha256`` (the hash of the
  packaged WebAssembly module).

Everything is thread-safe: calls run on a pool of WebAssembly instances, one
call per instance at a time (a :class:`Prompt` itself belongs to one loop).
"""

from ._assembler import (
    Assembler,
    AssemblyError,
    assemble,
    assemble_bytes,
    assemble_json,
    assemble_json_bytes,
    default_assembler,
    validate_template,
)
from ._prompt import Prompt
from ._compare import compare
from ._batch import assemble_bytes_many, assemble_json_many, assemble_many
from ._cache import CACHE_DIR_ENV, cache_dir
from ._runtime import CacheInfo, warm
from ._types import (
    AssembleRequest,
    AssembleResponse,
    Block,
    CompareSide,
    Comparison,
    Difference,
    ErrorCode,
    ErrorDetail,
    ErrorResponse,
    Injected,
    Injection,
    Message,
    PrefixDigests,
    PrefixDigestsMatch,
    Request,
    Response,
    Role,
    Step,
)

from ._runtime import module_sha256 as _module_sha256
from ._runtime import version as _version

#: The release of this package and of the module it ships (the project's VERSION).
__version__: str = _version()


def __getattr__(name: str) -> str:
    # module_sha256 is computed on first use (hashing the 3.6 MB module costs ~2 ms).
    if name == "module_sha256":
        return _module_sha256()
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


__all__ = [
    "compare",
    "CompareSide",
    "Comparison",
    "Difference",
    "PrefixDigestsMatch",
    "CACHE_DIR_ENV",
    "AssembleRequest",
    "AssembleResponse",
    "Assembler",
    "AssemblyError",
    "Block",
    "CacheInfo",
    "ErrorCode",
    "ErrorDetail",
    "ErrorResponse",
    "Injected",
    "Injection",
    "Message",
    "PrefixDigests",
    "Prompt",
    "Request",
    "Response",
    "Role",
    "Step",
    "assemble",
    "assemble_bytes",
    "assemble_bytes_many",
    "assemble_json",
    "assemble_json_bytes",
    "assemble_json_many",
    "assemble_many",
    "cache_dir",
    "default_assembler",
    "module_sha256",
    "validate_template",
    "warm",
]
