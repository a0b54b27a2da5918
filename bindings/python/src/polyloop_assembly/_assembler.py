"""The API (the README's "API"): :class:`Assembler`, whose generic call every facade forwards to by its
row of ``CALLS``; :class:`Prompt`; :func:`compare`; the module-level functions. Every error answer, those
only this host sees included, is made by the core's ``error`` call (the project's docs/SPEC.md §7.10, in
the source repository)."""

from __future__ import annotations

import copy as _copy
import itertools
import json
import os
import weakref
from typing import TYPE_CHECKING, Any, Dict, List, Literal, Optional, Sequence, Tuple, Union, cast

from . import _codec, _fork, _runtime
from ._consts import CALL_ADD_STEP, CALL_ASSEMBLE, CALL_ASSEMBLE_JSON, CALL_ASSEMBLE_SHARED, CALL_ERROR, CALL_PROMPT_START
from ._consts import DEFAULT_MEMORY_LIMIT_BYTES, DEFAULT_RECYCLE_ABOVE_BYTES, MAX_MODULE_BUFFER_BYTES, MAX_REQUEST_BYTES
from ._consts import CALLS, MSG_UNREADABLE_VALUE_FORMAT, WIRE_VERSION, WORDS_PYTHON, HostError
from ._data_messages import MessagesView, chat_messages
from ._errors import AssemblyError, InstanceFailure, error_of
from ._pool import Pool
from ._types import AssembleRequest, AssembleResponse, Comparison, Injected, Message, PrefixDigests

if TYPE_CHECKING:
    from ._types import Provider

BytesLike = Union[bytes, bytearray, memoryview]
JSONText = Union[str, bytes, bytearray, memoryview]

#: A call ready to cross: its op and request bytes (an error only the host saw: the error call's).
Prepared = Tuple[int, bytes]

_BY_NAME = {c.name: c for c in CALLS}
#: The most request bytes each call is handed: a msgpack request past 1 GiB is too_large without
#: being copied in; anything else (JSON text, compare sides) up to the module's 32-bit buffer.
_LIMIT = tuple(MAX_REQUEST_BYTES if c.arg in ("request", "add_step") else MAX_MODULE_BUFFER_BYTES for c in CALLS)
_JSON_ANSWER = tuple(c.answer == "json" for c in CALLS)
_PLAIN_ANSWER = tuple(c.answer in ("json", "map") for c in CALLS)  # an answer without "ok"
_UNREADABLE = MSG_UNREADABLE_VALUE_FORMAT.split("%s")[0]


def _host_error(op: int, error: HostError, **args: Any) -> Prepared:
    """The error call that answers, in call ``op``'s shape, an error only the host saw."""
    return CALL_ERROR, _codec.encode({"call": op, "error": error, **args})


def _prepare(op: int, data: BytesLike) -> Prepared:
    """Request bytes for call ``op``, or its ``too_large`` (checked before any copy, as the Go hosts do)."""
    size = data.nbytes if isinstance(data, memoryview) else len(data)
    if size > _LIMIT[op]:
        return _host_error(op, "too_large", size=size)
    return op, data if isinstance(data, bytes) else bytes(data)


def _prepare_value(op: int, value: Any, caught: List[BaseException], words: bool = True) -> Prepared:
    """A Python value encoded for call ``op`` by the codec (unreadable values' exceptions to ``caught``); its
    messages in a Python user's words (``WORDS_PYTHON``: dict, list, None), as it raises them, unless the
    answer's bytes are kept (``words=False``: the wire's, every host's bytes)."""
    try:
        prepared = _prepare(op, _codec.encode(value, caught))
        return _in_python_words(prepared) if words else prepared
    except _codec.EncodeError as e:
        return _host_error(op, "value_too_large", size=e.size, type_name=e.type_name)


def _in_python_words(prepared: Prepared) -> Prepared:
    """A prepared call whose answer the binding decodes and raises: its messages in a Python user's words
    (``WORDS_PYTHON``: dict, list, None). The bytes APIs keep the wire's, every host's bytes."""
    return (prepared[0] | WORDS_PYTHON if prepared[0] != CALL_ERROR else prepared[0]), prepared[1]


def _prepare_json(text: JSONText) -> Prepared:
    if isinstance(text, str):  # surrogatepass: a lone surrogate reaches the core as the CLI would read it
        return _prepare(CALL_ASSEMBLE_JSON, text.encode("utf-8", "surrogatepass"))
    if isinstance(text, (bytes, bytearray, memoryview)):
        return _prepare(CALL_ASSEMBLE_JSON, text)
    raise TypeError(
        "assemble_json() takes the JSON text of one request as str, bytes, bytearray or memoryview, not %s" % type(text).__name__
    )


