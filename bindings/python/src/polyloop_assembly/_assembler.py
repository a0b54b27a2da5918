"""The public functions and :class:`Assembler`: assemble, assemble_bytes,
assemble_json, validate_template (the incremental :class:`Prompt` is in ``_prompt``)."""

from __future__ import annotations

import itertools
import os
import weakref
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union, cast

from . import _codec, _consts, _fork
from ._errors import MAX_REQUEST_BYTES, MSG_BAD_RESPONSE, AssemblyError, InstanceFailure, error_of_response, too_large_response
from ._pool import DEFAULT_MEMORY_LIMIT_BYTES, DEFAULT_RECYCLE_ABOVE_BYTES, Pool
from ._types import AssembleRequest, AssembleResponse

if TYPE_CHECKING:
    from ._prompt import Prompt

__all__ = [
    "AssemblyError",
    "Assembler",
    "assemble",
    "assemble_bytes",
    "assemble_json",
    "assemble_json_bytes",
    "default_assembler",
    "validate_template",
]

BytesLike = Union[bytes, bytearray, memoryview]
JSONText = Union[str, bytes, bytearray, memoryview]

#: The largest buffer the module's 32-bit ABI can be handed (JSON text up to
#: this size goes into the module: only after reading it is it known whether
#: the request it says is over 1 GiB).
_MAX_MODULE_BUFFER = _consts.MAX_MODULE_BUFFER_BYTES

#: The op of a prepared call answered without the module (too large to copy in).
ANSWERED = -1
#: Requests per batch crossing at most, in bytes (linear memory holds a batch and its answers at once).
_BATCH_BYTES = 1 << 20

_tokens = itertools.count(1)
#: Assemblers of this process by token: unpickling one gives back the same object.
_by_token: "weakref.WeakValueDictionary[Tuple[int, int], Assembler]" = weakref.WeakValueDictionary()


