"""The API (the README's "API"): :class:`Assembler`, whose generic call every facade forwards to by its
row of ``CALLS``; :class:`Prompt`; :func:`compare`; the module-level functions. Every error answer, those
only this host sees included, is made by the core's ``error`` call (the project's docs/SPEC.md §7.10, in
the source repository)."""

from __future__ import annotations

import copy as _copy
import itertools
import os
import weakref
from typing import TYPE_CHECKING, Any, Dict, List, Literal, Optional, Tuple, cast

from . import _codec, _crossing, _fork
from ._consts import CALL_ADD_STEP, CALL_ASSEMBLE, CALL_ASSEMBLE_JSON, CALL_ASSEMBLE_SHARED, CALL_PROMPT_START
from ._consts import DEFAULT_MEMORY_LIMIT_BYTES, DEFAULT_RECYCLE_ABOVE_BYTES
from ._consts import CALLS, WIRE_VERSION, WORDS_PYTHON
from ._crossing import BytesLike, JSONText
from ._messages import MessagesView, chat_messages
from ._pool import Pool
from ._types import AssembleRequest, AssembleResponse, Comparison, Injected, Message, PrefixDigests

if TYPE_CHECKING:
    from ._types import Provider


_BY_NAME = {c.name: c for c in CALLS}


_tokens = itertools.count(1)
#: Assemblers of this process by token: unpickling one gives back the same object.
_by_token: "weakref.WeakValueDictionary[Tuple[int, int], Assembler]" = weakref.WeakValueDictionary()


class Assembler:
    """Runs the core on a pool of instances (thread-safe); pickles by reference (re-created once per process).

    Args:
        max_instances: most instances alive at once; default: the number of CPUs.
        recycle_above_bytes: an instance whose linear memory exceeds this after a call is discarded; default 256 MiB.
        memory_limit_bytes: cap on one instance's linear memory (past it: ``internal``, out of memory); default 4 GiB.
    """

    def __init__(
        self,
        *,
        max_instances: Optional[int] = None,
        recycle_above_bytes: int = DEFAULT_RECYCLE_ABOVE_BYTES,
        memory_limit_bytes: int = DEFAULT_MEMORY_LIMIT_BYTES,
    ) -> None:
        self._pool = Pool(max_instances, recycle_above_bytes, memory_limit_bytes)
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

    def call(self, name: str, *args: Any) -> Any:
        """The answer, decoded, of the module's call ``name`` (a row of ``CALLS``, from the core's table) on the
        map of the row's ``params`` to ``args``, or on ``args[0]`` (bytes-like: msgpack; a str for a call of
        JSON text: the text; else encoded). Raises the :class:`AssemblyError` it carries."""
        spec = _BY_NAME[name]
        caught: List[BaseException] = []
        if spec.params:
            if len(args) != len(spec.params):
                raise TypeError(
                    "%s() takes %d arguments (%s), got %d" % (name, len(spec.params), ", ".join(spec.params), len(args))
                )
            prepared = _crossing.prepare_value(dict(zip(spec.params, args)), op=spec.op, caught=caught)
        elif len(args) != 1:
            raise TypeError("%s() takes 1 argument, got %d" % (name, len(args)))
        elif isinstance(args[0], (bytes, bytearray, memoryview)):
            prepared = _crossing.prepare(args[0], op=spec.op)
        elif isinstance(args[0], str) and spec.arg == "json":
            prepared = _crossing.prepare(args[0].encode("utf-8", "surrogatepass"), op=spec.op)
        else:
            prepared = _crossing.prepare_value(args[0], op=spec.op, caught=caught)
        answer = _crossing.run(self._pool, op=spec.op, prepared=prepared)
        return _crossing.decode(self._pool, op=spec.op, answer=answer, caught=caught)

    def assemble(self, request: AssembleRequest) -> AssembleResponse:
        """Assemble a request and return the response. Any mapping is encoded as it is and judged by the
        core alone: a bad value gets the code and path of the same mistake on the wire (one whose reading
        raised: ``malformed_request``, the exception as ``__cause__``). Raises :class:`AssemblyError`."""
        caught: List[BaseException] = []
        hooks = _codec.hooks()
        prepared = _crossing.prepare_value(request, op=CALL_ASSEMBLE, caught=caught)
        # Shared texts are the request's str objects as they are after encoding: only when no user code ran
        # while it was encoded (a __index__ rewriting a text would make them texts the core never assembled).
        shared = len(prepared[1]) >= _codec.SHARED_MIN and _codec.hooks() == hooks  # not an error call's
        texts = _codec.shared_texts(request) if shared else None
        if texts is not None:
            prepared = (CALL_ASSEMBLE_SHARED | WORDS_PYTHON, prepared[1])
        answer = _crossing.run(self._pool, op=CALL_ASSEMBLE, prepared=prepared)
        return cast(AssembleResponse, _crossing.decode(self._pool, op=CALL_ASSEMBLE, answer=answer, caught=caught, texts=texts))

    def assemble_bytes(self, request: BytesLike) -> bytes:
        """The wire function: msgpack request bytes in, the canonical response out, errors as error
        responses (over 1 GiB: ``too_large``, not copied in); raises only ``internal``, and TypeError."""
        return _crossing.run(self._pool, op=CALL_ASSEMBLE, prepared=_crossing.prepare_bytes(request))

    def assemble_json_bytes(self, text: JSONText) -> bytes:
        """:meth:`assemble_bytes` for a request written as JSON text (str or UTF-8 bytes), read in the module
        by the command-line tool's JSON reader (a repeated key: ``duplicate_key``; ``1.0`` for an int or a
        syntax error: ``malformed_request``)."""
        return _crossing.run(self._pool, op=CALL_ASSEMBLE_JSON, prepared=_crossing.prepare_json(text))

    def assemble_json(self, text: JSONText) -> AssembleResponse:
        """:meth:`assemble` of a request written as JSON text, judged as :meth:`assemble_json_bytes` judges it."""
        answer = _crossing.run(
            self._pool, op=CALL_ASSEMBLE_JSON, prepared=_crossing.in_python_words(_crossing.prepare_json(text))
        )
        return cast(AssembleResponse, _crossing.decode(self._pool, op=CALL_ASSEMBLE_JSON, answer=answer))

    def validate_template(self, template: str) -> None:
        """Raise :class:`AssemblyError` (``invalid_template`` at ``observation_template``, with
        :attr:`AssemblyError.offset`) unless ``template`` is a valid observation template."""
        self.assemble({"observation_template": template})

    def prompt(self, request: AssembleRequest) -> "Prompt":
        """An incremental :class:`Prompt` that runs on this assembler."""
        return Prompt(request, assembler=self)


