"""The codec: Python values to msgpack as they are, for the core to judge (the binding validates nothing).

A lone surrogate (``surrogatepass``), an int beyond 64 bits (:data:`EXT_BIG_INT`, its decimal text),
anything msgpack has no form for, containers deeper than MAX_VALUE_DEPTH + 8 and values whose
reading raised are written so the core rejects them at their path (the last as :data:`EXT_UNREADABLE`, the
project's docs/SPEC.md §7.6, in the source repository; its exception handed
back for ``__cause__``). A per-thread packer writes what it can; the slow walk
below writes the rest, the same bytes for every value both can write.
"""

from __future__ import annotations

import inspect
import json
import operator
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Callable, List, Optional

import msgpack  # type: ignore[import-untyped]

from ._consts import EXT_BIG_INT, EXT_REQUEST_TEXT, EXT_UNREADABLE, MAX_MSGPACK_LENGTH, MAX_VALUE_DEPTH, SHARED_TEXT_SECTIONS
from ._errors import AssemblyError

_UNPACKABLE = msgpack.ExtType(0, b"")
_INT64_MIN = -(1 << 63)
_UINT64_MAX = (1 << 64) - 1
_CUT_DEPTH = MAX_VALUE_DEPTH + 8  # past the deepest value the core passes through: its verdict, too deep
_MSGPACK_MAX = MAX_MSGPACK_LENGTH  # largest str/bin/array/map msgpack can hold
_KEEP_PACKER_BELOW = 1 << 20  # a per-thread packer whose buffer grew past this is dropped


class EncodeError(Exception):
    """A str or bytes value of ``size`` bytes (host type ``type_name``) too long for msgpack."""

    def __init__(self, type_name: str, size: int) -> None:
        super().__init__(type_name, size)
        self.type_name, self.size = type_name, size


def _big_int(n: int) -> msgpack.ExtType:
    """An int beyond 64 bits, which msgpack cannot hold: the ext value the core
    names "an int beyond 64 bits" at its path, its data the int's decimal text."""
    return msgpack.ExtType(EXT_BIG_INT, str(n).encode("ascii"))


def _default(obj: Any) -> Any:
    """msgpack's hook for values it cannot pack by itself (it counts in :func:`hooks`: a user's code may run)."""
    _local.hooks = getattr(_local, "hooks", 0) + 1
    if isinstance(obj, int):  # only ints beyond 64 bits reach the hook
        return _big_int(obj)
    if isinstance(obj, Mapping):
        return dict(obj)
    if isinstance(obj, (str, bytes, bytearray, memoryview)):  # pragma: no cover - packed natively
        return _UNPACKABLE
    if hasattr(type(obj), "__index__"):
        try:
            return operator.index(obj)
        except Exception:
            return _UNPACKABLE
    if isinstance(obj, Sequence):
        return list(obj)
    return _UNPACKABLE


def _packer(autoreset: bool = True, errors: Optional[str] = "surrogatepass") -> msgpack.Packer:
    """A packer with the binding's rules, for one thread; ``errors=None``: CPython's cached UTF-8 (fast), and
    UnicodeEncodeError on a lone surrogate."""
    rules = {"default": _default, "use_bin_type": True, "strict_types": False, "datetime": False}
    return msgpack.Packer(unicode_errors=errors, autoreset=autoreset, **rules)


_local = threading.local()


def encode(request: Any, caught: Optional[List[BaseException]] = None) -> bytes:
    """``request`` as msgpack; the exceptions of unreadable values go to ``caught``, in order.

    Raises:
        EncodeError: a str or bytes is over msgpack's 4 GiB.
    """
    local = _local
    packer = getattr(local, "packer", None)
    if packer is None:
        packer = _packer(errors=None)
    else:
        local.packer = None  # taken: a nested call (from a user's container) makes its own
    try:
        out: bytes = packer.pack(request)
    except MemoryError:
        raise
    except UnicodeEncodeError:
        local.packer = packer
        try:
            out = _packer().pack(request)
        except MemoryError:
            raise
        except Exception:
            out = _encode_slow(request, caught)
        return out
    except Exception:
        local.packer = packer
        return _encode_slow(request, caught)
    if len(out) < _KEEP_PACKER_BELOW:
        local.packer = packer
    return out


# The slow way: a walk that mirrors msgpack's.