class Assembler:
    """Runs the assembly core (the WebAssembly module under wasmtime).

    Thread-safe: calls run on a pool of instances of the module, at most
    ``max_instances`` at once, each instance serving one call at a time;
    further callers wait for a free instance. All assemblers of a process
    share one wasmtime engine and one compiled module, which is cached on disk
    (see :func:`polyloop_assembly.warm`).

    An assembler pickles by reference: unpickled in another process (a
    ``multiprocessing`` worker, ``datasets.map``, Ray), it is re-created there
    with the same settings, once per process; unpickled in the process that
    made it, it is the same object. So a function that uses one can be
    shipped to workers.

    Args:
        max_instances: most instances alive at once (a call waits when all
            are busy); default: the number of CPUs.
        recycle_above_bytes: an instance whose linear memory exceeds this
            after a call is discarded, so one huge request does not pin its
            memory for the life of the process; default 256 MiB.
        memory_limit_bytes: cap on one instance's linear memory; a call that
            needs more raises ``AssemblyError(code="internal")`` (out of
            memory) and the instance is replaced; default 4 GiB (the module's
            whole address space).
    """

    def __init__(
        self,
        *,
        max_instances: Optional[int] = None,
        recycle_above_bytes: int = DEFAULT_RECYCLE_ABOVE_BYTES,
        memory_limit_bytes: int = DEFAULT_MEMORY_LIMIT_BYTES,
    ) -> None:
        self._pool = Pool(
            max_instances=max_instances, recycle_above_bytes=recycle_above_bytes, memory_limit_bytes=memory_limit_bytes
        )
        self._token = (os.getpid(), next(_tokens))
        _by_token[self._token] = self

    @property
    def pool(self) -> Pool:
        """The instance pool (its counters are useful for monitoring)."""
        return self._pool

    def __reduce__(self) -> Any:
        if self is _default_assembler.value:
            return (default_assembler, ())
        pool = self._pool
        return (_assembler_by_token, (self._token, pool.max_instances, pool.recycle_above_bytes, pool.memory_limit_bytes))

    def __copy__(self) -> "Assembler":
        return self

    def __deepcopy__(self, memo: Dict[int, Any]) -> "Assembler":
        return self

    def assemble_bytes(self, request: BytesLike) -> bytes:
        """The wire function: msgpack request bytes in, canonical msgpack response out.

        An assembly error is returned as an error response, not raised, exactly
        as ``core.AssembleBytes`` returns it. A request over 1 GiB is answered
        ``too_large`` without copying it into the module.

        Raises:
            TypeError: ``request`` is not bytes-like (JSON text in a ``str``
                goes to :meth:`assemble_json`).
            AssemblyError: ``code="internal"`` if the instance trapped, exited or
                ran out of memory (the next call gets a fresh instance).
        """
        return self._run(*self._prepared_bytes(request))

    def _prepared_bytes(self, request: BytesLike) -> Tuple[int, bytes]:
        """:meth:`assemble_bytes` up to the module: ``(op, request bytes)``, or
        ``(ANSWERED, response)`` for an answer given without it."""
        if isinstance(request, bytes):
            size = len(request)
        elif isinstance(request, (bytearray, memoryview)):
            size = request.nbytes if isinstance(request, memoryview) else len(request)
        else:
            hint = "; to assemble JSON text, call assemble_json(text)" if isinstance(request, str) else ""
            raise TypeError("assemble_bytes() takes bytes, bytearray or memoryview, not %s%s" % (type(request).__name__, hint))
        if size > MAX_REQUEST_BYTES:  # checked before any copy, as the Go hosts do
            return ANSWERED, too_large_response(size)
        return _consts.CALL_ASSEMBLE, request if isinstance(request, bytes) else bytes(request)

    def _run(self, op: int, data: bytes) -> bytes:
        """The module's answer to a prepared call (``data`` itself if ANSWERED)."""
        return data if op == ANSWERED else self._call(data, op)

    def _call_batch(self, items: Sequence[Tuple[int, bytes]]) -> List[Union[bytes, AssemblyError]]:
        """The answers of prepared calls, in order, each the bytes its own call
        would answer or its :class:`AssemblyError` (``internal``): calls go to
        the module's ``batch`` call, up to ``_BATCH_BYTES`` of requests per
        crossing, so that threads meet the GIL once per batch, not per request
        (the module's wasm/README.md, "Batches")."""
        out: List[Union[bytes, AssemblyError]] = []
        i = 0
        while i < len(items):
            j, size = i + 1, len(items[i][1])
            while j < len(items) and size + len(items[j][1]) + 8 * (j - i + 1) <= _BATCH_BYTES:
                size += len(items[j][1])
                j += 1
            out.extend(self._one_batch(items[i:j]) if j - i > 1 else [self._call_caught(*items[i])])
            i = j
        return out

    def _one_batch(self, items: Sequence[Tuple[int, bytes]]) -> List[Union[bytes, AssemblyError]]:
        try:
            answers = self._pool.call_batch(items)
        except InstanceFailure:  # a trap: the items one by one, each its own answer or internal error
            return [self._call_caught(op, data) for op, data in items]
        if answers is None:  # never from this module: not a batch answer
            return [AssemblyError("internal", "", MSG_BAD_RESPONSE) for _ in items]
        return cast(List[Union[bytes, AssemblyError]], answers)

    def _call_caught(self, op: int, data: bytes) -> Union[bytes, AssemblyError]:
        try:
            return self._run(op, data)
        except AssemblyError as e:
            return e

    def _add_step_bytes(self, request: bytes) -> bytes:
        """The module's ``add_step`` export: an add_step request in, its response
        out (the README's "API", ``Prompt``; the project's docs/SPEC.md §7.3.1, in
        the source repository). Errors are returned as error responses."""
        if len(request) > MAX_REQUEST_BYTES:  # as assemble_bytes: too_large, not copied
            return too_large_response(len(request))
        return self._call(request, _consts.CALL_ADD_STEP)

    def _prompt_start_bytes(self, request: bytes) -> bytes:
        """The module's ``prompt_start`` export: a request in, its assemble
        response with the prompt state (key ``prompt``) out (the project's
        docs/SPEC.md §7.3.1, in the source repository). Errors are returned as error responses."""
        if len(request) > MAX_REQUEST_BYTES:  # as assemble_bytes: too_large, not copied
            return too_large_response(len(request))
        return self._call(request, _consts.CALL_PROMPT_START)

    def _call(self, data: bytes, op: int) -> bytes:
        try:
            return self._pool.call(data, op)
        except InstanceFailure as e:
            raise e.to_error() from None

    def assemble_json_bytes(self, text: JSONText) -> bytes:
        """The wire function for a request written as JSON text: the canonical
        msgpack response bytes, with the command-line tool's verdict on JSON.

        The text is read inside the module by the project's one JSON reader
        (the module's ``assemble_json`` export, the same Go code as the
        command-line tool's), not by Python's ``json``: a repeated key is
        ``duplicate_key`` (never "the last one wins"), ``1.0`` or ``1e2``
        where an integer belongs is ``malformed_request``, integers are exact
        to 64 bits, and a syntax error is ``malformed_request`` at path ``""``
        whose message starts ``invalid JSON at byte N``. For JSON that says a
        valid request, the response is byte for byte that of
        :meth:`assemble_bytes` of the same request in msgpack.

        Args:
            text: the JSON text of one request: ``bytes``-like (UTF-8; any
                bytes are judged as they are), or a ``str``, encoded as UTF-8
                with ``surrogatepass`` so a lone surrogate reaches the module as
                the same bytes the command-line tool would read
                (``invalid_utf8`` at its path).

        Errors are returned as error responses, not raised. Text over
        4 GiB - 1 bytes (the module's 32-bit ABI) is answered ``too_large``
        at once; below that it goes into the module, since whether the
        request it says is over the 1 GiB limit is known only after reading
        it (text much larger than 1 GiB can run the module out of memory:
        ``internal``).

        Raises:
            TypeError: ``text`` is neither str nor bytes-like.
            AssemblyError: ``code="internal"`` if the instance failed.
        """
        return self._run(*self._prepared_json(text))

    def _prepared_json(self, text: JSONText) -> Tuple[int, bytes]:
        """:meth:`assemble_json_bytes` up to the module, as :meth:`_prepared_bytes`."""
        if isinstance(text, str):
            data = text.encode("utf-8", "surrogatepass")
        elif isinstance(text, bytes):
            data = text
        elif isinstance(text, (bytearray, memoryview)):
            if (text.nbytes if isinstance(text, memoryview) else len(text)) > _MAX_MODULE_BUFFER:
                return ANSWERED, too_large_response(text.nbytes if isinstance(text, memoryview) else len(text))
            data = bytes(text)
        else:
            raise TypeError(
                "assemble_json() takes the JSON text of one request as str, bytes, bytearray or memoryview, not %s"
                % type(text).__name__
            )
        if len(data) > _MAX_MODULE_BUFFER:
            return ANSWERED, too_large_response(len(data))
        return _consts.CALL_ASSEMBLE_JSON, data

    def assemble_json(self, text: JSONText) -> AssembleResponse:
        """Assemble a request written as JSON text and return the response.

        The JSON is judged by the module, as the command-line tool judges it
        (see :meth:`assemble_json_bytes`): use this, not ``json.loads`` and
        :meth:`assemble`, when requests come as JSON (a JSON-lines file).

        Raises:
            AssemblyError: the text is not JSON (``malformed_request`` at ``""``,
                ``invalid JSON at byte N: ...``) or the request is invalid (the
                same code and path as the request in msgpack), or the instance
                failed (``internal``).
            TypeError: ``text`` is neither str nor bytes-like.
        """
        return cast(AssembleResponse, _decode_ok(self.assemble_json_bytes(text)))

    def assemble(self, request: AssembleRequest) -> AssembleResponse:
        """Assemble a request and return the response (the README's "API").

        The request is typed as :class:`AssembleRequest` so a type checker
        catches a misspelt key; at run time any mapping is accepted (a request
        built dynamically: annotate it as ``AssembleRequest`` or
        ``typing.cast`` it). It is
        encoded as it is and judged by the core alone, so a bad Python value
        gets the same code and path as the same mistake on the wire (a lone
        surrogate: ``invalid_utf8``; a bool or float where an int belongs:
        ``malformed_request``; a value whose reading raised:
        ``malformed_request`` at its path, the exception as ``__cause__``).

        Returns:
            The decoded response: ``v``, ``ok`` (True), ``messages``,
            ``message_chars``, ``prompt_chars``, ``context_overflow``,
            ``injected``, ``prefix_digests``.

        Raises:
            AssemblyError: the request is invalid (code, path and, for a
                template, offset), or the instance failed (``code="internal"``).
        """
        caught: List[BaseException] = []
        return cast(AssembleResponse, _decode_ok(self.assemble_bytes(_encode(request, caught)), caught))

    def validate_template(self, template: str) -> None:
        """Check an observation template before a run starts.

        Raises:
            AssemblyError: ``invalid_template`` at ``observation_template``, with
                the code-point offset of the problem in :attr:`AssemblyError.offset`
                (or ``malformed_request``/``invalid_utf8`` if ``template`` is not
                a valid str).
        """
        self.assemble({"observation_template": template})

    def prompt(self, request: AssembleRequest) -> "Prompt":
        """An incremental :class:`Prompt` that runs on this assembler."""
        from ._prompt import Prompt  # _prompt imports this module

        return Prompt(request, assembler=self)


