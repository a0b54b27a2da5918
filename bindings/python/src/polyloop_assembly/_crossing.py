"""One crossing into the module, the binding's one way in: a call prepared as its op and request bytes (or the
error call's, for an error only the host saw), run on a :class:`Pool`, and its answer decoded by the call's
shape or raised as the :class:`AssemblyError` it carries. The API's modules (``_assembler``, ``_batch``,
``data``) cross only through these functions, every argument but the first by name."""

from __future__ import annotations

import json
from typing import Any, List, Optional, Sequence, Tuple, Union, cast

from . import _codec, _runtime
from ._consts import CALL_ASSEMBLE, CALL_ASSEMBLE_JSON, CALL_ERROR, CALLS, MAX_MODULE_BUFFER_BYTES, MAX_REQUEST_BYTES
from ._consts import MSG_UNREADABLE_VALUE_FORMAT, WORDS_PYTHON, HostError
from ._errors import AssemblyError, InstanceFailure, error_of
from ._pool import Pool

BytesLike = Union[bytes, bytearray, memoryview]
JSONText = Union[str, bytes, bytearray, memoryview]

#: A call ready to cross: its op and request bytes (an error only the host saw: the error call's).
Prepared = Tuple[int, bytes]

#: The most request bytes each call is handed: a msgpack request past 1 GiB is too_large without
#: being copied in; anything else (JSON text, compare sides) up to the module's 32-bit buffer.
_LIMIT = tuple(MAX_REQUEST_BYTES if c.arg in ("request", "add_step") else MAX_MODULE_BUFFER_BYTES for c in CALLS)
_JSON_ANSWER = tuple(c.answer == "json" for c in CALLS)
_PLAIN_ANSWER = tuple(c.answer in ("json", "map") for c in CALLS)  # an answer without "ok"
_UNREADABLE = MSG_UNREADABLE_VALUE_FORMAT.split("%s")[0]


def host_error(*, op: int, error: HostError, **args: Any) -> Prepared:
    """The error call that answers, in call ``op``'s shape, an error only the host saw."""
    return CALL_ERROR, _codec.encode({"call": op, "error": error, **args})


def prepare(data: BytesLike, *, op: int) -> Prepared:
    """Request bytes for call ``op``, or its ``too_large`` (checked before any copy, as the Go hosts do)."""
    size = data.nbytes if isinstance(data, memoryview) else len(data)
    if size > _LIMIT[op]:
        return host_error(op=op, error="too_large", size=size)
    return op, data if isinstance(data, bytes) else bytes(data)


def prepare_value(value: Any, *, op: int, caught: List[BaseException], words: bool = True) -> Prepared:
    """A Python value encoded for call ``op`` by the codec (unreadable values' exceptions to ``caught``); its
    messages in a Python user's words (``WORDS_PYTHON``: dict, list, None), as it raises them, unless the
    answer's bytes are kept (``words=False``: the wire's, every host's bytes)."""
    try:
        prepared = prepare(_codec.encode(value, caught), op=op)
        return in_python_words(prepared) if words else prepared
    except _codec.EncodeError as e:
        return host_error(op=op, error="value_too_large", size=e.size, type_name=e.type_name)


def in_python_words(prepared: Prepared) -> Prepared:
    """A prepared call whose answer the binding decodes and raises: its messages in a Python user's words
    (``WORDS_PYTHON``: dict, list, None). The bytes APIs keep the wire's, every host's bytes."""
    return (prepared[0] | WORDS_PYTHON if prepared[0] != CALL_ERROR else prepared[0]), prepared[1]


def prepare_json(text: JSONText) -> Prepared:
    """The request of ``assemble_json``: JSON text as str (UTF-8, lone surrogates kept) or bytes-like."""
    if isinstance(text, str):  # surrogatepass: a lone surrogate reaches the core as the CLI would read it
        return prepare(text.encode("utf-8", "surrogatepass"), op=CALL_ASSEMBLE_JSON)
    if isinstance(text, (bytes, bytearray, memoryview)):
        return prepare(text, op=CALL_ASSEMBLE_JSON)
    raise TypeError(
        "assemble_json() takes the JSON text of one request as str, bytes, bytearray or memoryview, not %s" % type(text).__name__
    )


