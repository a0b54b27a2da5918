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
- a ``Mapping``: the request as :func:`polyloop_assembly.assemble` takes it
  (in a batch, a null key is an absent key: :func:`request_of_row`);
- the row's own columns (``RenderBatch(request="*")``): each column a field
  of the request, as ``load_dataset("json")``, Ray's ``read_json`` and
  ``read_parquet`` give a file of requests (see :class:`RenderBatch` for the
  rule on nulls and what Arrow cannot tell apart).

The row's columns (:data:`COLUMNS`; Arrow types in :func:`arrow_schema`):

==========================  ===========  =====================================================
column                      type         value
==========================  ===========  =====================================================
``ok``                      bool         the request was assembled
``messages``                list<struct> the response's ``messages``: ``role`` (str),
                            | null       ``content`` (list<struct<``type``, ``text``>>), as
                                         chat templates take them; with ``messages="json"``
                                         a str, their JSON text
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
``response``                binary|null  only with ``response=True``: the response bytes
                                         exactly as ``assemble_bytes`` returns them (error
                                         responses included; for JSON text, as
                                         ``assemble_json_bytes``); null only when the binding
                                         refused the request before the core (an unreadable
                                         value, ``internal``)
==========================  ===========  =====================================================

Ray Data::

    import ray
    from polyloop_assembly.data import RenderBatch, ray_read_lines

    ray.data.DataContext.get_current().execution_options.preserve_order = True  # input order
    ds = ray_read_lines("trajectories.jsonl")   # columns "line" (from 1), "text", "path": "\\n" lines
    out = ds.map_batches(RenderBatch, fn_constructor_kwargs={"column": "text"}, batch_format="pyarrow",
                         compute=ray.data.ActorPoolStrategy(size=2), num_cpus=0.5)
    out.write_parquet("prompts/")
    # num_cpus=0.5: on 2 CPUs the actors leave one to the read and write
    # tasks; actors taking every CPU (2 x num_cpus=1) leave them none: a hang.

Hugging Face ``datasets``::

    from datasets import load_dataset
    from polyloop_assembly.data import RenderBatch, hf_read_lines

    ds = hf_read_lines("trajectories.jsonl")    # columns "line" (from 1), "text": "\\n" lines
    out = ds.map(RenderBatch(column="text"), batched=True, num_proc=2)
    # or the request's fields as columns, an "id" column carried through:
    ds = load_dataset("json", data_files=..., split="train")
    render = RenderBatch(request=[c for c in ds.column_names if c != "id"])
    out = ds.map(render, batched=True, num_proc=2)

A line ends at ``"\\n"`` alone (:func:`jsonl_lines`): ``ray.data.read_text``,
``load_dataset("text")`` and ``str.splitlines`` end one inside a request too
(at U+2028, U+2029, U+0085 or a CR). Every batch comes back with this one
schema (a ``pyarrow.Table``, or a DataFrame for a DataFrame), whatever its
mix of ok and error rows and whatever Ray ``batch_format``; a null is an
error row's (or ``response`` of a request refused before the core).

Runs into training rows: :func:`run_rows` and :class:`RunRows`; the migration
check: :class:`CompareRecorded`; each call's cache report and recorded usage as
columns: :func:`cache_rows` and :class:`CacheRows`.

