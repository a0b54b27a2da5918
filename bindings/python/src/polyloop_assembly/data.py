"""Data sets: render many requests into rows, on Ray Data or Hugging Face ``datasets``.

One request in, one row out, always: an invalid request becomes an *error
row* (``ok`` False, ``error_code``, ``error_path``, ``error_message``), never
an exception that fails the job and never a dropped row.

A request may be given as

- ``str``: the JSON text of one request (a line of a JSON-lines file), read
  by :func:`polyloop_assembly.assemble_json`: the command-line tool's verdict
  on JSON (a repeated key is ``duplicate_key``, ``1.0`` for an int
  ``malformed_request``, integers exact to 64 bits; text that is not JSON is
  an error row ``malformed_request`` at ``""``, ``invalid JSON at byte N``);
- ``bytes``: the msgpack request of the wire (the project's docs/SPEC.md §2, in the source repository), as ``assemble_bytes``
  takes it;
- a ``Mapping``: the request as :func:`polyloop_assembly.assemble` takes it.

The row's columns (:data:`COLUMNS`; Arrow types in :func:`arrow_schema`):

==========================  ===========  =====================================================
column                      type         value
==========================  ===========  =====================================================
``ok``                      bool         the request was assembled
``messages``                str | null   the assembled messages as JSON text (``json.loads``
                                         gives the response's ``messages`` list)
``prompt_chars``            int64 | null the response's ``prompt_chars``
``context_overflow``        bool | null  the response's ``context_overflow``
``prefix_digest_run``       str | null   ``prefix_digests["run"]``
``prefix_digest_injections`` str | null  ``prefix_digests["injections"]``
``prefix_digest_goal``      str | null   ``prefix_digests["goal"]``
``error_code``              str | null   the error's code (:data:`ErrorCode`), e.g. ``invalid_template``
``error_path``              str | null   the error's path, e.g. ``steps[3].observation``
``error_message``           str | null   what is wrong and what to do
``response``                binary|null  the response bytes exactly as ``assemble_bytes``
                                         returns them (error responses included; for JSON
                                         text, as ``assemble_json_bytes``); null only when the
                                         binding refused the request before the core (an
                                         unreadable value, ``internal``)
==========================  ===========  =====================================================

Ray Data::

    import ray
    from polyloop_assembly.data import RenderBatch

    ds = ray.data.read_text("trajectories.jsonl")          # one column "text"
    out = ds.map_batches(RenderBatch, fn_constructor_kwargs={"column": "text"}, batch_format="pyarrow",
                         compute=ray.data.ActorPoolStrategy(size=2), num_cpus=0.5)
    out.write_parquet("prompts/")

Hugging Face ``datasets``::

    from datasets import load_dataset
    from polyloop_assembly.data import RenderBatch, hf_features

    ds = load_dataset("json", data_files=...)  # or "text": one column "text"
    render = RenderBatch(column="text")
    out = ds.map(render, batched=True, num_proc=2, features=hf_features(ds.features))

:class:`RenderBatch` holds one :class:`~polyloop_assembly.Assembler` per
worker process, created on its first batch (it pickles without it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from . import _codec
from ._consts import MSG_BAD_RESPONSE
from ._assembler import AssemblyError, Assembler
from ._compare import (
    COMPARE_COLUMNS as COMPARE_COLUMNS,
    CompareRecorded as CompareRecorded,
)  # the migration check (docs/SPEC.md §7.9)

__all__ = ["COLUMNS", "RenderBatch", "arrow_schema", "hf_features", "render", "render_rows"]

#: The columns a rendered row adds, in order.
COLUMNS: Tuple[str, ...] = (
    "ok",
    "messages",
    "prompt_chars",
    "context_overflow",
    "prefix_digest_run",
    "prefix_digest_injections",
    "prefix_digest_goal",
    "error_code",
    "error_path",
    "error_message",
    "response",
)

_NONE_ROW: Dict[str, Any] = dict.fromkeys(COLUMNS)


def _error_row(code: str, path: str, message: str, response: Optional[bytes]) -> Dict[str, Any]:
    row = dict(_NONE_ROW)
    row.update(ok=False, error_code=code, error_path=path, error_message=message, response=response)
    return row


def _response_row(response: bytes) -> Dict[str, Any]:
    resp = _codec.decode(response)
    if isinstance(resp, dict) and resp.get("ok") is True:
        digests = resp["prefix_digests"]
        row = dict(_NONE_ROW)
        row.update(
            ok=True,
            messages=json.dumps(resp["messages"], ensure_ascii=False),
            prompt_chars=resp["prompt_chars"],
            context_overflow=resp["context_overflow"],
            prefix_digest_run=digests["run"],
            prefix_digest_injections=digests["injections"],
            prefix_digest_goal=digests["goal"],
            response=response,
        )
        return row
    err = resp.get("error") if isinstance(resp, dict) else None
    if not isinstance(err, Mapping):
        return _error_row("internal", "", MSG_BAD_RESPONSE, None)
    return _error_row(str(err.get("code")), str(err.get("path")), str(err.get("message")), response)


def render(request: Any, assembler: Assembler) -> Dict[str, Any]:
    """One row (a dict of :data:`COLUMNS`) for one request (str, bytes or Mapping)."""
    try:
        if isinstance(request, str):  # JSON text: judged inside the module, as the CLI judges it
            return _response_row(assembler.assemble_json_bytes(request))
        if isinstance(request, (bytes, bytearray, memoryview)):
            wire = bytes(request)
        else:
            try:
                wire = _codec.encode(request)
            except _codec.EncodeError as e:  # a str/bytes over msgpack's 4 GiB
                return _error_row(e.code, "", e.message, None)
        return _response_row(assembler.assemble_bytes(wire))
    except AssemblyError as e:  # internal (the instance failed) or too_large
        return _error_row(e.code, e.path, e.message, None)


def render_rows(requests: Iterable[Any], assembler: Optional[Assembler] = None) -> Dict[str, List[Any]]:
    """Render requests into columns: ``{column: [value per request]}``, one
    value per request in order (see :data:`COLUMNS`)."""
    asm = assembler if assembler is not None else Assembler(max_instances=1)
    cols: Dict[str, List[Any]] = {c: [] for c in COLUMNS}
    for request in requests:
        row = render(request, asm)
        for c in COLUMNS:
            cols[c].append(row[c])
    return cols


def arrow_schema() -> Any:
    """The ``pyarrow.Schema`` of :data:`COLUMNS` (needs pyarrow)."""
    import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

    s, b = pa.string(), pa.bool_()
    return pa.schema(
        [
            ("ok", b),
            ("messages", s),
            ("prompt_chars", pa.int64()),
            ("context_overflow", b),
            ("prefix_digest_run", s),
            ("prefix_digest_injections", s),
            ("prefix_digest_goal", s),
            ("error_code", s),
            ("error_path", s),
            ("error_message", s),
            ("response", pa.binary()),
        ]
    )


def hf_features(input_features: Optional[Any] = None) -> Any:
    """``datasets.Features`` of a rendered data set: ``input_features`` (the
    input's, kept as they are) plus :data:`COLUMNS` (needs ``datasets``)."""
    import datasets  # type: ignore[import-not-found, import-untyped, unused-ignore]

    out = datasets.Features(dict(input_features) if input_features is not None else {})
    out.update(datasets.Features.from_arrow_schema(arrow_schema()))
    return out


class RenderBatch:
    """A callable for ``ray.data.Dataset.map_batches`` and ``datasets.Dataset.map(batched=True)``.

    Each call renders the requests of one batch's ``column`` and returns the
    batch with :data:`COLUMNS` added (its own columns kept). It holds one
    :class:`~polyloop_assembly.Assembler` (``max_instances=1``: one worker, one
    instance), created on the first call in each process, so it can be pickled
    to workers before any module is loaded.

    Args:
        column: the column holding the requests (JSON text, msgpack bytes or
            mappings).
        keep_request: keep ``column`` in the output (default True).

    A batch may be a ``pyarrow.Table`` (Ray ``batch_format="pyarrow"``; a
    Table comes back) or a mapping of column name to a sequence (Ray
    ``"numpy"``, ``datasets``; a dict of lists comes back).
    """

    def __init__(self, column: str = "request", *, keep_request: bool = True) -> None:
        self.column = column
        self.keep_request = keep_request
        self._assembler: Optional[Assembler] = None

    def __getstate__(self) -> Dict[str, Any]:
        return {"column": self.column, "keep_request": self.keep_request}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(state["column"], keep_request=state["keep_request"])  # type: ignore[misc]

    @property
    def assembler(self) -> Assembler:
        """This worker's assembler (created on first use)."""
        if self._assembler is None:
            self._assembler = Assembler(max_instances=1)
        return self._assembler

    def __call__(self, batch: Any) -> Any:
        if hasattr(batch, "column_names") and hasattr(batch, "append_column"):  # a pyarrow.Table
            return self._table(batch)
        if not isinstance(batch, Mapping):
            raise TypeError("RenderBatch takes a pyarrow.Table or a mapping of columns, not %s" % type(batch).__name__)
        cols = render_rows(_values(batch[self.column]), self.assembler)
        out: Dict[str, Any] = {k: v for k, v in batch.items() if self.keep_request or k != self.column}
        out.update(cols)
        return out

    def _table(self, table: Any) -> Any:
        import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

        cols = render_rows(table.column(self.column).to_pylist(), self.assembler)
        if not self.keep_request:
            table = table.drop_columns([self.column])
        for field in arrow_schema():
            table = table.append_column(field, pa.array(cols[field.name], type=field.type))
        return table


def _values(column: Sequence[Any]) -> Iterable[Any]:
    tolist = getattr(column, "tolist", None)  # a NumPy array: plain Python values
    return tolist() if callable(tolist) else column
