"""The public API: assemble, assemble_bytes, validate_template, Prompt, Assembler."""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any, Dict, List, NoReturn, Optional, Union, cast

from . import _codec
from ._runtime import DEFAULT_RECYCLE_BYTES, InstanceFailure, Pool
from ._types import Injected, Message, PrefixDigests, Request, Response

__all__ = [
    "AssemblyError",
    "Assembler",
    "Prompt",
    "assemble",
    "assemble_bytes",
    "default_assembler",
    "validate_template",
]

BytesLike = Union[bytes, bytearray, memoryview]

_MAX_CALL_BYTES = 0xFFFFFFFF  # the module's 32-bit address space


class AssemblyError(Exception):
    """An assembly failed: the core's error response, raised.

    Attributes:
        code: one of the codes of SPEC §6, e.g. ``"invalid_template"``.
        path: the offending value, e.g. ``"steps[3].observation"``; ``""``
            for the whole request.
        message: what is wrong and what to do, for people.

    ``code == "internal"`` with ``path == ""`` is also raised when the
    WebAssembly instance trapped, exited or ran out of memory; the instance
    has then been discarded and the next call runs on a fresh one.
    """

    code: str
    path: str
    message: str

    def __init__(self, code: str, path: str, message: str) -> None:
        super().__init__(code, path, message)
        self.code = code
        self.path = path
        self.message = message

    def __str__(self) -> str:
        if self.path:
            return "%s at %s: %s" % (self.code, self.path, self.message)
        return "%s: %s" % (self.code, self.message)


def _raise_error(response: Any) -> NoReturn:
    err = response.get("error")
    if not isinstance(err, Mapping):
        raise AssemblyError("internal", "", "the module returned a response that is neither ok nor an error: %r" % (response,))
    raise AssemblyError(str(err.get("code", "internal")), str(err.get("path", "")), str(err.get("message", "")))


class Assembler:
    """Runs the assembly core (the WebAssembly module under wasmtime).

    Thread-safe: calls run on a pool of instances of the module, at most
    ``max_instances`` at once (default: the number of CPUs, between 2 and 8),
    each instance serving one call at a time; further callers wait for a free
    instance. All assemblers of a process share one wasmtime engine and one
    compiled module, which is cached on disk (see README).

    Args:
        max_instances: largest number of instances alive at once.
        memory_limit: bytes of linear memory each instance may use (default:
            the module's 4 GiB address space). A call that exhausts it raises
            ``AssemblyError(code="internal")`` and the instance is replaced.
        recycle_bytes: an instance whose linear memory grew past this size is
            discarded after its call, so one huge request does not pin its
            memory for the life of the process.
    """

    def __init__(
        self,
        *,
        max_instances: Optional[int] = None,
        memory_limit: Optional[int] = None,
        recycle_bytes: int = DEFAULT_RECYCLE_BYTES,
    ) -> None:
        self._pool = Pool(max_instances=max_instances, memory_limit=memory_limit, recycle_bytes=recycle_bytes)

    @property
    def pool(self) -> Pool:
        """The instance pool (its counters are useful for monitoring)."""
        return self._pool

    def assemble_bytes(self, request: BytesLike) -> bytes:
        """The wire function: msgpack request bytes in, canonical msgpack response out.

        An assembly error is returned as an error response, not raised, exactly
        as ``core.AssembleBytes`` returns it.

        Raises:
            TypeError: ``request`` is not bytes-like.
            AssemblyError: ``code="internal"`` if the instance trapped, exited or
                ran out of memory (the next call gets a fresh instance), or
                ``code="too_large"`` if the request does not even fit the
                module's 4 GiB address space.
        """
        if isinstance(request, bytes):
            data = request
        elif isinstance(request, (bytearray, memoryview)):
            data = bytes(request)
        else:
            raise TypeError("assemble_bytes() takes bytes, bytearray or memoryview, not %s" % type(request).__name__)
        if len(data) > _MAX_CALL_BYTES:
            raise AssemblyError(
                "too_large",
                "",
                # the core's own words for a request over 1 GiB
                "the request is %d bytes, over the 1 GiB limit; split it into smaller requests" % len(data),
            )
        try:
            return self._pool.call(data)
        except InstanceFailure as e:
            raise AssemblyError(
                "internal",
                "",
                "%s; that WebAssembly instance was discarded and the next call runs on a fresh one "
                "(if this was not a memory limit you set, please report it with the request)" % e,
            ) from None

    def assemble(self, request: Union[Request, Mapping[str, Any]]) -> Response:
        """Assemble a request given as a mapping (SPEC §2) and return the response (SPEC §6).

        The request is encoded as it is and judged by the core alone, so a bad
        Python value gets the same code and path as the same mistake on the
        wire (a lone surrogate: ``invalid_utf8``; a bool or float where an int
        belongs: ``malformed_request``; ...).

        Returns:
            The decoded response: ``v``, ``ok`` (True), ``messages``,
            ``message_chars``, ``prompt_chars``, ``context_overflow``,
            ``injected``, ``prefix_digests``.

        Raises:
            AssemblyError: the request is invalid (code and path of SPEC §6), or
                the instance failed (``code="internal"``).
        """
        response = _codec.decode(self.assemble_bytes(_encode(request)))
        if isinstance(response, dict) and response.get("ok") is True:
            return cast(Response, response)
        _raise_error(response)

    def validate_template(self, template: str) -> None:
        """Check an observation template before a run starts.

        Raises:
            AssemblyError: ``invalid_template`` at ``observation_template``, with
                the code-point offset of the problem in the message (or
                ``malformed_request``/``invalid_utf8`` if ``template`` is not a
                valid str).
        """
        self.assemble({"observation_template": template})

    def prompt(self, request: Union[Request, Mapping[str, Any]]) -> "Prompt":
        """An incremental :class:`Prompt` that runs on this assembler."""
        return Prompt(request, assembler=self)