class _Walk:
    """One slow encoding: its packer and the exceptions caught on the way."""

    def __init__(self, caught: Optional[List[BaseException]]) -> None:
        self.pk = _packer(autoreset=False)
        self.caught: List[BaseException] = [] if caught is None else caught

    def read(self, value: Any, read: Callable[[], Any]) -> Any:
        """``read()``, or the :data:`EXT_UNREADABLE` value for ``value`` if it raised."""
        try:
            return read()
        except MemoryError:
            raise
        except Exception as e:
            self.caught.append(e)
            names = [type(value).__name__, type(e).__name__, _text_of(e)]
            return msgpack.ExtType(EXT_UNREADABLE, _packer().pack(names))

    def write(self, o: Any, depth: int) -> None:
        """Append o as msgpack's own _pack would, containers at depth _CUT_DEPTH cut, unreadable values marked."""
        pk = self.pk
        if o is None or o is True or o is False or isinstance(o, (float, msgpack.ExtType)):
            pk.pack(o)
        elif isinstance(o, int):
            pk.pack(o if _INT64_MIN <= o <= _UINT64_MAX else _big_int(o))
        elif isinstance(o, (bytes, bytearray)):
            _check_size(type(o).__name__, len(o))
            pk.pack(o)
        elif isinstance(o, str):
            if len(o) * 4 > _MSGPACK_MAX:
                _check_size("str", len(o.encode("utf-8", "surrogatepass")))
            pk.pack(o)
        elif isinstance(o, (dict, list, tuple)) and depth >= _CUT_DEPTH:
            pk.pack(_UNPACKABLE)
        elif isinstance(o, dict):
            self.write_map(self.read(o, lambda: list(o.items())), depth)
        elif isinstance(o, (list, tuple)):
            self.write_array(self.read(o, lambda: list(o)), depth)
        elif isinstance(o, memoryview):
            data = self.read(o, o.tobytes)  # a copy: C order, any layout
            if not isinstance(data, msgpack.ExtType):
                _check_size("memoryview", len(data))
            pk.pack(data)
        else:
            self.write(self.read(o, lambda: _default(o)), depth)

    def write_map(self, items: Any, depth: int) -> None:
        if isinstance(items, msgpack.ExtType):
            self.pk.pack(items)
            return
        self.pk.pack_map_header(len(items))
        for k, v in items:
            self.write(k, depth + 1)
            self.write(v, depth + 1)

    def write_array(self, elems: Any, depth: int) -> None:
        if isinstance(elems, msgpack.ExtType):
            self.pk.pack(elems)
            return
        self.pk.pack_array_header(len(elems))
        for v in elems:
            self.write(v, depth + 1)


def _text_of(e: BaseException) -> str:
    try:
        return str(e)
    except Exception:  # an exception whose __str__ raises
        return "<%s, whose text could not be read>" % type(e).__name__


def _check_size(what: str, size: int) -> None:
    if size > _MSGPACK_MAX:
        raise EncodeError(what, size)


def hooks() -> int:
    """How many values this thread's encodings have handed to a hook (``_default``, the slow walk): where a
    user's code may have run (``__index__``, ``items()``) and changed the request while it was encoded, so
    that its texts are no longer those encoded (:func:`shared_texts` then does not pay: it is not used)."""
    return int(getattr(_local, "hooks", 0))


def _encode_slow(request: Any, caught: Optional[List[BaseException]]) -> bytes:
    _local.hooks = getattr(_local, "hooks", 0) + 1
    walk = _Walk(caught)
    walk.write(request, 0)
    out: bytes = walk.pk.bytes()
    return out


def decode(response: bytes, texts: Optional[Sequence[str]] = None) -> Any:
    """Decode a response of the core; with the request's ``texts``, an ``assemble_shared`` answer (the project's
    docs/SPEC.md §7.11, in the source repository): text k is ``texts[k]`` itself, a text in pieces joined."""
    if texts is None:
        return msgpack.unpackb(response, raw=False, strict_map_key=True, use_list=True)

    def text(code: int, data: bytes) -> Any:
        return texts[int.from_bytes(data, "big")] if code == EXT_REQUEST_TEXT else msgpack.ExtType(code, data)

    value = msgpack.unpackb(response, raw=False, strict_map_key=True, use_list=True, ext_hook=text)
    if value.__class__ is dict and value.get("ok") is True:
        for m in value["messages"]:
            for b in m["content"]:
                if b["text"].__class__ is list:
                    b["text"] = "".join(b["text"])
    return value