:class:`RenderBatch` holds one :class:`~polyloop_assembly.Assembler` per
worker process, created on its first batch (it pickles without it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from .. import _runtime
from .._consts import CALL_ASSEMBLE, CALL_ASSEMBLE_JSON
from .. import _crossing
from .._assembler import Assembler, compare
from ._usage_rows import CACHE_COLUMNS, CacheRows, Tokenizer, cache_arrow_schema, cache_rows
from .._messages import MessagesView, chat_messages
from ._run_rows import RUN_COLUMNS, RunRows, run_arrow_schema, run_rows
from ._values import (
    _absent,
    _append,
    _frame_append,
    _hf_table,
    _is_hf_batch,
    _is_ndarray,
    _numpy_table,
    _typed,
    _values,
)
from .._errors import AssemblyError

__all__ = [
    "CACHE_COLUMNS",
    "COLUMNS",
    "COMPARE_COLUMNS",
    "CacheRows",
    "CompareRecorded",
    "MessagesView",
    "REQUEST_FIELDS",
    "RUN_COLUMNS",
    "RenderBatch",
    "RunRows",
    "Tokenizer",
    "arrow_schema",
    "cache_arrow_schema",
    "cache_rows",
    "chat_messages",
    "compare_arrow_schema",
    "hf_features",
    "hf_read_lines",
    "jsonl_lines",
    "ray_read_lines",
    "render",
    "render_columns",
    "request_of_row",
    "run_arrow_schema",
    "run_rows",
]

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

#: The request's fields (docs/SPEC.md §2, in the source repository), in its table's order: the
#: order in which a row of request columns is encoded.
REQUEST_FIELDS: Tuple[str, ...] = (
    "v",
    "run_messages",
    "injections",
    "goal_messages",
    "steps",
    "observation_template",
    "max_prompt_chars",
)

_NONE_ROW: Dict[str, Any] = dict.fromkeys(COLUMNS)
_MESSAGES = ("list", "json")
_OPTIONS = ("column", "request", "keep_request", "messages", "response")  # RenderBatch's, pickled


def _error_row(code: str, path: str, message: str, response: Optional[bytes]) -> Dict[str, Any]:
    row = dict(_NONE_ROW)
    row.update(ok=False, error_code=code, error_path=path, error_message=message, response=response)
    return row


def _response_row(assembler: Assembler, op: int, response: bytes, messages: str) -> Dict[str, Any]:
    try:
        resp = _crossing.decode(assembler.pool, op=op, answer=response)
    except AssemblyError as e:  # an error response; not one (detail set): no response bytes
        return _error_row(e.code, e.path, e.message, response if e.detail is None else None)
    digests = resp["prefix_digests"]
    row = dict(_NONE_ROW)
    row.update(
        ok=True,
        messages=json.dumps(resp["messages"], ensure_ascii=False) if messages == "json" else resp["messages"],
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


def render(request: Any, assembler: Assembler, *, messages: str = "list") -> Dict[str, Any]:
    """One row (a dict of :data:`COLUMNS`) for one request (str, bytes or
    Mapping); ``messages="json"`` gives the messages as JSON text."""
    try:
        if isinstance(request, str):  # JSON text: judged inside the module, as the CLI judges it
            return _response_row(assembler, CALL_ASSEMBLE_JSON, assembler.assemble_json_bytes(request), messages)
        if isinstance(request, (bytes, bytearray, memoryview)):
            return _response_row(assembler, CALL_ASSEMBLE, assembler.assemble_bytes(request), messages)
        prepared = _crossing.prepare_value(request, op=CALL_ASSEMBLE, caught=[], words=False)  # the wire's bytes
        answer = _crossing.run(assembler.pool, op=CALL_ASSEMBLE, prepared=prepared)
        return _response_row(assembler, CALL_ASSEMBLE, answer, messages)
    except AssemblyError as e:  # internal: the instance failed
        return _error_row(e.code, e.path, e.message, None)


def render_columns(
    requests: Iterable[Any], assembler: Optional[Assembler] = None, *, messages: str = "list", response: bool = False
) -> Dict[str, List[Any]]:
    """Render requests into columns: ``{column: [value per request]}``, one
    value per request in order (see :data:`COLUMNS`; ``response`` only with
    ``response=True``; ``messages="json"``: the messages as JSON text)."""
    _check_options(messages, response)
    asm = assembler if assembler is not None else Assembler(max_instances=1)
    names = _columns(response)
    cols: Dict[str, List[Any]] = {c: [] for c in names}
    appends = [(c, cols[c].append) for c in names]
    for request in requests:
        row = render(request, asm, messages=messages)
        for c, append in appends:
            append(row[c])
    return cols


def jsonl_lines(path: Union[str, "os.PathLike[str]"], *, chunk_bytes: int = 1 << 20) -> Iterator[Dict[str, Any]]:
    """The lines of a JSON-lines file, lazily, as rows ``{"line": n, "text": str}`` (``n`` from 1: the
    row's id to join on). Lines end at ``"\\n"`` alone, as JSON lines and the command-line tool's
    ``--batch`` say: U+2028, U+2029, U+0085 and a lone CR stay inside their line (``str.splitlines``,
    Ray's ``read_text`` and text-mode files split there), a CRLF line keeps its CR (JSON whitespace); a
    blank line is a row (an error row once rendered, as the tool answers it); the file's final newline
    ends the last line. Every line must be UTF-8 (RFC 8259): another is a ValueError naming it."""
    with open(path, "rb") as f:
        yield from _split_lines(iter(lambda: f.read(chunk_bytes), b""))


def _split_lines(chunks: Iterable[bytes]) -> Iterator[Dict[str, Any]]:
    rest, n = b"", 0
    for chunk in chunks:
        parts = (rest + chunk).split(b"\n")
        rest = parts.pop()
        for part in parts:
            n += 1
            yield {"line": n, "text": _decoded(part, n)}
    if rest:
        yield {"line": n + 1, "text": _decoded(rest, n + 1)}


def _decoded(line: bytes, n: int) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(
            "line %d is not UTF-8 (byte %d: %s); JSON lines are UTF-8: re-encode the file (iconv) or drop the line"
            % (n, e.start, e.reason)
        ) from None


def _file_lines(batch: Any) -> Any:
    """A batch of files (``bytes``, ``path``) as a Table of their lines: ``line``, ``text``, ``path``."""
    import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

    lines: List[int] = []
    texts: List[str] = []
    paths: List[str] = []
    for data, path in zip(batch.column("bytes").to_pylist(), batch.column("path").to_pylist()):
        for row in _split_lines([data]):
            lines.append(row["line"])
            texts.append(row["text"])
        paths.extend([path] * (len(lines) - len(paths)))
    return pa.table({"line": pa.array(lines, pa.int64()), "text": pa.array(texts, pa.string()), "path": paths})


def ray_read_lines(paths: Any, *, rows_per_block: Optional[int] = 2000, **read_args: Any) -> Any:
    """A Ray ``Dataset`` of the lines of JSON-lines files, columns ``line`` (from 1, per file), ``text``
    and ``path``, split as :func:`jsonl_lines` splits (``ray.data.read_text`` splits inside requests):
    ``read_binary_files(paths, include_paths=True, **read_args)``, each file split into its lines, in
    blocks of ``rows_per_block`` rows (so that a file's lines reach every actor; None: a block a file)."""
    import ray  # type: ignore[import-not-found, import-untyped, unused-ignore]

    files = ray.data.read_binary_files(paths, include_paths=True, **read_args)
    ds = files.map_batches(_file_lines, batch_format="pyarrow", batch_size=1)
    return ds if rows_per_block is None else ds.repartition(target_num_rows_per_block=rows_per_block)


def _hf_lines(path: str, stamp: Tuple[int, int]) -> Iterator[Dict[str, Any]]:
    return jsonl_lines(path)  # stamp: the file's size and time, in datasets' fingerprint of the generator


def hf_read_lines(path: Union[str, "os.PathLike[str]"], **from_generator_args: Any) -> Any:
    """A ``datasets.Dataset`` of the lines of a JSON-lines file, columns ``line`` (int64, from 1) and
    ``text`` (string), split as :func:`jsonl_lines` splits (``load_dataset("text")`` reads in text mode:
    a CR in a request ends its line); cached by ``datasets`` under the file's path, size and time."""
    import datasets  # type: ignore[import-not-found, import-untyped, unused-ignore]

    st = os.stat(path)
    features = datasets.Features({"line": datasets.Value("int64"), "text": datasets.Value("string")})
    kwargs = {"path": os.fspath(path), "stamp": (st.st_size, st.st_mtime_ns)}
    return datasets.Dataset.from_generator(_hf_lines, gen_kwargs=kwargs, features=features, **from_generator_args)


def _columns(response: bool) -> Tuple[str, ...]:
    return COLUMNS if response else COLUMNS[:-1]


def _check_options(messages: str, response: bool) -> None:
    if messages not in _MESSAGES:
        raise ValueError('messages=%r: write messages="list" (a nested column) or "json" (JSON text)' % (messages,))
    if not isinstance(response, bool):
        raise TypeError("response=%r: write response=True (the response bytes column) or False" % (response,))


def request_of_row(row: Mapping) -> Dict[str, Any]:  # type: ignore[type-arg]
    """The request a row of request columns (or a struct column) stands for:
    a null value of a map's key is that key absent, at every depth (Arrow
    has one null for a key a row lacks and for a JSON ``null``); the keys of
    the request in the order of :data:`REQUEST_FIELDS`, then the others."""
    known = [k for k in REQUEST_FIELDS if k in row]
    keys = known + [k for k in row if k not in REQUEST_FIELDS]
    return {k: _absent(row[k]) for k in keys if row[k] is not None}


def arrow_schema(*, messages: str = "list", response: bool = False) -> Any:
    """The ``pyarrow.Schema`` of the rendered columns (needs pyarrow), for
    :class:`RenderBatch`'s options of the same names."""
    import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

    _check_options(messages, response)
    s, b = pa.string(), pa.bool_()
    block = pa.struct([("type", s), ("text", s)])
    message = pa.struct([("role", s), ("content", pa.list_(block))])
    fields = [
        ("ok", b),
        ("messages", pa.list_(message) if messages == "list" else s),
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
    ]
    if response:
        fields.append(("response", pa.binary()))
    return pa.schema(fields)


def hf_features(input_features: Optional[Any] = None, *, messages: str = "list", response: bool = False) -> Any:
    """``datasets.Features`` of a rendered data set: ``input_features`` (the
    input's, kept as they are) plus the rendered columns of
    :func:`arrow_schema` for the same options (needs ``datasets``)."""
    import datasets  # type: ignore[import-not-found, import-untyped, unused-ignore]

    out = datasets.Features(dict(input_features) if input_features is not None else {})
    out.update(datasets.Features.from_arrow_schema(arrow_schema(messages=messages, response=response)))
    return out


class RenderBatch:
    """A callable for ``ray.data.Dataset.map_batches`` and ``datasets.Dataset.map(batched=True)``.

    Each call renders the requests of one batch and returns the batch with
    the rendered columns added (its own columns kept), typed as
    :func:`arrow_schema` says whatever the mix of ok and error rows. It holds
    one :class:`~polyloop_assembly.Assembler` (``max_instances=1``: one
    worker, one instance), created on the first call in each process, so it
    can be pickled to workers before any module is loaded.

    Args:
        column: the column holding the requests (JSON text, msgpack bytes or
            mappings, a struct column among them), when ``request`` is None.
        request: the request is the row's columns, not one column: ``"*"``
            every column of the batch is a field of the request (what
            ``load_dataset("json")``, ``read_json`` or ``read_parquet`` of a
            file of requests gives; a column that is no field of the wire is
            ``unknown_field``, as in the JSON text), or a sequence of the
            column names that are (the others, an ``id`` say, are carried
            through untouched).
        keep_request: keep the request's column(s) in the output (default True).
        messages: ``"list"`` (default) the messages as a nested column
            ``list<struct<role, content: list<struct<type, text>>>>``, as
            chat templates take them; ``"json"`` as JSON text.
        response: add the ``response`` bytes column (default False).

    A mapping request (a struct column, a row of request columns) follows
    one rule, :func:`request_of_row`: a null where a map has a key means the
    key is absent, at every depth (inside ``injections``, a null channel is
    no channel). Arrow has one null for a key a row lacks, which every JSON
    reader fills in for the keys other rows have, and for a JSON ``null``;
    the wire tells them apart (an explicit ``null`` is ``malformed_request``
    except for ``max_prompt_chars``), so render JSON text (``read_text``,
    ``load_dataset("text")``) when that distinction matters. An empty list
    or map stays empty. Arrow keeps no key order: the keys are encoded in the
    order of :data:`REQUEST_FIELDS`, so of a request with two problems the
    first one reported may be another than its JSON text's (docs/SPEC.md §2.1, in the source repository).

    A batch may be

    - a ``pyarrow.Table`` (Ray ``batch_format="pyarrow"``): a Table comes back;
    - a ``pandas.DataFrame`` (Ray ``"pandas"``): a DataFrame comes back, the
      added columns Arrow-typed (``pandas.ArrowDtype``);
    - a mapping of column name to NumPy arrays (Ray ``"numpy"``): a Table
      comes back (NumPy has no typed null);
    - a ``datasets`` batch: a Table comes back, the batch's own Arrow columns
      and features kept (:meth:`features` says the output's, for ``features=``);
    - a mapping of column name to lists: a Table comes back (a dict of lists
      if pyarrow is missing or the kept columns are no Arrow data).

    A batch that is one row (``datasets``' default ``batched=False``, Ray's
    ``map``), one without a request column, or a ``column`` that holds no
    requests (numbers, say) is a ``TypeError``/``ValueError`` before any row.

    Pickling it (how ``datasets`` fingerprints a ``map`` for its cache, and
    how Ray ships it) records the package version and the module's sha256
    beside the options, so another release or module never reuses a result
    cached by this one.
    """

    def __init__(
        self,
        column: str = "request",
        *,
        request: Union[None, str, Sequence[str]] = None,
        keep_request: bool = True,
        messages: str = "list",
        response: bool = False,
    ) -> None:
        _check_options(messages, response)
        if isinstance(request, str) and request != "*":
            raise ValueError('request=%r: write request="*" (every column) or a list of column names' % (request,))
        self.column = column
        self.request: Union[None, str, Tuple[str, ...]] = request if request is None or request == "*" else tuple(request)
        self.keep_request = keep_request
        self.messages = messages
        self.response = response
        self._assembler: Optional[Assembler] = None

    def __getstate__(self) -> Dict[str, Any]:
        # What renders: the options, the release and the module's bytes.
        state = {k: getattr(self, k) for k in _OPTIONS}
        return dict(state, version=_runtime.version(), module_sha256=_runtime.module_sha256())

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(**{k: state[k] for k in _OPTIONS if k in state})  # type: ignore[misc]

    @property
    def assembler(self) -> Assembler:
        """This worker's assembler (created on first use)."""
        if self._assembler is None:
            self._assembler = Assembler(max_instances=1)
        return self._assembler

    def schema(self) -> Any:
        """The ``pyarrow.Schema`` of the columns this callable adds."""
        return arrow_schema(messages=self.messages, response=self.response)

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
        names = list(batch.keys())
        cols = self._render(self._requests(batch, names))
        dropped = self._request_columns(names) if not self.keep_request else []
        if _is_hf_batch(batch):  # datasets' batch: its Arrow columns and features kept
            return _hf_table(batch, dropped, cols, self.schema())
        out: Dict[str, Any] = {k: v for k, v in batch.items() if k not in dropped}
        if any(_is_ndarray(v) for v in batch.values()):  # Ray "numpy": a typed Table
            return _append(_numpy_table(out), cols, self.schema())
        return _typed(out, cols, self.schema())

    def features(self, input_features: Optional[Any] = None) -> Any:
        """``datasets.Features`` of the output: :func:`hf_features` for this callable's options."""
        return hf_features(input_features, messages=self.messages, response=self.response)

    def _render(self, requests: List[Any]) -> Dict[str, List[Any]]:
        return render_columns(requests, self.assembler, messages=self.messages, response=self.response)

    def _request_columns(self, names: List[Any]) -> List[Any]:
        if self.request is None:
            return [self.column]
        return list(names) if self.request == "*" else list(self.request)

    def _requests(self, batch: Any, names: List[Any]) -> List[Any]:
        """The requests of the batch as Python values, refused (before any
        row) if the batch is one row, lacks a request column or the column
        holds something else than requests."""
        wanted = self._request_columns(names)
        missing = [c for c in wanted if c not in names]
        if missing or not wanted:
            raise ValueError(
                "RenderBatch(%s): the batch has no column %s; its columns are %s: pass column= the one holding "
                "the requests (JSON text, msgpack bytes or mappings), or request= the request's columns"
                % (self._described(), ", ".join(repr(c) for c in missing) or "at all", names)
            )
        for c in wanted:
            column = batch[c]
            if isinstance(column, (str, bytes, bytearray, Mapping)) or not hasattr(column, "__len__"):
                raise TypeError(
                    "RenderBatch renders batches of rows, but column %r holds one %s, so it was given one row: "
                    "write ds.map(RenderBatch(...), batched=True) (datasets' default is batched=False), or "
                    "ds.map_batches(...) on Ray" % (c, type(column).__name__)
                )
        if self.request is not None:
            values = {c: _values(batch[c]) for c in wanted}
            count = len(values[wanted[0]])
            return [request_of_row({c: values[c][i] for c in wanted}) for i in range(count)]
        return [_absent(v) if isinstance(v, Mapping) else v for v in self._column_values(batch[self.column])]

    def _described(self) -> str:
        return "column=%r" % self.column if self.request is None else "request=%r" % (self.request,)

    def _column_values(self, column: Any) -> List[Any]:
        values = _values(column)
        for i, v in enumerate(values):
            if v is not None and not isinstance(v, (str, bytes, bytearray, memoryview, Mapping)):
                raise TypeError(
                    "RenderBatch(column=%r): row %d of the batch holds a %s, not a request (JSON text, msgpack "
                    "bytes or a mapping): pass column= the column holding the requests, or request= the "
                    "request's columns" % (self.column, i, type(v).__name__)
                )
        return values

    def _table(self, table: Any) -> Any:
        cols = self._render(self._requests(table, table.column_names))
        if not self.keep_request:
            table = table.drop_columns(self._request_columns(table.column_names))
        return _append(table, cols, self.schema())

    def _frame(self, frame: Any) -> Any:
        names = list(frame.columns)
        cols = self._render(self._requests(frame, names))
        out = frame.drop(columns=self._request_columns(names)) if not self.keep_request else frame.copy()
        return _frame_append(out, cols, self.schema())


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


def compare_arrow_schema() -> Any:
    """The ``pyarrow.Schema`` of :data:`COMPARE_COLUMNS` (needs pyarrow)."""
    import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

    i, s = pa.int64(), pa.string()
    names = ("first_message", "first_char", "segment", "step", "cacheable_prefix_chars", "compare_error")
    return pa.schema([("identical", pa.bool_())] + list(zip(names, (i, i, s, i, i, s))))


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

    The batch comes back as a ``pyarrow.Table``: its columns (a ``datasets``
    batch's Arrow types kept) and :data:`COMPARE_COLUMNS` typed by
    :func:`compare_arrow_schema`, whatever the batch holds (all identical,
    all errors), so every batch and every Parquet file has one schema;
    :meth:`features` for ``map(features=...)``. A recorded value that is no
    message list (one message dict, say) is that row's ``compare_error``.

    The instance carries the package version and the module's sha256, so a
    cache keyed by its hash (``datasets``) recomputes after an upgrade.
    """

    def __init__(self, recorded: str = "recorded", request: str = "request") -> None:
        self.recorded, self.request = recorded, request
        self.fingerprint = (_runtime.version(), _runtime.module_sha256())

    def features(self, input_features: Optional[Any] = None) -> Any:
        """``datasets.Features`` of the output: ``input_features`` plus :func:`compare_arrow_schema`."""
        import datasets  # type: ignore[import-not-found, import-untyped, unused-ignore]

        out = datasets.Features(dict(input_features) if input_features is not None else {})
        out.update(datasets.Features.from_arrow_schema(compare_arrow_schema()))
        return out

    def __call__(self, batch: Mapping[str, Any]) -> Any:
        for name in (self.recorded, self.request):
            if name not in batch:
                raise KeyError(
                    "CompareRecorded: the batch has no column %r (columns: %s); name it with recorded= and request="
                    % (name, sorted(batch))
                )
        if isinstance(batch[self.request], (str, bytes, bytearray, Mapping)):  # a request, not a column of them
            raise TypeError("CompareRecorded got one row, not a batch: call map(..., batched=True)")
        rows = [self._row(r, q) for r, q in zip(_values(batch[self.recorded]), _values(batch[self.request]))]
        cols = {k: [row[k] for row in rows] for k in COMPARE_COLUMNS}
        if _is_hf_batch(batch):  # datasets' batch: its Arrow columns and features kept
            return _hf_table(batch, [], cols, compare_arrow_schema())
        return _typed({k: _values(v) for k, v in batch.items()}, cols, compare_arrow_schema())

    def _row(self, recorded: Any, request: Any) -> Dict[str, Any]:
        row: Dict[str, Any] = dict.fromkeys(COMPARE_COLUMNS)
        if hasattr(recorded, "__array__"):  # a NumPy array of message dicts (a data set's numpy format)
            recorded = list(recorded)
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
