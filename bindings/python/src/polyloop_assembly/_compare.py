"""The comparison of two prompts (the project's docs/SPEC.md §7.9, in the
source repository): :func:`compare`, and :class:`CompareRecorded`, the
migration check for data sets (exported by :mod:`polyloop_assembly.data`).

The core compares; this module only encodes the two sides and reads the
module's JSON answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Dict, List, Optional, cast

from . import _codec, _consts
from ._assembler import Assembler, default_assembler
from ._errors import error_of_response
from ._runtime import module_sha256, version
from ._types import Comparison

__all__ = ["COMPARE_COLUMNS", "CompareRecorded", "compare"]


def _side(value: Any, caught: List[BaseException]) -> bytes:
    """One side of a compare request, encoded: JSON text (a msgpack str),
    msgpack bytes (a bin, which the core judges as one side on its own), a
    request (mapping) or a recorded message list (sequence of ``{role,
    content}``)."""
    if isinstance(value, (str, bytes, bytearray, memoryview, Mapping)):
        return _codec.encode(value, caught)
    if hasattr(value, "__len__") and hasattr(value, "__getitem__"):  # a list, a tuple, a numpy array of dicts
        return _codec.encode(list(value), caught)
    raise TypeError(
        "compare() takes a request (a mapping), a recorded message list (a list of {role, content}), "
        "either as JSON text (str) or msgpack (bytes), not %s" % type(value).__name__
    )


def compare(a: Any, b: Any, *, assembler: Optional[Assembler] = None) -> Comparison:
    """Compare two prompts: where they first differ (message, character,
    segment, an excerpt of each side), which prefix digests still match, and
    how many characters of cacheable prefix ``b`` keeps.

    Each side is a request (assembled first), a recorded message list (what
    a legacy loop sent: ``[{"role", "content"}]``, content a str or a list of
    text blocks), or either as JSON text (``str``) or msgpack (``bytes``).
    The answer is the same, field for field, as the command-line tool's
    ``compare`` and JavaScript's ``asm.compare``.

    Raises:
        AssemblyError: a side is invalid (its code, and its path prefixed
            with ``a`` or ``b``: ``"b.steps[0].raw_output"``), or the
            instance failed (``internal``).
        TypeError: a side is none of the forms above.
    """
    caught: List[BaseException] = []
    request = b"\x82\xa1a" + _side(a, caught) + b"\xa1b" + _side(b, caught)
    answer = json.loads((assembler or default_assembler())._call(request, _consts.CALL_COMPARE))
    if "error" in answer:
        raise error_of_response(answer) from (caught[0] if caught else None)
    return cast(Comparison, answer)


#: The columns :class:`CompareRecorded` adds to each row.
COMPARE_COLUMNS = (
    "identical",
    "first_message",
    "first_char",
    "segment",
    "step",
    "cacheable_prefix_chars",
    "compare_error",
)


class CompareRecorded:
    """The migration check as one ``map``: per row, compare the recorded
    prompt (the messages a legacy loop sent) with the rendered one and add
    :data:`COMPARE_COLUMNS`: ``identical``, the first differing message and
    character (``first_message``, ``first_char``), its ``segment`` and
    ``step``, ``cacheable_prefix_chars``, and ``compare_error`` (the error's
    code, path and message when a side is invalid: such a row is not
    identical, and no exception fails the job).

    ``recorded`` names the column of recorded message lists (lists of
    ``{role, content}``, or their JSON text); ``request`` the column of
    requests (mappings, JSON text or msgpack bytes, as ``RenderBatch`` takes
    them). Batched, as ``RenderBatch``::

        ds = ds.map(CompareRecorded(recorded="sent", request="request"), batched=True)
        changed = ds.filter(lambda row: not row["identical"])

    The instance carries the package version and the module's sha256, so a
    cache keyed by its hash (``datasets``) recomputes after an upgrade.
    """

    def __init__(self, recorded: str = "recorded", request: str = "request") -> None:
        self.recorded, self.request = recorded, request
        self.fingerprint = (version(), module_sha256())

    def __call__(self, batch: Mapping[str, Any]) -> Dict[str, Any]:
        for name in (self.recorded, self.request):
            if name not in batch:
                raise KeyError(
                    "CompareRecorded: the batch has no column %r (columns: %s); name it with recorded= and request="
                    % (name, sorted(batch))
                )
        recorded, requests = list(batch[self.recorded]), list(batch[self.request])
        if isinstance(batch[self.recorded], str) or (recorded and isinstance(recorded[0], Mapping)):
            raise TypeError("CompareRecorded got one row, not a batch: call map(..., batched=True)")
        out: Dict[str, Any] = {k: list(v) for k, v in batch.items()}
        rows = [self._row(r, q) for r, q in zip(recorded, requests)]
        for k in COMPARE_COLUMNS:
            out[k] = [row[k] for row in rows]
        return out

    def _row(self, recorded: Any, request: Any) -> Dict[str, Any]:
        row: Dict[str, Any] = dict.fromkeys(COMPARE_COLUMNS)
        try:
            c = compare(recorded, request)
        except (ValueError, TypeError) as e:  # AssemblyError is a ValueError
            row["identical"], row["compare_error"] = (
                False,
                "%s at %r: %s" % (getattr(e, "code", "type_error"), getattr(e, "path", ""), e),
            )
            return row
        row["identical"], row["cacheable_prefix_chars"] = c["identical"], c["cacheable_prefix_chars"]
        d = c["first_difference"]
        if d is not None:
            row["first_message"], row["first_char"], row["segment"], row["step"] = (
                d["message"],
                d["char"],
                d["segment"],
                d["step"],
            )
        return row