def prepare_bytes(request: BytesLike) -> Prepared:
    """The request of ``assemble_bytes``: msgpack bytes-like, refused with TypeError (and a hint for JSON) otherwise."""
    if not isinstance(request, (bytes, bytearray, memoryview)):
        hint = "; to assemble JSON text, call assemble_json(text)" if isinstance(request, str) else ""
        raise TypeError("assemble_bytes() takes bytes, bytearray or memoryview, not %s%s" % (type(request).__name__, hint))
    return prepare(request, op=CALL_ASSEMBLE)


def run(pool: Pool, *, op: int, prepared: Prepared) -> bytes:
    """The module's answer to a prepared call of call ``op`` (an instance failure: ``op``'s error, raised)."""
    try:
        return pool.call(prepared[1], prepared[0])
    except InstanceFailure as e:
        raise error_answer(pool, op=op, error=e.kind, detail=e.detail) from None


def decode(pool: Pool, *, op: int, answer: bytes, caught: Sequence[BaseException] = (), texts: Optional[List[str]] = None) -> Any:
    """An answer of call ``op``, decoded by its shape (JSON text or msgpack; the request's ``texts``: one
    with its texts shared), or raise the error it carries."""
    try:
        value = json.loads(answer) if _JSON_ANSWER[op] else _codec.decode(answer, texts)
    except Exception as e:
        raise error_answer(pool, op=op, error="not_a_response", detail="%s: %s" % (type(e).__name__, e)) from None
    if value.__class__ is dict and ("error" not in value if _PLAIN_ANSWER[op] else value.get("ok") is True):
        return value
    error = error_of(value)
    if error is None:
        raise error_answer(pool, op=op, error="not_a_response", detail="the answer decodes to %.200r" % (value,))
    if caught and error.code == "malformed_request" and error.message.startswith(_UNREADABLE):
        raise error from caught[0]
    raise error


def error_answer(pool: Pool, *, op: int, error: HostError, detail: str) -> AssemblyError:
    """The core's error, in call ``op``'s shape, for a failed instance or an answer that is not one."""
    request = host_error(op=op, error=error)[1]
    try:
        answer = pool.call(request, CALL_ERROR)
    except InstanceFailure:  # no instance of this pool starts (its memory limit): one of the runtime's own
        answer = _runtime.new_instance().call(request, CALL_ERROR)
    e = error_of(json.loads(answer) if _JSON_ANSWER[op] else _codec.decode(answer))
    if e is None:
        raise RuntimeError(
            "polyloop_assembly: the module's error call answered %.200r; is assembly.wasm from this release?" % answer
        )
    e.detail = detail
    return e


def run_batch(pool: Pool, *, op: int, items: Sequence[Prepared]) -> List[Union[bytes, AssemblyError]]:
    """The answers (or ``internal`` errors) of prepared calls of call ``op``, in one crossing of the batch call."""
    if len(items) < 2:
        return [_caught(pool, op, p) for p in items]
    try:
        answers = pool.call_batch(items)
    except InstanceFailure:  # a trap: the items one by one, each its own answer or error
        return [_caught(pool, op, p) for p in items]
    if answers is None:  # never from this module: not a batch answer
        return [
            error_answer(pool, op=op, error="not_a_response", detail="not a batch answer of %d items" % len(items)) for _ in items
        ]
    return cast(List[Union[bytes, AssemblyError]], answers)


def _caught(pool: Pool, op: int, prepared: Prepared) -> Union[bytes, AssemblyError]:
    try:
        return run(pool, op=op, prepared=prepared)
    except AssemblyError as e:
        return e