def _prepare_bytes(request: BytesLike) -> Prepared:
    if not isinstance(request, (bytes, bytearray, memoryview)):
        hint = "; to assemble JSON text, call assemble_json(text)" if isinstance(request, str) else ""
        raise TypeError("assemble_bytes() takes bytes, bytearray or memoryview, not %s%s" % (type(request).__name__, hint))
    return _prepare(CALL_ASSEMBLE, request)


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
            prepared = _prepare_value(spec.op, dict(zip(spec.params, args)), caught)
        elif len(args) != 1:
            raise TypeError("%s() takes 1 argument, got %d" % (name, len(args)))
        elif isinstance(args[0], (bytes, bytearray, memoryview)):
            prepared = _prepare(spec.op, args[0])
        elif isinstance(args[0], str) and spec.arg == "json":
            prepared = _prepare(spec.op, args[0].encode("utf-8", "surrogatepass"))
        else:
            prepared = _prepare_value(spec.op, args[0], caught)
        return self._decode(spec.op, self._run(spec.op, prepared), caught)

    def _run(self, op: int, prepared: Prepared) -> bytes:
        """The module's answer to a prepared call of call ``op`` (an instance failure: ``op``'s error, raised)."""
        try:
            return self._pool.call(prepared[1], prepared[0])
        except InstanceFailure as e:
            raise self._error(op, e.kind, e.detail) from None

    def _decode(self, op: int, answer: bytes, caught: Sequence[BaseException] = (), texts: Optional[List[str]] = None) -> Any:
        """An answer of call ``op``, decoded by its shape (JSON text or msgpack; the request's ``texts``: one
        with its texts shared), or raise the error it carries."""
        try:
            value = json.loads(answer) if _JSON_ANSWER[op] else _codec.decode(answer, texts)
        except Exception as e:
            raise self._error(op, "not_a_response", "%s: %s" % (type(e).__name__, e)) from None
        if value.__class__ is dict and ("error" not in value if _PLAIN_ANSWER[op] else value.get("ok") is True):
            return value
        error = error_of(value)
        if error is None:
            raise self._error(op, "not_a_response", "the answer decodes to %.200r" % (value,))
        if caught and error.code == "malformed_request" and error.message.startswith(_UNREADABLE):
            raise error from caught[0]
        raise error

    def _error(self, op: int, error: HostError, detail: str) -> AssemblyError:
        """The core's error, in call ``op``'s shape, for a failed instance or an answer that is not one."""
        request = _host_error(op, error)[1]
        try:
            answer = self._pool.call(request, CALL_ERROR)
        except InstanceFailure:  # no instance of this pool starts (its memory limit): one of the runtime's own
            answer = _runtime.new_instance().call(request, CALL_ERROR)
        e = error_of(json.loads(answer) if _JSON_ANSWER[op] else _codec.decode(answer))
        if e is None:
            raise RuntimeError(
                "polyloop_assembly: the module's error call answered %.200r; is assembly.wasm from this release?" % answer
            )
        e.detail = detail
        return e

    def _call_batch(self, op: int, items: Sequence[Prepared]) -> List[Union[bytes, AssemblyError]]:
        """The answers (or ``internal`` errors) of prepared calls of call ``op``, in one crossing of the batch call."""
        if len(items) < 2:
            return [self._caught(op, p) for p in items]
        try:
            answers = self._pool.call_batch(items)
        except InstanceFailure:  # a trap: the items one by one, each its own answer or error
            return [self._caught(op, p) for p in items]
        if answers is None:  # never from this module: not a batch answer
            return [self._error(op, "not_a_response", "not a batch answer of %d items" % len(items)) for _ in items]
        return cast(List[Union[bytes, AssemblyError]], answers)

    def _caught(self, op: int, prepared: Prepared) -> Union[bytes, AssemblyError]:
        try:
            return self._run(op, prepared)
        except AssemblyError as e:
            return e

    def assemble(self, request: AssembleRequest) -> AssembleResponse:
        """Assemble a request and return the response. Any mapping is encoded as it is and judged by the
        core alone: a bad value gets the code and path of the same mistake on the wire (one whose reading
        raised: ``malformed_request``, the exception as ``__cause__``). Raises :class:`AssemblyError`."""
        caught: List[BaseException] = []
        hooks = _codec.hooks()
        prepared = _prepare_value(CALL_ASSEMBLE, request, caught)
        # Shared texts are the request's str objects as they are after encoding: only when no user code ran
        # while it was encoded (a __index__ rewriting a text would make them texts the core never assembled).
        shared = len(prepared[1]) >= _codec.SHARED_MIN and _codec.hooks() == hooks  # not an error call's
        texts = _codec.shared_texts(request) if shared else None
        answer = self._run(CALL_ASSEMBLE, prepared if texts is None else (CALL_ASSEMBLE_SHARED | WORDS_PYTHON, prepared[1]))
        return cast(AssembleResponse, self._decode(CALL_ASSEMBLE, answer, caught, texts))

    def assemble_bytes(self, request: BytesLike) -> bytes:
        """The wire function: msgpack request bytes in, the canonical response out, errors as error
        responses (over 1 GiB: ``too_large``, not copied in); raises only ``internal``, and TypeError."""
        return self._run(CALL_ASSEMBLE, _prepare_bytes(request))

    def assemble_json_bytes(self, text: JSONText) -> bytes:
        """:meth:`assemble_bytes` for a request written as JSON text (str or UTF-8 bytes), read in the module
        by the command-line tool's JSON reader (a repeated key: ``duplicate_key``; ``1.0`` for an int or a
        syntax error: ``malformed_request``)."""
        return self._run(CALL_ASSEMBLE_JSON, _prepare_json(text))

    def assemble_json(self, text: JSONText) -> AssembleResponse:
        """:meth:`assemble` of a request written as JSON text, judged as :meth:`assemble_json_bytes` judges it."""
        return cast(
            AssembleResponse,
            self._decode(CALL_ASSEMBLE_JSON, self._run(CALL_ASSEMBLE_JSON, _in_python_words(_prepare_json(text)))),
        )

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
        answer = asm._run(CALL_PROMPT_START, _prepare_value(CALL_PROMPT_START, request, caught))
        response = asm._decode(CALL_PROMPT_START, answer, caught)
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
        response = asm._decode(CALL_ADD_STEP, asm._run(CALL_ADD_STEP, _prepare_value(CALL_ADD_STEP, request, caught)), caught)
        try:
            messages, chars, overflow = response["messages"], response["message_chars"], response["context_overflow"]
            state = response["prompt"]
        except KeyError:
            raise asm._error(CALL_ADD_STEP, "not_a_response", "add_step answered %.200r" % (response,)) from None
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
