"""msgpack encoding of Python values, faithful enough that the core judges them.

The binding never validates a request itself. It encodes what it is given and
lets the WebAssembly core answer, so a bad Python value gets exactly the code
and path that the same mistake gets on the wire:

- a lone surrogate (e.g. from ``surrogateescape``) is encoded with
  ``surrogatepass``: invalid UTF-8 inside a msgpack str, which the core reports
  as ``invalid_utf8`` at its path;
- ``bool`` packs as msgpack bool, ``float`` as float, ``None`` as nil,
  ``bytes``, ``bytearray`` and ``memoryview`` (contiguous or not) as bin; the
  core decides where each is allowed;
- an ``int`` in [-2**63, 2**64) packs as a msgpack int. An ``int`` outside that
  range has no msgpack form: it packs as the float nearest to it (±inf beyond
  the float range), which the core rejects as ``malformed_request`` at its
  path ("expected an int, found a float"), as the JavaScript binding does for
  such a bigint. It is never clamped (docs/SPEC.md §2: ints are 64-bit);
- any other ``Mapping`` packs as a map, any other non-text ``Sequence`` as an
  array, an object with ``__index__`` (e.g. a NumPy integer) as an int;
- anything msgpack cannot represent (a set, a datetime, an arbitrary object)
  packs as an ext value, which the core reports as ``malformed_request`` at its
  path;
- containers nested deeper than msgpack's recursion limit (or cyclic ones) are
  cut at depth 64 with the same ext value; no valid request is that deep, and
  the core meets a shallower problem first in its forward pass.

Two things are refused here, before the core, as :class:`EncodeError`:

- reading a value raised an exception (a user's ``Mapping`` or ``Sequence``
  whose ``items()``, ``__iter__`` or ``__len__`` raised, a released
  ``memoryview``): ``malformed_request`` at that value's path, the exception
  named in the message and chained as ``__cause__``;
- a str or bytes value too large for msgpack (4 GiB): ``too_large``, as the
  core says for any request over 1 GiB.

Speed: a request is packed by a per-thread msgpack packer that encodes str
with CPython's UTF-8 cache (no ``surrogatepass`` pass); only a request it
cannot pack (a lone surrogate, a non-contiguous memoryview, a failing
container, a cycle...) goes the slow way below, which gives the same bytes for
every value the fast way packs.
"""

from __future__ import annotations

import json
import math
import operator
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Callable, List, Optional

import msgpack  # type: ignore[import-untyped]

from ._consts import MAX_MSGPACK_LENGTH, msg_unreadable_value, msg_value_too_large
from ._types import ErrorCode

__all__ = ["EncodeError", "decode", "encode", "new_packer"]

_UNPACKABLE = msgpack.ExtType(0, b"")
_INT64_MIN = -(1 << 63)
_UINT64_MAX = (1 << 64) - 1
_CUT_DEPTH = 64
_MSGPACK_MAX = MAX_MSGPACK_LENGTH  # largest str/bin/array/map msgpack can hold
_KEEP_PACKER_BELOW = 1 << 20  # a per-thread packer whose buffer grew past this is dropped


class EncodeError(Exception):
    """A request that cannot be encoded at all (see the module docstring).

    The API raises it as ``AssemblyError(code, path, message)``.
    """

    def __init__(self, code: ErrorCode, path: str, message: str) -> None:
        super().__init__(code, path, message)
        self.code = code
        self.path = path
        self.message = message


def _float_of(n: int) -> float:
    """The float nearest to n (the JavaScript binding's ``Number(bigint)``)."""
    try:
        return float(n)
    except OverflowError:
        return math.inf if n > 0 else -math.inf


def _default(obj: Any) -> Any:
    """msgpack's hook for values it cannot pack by itself."""
    if isinstance(obj, int):  # only ints beyond 64 bits reach the hook
        return _float_of(obj)
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


def new_packer(autoreset: bool = True) -> msgpack.Packer:
    """A packer with the binding's rules (not thread-safe: one per call or thread)."""
    return msgpack.Packer(
        default=_default,
        use_bin_type=True,
        unicode_errors="surrogatepass",
        strict_types=False,
        datetime=False,
        autoreset=autoreset,
    )


def _new_fast_packer() -> msgpack.Packer:
    # Without unicode_errors msgpack takes CPython's cached UTF-8 of a str and
    # raises UnicodeEncodeError on a lone surrogate: the same bytes as
    # surrogatepass for every str it accepts.
    return msgpack.Packer(default=_default, use_bin_type=True, strict_types=False, datetime=False)


