"""Runs into training rows (``polyloop_assembly.data.run_rows`` and :class:`RunRows`): the calls of a run
recorded one by one become one row per maximal chain of calls whose prompts extend each other, as the
core's ``cache_report`` call judges them on the assembled prompts (the project's docs/SPEC.md §7.12, in the
source repository); no text is compared here."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any, Dict, Hashable, Iterable, Iterator, List, Optional, Tuple

import msgpack  # type: ignore[import-untyped]

from .._assembler import Assembler, default_assembler
from .._prompt_caching import cache_report
from .._messages import chat_messages
from ._values import _absent, _values
from .._errors import AssemblyError

__all__ = ["RUN_COLUMNS", "RunRows", "run_arrow_schema", "run_rows"]

#: The columns of a run row, in order (:func:`run_arrow_schema` has their types).
RUN_COLUMNS: Tuple[str, ...] = (
    "run_id",
    "first_call",
    "last_call",
    "calls",
    "ok",
    "messages",
    "model_output",
    "message_chars",
    "prompt_chars",
    "proof",
    "break",
    "error_code",
    "error_path",
    "error_message",
)
_BREAK_KEYS = ("segment", "message", "char", "step", "cause")


class _Chain:
    __slots__ = ("first", "calls", "proof", "brk", "last_request")

    def __init__(self, call: int, brk: Optional[Mapping[str, Any]], request: Any) -> None:
        self.first, self.calls, self.last_request = call, [call], request
        self.proof: List[Dict[str, Any]] = []
        self.brk = None if brk is None else {k: brk.get(k) for k in _BREAK_KEYS}


def _assembled(asm: Assembler, request: Any) -> Dict[str, Any]:
    """The assembly of a request as the core's cache_report read it: bytes are msgpack when they start a
    msgpack map, array or str (a str holding JSON text), else JSON text (the project's docs/SPEC.md §7.12,
    in the source repository: a request's bytes are read as a compare side's)."""
    if isinstance(request, (bytes, bytearray, memoryview)):
        data = bytes(request)
        c = data[0] if data else 0
        if 0xA0 <= c <= 0xBF or 0xD9 <= c <= 0xDB:  # a msgpack str: the JSON text in it
            request = msgpack.unpackb(data, raw=False)
        elif c < 0x80 or c > 0xBF and (c < 0xD9 or c > 0xDF):  # no msgpack value a request is: JSON text
            return dict(asm.assemble_json(data))
        else:
            return dict(asm.call("assemble", data))
    if isinstance(request, str):
        return dict(asm.assemble_json(request))
    return dict(asm.assemble(request))


def _chain_row(asm: Assembler, run_id: Any, chain: _Chain) -> Dict[str, Any]:
    row: Dict[str, Any] = dict.fromkeys(RUN_COLUMNS)
    row.update(run_id=run_id, first_call=chain.first, last_call=chain.calls[-1], calls=chain.calls)
    row.update(proof=chain.proof, ok=True)
    row["break"] = chain.brk
    try:
        resp = _assembled(asm, chain.last_request)
    except AssemblyError as e:  # internal only: the core judged this request valid in the report
        row.update(ok=False, error_code=e.code, error_path=e.path, error_message=e.message)
        return row
    messages = chat_messages(resp["messages"])
    row.update(messages=messages, model_output=[m["role"] == "assistant" for m in messages])
    row.update(message_chars=resp["message_chars"], prompt_chars=resp["prompt_chars"])
    return row


def _error_row(run_id: Any, call: int, error: Mapping[str, Any]) -> Dict[str, Any]:
    row: Dict[str, Any] = dict.fromkeys(RUN_COLUMNS)
    row.update(run_id=run_id, first_call=call, last_call=call, calls=[call], ok=False)
    row.update(error_code=error.get("code"), error_path=error.get("path"), error_message=error.get("message"))
    return row


def _one_run(asm: Assembler, run_id: Any, requests: Iterator[Any], window: int) -> Iterator[Dict[str, Any]]:
    """The rows of one run, its calls read ``window`` at a time (each window reported with the last valid
    call before it, so the core compares every call with its previous one)."""
    chain: Optional[_Chain] = None
    last: Optional[Tuple[int, Any]] = None  # the last valid call: its index and request
    pending: List[Dict[str, Any]] = []  # error rows after the chain's last call: they follow its row
    start = 0
    while True:
        batch = list(itertools.islice(requests, window))
        if not batch:
            break
        carried = [] if last is None else [last[1]]
        verdicts = cache_report(carried + batch, assembler=asm)["calls"][len(carried) :]
        for k, verdict in enumerate(verdicts):
            call = start + k
            if "error" in verdict:
                pending.append(_error_row(run_id, call, verdict["error"]))
                if chain is None:
                    yield from pending
                    pending.clear()
                continue
            previous = verdict["previous"]
            if previous is not None:  # the core's index in this report: the carried call, or one of the window
                previous = last[0] if (carried and previous == 0) else start + previous - len(carried)  # type: ignore[index]
            if chain is not None and verdict["extends"]:
                yield from pending  # before this call: before the chain's row
                pending.clear()
                chain.calls.append(call)
                chain.proof.append({"call": call, "previous": previous, "extends": True})
                chain.last_request = batch[k]
            else:
                if chain is not None:
                    yield _chain_row(asm, run_id, chain)
                yield from pending
                pending.clear()
                chain = _Chain(call, verdict["break"] if previous is not None else None, batch[k])
            last = (call, batch[k])
        start += len(batch)
    if chain is not None:
        yield _chain_row(asm, run_id, chain)
    yield from pending


def _run_key(run_id: Any) -> Tuple[type, Any]:
    """A run id as runs are told apart: by type and value (``1``, ``True`` and ``1.0`` are three runs)."""
    return (type(run_id), run_id)


def run_rows(
    calls: Iterable[Tuple[Hashable, Any]], *, assembler: Optional[Assembler] = None, window: int = 32
) -> Iterator[Dict[str, Any]]:
    """One training row per maximal chain of a run's calls whose prompts extend each other, lazily.

    ``calls``: ``(run_id, request)`` pairs, each run's calls together and in call order (a log sorted by run
    id, stably); a request is a dict, JSON text or bytes (read as :func:`cache_report` reads them: msgpack
    when they start a msgpack map, array or str, else JSON text). A run's calls are read ``window`` at a time
    (memory: one window and one chain's indices). Each call is judged by the core (the ``cache_report``
    call): a call whose prompt is the previous valid call's, whole, followed by more, extends its chain;
    another one (a condensed or truncated history, a changed goal) starts a new chain, and its row's
    ``break`` says where and why (``segment``, ``message``, ``char``, ``step``, ``cause``).

    A row (:data:`RUN_COLUMNS`): ``run_id``; ``first_call`` and ``last_call`` (indices within the run);
    ``calls`` the calls it covers; ``messages`` the last call's assembled messages as ``{"role", "content":
    str}`` (TRL's conversational form; :func:`chat_messages`); ``model_output`` per message whether it is
    the model's (``assistant``: a loss mask); ``message_chars``; ``prompt_chars``; ``proof`` the core's
    verdict for each covered call after the first (``call``, ``previous``, ``extends``: its prompt is a
    prefix of the next one's, so of the row's); ``break`` (None for a run's first chain). An invalid call is
    its own row, ``ok`` False with ``error_code``, ``error_path`` and ``error_message``, and is left out of
    the chains (the next call is compared with the last valid one). Rows come in order of their last call.
    Run ids are told apart by type and value: ``1``, ``True`` and ``1.0`` are three runs. A run id met again
    after another run is a ValueError: sort the calls by run id first."""
    asm = assembler or default_assembler()
    seen = set()
    for key, group in itertools.groupby(calls, key=lambda c: _run_key(c[0])):
        run_id = key[1]
        if key in seen:
            raise ValueError(
                "run_rows: the calls of run %r are not together (it is met again after another run): sort the "
                "calls by run id, stably, so each run's calls stay in call order" % (run_id,)
            )
        seen.add(key)
        yield from _one_run(asm, run_id, (request for _, request in group), window)


def run_arrow_schema(run_id_type: Any = None) -> Any:
    """The ``pyarrow.Schema`` of run rows (needs pyarrow); ``run_id_type`` the run id's (default: string)."""
    import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

    i, s, b = pa.int64(), pa.string(), pa.bool_()
    brk = pa.struct([("segment", s), ("message", i), ("char", i), ("step", i), ("cause", s)])
    return pa.schema(
        [
            ("run_id", run_id_type if run_id_type is not None else s),
            ("first_call", i),
            ("last_call", i),
            ("calls", pa.list_(i)),
            ("ok", b),
            ("messages", pa.list_(pa.struct([("role", s), ("content", s)]))),
            ("model_output", pa.list_(b)),
            ("message_chars", pa.list_(i)),
            ("prompt_chars", i),
            ("proof", pa.list_(pa.struct([("call", i), ("previous", i), ("extends", b)]))),
            ("break", brk),
            ("error_code", s),
            ("error_path", s),
            ("error_message", s),
        ]
    )


class RunRows:
    """:func:`run_rows` as a batched callable: a batch of calls (a ``pyarrow.Table``, a ``datasets`` batch, a
    mapping of columns) holding whole runs in, a ``pyarrow.Table`` of their run rows out
    (:func:`run_arrow_schema`, the run id typed as the input's). On Ray, one run per batch::

        ds.groupby("run_id").map_groups(RunRows, fn_constructor_kwargs={"call": "step"}, batch_format="pyarrow",
                                        concurrency=2, num_cpus=0.5)  # the group-by's tasks keep a CPU

    ``run_id`` and ``request`` name the columns; ``call``, if given, a column of call indices the batch's
    rows are put in order by (a group by run id keeps no order). A run split across two batches of one
    worker is a ValueError (its chains would be cut); on ``datasets``, make whole-run batches, or build the
    rows with ``Dataset.from_generator`` over :func:`run_rows`."""

    def __init__(self, run_id: str = "run_id", request: str = "request", *, call: Optional[str] = None) -> None:
        self.run_id, self.request, self.call = run_id, request, call
        self._assembler: Optional[Assembler] = None
        self._last_run: Any = None

    def __getstate__(self) -> Dict[str, Any]:
        return {"run_id": self.run_id, "request": self.request, "call": self.call}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(state["run_id"], state["request"], call=state.get("call"))  # type: ignore[misc]

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

        table = batch.pa_table if hasattr(batch, "pa_table") else batch
        if not hasattr(table, "column_names"):
            if not isinstance(batch, Mapping):
                raise TypeError("RunRows takes a batch of columns (pyarrow.Table or mapping), not %s" % type(batch).__name__)
            table = pa.table({k: _values(v) for k, v in batch.items() if k in (self.run_id, self.call)})
            requests = _values(batch[self.request])
        else:
            requests = table.column(self.request).to_pylist()
        ids = table.column(self.run_id).to_pylist()
        order = range(len(ids))
        if self.call is not None:
            order = sorted(order, key=table.column(self.call).to_pylist().__getitem__)  # type: ignore[assignment]
        if ids and _run_key(ids[0]) == self._last_run:
            raise ValueError(
                "RunRows: run %r goes on from the previous batch; give each batch whole runs (Ray: "
                "groupby(run_id).map_groups; datasets: Dataset.from_generator over data.run_rows)" % (ids[0],)
            )
        if self._assembler is None:
            self._assembler = Assembler(max_instances=1)
        rows = list(run_rows(((ids[i], _absent(requests[i])) for i in order), assembler=self._assembler))
        self._last_run = _run_key(ids[-1]) if ids else self._last_run
        schema = run_arrow_schema(table.schema.field(self.run_id).type)
        return pa.Table.from_pylist(rows, schema=schema)