def _assembler_by_token(
    token: Tuple[int, int], max_instances: int, recycle_above_bytes: int, memory_limit_bytes: int
) -> Assembler:
    """Unpickle an :class:`Assembler`: the same object in its own process, else
    one re-created with the same settings (once per process and token)."""
    asm = _by_token.get(token)
    if asm is None:
        asm = Assembler(
            max_instances=max_instances, recycle_above_bytes=recycle_above_bytes, memory_limit_bytes=memory_limit_bytes
        )
        _by_token[token] = asm
        _keep.append(asm)  # a re-created assembler lives as long as the process
    return asm


_keep: List[Assembler] = []


#: How the core's message for a value the binding could not read starts.
_UNREADABLE_PREFIX = _consts.MSG_UNREADABLE_VALUE_FORMAT.split("%s")[0]


def _decode_ok(response_bytes: bytes, caught: Sequence[BaseException] = ()) -> Any:
    """The decoded ok response (a dict: of ``assemble`` or of ``add_step``), or
    raise its error (or ``internal`` if it is neither).

    ``caught``: the exceptions of the values the encoder could not read; the
    first is chained as ``__cause__`` of the core's error for such a value.
    """
    try:
        response = _codec.decode(response_bytes)
    except Exception as e:
        raise AssemblyError("internal", "", MSG_BAD_RESPONSE, detail="msgpack: %s" % e) from None
    if isinstance(response, dict) and response.get("ok") is True:
        return response
    error = error_of_response(response)
    if caught and error.code == "malformed_request" and error.message.startswith(_UNREADABLE_PREFIX):
        raise error from caught[0]
    raise error