def _assembler_by_token(
    token: Tuple[int, int], max_instances: int, recycle_above_bytes: int, memory_limit_bytes: int
) -> Assembler:
    """Unpickle an :class:`Assembler`: the same object in its own process, else one re-created (once per token)."""
    asm = _by_token.get(token)
    if asm is None:
        asm = Assembler(
            max_instances=max_instances, recycle_above_bytes=recycle_above_bytes, memory_limit_bytes=memory_limit_bytes
        )
        _by_token[token] = asm
        _keep.append(asm)  # a re-created assembler lives as long as the process
    return asm


_keep: List[Assembler] = []
_default_assembler: "_fork.Lazy[Assembler]" = _fork.Lazy(Assembler)


def default_assembler() -> Assembler:
    """The process-wide :class:`Assembler` behind the module-level functions."""
    return _default_assembler.get()


class Prompt:
    """The incremental form for agent loops (the project's docs/SPEC.md §7.3.1, in the source repository):
    ``add_step`` costs the same whatever the history (the core is sent the template, the budget, the state
    and the step), and every property equals that of one :func:`assemble` of the request with the steps
    added. A Prompt belongs to one loop; to branch, :meth:`copy` it. It pickles (its assembler by reference).
    """

    def __init__(self, request: AssembleRequest, *, assembler: Optional[Assembler] = None) -> None:
        asm = self._assembler = assembler if assembler is not None else default_assembler()
        caught: List[BaseException] = []
        prepared = _crossing.prepare_value(request, op=CALL_PROMPT_START, caught=caught)
        answer = _crossing.run(asm.pool, op=CALL_PROMPT_START, prepared=prepared)
        response = _crossing.decode(asm.pool, op=CALL_PROMPT_START, answer=answer, caught=caught)
        self._head: Dict[str, Any] = {"v": WIRE_VERSION, "observation_template": request["observation_template"]}
        if request.get("max_prompt_chars") is not None:
            self._head["max_prompt_chars"] = request["max_prompt_chars"]
        self._messages: List[Message] = response["messages"]
        self._message_chars: List[int] = response["message_chars"]
        self._injected: List[Injected] = response["injected"]
        self._prefix_digests: PrefixDigests = response["prefix_digests"]
        self._overflow: bool = response["context_overflow"]
        self._state: Dict[str, int] = response["prompt"]
        self._segments: Dict[str, int] = response["segments"]
        # The msgpack of the first n messages, made by export and grown by it (one store: Ctrl-C keeps it whole).
        self._packed: Tuple[bytes, int] = (b"", 0)

    def add_step(self, raw_output: str, observation: str) -> "Prompt":
        """Append a step (the assistant's ``raw_output``, the ``observation`` through the template); return
        this prompt. :class:`AssemblyError` at the step's real path leaves the Prompt unchanged."""
        caught: List[BaseException] = []
        request = {**self._head, "prompt": self._state, "step": {"raw_output": raw_output, "observation": observation}}
        asm = self._assembler
        prepared = _crossing.prepare_value(request, op=CALL_ADD_STEP, caught=caught)
        answer = _crossing.run(asm.pool, op=CALL_ADD_STEP, prepared=prepared)
        response = _crossing.decode(asm.pool, op=CALL_ADD_STEP, answer=answer, caught=caught)
        try:
            messages, chars, overflow = response["messages"], response["message_chars"], response["context_overflow"]
            state = response["prompt"]
        except KeyError:
            detail = "add_step answered %.200r" % (response,)
            raise _crossing.error_answer(asm.pool, op=CALL_ADD_STEP, error="not_a_response", detail=detail) from None
        # Committed by in-place operators and stores alone: Ctrl-C lands before or after, never inside.
        self._messages += messages
        self._message_chars += chars
        self._state = state
        self._overflow = overflow
        return self

    def copy(self) -> "Prompt":
        """An independent copy to branch from, on the same assembler (O(messages))."""
        other = Prompt.__new__(Prompt)
        other.__dict__.update(self.__dict__, _messages=list(self._messages), _message_chars=list(self._message_chars))
        other._packed = self._packed  # immutable: each export replaces it
        return other

    __copy__ = copy

    def __deepcopy__(self, memo: Dict[int, Any]) -> "Prompt":
        other = Prompt.__new__(Prompt)
        other.__dict__.update({k: v if k == "_assembler" else _copy.deepcopy(v, memo) for k, v in self.__dict__.items()})
        return other

    @property
    def messages(self) -> MessagesView:
        """The assembled messages: an immutable view made in O(1), each message read a copy the caller may
        edit (``list()`` of it: a list of them)."""
        return MessagesView(self._messages, len(self._messages))

    def chat_messages(self) -> List[Dict[str, str]]:
        """The messages as ``{"role", "content": str}`` (:func:`polyloop_assembly.data.chat_messages`)."""
        return chat_messages(self._messages)

    @property
    def message_chars(self) -> List[int]:
        """The size of each message in code points, parallel to :attr:`messages`."""
        return list(self._message_chars)

    @property
    def prompt_chars(self) -> int:
        """The sum of :attr:`message_chars`."""
        return self._state["prompt_chars"]

    @property
    def context_overflow(self) -> bool:
        """True iff :attr:`prompt_chars` exceeds the request's ``max_prompt_chars``."""
        return self._overflow

    @property
    def injected(self) -> List[Injected]:
        """What the injection slot pasted (steps never change it): a copy."""
        return [cast(Injected, dict(i)) for i in self._injected]

    @property
    def prefix_digests(self) -> PrefixDigests:
        """Digests of the run, injection and goal prefixes (steps never change them)."""
        return cast(PrefixDigests, dict(self._prefix_digests))

    @property
    def step_count(self) -> int:
        """The number of steps held: those of the request plus those added."""
        return self._state["steps"]

    def response(self) -> AssembleResponse:
        """What one :func:`assemble` of the request with all steps so far returns: a copy the caller may edit."""
        out = {"v": WIRE_VERSION, "ok": True, "messages": self.messages.copy(), "message_chars": self.message_chars}
        out.update(prompt_chars=self.prompt_chars, context_overflow=self._overflow, injected=self.injected)
        out["prefix_digests"] = self.prefix_digests
        return cast(AssembleResponse, out)

    def export(
        self,
        provider: "Provider",
        *,
        ttl: Optional[Literal["5m", "1h"]] = None,
        max_breakpoints: Optional[int] = None,
        lookback: Optional[int] = None,
        prompt_cache_key: Optional[str] = None,
        body: Optional[Dict[str, Any]] = None,
    ) -> Dict[str, Any]:
        """The provider's request body for this prompt as it is now: what :func:`polyloop_assembly.export` gives for
        the request with the steps so far, byte for byte, without assembling the history again (the core is sent the
        messages and the segment ends it answered). The options are :func:`polyloop_assembly.export`'s; the body is
        the caller's to edit. Raises :class:`AssemblyError` at the request path of a text the provider refuses."""
        options: Dict[str, Any] = dict(ttl=ttl, max_breakpoints=max_breakpoints, lookback=lookback)
        options.update(prompt_cache_key=prompt_cache_key, body=body)
        given = {k: v for k, v in options.items() if v is not None}
        return dict(self._assembler.call("export", self._form_bytes(), provider, given))

    def _form(self, n: Optional[int] = None) -> Dict[str, Any]:
        """The prompt form (the project's docs/SPEC.md §7.14, in the source repository): the first ``n`` messages
        (all by default), the segment ends and the injected entries, as the core reads an assembled prompt."""
        messages = self._messages if n is None else self._messages[:n]
        return {"segments": self._segments, "messages": messages, "injected": self._injected}

    def _form_bytes(self) -> bytes:
        """The prompt form of all messages as msgpack, its messages' bytes kept from export to export: each export
        packs only the messages added since the last."""
        packed, n = self._packed
        messages = self._messages
        if n < len(messages):
            self._packed = packed, n = packed + b"".join(map(_codec.encode, messages[n:])), len(messages)
        return _codec.prompt_form(self._segments, n, packed, self._injected)

    def _response_size(self) -> int:
        """The length of :meth:`response`'s canonical bytes (kept by the core in the state)."""
        return self._state["response_bytes"]

    def __len__(self) -> int:
        return len(self._messages)

    def __repr__(self) -> str:
        counts = (self.step_count, len(self._messages), self.prompt_chars, self._overflow)
        return "<Prompt steps=%d messages=%d prompt_chars=%d context_overflow=%s>" % counts