def shared_texts(request: Any) -> Optional[List[str]]:
    """The request's texts in the shared answer's order, the str objects :func:`encode` wrote, if sharing pays
    (from :data:`SHARED_MIN` bytes and non-ASCII characters: CPython decodes ASCII as fast as it joins, and a
    shared text costs a hook call) and every container is a dict or list, every text a str."""
    try:
        run, goal = request.get("run_messages", []), request.get("goal_messages", [])
        channels, steps = request.get("injections", {}), request.get("steps", [])
        blocks = [m["content"] for m in run] + [m["content"] for m in goal]
        entries = [e for c in channels.values() for e in c]
        by = dict(run_messages=[b["text"] for c in blocks[: len(run)] for b in c], injections=[e["content"] for e in entries])
        by.update(goal_messages=[b["text"] for c in blocks[len(run) :] for b in c], steps=[s[k] for s in steps for k in _STEP])
        texts = [t for name in SHARED_TEXT_SECTIONS for t in by[name]]  # numbered in the table's order
        dicts = (request, channels, *run, *goal, *entries, *steps, *(b for c in blocks for b in c))
        plain = all(x.__class__ is list for x in (run, goal, steps, *channels.values(), *blocks))
        plain = plain and all(x.__class__ is dict for x in dicts) and all(t.__class__ is str for t in texts)
    except Exception:
        return None
    return texts if plain and sum(len(t) for t in texts if not t.isascii()) >= SHARED_MIN else None


SHARED_MIN = 1 << 16
_STEP = ("raw_output", "observation")  # a step's texts, in their order


# A provider's recorded answer, as the user holds it.

_USAGE_EXPECTED = "expected a usage dict, a response, its JSON text, or an SDK object with model_dump()"
# pydantic v2's model_dump: the fields the provider's JSON held (exclude_unset), under its names (by_alias), as
# JSON values (mode="json"): the recorded JSON itself, so the same numbers (tests/test_sdk_clients.py).
_MODEL_DUMP = dict(mode="json", by_alias=True, exclude_unset=True)


def usage_value(value: Any, path: str) -> Any:
    """One call's recorded usage as the core reads it (the project's docs/SPEC.md §7.12, in the source
    repository): ``None``, a mapping (a usage, or a whole response holding one) and any other JSON value (a
    list, a number: the core judges it) as they are; JSON text (``str``, ``bytes``) parsed; a provider SDK's
    response or usage object (Anthropic's ``Message``, OpenAI's ``ChatCompletion``, ``Response``) read through
    its ``model_dump()`` (pydantic v2) or, without one, its ``to_dict()``. No SDK is imported.

    Raises:
        AssemblyError: ``malformed_request`` at ``path`` for text that is not JSON, for an object that is none of
        these (an awaitable: the call was not awaited) and for an object whose ``model_dump()`` or ``to_dict()``
        raised (its exception chained).
    """
    if value is None or isinstance(value, Mapping):
        return value
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        try:
            return json.loads(value.tobytes() if isinstance(value, memoryview) else value)
        except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
            raise AssemblyError("malformed_request", path, _USAGE_EXPECTED + "; found text that is not JSON") from e
    if isinstance(value, (int, float, Sequence)):
        return value
    for name, options in (("model_dump", _MODEL_DUMP), ("to_dict", {})):
        try:
            read = getattr(value, name, None)
            if callable(read):
                return read(**options)
        except Exception as e:
            what = "found a %s whose %s() raised %s: %s" % (type(value).__name__, name, type(e).__name__, _text_of(e))
            raise AssemblyError("malformed_request", path, _USAGE_EXPECTED + "; " + what) from e
    found = "found a %s" % type(value).__name__
    if inspect.isawaitable(value):
        found += ", not awaited: await the client's call and pass its result"
    raise AssemblyError("malformed_request", path, _USAGE_EXPECTED + "; " + found)


def prompt_form(segments: Any, n: int, packed: bytes, injected: Any) -> bytes:
    """The prompt form (the project's docs/SPEC.md §7.14, in the source repository) as msgpack: ``segments``, then
    ``n`` messages whose msgpack is ``packed``, then ``injected``."""
    head = msgpack.Packer()
    return b"".join(
        (head.pack_map_header(3), encode("segments"), encode(segments), encode("messages"), head.pack_array_header(n))
        + (packed, encode("injected"), encode(injected))
    )
