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
  such a bigint. It is never clamped (ints are 64-bit: the project's
  docs/SPEC.md §2, in the source repository);
- any other ``Mapping`` packs as a map, any other non-text ``Sequence`` as an
  array, an object with ``__index__`` (e.g. a NumPy integer) as an int;
- anything msgpack cannot represent (a set, a datetime, an arbitrary object)
  packs as an ext value, which the core reports as ``malformed_request`` at its
  path;
- containers nested deeper than msgpack's recursion limit (or cyclic ones) are
  cut at depth 64 with the same ext value; no valid request is that deep, and
  the core meets a shallower problem first in its forward pass;
- a value whose reading raised (a user's ``Mapping`` or ``Sequence`` whose
  ``items()``, ``__iter__`` or ``__len__`` raised, a released ``memoryview``)
  packs, in its place, as the ext value :data:`EXT_UNREADABLE` carrying the
  value's type name, the exception's type name and its text; the core answers
  ``malformed_request`` at that value's path with the message (the project's
  docs/SPEC.md §7.6, in the source repository). The exceptions are handed
  back to the caller, which chains the first as ``__cause__``.

One thing is refused here, before the core, as :class:`EncodeError`: a str or
bytes value too large for msgpack (4 GiB), ``too_large`` at ``""``, as the core
says for any request over 1 GiB.

Speed: a request is packed by a per-thread msgpack packer that encodes str
with CPython's UTF-8 cache (no ``surrogatepass`` pass); only a request it
cannot pack (a lone surrogate, a non-contiguous memoryview, a failing
container, a cycle...) goes the slow way below, which gives the same bytes for
every value the fast way packs.
"""

from __future__ import annotations

import math
import operator
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Callable, List, Optional

import msgpack  # type: ignore[import-untyped]

from ._consts import EXT_UNREADABLE, MAX_MSGPACK_LENGTH, msg_value_too_large
from ._types import ErrorCode

__all__ = ["EncodeError", "decode", "encode", "new_fast_packer", "new_packer"]

_UNPACKABLE = msgpack.ExtType(0, b"")
_INT64_MIN = -(1 << 63)
_UINT64_MAX = (1 << 64) - 1
_CUT_DEPTH = 64
_MSGPACK_MAX = MAX_MSGPACK_LENGTH  # largest str/bin/array/map msgpack can hold
_KEEP_PACKER_BELOW = 1 << 20  # a per-thread packer whose buffer grew past this is dropped


class EncodeError(Exception):
    """A request that cannot be encoded at all: a value over msgpack's 4 GiB.

    The API raises it as ``AssemblyError(code, "", message)``.
    """

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(code, message)
        self.code = code
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


def new_fast_packer() -> msgpack.Packer:
    # Without unicode_errors msgpack takes CPython's cached UTF-8 of a str and
    # raises UnicodeEncodeError on a lone surrogate: the same bytes as
    # surrogatepass for every str it accepts.
    return msgpack.Packer(default=_default, use_bin_type=True, strict_types=False, datetime=False)


_local = threading.local()


def encode(request: Any, caught: Optional[List[BaseException]] = None) -> bytes:
    """Encode a Python request as msgpack bytes for the core (see module docstring).

    Args:
        caught: where the exceptions of values whose reading raised are
            appended, in the order they were written (each is written as an
            :data:`EXT_UNREADABLE` value).

    Raises:
        EncodeError: a str/bytes is over msgpack's 4 GiB (``too_large``).
    """
    local = _local
    packer = getattr(local, "packer", None)
    if packer is None:
        packer = new_fast_packer()
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
            out = _encode_slow(request, caught)
        return out
    except Exception:
        local.packer = packer
        return _encode_slow(request, caught)
    if len(out) < _KEEP_PACKER_BELOW:
        local.packer = packer
    return out


# --- the slow way: a walk that mirrors msgpack's ------------------------------


class _Walk:
    """One slow encoding: the packer and the exceptions caught on the way."""

    def __init__(self, caught: Optional[List[BaseException]]) -> None:
        self.pk = new_packer(autoreset=False)
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
            return msgpack.ExtType(EXT_UNREADABLE, new_packer().pack(names))

    def write(self, o: Any, depth: int) -> None:
        """Append o to the buffer as msgpack's own _pack would (same type order,
        same hook), with containers at depth _CUT_DEPTH cut, and unreadable
        values written as :data:`EXT_UNREADABLE`."""
        pk = self.pk
        if o is None or o is True or o is False or isinstance(o, (float, msgpack.ExtType)):
            pk.pack(o)
        elif isinstance(o, int):
            pk.pack(o if _INT64_MIN <= o <= _UINT64_MAX else _float_of(o))
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
        raise EncodeError("too_large", msg_value_too_large(what, size))


def _encode_slow(request: Any, caught: Optional[List[BaseException]]) -> bytes:
    walk = _Walk(caught)
    walk.write(request, 0)
    out: bytes = walk.pk.bytes()
    return out


def decode(response: bytes) -> Any:
    """Decode a response of the core."""
    return msgpack.unpackb(response, raw=False, strict_map_key=True, use_list=True)