def _encode(request: Any, caught: Optional[List[BaseException]] = None) -> bytes:
    """The request's msgpack bytes (``_codec.encode``), or ``too_large`` for a
    str/bytes over msgpack's 4 GiB."""
    try:
        return _codec.encode(request, caught)
    except _codec.EncodeError as e:
        raise AssemblyError(e.code, "", e.message) from None


_default_assembler: "_fork.Lazy[Assembler]" = _fork.Lazy(Assembler)


def default_assembler() -> Assembler:
    """The process-wide :class:`Assembler` behind the module-level functions."""
    return _default_assembler.get()


def assemble(request: AssembleRequest) -> AssembleResponse:
    """Assemble a request and return the response (the README's "API").

    Thread-safe (a pool of WebAssembly instances). See :meth:`Assembler.assemble`.

    Raises:
        AssemblyError: with ``code``, ``path``, ``message`` (and ``offset``
            for a template error).
    """
    return default_assembler().assemble(request)


def assemble_bytes(request: BytesLike) -> bytes:
    """The wire function: msgpack request bytes in, canonical msgpack response bytes out.

    Assembly errors come back as error responses, never raised. Thread-safe (a
    pool of WebAssembly instances). See :meth:`Assembler.assemble_bytes`.
    """
    return default_assembler().assemble_bytes(request)


def assemble_json(text: JSONText) -> AssembleResponse:
    """Assemble a request written as JSON text (str or UTF-8 bytes), with the
    command-line tool's verdict on JSON (a repeated key is ``duplicate_key``,
    ``1.0`` for an int ``malformed_request``, a syntax error
    ``malformed_request`` at ``""``). Thread-safe. See :meth:`Assembler.assemble_json`.

    Raises:
        AssemblyError: with ``code``, ``path`` and ``message``.
    """
    return default_assembler().assemble_json(text)


def assemble_json_bytes(text: JSONText) -> bytes:
    """JSON text of one request in, canonical msgpack response bytes out
    (errors as error responses). Thread-safe. See :meth:`Assembler.assemble_json_bytes`."""
    return default_assembler().assemble_json_bytes(text)


def validate_template(template: str) -> None:
    """Raise :class:`AssemblyError` (``invalid_template``) if ``template`` is not
    a valid observation template; return None otherwise. Thread-safe."""
    default_assembler().validate_template(template)
