"""The public API: assemble, assemble_bytes, assemble_json, validate_template, Prompt, Assembler."""

from __future__ import annotations

import copy as _copy
import itertools
import operator
import os
import weakref
from typing import Any, Dict, List, Optional, Tuple, Union, cast

from . import _codec, _consts, _fork, _respsize
from ._errors import MAX_REQUEST_BYTES, MSG_BAD_RESPONSE, AssemblyError, InstanceFailure, raise_error_response, too_large_response
from ._pool import DEFAULT_MEMORY_LIMIT_BYTES, DEFAULT_RECYCLE_ABOVE_BYTES, Pool
from ._types import Injected, Message, PrefixDigests, Request, Response

__all__ = [
    "AssemblyError",
    "Assembler",
    "Prompt",
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
            TypeError: ``request`` is not bytes-like.
            AssemblyError: ``code="internal"`` if the instance trapped, exited or
                ran out of memory (the next call gets a fresh instance).
        """
        if isinstance(request, bytes):
            size = len(request)
        elif isinstance(request, (bytearray, memoryview)):
            size = request.nbytes if isinstance(request, memoryview) else len(request)
        else:
            raise TypeError("assemble_bytes() takes bytes, bytearray or memoryview, not %s" % type(request).__name__)
        if size > MAX_REQUEST_BYTES:  # checked before any copy, as the Go hosts do
            return too_large_response(size)
        data = request if isinstance(request, bytes) else bytes(request)
        try:
            return self._pool.call(data)
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
        if isinstance(text, str):
            data = text.encode("utf-8", "surrogatepass")
        elif isinstance(text, bytes):
            data = text
        elif isinstance(text, (bytearray, memoryview)):
            if (text.nbytes if isinstance(text, memoryview) else len(text)) > _MAX_MODULE_BUFFER:
                return too_large_response(text.nbytes if isinstance(text, memoryview) else len(text))
            data = bytes(text)
        else:
            raise TypeError(
                "assemble_json() takes the JSON text of one request as str, bytes, bytearray or memoryview, not %s"
                % type(text).__name__
            )
        if len(data) > _MAX_MODULE_BUFFER:
            return too_large_response(len(data))
        try:
            return self._pool.call(data, json=True)
        except InstanceFailure as e:
            raise e.to_error() from None

    def assemble_json(self, text: JSONText) -> Response:
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
        return _decode_ok(self.assemble_json_bytes(text))

    def assemble(self, request: Request) -> Response:
        """Assemble a request (docs/SPEC.md §2) and return the response (§6).

        The request is typed as :class:`Request` so a type checker catches a
        misspelt key; at run time any mapping is accepted (a request built
        dynamically: annotate it as ``Request`` or ``typing.cast`` it). It is
        encoded as it is and judged by the core alone, so a bad Python value
        gets the same code and path as the same mistake on the wire (a lone
        surrogate: ``invalid_utf8``; a bool or float where an int belongs:
        ``malformed_request``; ...).

        Returns:
            The decoded response: ``v``, ``ok`` (True), ``messages``,
            ``message_chars``, ``prompt_chars``, ``context_overflow``,
            ``injected``, ``prefix_digests``.

        Raises:
            AssemblyError: the request is invalid (code, path and, for a
                template, offset of docs/SPEC.md §6), or the instance failed
                (``code="internal"``).
        """
        return _decode_ok(self.assemble_bytes(_encode(request)))

    def validate_template(self, template: str) -> None:
        """Check an observation template before a run starts.

        Raises:
            AssemblyError: ``invalid_template`` at ``observation_template``, with
                the code-point offset of the problem in :attr:`AssemblyError.offset`
                (or ``malformed_request``/``invalid_utf8`` if ``template`` is not
                a valid str).
        """
        self.assemble({"observation_template": template})

    def prompt(self, request: Request) -> "Prompt":
        """An incremental :class:`Prompt` that runs on this assembler."""
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


def _decode_ok(response_bytes: bytes) -> Response:
    """The decoded ok response, or raise its error (or ``internal`` if it is neither)."""
    try:
        response = _codec.decode(response_bytes)
    except Exception as e:
        raise AssemblyError("internal", "", MSG_BAD_RESPONSE, detail="msgpack: %s" % e) from None
    if isinstance(response, dict) and response.get("ok") is True:
        return cast(Response, response)
    raise_error_response(response)


def _encode(request: Any) -> bytes:
    try:
        return _codec.encode(request)
    except _codec.EncodeError as e:  # a value that could not be read, or a str/bytes over 4 GiB
        raise AssemblyError(e.code, e.path, e.message) from e.__cause__


_default_assembler: "_fork.Lazy[Assembler]" = _fork.Lazy(Assembler)


def default_assembler() -> Assembler:
    """The process-wide :class:`Assembler` behind the module-level functions."""
    return _default_assembler.get()


def assemble(request: Request) -> Response:
    """Assemble a request (docs/SPEC.md §2) and return the response (§6).

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


def assemble_json(text: JSONText) -> Response:
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


def _shift_path(path: str, index: int) -> str:
    if path.startswith("steps[0]"):
        return "steps[%d]%s" % (index, path[len("steps[0]") :])
    return path


class Prompt:
    """The incremental form for agent loops (docs/SPEC.md §7).

    ``Prompt(request)`` assembles ``request`` once; ``add_step(raw_output,
    observation)`` then appends one step at a cost independent of the history
    already held: it sends the core only the template and that step, never the
    history. After k steps, :attr:`messages`, :attr:`message_chars`,
    :attr:`prompt_chars`, :attr:`context_overflow`, :attr:`injected` and
    :attr:`prefix_digests` equal those of one :func:`assemble` of the request
    with those k steps appended to its ``steps``.

    A Prompt is owned by one loop: it is not safe to add steps to the same
    Prompt from several threads at once (the assembler it runs on is). To
    branch (best-of-n, tree search), :meth:`copy` it: the copies share
    nothing a step changes. A Prompt pickles (its assembler by reference).

    Raises:
        AssemblyError: from the constructor if ``request`` is invalid.
    """

    def __init__(self, request: Request, *, assembler: Optional[Assembler] = None) -> None:
        self._assembler = assembler if assembler is not None else default_assembler()
        response_bytes = self._assembler.assemble_bytes(_encode(request))
        response = _decode_ok(response_bytes)
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
        # The response's size but its headers and prompt_chars (_respsize.rest).
        self._size_rest = _respsize.rest(len(response_bytes), len(self._messages), self._prompt_chars)
        self._init_packer()

    def _init_packer(self) -> None:
        self._packer = _codec.new_packer()
        pk = self._packer.pack
        self._step_head = (
            b"\x83"
            + pk("v")
            + pk(1)
            + pk("observation_template")
            + pk(self._template)
            + pk("steps")
            + b"\x91\x82"
            + pk("raw_output")
        )
        self._step_mid = pk("observation")

    def add_step(self, raw_output: str, observation: str) -> None:
        """Append one completed step: the assistant message ``raw_output`` as
        given, then the user message ``observation`` rendered through the
        request's observation template.

        Raises:
            AssemblyError: a bad value, with its path at the step's real index
                (e.g. ``steps[7].observation``); or ``too_large`` at ``""``
                when the whole response would pass the 1.5 GiB limit, exactly
                when one :func:`assemble` of the request with all the steps
                would be ``too_large``. The Prompt is then unchanged.
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
        try:
            response_bytes = self._assembler.assemble_bytes(body)
            response = _decode_ok(response_bytes)
        except AssemblyError as e:
            raise AssemblyError(e.code, _shift_path(e.path, self._steps), e.message, offset=e.offset, detail=e.detail) from None
        messages, chars = response["messages"], response["prompt_chars"]
        # The limit on the whole response, as one assemble of all the steps has it.
        rest = self._size_rest + _respsize.step_entries(len(response_bytes), len(messages), chars)
        prompt_chars = self._prompt_chars + chars
        _respsize.check(_respsize.size(rest, len(self._messages) + len(messages), prompt_chars))
        self._messages.extend(messages)
        self._message_chars.extend(response["message_chars"])
        self._prompt_chars = prompt_chars
        self._size_rest = rest
        self._steps += 1

    def copy(self) -> "Prompt":
        """An independent copy to branch from: steps added to one do not change the other.

        Costs a copy of the message list (not of the messages, which no step
        changes); both copies run on the same assembler.
        """
        other = Prompt.__new__(Prompt)
        other.__setstate__(self.__getstate__())
        return other

    def __copy__(self) -> "Prompt":
        return self.copy()

    def __deepcopy__(self, memo: Dict[int, Any]) -> "Prompt":
        other = Prompt.__new__(Prompt)
        state = self.__getstate__()
        assembler = state.pop("_assembler")
        state = _copy.deepcopy(state, memo)
        state["_assembler"] = assembler
        other.__setstate__(state)
        return other

    def __getstate__(self) -> Dict[str, Any]:
        return {
            "_assembler": self._assembler,
            "_budget": self._budget,
            "_template": self._template,
            "_messages": list(self._messages),
            "_message_chars": list(self._message_chars),
            "_prompt_chars": self._prompt_chars,
            "_injected": list(self._injected),
            "_prefix_digests": self._prefix_digests,
            "_steps": self._steps,
            "_size_rest": self._size_rest,
        }

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_packer()

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

    def _response_size(self) -> int:
        """The size in bytes of the canonical response one :func:`assemble` of
        the request with all steps so far would return (kept step by step)."""
        return _respsize.size(self._size_rest, len(self._messages), self._prompt_chars)

    def __len__(self) -> int:
        return len(self._messages)

    def __repr__(self) -> str:
        return "<Prompt steps=%d messages=%d prompt_chars=%d context_overflow=%s>" % (
            self._steps,
            len(self._messages),
            self._prompt_chars,
            self.context_overflow,
        )