def _encode(request: Any) -> bytes:
    try:
        return _codec.encode(request)
    except _codec.EncodeError as e:  # a value that could not be read, or a str/bytes over 4 GiB
        raise AssemblyError(e.code, e.path, e.message) from e.__cause__


_default_assembler: Optional[Assembler] = None


def default_assembler() -> Assembler:
    """The process-wide :class:`Assembler` behind the module-level functions."""
    global _default_assembler
    if _default_assembler is None:
        _default_assembler = Assembler()
    return _default_assembler


def assemble(request: Union[Request, Mapping[str, Any]]) -> Response:
    """Assemble a request (SPEC §2) and return the response (SPEC §6).

    Thread-safe (a pool of WebAssembly instances). See :meth:`Assembler.assemble`.

    Raises:
        AssemblyError: with ``code``, ``path`` and ``message``.
    """
    return default_assembler().assemble(request)


def assemble_bytes(request: BytesLike) -> bytes:
    """The wire function: msgpack request bytes in, canonical msgpack response bytes out.

    Assembly errors come back as error responses, never raised. Thread-safe (a
    pool of WebAssembly instances). See :meth:`Assembler.assemble_bytes`.
    """
    return default_assembler().assemble_bytes(request)


def validate_template(template: str) -> None:
    """Raise :class:`AssemblyError` (``invalid_template``) if ``template`` is not
    a valid observation template; return None otherwise. Thread-safe."""
    default_assembler().validate_template(template)


def _shift_path(path: str, index: int) -> str:
    if path.startswith("steps[0]"):
        return "steps[%d]%s" % (index, path[len("steps[0]"):])
    return path


