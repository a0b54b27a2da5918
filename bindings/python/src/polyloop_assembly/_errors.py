"""The binding's one exception, and the host-independent words of ``internal`` errors.

The three ``internal`` messages (``MSG_*``, generated from Go into
:mod:`._consts`) are the same in every host (Go, Python, JS; the project's docs/SPEC.md §6,
in the source repository):
what the engine said goes into :attr:`AssemblyError.detail`, never into the
message, so a message is repeatable and comparable across hosts.
"""

from __future__ import annotations

from typing import Any, Mapping, NoReturn, Optional, cast

import msgpack  # type: ignore[import-untyped]

from ._consts import (
    MAX_REQUEST_BYTES,
    MSG_BAD_RESPONSE,
    MSG_OUT_OF_MEMORY,
    MSG_TRAPPED,
    WIRE_VERSION,
    msg_request_too_large,
)
from ._types import ErrorCode

__all__ = [
    "MSG_BAD_RESPONSE",
    "MSG_OUT_OF_MEMORY",
    "MSG_TRAPPED",
    "MAX_REQUEST_BYTES",
    "AssemblyError",
    "InstanceFailure",
    "error_of_response",
    "raise_error_response",
    "too_large_response",
]


class AssemblyError(ValueError):
    """An assembly failed: the core's error response, raised.

    A ``ValueError``: a request is a value, and a bad one is a bad value.

    Attributes:
        code: one of the codes of the README's "API" (:data:`ErrorCode`), e.g. ``"invalid_template"``.
        path: the offending value, e.g. ``"steps[3].observation"``; ``""``
            for the whole request.
        message: what is wrong and what to do, for people.
        offset: for ``invalid_template``, the code-point offset of the problem
            in the template (the wire's ``offset`` key); None otherwise.
        detail: for ``internal``, what the engine reported (trap text, the Go
            runtime's stderr); None otherwise. Never part of :attr:`message`.

    ``code == "internal"`` with ``path == ""`` is raised when the WebAssembly
    instance trapped, exited or ran out of memory (the instance has then been
    discarded and the next call runs on a fresh one), with one message per
    kind, the same in every host.
    """

    code: ErrorCode
    path: str
    message: str
    offset: Optional[int]
    detail: Optional[str]

    def __init__(
        self,
        code: ErrorCode,
        path: str,
        message: str,
        *,
        offset: Optional[int] = None,
        detail: Optional[str] = None,
    ) -> None:
        super().__init__(code, path, message)
        self.code = code
        self.path = path
        self.message = message
        self.offset = offset
        self.detail = detail

    def __str__(self) -> str:
        if self.path:
            return "%s at %s: %s" % (self.code, self.path, self.message)
        return "%s: %s" % (self.code, self.message)

    def __reduce__(self) -> Any:
        return (_rebuild_error, (self.code, self.path, self.message, self.offset, self.detail))


def _rebuild_error(code: ErrorCode, path: str, message: str, offset: Optional[int], detail: Optional[str]) -> AssemblyError:
    return AssemblyError(code, path, message, offset=offset, detail=detail)


class InstanceFailure(Exception):
    """The instance trapped, exited or ran out of memory; it must be discarded.

    Attributes:
        out_of_memory: the failure was the module running out of memory.
        detail: what the engine and the module's stderr said.
    """

    def __init__(self, detail: str, out_of_memory: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.out_of_memory = out_of_memory

    def to_error(self) -> AssemblyError:
        """The ``internal`` :class:`AssemblyError` users see for this failure."""
        message = MSG_OUT_OF_MEMORY if self.out_of_memory else MSG_TRAPPED
        return AssemblyError("internal", "", message, detail=self.detail)


def raise_error_response(response: Any) -> NoReturn:
    """Raise the :class:`AssemblyError` of a decoded error response (see :func:`error_of_response`)."""
    raise error_of_response(response)


def error_of_response(response: Any) -> AssemblyError:
    """The :class:`AssemblyError` of a decoded error response (the README's
    "Errors"; the project's docs/SPEC.md §6, in the source repository).

    Anything else (not a map, no ``error`` map, fields of the wrong type) is
    ``internal`` with :data:`MSG_BAD_RESPONSE`.
    """
    err = response.get("error") if isinstance(response, Mapping) else None
    if isinstance(err, Mapping):
        code, path, message, offset = err.get("code"), err.get("path"), err.get("message"), err.get("offset")
        if (
            isinstance(code, str)
            and isinstance(path, str)
            and isinstance(message, str)
            and (offset is None or (type(offset) is int and offset >= 0))
            and set(err) <= {"code", "path", "message", "offset"}
        ):
            return AssemblyError(cast(ErrorCode, code), path, message, offset=offset)
    return AssemblyError("internal", "", MSG_BAD_RESPONSE, detail="the response decodes to %.200r" % (response,))


def too_large_response(size: int) -> bytes:
    """The core's ``too_large`` error response for a request of ``size`` bytes.

    Byte for byte what ``core.AssembleBytes`` answers (keys in the core's
    order: v, ok, error{code, message, path}); the binding answers it without
    copying the request into the module, as the Go hosts do.
    """
    return bytes(
        msgpack.packb(
            {
                "v": WIRE_VERSION,
                "ok": False,
                "error": {
                    "code": "too_large",
                    "message": msg_request_too_large(size),
                    "path": "",
                },
            }
        )
    )