_local = threading.local()


def encode(request: Any) -> bytes:
    """Encode a Python request as msgpack bytes for the core (see module docstring).

    Raises:
        EncodeError: reading a value raised (``malformed_request`` at its path)
            or a str/bytes is over msgpack's 4 GiB (``too_large``).
    """
    local = _local
    packer = getattr(local, "packer", None)
    if packer is None:
        packer = _new_fast_packer()
    else:
        local.packer = None  # taken: a nested call (from a user's container) makes its own
    try:
        out: bytes = packer.pack(request)
    except MemoryError:
        raise
    except UnicodeEncodeError:
        local.packer = packer
        try:
            out = new_packer().pack(request)
        except MemoryError:
            raise
        except Exception:
            out = _encode_slow(request)
        return out
    except Exception:
        local.packer = packer
        return _encode_slow(request)
    if len(out) < _KEEP_PACKER_BELOW:
        local.packer = packer
    return out


# --- the slow way: a walk that mirrors msgpack's, with paths ------------------


def _seg(parent: str, key: Any) -> Optional[str]:
    """The path of the value under ``key`` in the map at ``parent`` (the core's
    path syntax, docs/SPEC.md §6), or None for a key that is not a str."""
    if not isinstance(key, str):
        return None
    try:
        quoted = json.dumps(key, ensure_ascii=False)
    except Exception:  # pragma: no cover - json quotes every str
        quoted = repr(key)
    if parent == "injections" or not key.isidentifier() or not key.isascii():
        return "%s[%s]" % (parent, quoted)
    return "%s.%s" % (parent, key) if parent else key


def _read(path: str, value: Any, read: Callable[[], Any]) -> Any:
    try:
        return read()
    except MemoryError:
        raise
    except Exception as e:
        message = msg_unreadable_value(type(value).__name__, type(e).__name__, str(e))
        raise EncodeError("malformed_request", path, message) from e


def _too_large(what: str, size: int) -> EncodeError:
    return EncodeError("too_large", "", msg_value_too_large(what, size))


def _write(pk: msgpack.Packer, o: Any, path: str, depth: int) -> None:
    """Append o to pk's buffer as msgpack's own _pack would (same type order,
    same hook), with containers at depth _CUT_DEPTH cut, and errors coded."""
    if o is None or o is True or o is False or isinstance(o, float) or isinstance(o, msgpack.ExtType):
        pk.pack(o)
    elif isinstance(o, int):
        pk.pack(o if _INT64_MIN <= o <= _UINT64_MAX else _float_of(o))
    elif isinstance(o, (bytes, bytearray)):
        if len(o) > _MSGPACK_MAX:
            raise _too_large(type(o).__name__, len(o))
        pk.pack(o)
    elif isinstance(o, str):
        if len(o) * 4 > _MSGPACK_MAX:
            n = len(o.encode("utf-8", "surrogatepass"))
            if n > _MSGPACK_MAX:
                raise _too_large("str", n)
        pk.pack(o)
    elif isinstance(o, dict):
        if depth >= _CUT_DEPTH:
            pk.pack(_UNPACKABLE)
            return
        items: List[Any] = _read(path, o, lambda: list(o.items()))
        pk.pack_map_header(len(items))
        for k, v in items:
            _write(pk, k, path, depth + 1)
            sub = _seg(path, k)
            _write(pk, v, path if sub is None else sub, depth + 1)
    elif isinstance(o, (list, tuple)):
        if depth >= _CUT_DEPTH:
            pk.pack(_UNPACKABLE)
            return
        elems: List[Any] = _read(path, o, lambda: list(o))
        pk.pack_array_header(len(elems))
        for i, v in enumerate(elems):
            _write(pk, v, "%s[%d]" % (path, i), depth + 1)
    elif isinstance(o, memoryview):
        data = _read(path, o, o.tobytes)  # a copy: C order, any layout
        if len(data) > _MSGPACK_MAX:
            raise _too_large("memoryview", len(data))
        pk.pack(data)
    else:
        _write(pk, _read(path, o, lambda: _default(o)), path, depth)


def _encode_slow(request: Any) -> bytes:
    pk = new_packer(autoreset=False)
    _write(pk, request, "", 0)
    out: bytes = pk.bytes()
    return out


def decode(response: bytes) -> Any:
    """Decode a response of the core."""
    return msgpack.unpackb(response, raw=False, strict_map_key=True, use_list=True)