class Prompt:
    """The incremental form for agent loops (SPEC §7).

    ``Prompt(request)`` assembles ``request`` once; ``add_step(raw_output,
    observation)`` then appends one step at a cost independent of the history
    already held: it sends the core only the template and that step, never the
    history. After k steps, :attr:`messages`, :attr:`message_chars`,
    :attr:`prompt_chars`, :attr:`context_overflow`, :attr:`injected` and
    :attr:`prefix_digests` equal those of one :func:`assemble` of the request
    with those k steps appended to its ``steps``.

    A Prompt is owned by one loop: it is not safe to add steps to the same
    Prompt from several threads at once (the assembler it runs on is).

    Raises:
        AssemblyError: from the constructor if ``request`` is invalid.
    """

    def __init__(self, request: Union[Request, Mapping[str, Any]], *, assembler: Optional[Assembler] = None) -> None:
        self._assembler = assembler if assembler is not None else default_assembler()
        response = self._assembler.assemble(request)
        template = request["observation_template"]
        budget = request.get("max_prompt_chars")
        self._budget: Optional[int] = None if budget is None else operator.index(budget)
        self._template = template
        self._messages: List[Message] = response["messages"]
        self._message_chars: List[int] = response["message_chars"]
        self._prompt_chars: int = response["prompt_chars"]
        self._injected: List[Injected] = response["injected"]
        self._prefix_digests: PrefixDigests = response["prefix_digests"]
        steps = request.get("steps")
        self._steps = 0 if steps is None else len(steps)
        self._packer = _codec.new_packer()
        pk = self._packer.pack
        self._step_head = (
            b"\x83" + pk("v") + pk(1) + pk("observation_template") + pk(template) + pk("steps") + b"\x91\x82" + pk("raw_output")
        )
        self._step_mid = pk("observation")

    def add_step(self, raw_output: str, observation: str) -> None:
        """Append one completed step: the assistant message ``raw_output`` as
        given, then the user message ``observation`` rendered through the
        request's observation template.

        Raises:
            AssemblyError: a bad value, with its path at the step's real index
                (e.g. ``steps[7].observation``); the Prompt is then unchanged.
        """
        try:
            pk = self._packer.pack
            body = self._step_head + pk(raw_output) + self._step_mid + pk(observation)
        except Exception:  # anything msgpack cannot pack directly: the codec's slow way decides
            self._packer = _codec.new_packer()
            body = _encode(
                {
                    "v": 1,
                    "observation_template": self._template,
                    "steps": [{"raw_output": raw_output, "observation": observation}],
                }
            )
        response = _codec.decode(self._assembler.assemble_bytes(body))
        if not (isinstance(response, dict) and response.get("ok") is True):
            try:
                _raise_error(response)
            except AssemblyError as e:
                raise AssemblyError(e.code, _shift_path(e.path, self._steps), e.message) from None
        self._messages.extend(response["messages"])
        self._message_chars.extend(response["message_chars"])
        self._prompt_chars += response["prompt_chars"]
        self._steps += 1

    @property
    def messages(self) -> List[Message]:
        """The assembled messages (a new list; the message dicts are shared)."""
        return list(self._messages)

    @property
    def message_chars(self) -> List[int]:
        """The size of each message in code points, parallel to :attr:`messages`."""
        return list(self._message_chars)

    @property
    def prompt_chars(self) -> int:
        """The sum of :attr:`message_chars`."""
        return self._prompt_chars

    @property
    def context_overflow(self) -> bool:
        """True iff the request gave ``max_prompt_chars`` and :attr:`prompt_chars` exceeds it."""
        return self._budget is not None and self._prompt_chars > self._budget

    @property
    def injected(self) -> List[Injected]:
        """What the injection slot pasted (steps never change it)."""
        return list(self._injected)

    @property
    def prefix_digests(self) -> PrefixDigests:
        """Digests of the run, injection and goal prefixes (steps never change them)."""
        return cast(PrefixDigests, dict(self._prefix_digests))

    @property
    def steps(self) -> int:
        """The number of steps held: those of the request plus those added."""
        return self._steps

    def response(self) -> Response:
        """The response one :func:`assemble` of the request with all steps so far would return."""
        out: Dict[str, Any] = {
            "v": 1,
            "ok": True,
            "messages": list(self._messages),
            "message_chars": list(self._message_chars),
            "prompt_chars": self._prompt_chars,
            "context_overflow": self.context_overflow,
            "injected": list(self._injected),
            "prefix_digests": dict(self._prefix_digests),
        }
        return cast(Response, out)

    def __len__(self) -> int:
        return len(self._messages)

    def __repr__(self) -> str:
        return "<Prompt steps=%d messages=%d prompt_chars=%d context_overflow=%s>" % (
            self._steps,
            len(self._messages),
            self._prompt_chars,
            self.context_overflow,
        )
