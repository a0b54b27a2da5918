"""The binding's one exception, and the failure of an instance that the core then words."""

from __future__ import annotations

from typing import Any, Mapping, Optional, cast

from ._consts import ErrorCode, HostError

__all__ = ["AssemblyError", "InstanceFailure", "error_of"]


class AssemblyError(ValueError):
    """An assembly failed: the core's error answer, raised (a ``ValueError``: a bad request is a bad value).

    Attributes: ``code`` (:data:`ErrorCode`), ``path`` (``""``: the whole request),
    ``message`` (what is wrong and what to do), ``offset`` (``invalid_template``: the
    code-point offset in the template) and ``detail`` (``internal``: what the engine said).
    """

    def __init__(
        self, code: ErrorCode, path: str, message: str, *, offset: Optional[int] = None, detail: Optional[str] = None
    ) -> None:
        super().__init__(code, path, message)
        self.code, self.path, self.message, self.offset, self.detail = code, path, message, offset, detail

    def __str__(self) -> str:
        return "%s at %s: %s" % (self.code, self.path, self.message) if self.path else "%s: %s" % (self.code, self.message)

    def __reduce__(self) -> Any:
        return (_rebuild, (self.code, self.path, self.message, self.offset, self.detail))


def _rebuild(code: ErrorCode, path: str, message: str, offset: Optional[int], detail: Optional[str]) -> AssemblyError:
    return AssemblyError(code, path, message, offset=offset, detail=detail)


class InstanceFailure(Exception):
    """The instance trapped, exited or ran out of memory and must be discarded; ``detail``: what the engine said."""

    def __init__(self, detail: str, out_of_memory: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.out_of_memory = out_of_memory

    @property
    def kind(self) -> HostError:
        """The error call's name for it (``"out_of_memory"`` or ``"trapped"``)."""
        return "out_of_memory" if self.out_of_memory else "trapped"


def error_of(answer: Any) -> Optional[AssemblyError]:
    """The :class:`AssemblyError` of a decoded error answer (``{"error": {code, path, message[, offset]}}``,
    the project's docs/SPEC.md §6, in the source repository); None if it is not one."""
    err = answer.get("error") if isinstance(answer, Mapping) else None
    if not isinstance(err, Mapping) or not set(err) <= {"code", "path", "message", "offset"}:
        return None
    code, path, message, offset = err.get("code"), err.get("path"), err.get("message"), err.get("offset")
    if not (isinstance(code, str) and isinstance(path, str) and isinstance(message, str)):
        return None
    if offset is not None and (type(offset) is not int or offset < 0):
        return None
    return AssemblyError(cast(ErrorCode, code), path, message, offset=offset)
