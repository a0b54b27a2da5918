"""polyloop-assembly: the context-assembly engine of polyloop for Python.

Turns run messages, injected entries, goal messages and step history into the
message list an agent loop sends to a model, byte for byte as every other host
does: it runs the one Go core, compiled to WebAssembly, under wasmtime.

Entry points (SPEC §7):

- :func:`assemble` ``(request: Mapping) -> dict`` — raises :class:`AssemblyError`.
- :func:`assemble_bytes` ``(bytes) -> bytes`` — the msgpack wire function.
- :func:`validate_template` ``(str) -> None`` — check a template before a run.
- :class:`Prompt` ``(request)`` with ``add_step(raw_output, observation)`` — the
  incremental form for agent loops.
- :class:`Assembler` — the same functions on a pool with its own settings.

Everything is thread-safe: calls run on a pool of WebAssembly instances, one
call per instance at a time (a :class:`Prompt` itself belongs to one loop).
"""

from ._api import (
    Assembler,
    AssemblyError,
    Prompt,
    assemble,
    assemble_bytes,
    default_assembler,
    validate_template,
)
from ._batch import assemble_bytes_many, assemble_many
from ._runtime import CACHE_DIR_ENV, cache_dir
from ._types import (
    Block,
    ErrorCode,
    ErrorDetail,
    ErrorResponse,
    Injected,
    Injection,
    Message,
    PrefixDigests,
    Request,
    Response,
    Role,
    Step,
)

__version__ = "0.1.0"

__all__ = [
    "CACHE_DIR_ENV",
    "Assembler",
    "AssemblyError",
    "Block",
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
    "assemble_many",
    "cache_dir",
    "default_assembler",
    "validate_template",
]
