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
``message_chars``           list<int64>  the response's ``message_chars`` (one per message)
                            | null
``prompt_chars``            int64 | null the response's ``prompt_chars``
``context_overflow``        bool | null  the response's ``context_overflow``
``injected``                list<struct> the response's ``injected``: ``channel`` (str),
                            | null       ``entry_id`` (str), ``message_index`` (int64)
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

    ray.data.DataContext.get_current().execution_options.preserve_order = True  # input order
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

Every batch has this one schema, whatever its mix of ok and error rows and
whatever Ray ``batch_format``; a null is an error row's (or ``response`` of a
request refused before the core).

:class:`RenderBatch` holds one :class:`~polyloop_assembly.Assembler` per
worker process, created on its first batch (it pickles without it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Dict, Iterable, List, Optional, Tuple

from . import _codec, _runtime
from ._consts import MSG_BAD_RESPONSE
from ._assembler import AssemblyError, Assembler
from ._compare import (
    COMPARE_COLUMNS as COMPARE_COLUMNS,
    CompareRecorded as CompareRecorded,
)  # the migration check (docs/SPEC.md §7.9, in the source repository)

__all__ = ["COLUMNS", "RenderBatch", "arrow_schema", "hf_features", "render", "render_rows"]

#: The columns a rendered row adds, in order.
COLUMNS: Tuple[str, ...] = (
    "ok",
    "messages",
    "message_chars",
    "prompt_chars",
    "context_overflow",
    "injected",
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
            message_chars=resp["message_chars"],
            prompt_chars=resp["prompt_chars"],
            context_overflow=resp["context_overflow"],
            injected=resp["injected"],
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
            ("message_chars", pa.list_(pa.int64())),
            ("prompt_chars", pa.int64()),
            ("context_overflow", b),
            ("injected", pa.list_(pa.struct([("channel", s), ("entry_id", s), ("message_index", pa.int64())]))),
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
    batch with :data:`COLUMNS` added (its own columns kept), typed as
    :func:`arrow_schema` says whatever the mix of ok and error rows. It holds
    one :class:`~polyloop_assembly.Assembler` (``max_instances=1``: one
    worker, one instance), created on the first call in each process, so it
    can be pickled to workers before any module is loaded.

    Args:
        column: the column holding the requests (JSON text, msgpack bytes or
            mappings).
        keep_request: keep ``column`` in the output (default True).

    A batch may be

    - a ``pyarrow.Table`` (Ray ``batch_format="pyarrow"``): a Table comes back;
    - a ``pandas.DataFrame`` (Ray ``"pandas"``): a DataFrame comes back, the
      added columns Arrow-typed (``pandas.ArrowDtype``);
    - a mapping of column name to NumPy arrays (Ray ``"numpy"``): a Table
      comes back (NumPy has no typed null);
    - a mapping of column name to lists (``datasets``): a dict of lists comes
      back; give ``map`` ``features=hf_features(ds.features)`` so the types
      hold in a batch of error rows.

    A batch that is one row (``datasets``' default ``batched=False``, Ray's
    ``map``), one without ``column``, or a ``column`` that holds no requests
    (numbers, say) is a ``TypeError``/``ValueError`` before any row.

    Pickling it (how ``datasets`` fingerprints a ``map`` for its cache, and
    how Ray ships it) records the package version and the module's sha256
    beside the options, so another release or module never reuses a result
    cached by this one.
    """

    def __init__(self, column: str = "request", *, keep_request: bool = True) -> None:
        self.column = column
        self.keep_request = keep_request
        self._assembler: Optional[Assembler] = None

    def __getstate__(self) -> Dict[str, Any]:
        # What renders: the options, the release and the module's bytes.
        return {
            "column": self.column,
            "keep_request": self.keep_request,
            "version": _runtime.version(),
            "module_sha256": _runtime.module_sha256(),
        }

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
        if hasattr(batch, "iloc") and hasattr(batch, "columns"):  # a pandas.DataFrame
            return self._frame(batch)
        if not isinstance(batch, Mapping):
            raise TypeError(
                "RenderBatch takes a batch: a pyarrow.Table, a pandas.DataFrame or a mapping of columns, not %s"
                % type(batch).__name__
            )
        values = self._requests(batch, list(batch.keys()))
        cols = render_rows(values, self.assembler)
        out: Dict[str, Any] = {k: v for k, v in batch.items() if self.keep_request or k != self.column}
        if any(_is_ndarray(v) for v in batch.values()):  # Ray "numpy": a typed Table
            return _append(_numpy_table(out), cols)
        out.update(cols)
        return out

    def _requests(self, batch: Any, names: List[Any]) -> List[Any]:
        """The requests of ``batch[self.column]`` as Python values, refused
        (before any row) if the batch is one row, lacks the column or the
        column holds something else than requests."""
        if self.column not in names:
            raise ValueError(
                "RenderBatch(column=%r): the batch has no column %r; its columns are %s: pass column= the one "
                "holding the requests (JSON text, msgpack bytes or mappings)" % (self.column, self.column, names)
            )
        column = batch[self.column]
        if isinstance(column, (str, bytes, bytearray, Mapping)) or not hasattr(column, "__len__"):
            raise TypeError(
                "RenderBatch renders batches of rows, but column %r holds one %s, so it was given one row: "
                "write ds.map(RenderBatch(...), batched=True) (datasets' default is batched=False), or "
                "ds.map_batches(...) on Ray" % (self.column, type(column).__name__)
            )
        values = _values(column)
        for i, v in enumerate(values):
            if v is not None and not isinstance(v, (str, bytes, bytearray, memoryview, Mapping)):
                raise TypeError(
                    "RenderBatch(column=%r): row %d of the batch holds a %s, not a request (JSON text, msgpack "
                    "bytes or a mapping): pass column= the column holding the requests" % (self.column, i, type(v).__name__)
                )
        return values

    def _table(self, table: Any) -> Any:
        cols = render_rows(self._requests(table, table.column_names), self.assembler)
        if not self.keep_request:
            table = table.drop_columns([self.column])
        return _append(table, cols)

    def _frame(self, frame: Any) -> Any:
        import pandas as pd  # type: ignore[import-not-found, import-untyped, unused-ignore]
        import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

        cols = render_rows(self._requests(frame, list(frame.columns)), self.assembler)
        out = frame.drop(columns=[self.column]) if not self.keep_request else frame.copy()
        for field in arrow_schema():
            out[field.name] = pd.Series(
                pa.array(cols[field.name], type=field.type), index=out.index, dtype=pd.ArrowDtype(field.type)
            )
        return out


def _values(column: Any) -> List[Any]:
    tolist = getattr(column, "tolist", None)  # a NumPy array, a pandas Series: plain Python values
    if callable(tolist):
        return list(tolist())
    to_pylist = getattr(column, "to_pylist", None)  # an Arrow array
    return list(to_pylist()) if callable(to_pylist) else list(column)


def _is_ndarray(value: Any) -> bool:
    return type(value).__module__ == "numpy" and hasattr(value, "ndim")


def _append(table: Any, cols: Dict[str, List[Any]]) -> Any:
    """``table`` with :data:`COLUMNS` appended, typed by :func:`arrow_schema`."""
    import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

    arrays = [pa.array(cols[field.name], type=field.type) for field in arrow_schema()]
    if table.num_columns == 0:  # nothing kept: the rendered columns alone
        return pa.Table.from_arrays(arrays, schema=arrow_schema())
    for field, array in zip(arrow_schema(), arrays):
        table = table.append_column(field, array)
    return table


def _numpy_table(batch: Dict[str, Any]) -> Any:
    """A NumPy batch as Ray turns it into a block (its tensor columns
    included), or as pyarrow does without Ray."""
    try:
        from ray.data.block import BlockAccessor, BlockType  # type: ignore[import-not-found, import-untyped, unused-ignore]

        return BlockAccessor.batch_to_block(batch, block_type=BlockType.ARROW)
    except ImportError:
        import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

        return pa.table(batch)