def compare(a: Any, b: Any, *, assembler: Optional[Assembler] = None) -> Comparison:
    """Compare two prompts, each a request, a recorded message list or either as JSON text or msgpack
    (the project's docs/SPEC.md §7.9, in the source repository); an invalid side's path starts ``a`` or ``b``."""
    return cast(Comparison, (assembler or default_assembler()).call("compare", prompt_side(a), prompt_side(b)))


def prompt_side(value: Any) -> Any:
    """A :class:`Prompt` as its prompt form (its messages now); any other value as it is."""
    return value._form() if isinstance(value, Prompt) else value


def assemble(request: AssembleRequest) -> AssembleResponse:
    """:meth:`Assembler.assemble` on the process-wide assembler (thread-safe). Raises :class:`AssemblyError`."""
    return default_assembler().assemble(request)


def assemble_bytes(request: BytesLike) -> bytes:
    """:meth:`Assembler.assemble_bytes` (the wire function; errors as error responses) on the process-wide assembler."""
    return default_assembler().assemble_bytes(request)


def assemble_json(text: JSONText) -> AssembleResponse:
    """:meth:`Assembler.assemble_json` (a request written as JSON text) on the process-wide assembler."""
    return default_assembler().assemble_json(text)


def assemble_json_bytes(text: JSONText) -> bytes:
    """:meth:`Assembler.assemble_json_bytes` on the process-wide assembler."""
    return default_assembler().assemble_json_bytes(text)


def validate_template(template: str) -> None:
    """:meth:`Assembler.validate_template` on the process-wide assembler."""
    default_assembler().validate_template(template)
