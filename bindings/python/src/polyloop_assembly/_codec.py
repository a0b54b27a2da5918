"""msgpack encoding of Python values, faithful enough that the core judges them.

The binding never validates a request itself. It encodes what it is given and
lets the WebAssembly core answer, so a bad Python value gets exactly the code
and path that the same mistake gets on the wire:

- a lone surrogate (e.g. from ``surrogateescape``) is encoded with
  ``surrogatepass``: invalid UTF-8 inside a msgpack str, which the core reports
  as ``invalid_utf8`` at its path;
- ``bool`` packs as msgpack bool, ``float`` as float, ``None`` as nil,
  ``bytes`` as bin; the core decides where each is allowed;
- ``int`` beyond 64 bits is clamped to the nearest 64-bit value of the same
  sign (``2**70`` → ``2**64 - 1``, ``-2**70`` → ``-2**63``). Every rule of the
  wire format treats such an int like its clamp: ``v`` ≠ 1 stays
  ``unsupported_version``, a budget stays ≥ 0 (never exceeded) or < 0
  (``invalid_budget``), an int where a str belongs stays ``malformed_request``;
- any other ``Mapping`` packs as a map, any other non-text ``Sequence`` as an
  array, an object with ``__index__`` (e.g. a NumPy integer) as an int;
- anything msgpack cannot represent (a set, a datetime, an arbitrary object)
  packs as an ext value, which the core reports as ``malformed_request`` at its
  path;
- containers nested deeper than msgpack's recursion limit (or cyclic ones) are
  cut at depth 64 with the same ext value; no valid request is that deep, and
  the core meets a shallower problem first in its forward pass.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

import msgpack  # type: ignore[import-untyped]

__all__ = ["decode", "encode", "new_packer"]

_UNPACKABLE = msgpack.ExtType(0, b"")
_INT64_MIN = -(1 << 63)
_UINT64_MAX = (1 << 64) - 1
_CUT_DEPTH = 64


def _default(obj: Any) -> Any:
    """msgpack's hook for values it cannot pack by itself."""
    if isinstance(obj, int):  # only ints beyond 64 bits reach the hook
        return _UINT64_MAX if obj > 0 else _INT64_MIN
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


def new_packer() -> msgpack.Packer:
    """A packer with the binding's rules (not thread-safe: one per call or thread)."""
    return msgpack.Packer(
        default=_default,
        use_bin_type=True,
        unicode_errors="surrogatepass",
        strict_types=False,
        datetime=False,
    )


def _cut(obj: Any, depth: int) -> Any:
    """A copy of obj with containers below depth _CUT_DEPTH replaced by ext."""
    if isinstance(obj, (str, bytes, bytearray, memoryview)) or obj is None or isinstance(obj, (bool, int, float)):
        return obj
    if isinstance(obj, Mapping):
        if depth >= _CUT_DEPTH:
            return _UNPACKABLE
        return {k: _cut(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) or (isinstance(obj, Sequence) and not hasattr(type(obj), "__index__")):
        if depth >= _CUT_DEPTH:
            return _UNPACKABLE
        return [_cut(v, depth + 1) for v in obj]
    return obj


def encode(request: Any) -> bytes:
    """Encode a Python request as msgpack bytes for the core (see module docstring)."""
    out: bytes
    try:
        out = new_packer().pack(request)
    except ValueError:
        # msgpack's recursion limit: cut the structure and try once more.
        out = new_packer().pack(_cut(request, 0))
    return out


def decode(response: bytes) -> Any:
    """Decode a response of the core."""
    return msgpack.unpackb(response, raw=False, strict_map_key=True, use_list=True)

