"""Usage reconciled as data-set columns (``polyloop_assembly.data.cache_rows`` and :class:`CacheRows`): each
recorded call of a run gets the core's ``cache_report`` verdict (the project's docs/SPEC.md §7.12, in the
source repository) as typed columns: whether its prompt extends the previous call's, the first break and its
cause, the cacheable prefix in characters, and with the provider's recorded usage the call's class
(``first``, ``hit``, ``prefix_break``, ``write_only``, ``provider_miss``, ``unknown_usage``, ``no_usage``). One report per run (or per window of
it); no prompt text is compared here. Characters stay the only size measured: tokens are the provider's,
passed through, or a tokenizer's the caller gives, beside the characters."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sized
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from .. import _runtime
from .._assembler import Assembler, default_assembler
from .._codec import usage_value
from ._run_rows import _assembled, _run_key
from ._values import _absent, _is_hf_batch, _values, _with_columns
from .._errors import AssemblyError
from .._types import CacheCallError, ErrorDetail

__all__ = ["CACHE_COLUMNS", "CacheRows", "Tokenizer", "cache_arrow_schema", "cache_rows"]

#: The columns a call's cache row adds, in order (:func:`cache_arrow_schema` has their types; with a
#: tokenizer, ``cacheable_prefix_tokens`` follows ``cacheable_prefix_chars``).
CACHE_COLUMNS: Tuple[str, ...] = (
    "call_index",
    "previous_call",
    "extends",
    "break_segment",
    "break_message",
    "break_char",
    "break_step",
    "break_cause",
    "prompt_chars",
    "cacheable_prefix_chars",
    "usage_class",
    "cached_tokens",
    "written_tokens",
    "input_tokens",
    "error_code",
    "error_path",
    "error_message",
)
_TOKENS = "cacheable_prefix_tokens"
_BREAK = ("segment", "message", "char", "step", "cause")
_INPUT_TOKENS = ("input_tokens", "prompt_tokens")  # Anthropic's and Responses', Chat Completions' and DeepSeek's

#: A tokenizer: text in, a token count or the tokens (a sequence: its length is the count) out, e.g.
#: tiktoken's ``enc.encode`` or a Hugging Face tokenizer's ``tok.encode``.
Tokenizer = Callable[[str], Union[int, Sequence[Any]]]


def _columns(tokens: bool) -> Tuple[str, ...]:
    if not tokens:
        return CACHE_COLUMNS
    at = CACHE_COLUMNS.index("cacheable_prefix_chars") + 1
    return CACHE_COLUMNS[:at] + (_TOKENS,) + CACHE_COLUMNS[at:]


def cache_arrow_schema(*, tokenizer: bool = False) -> Any:
    """The ``pyarrow.Schema`` of :data:`CACHE_COLUMNS` (needs pyarrow); ``tokenizer=True`` adds
    ``cacheable_prefix_tokens`` (int64) after ``cacheable_prefix_chars``."""
    import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

    i, s = pa.int64(), pa.string()
    types = {"extends": pa.bool_(), "break_segment": s, "break_cause": s, "usage_class": s}
    types.update(error_code=s, error_path=s, error_message=s)
    return pa.schema([(name, types.get(name, i)) for name in _columns(tokenizer)])


def _input_tokens(usage: Any) -> Optional[int]:
    """The input tokens the provider recorded, as recorded (Anthropic's ``input_tokens`` leaves out what was
    read from or written to the cache; OpenAI's and DeepSeek's ``prompt_tokens`` count it)."""
    if isinstance(usage, Mapping) and isinstance(usage.get("usage"), Mapping):
        usage = usage["usage"]
    for key in _INPUT_TOKENS:
        value = usage.get(key) if isinstance(usage, Mapping) else None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _read(usage: Any) -> Tuple[Any, Optional[AssemblyError]]:
    """A recorded usage as the core reads it (JSON text parsed, an SDK's object read: ``usage_value``), or None
    and the error that says why it cannot be (its row's error)."""
    try:
        return usage_value(usage, "usage"), None
    except AssemblyError as e:
        return None, e


def _parsed(usage: Any) -> Any:
    """A usage read as :func:`_read` reads it; one that cannot be, or JSON text of a str, stays as it is
    (``_rows`` reads it again: reports it, or parses it once)."""
    value, error = _read(usage)
    return usage if error is not None or isinstance(value, str) else value


def _count(tokenizer: Tokenizer, text: str) -> int:
    counted = tokenizer(text)
    if isinstance(counted, int) and not isinstance(counted, bool):
        return counted
    if isinstance(counted, (Mapping, str, bool)) or not isinstance(counted, Sized):
        raise TypeError(
            "tokenizer returned a %s: pass a callable answering a token count (int) or the tokens (a list), "
            "e.g. tiktoken's enc.encode or a Hugging Face tokenizer's tok.encode" % type(counted).__name__
        )
    return len(counted)


class _Carry:
    """Where a run stands after the calls reported so far: the next call's index, and the last valid call
    (its index and request), with which the next one is compared."""

    __slots__ = ("run_id", "next_call", "last_call", "last_request")

    def __init__(self, run_id: Any) -> None:
        self.run_id, self.next_call = run_id, 0
        self.last_call: Optional[int] = None
        self.last_request: Any = None


def _rows(
    asm: Assembler, carry: _Carry, calls: Sequence[Tuple[Any, bool, Any]], tokenizer: Optional[Tokenizer]
) -> List[Dict[str, Any]]:
    """The rows of ``calls`` (request, usage given, usage), the next calls of ``carry``'s run, in call order;
    ``carry`` moves past them."""
    carried = [] if carry.last_call is None else [carry.last_request]
    requests = carried + [request for request, _, _ in calls]
    read = [_read(u) for _, _, u in calls]
    usage = [None] * len(carried) + [value for value, _ in read]
    try:
        verdicts = asm.call("cache_report", requests, usage)["calls"][len(carried) :]  # usage read already
    except AssemblyError as e:  # internal: the instance failed; every call says so
        error: ErrorDetail = {"code": e.code, "path": e.path, "message": e.message}
        verdicts = [CacheCallError(error=error)] * len(calls)
    rows = []
    for k, ((request, given, _), verdict) in enumerate(zip(calls, verdicts)):
        call = carry.next_call + k
        row = _row(call, verdict, given, usage[len(carried) + k], tokenizer is not None, read[k][1])
        if "error" not in verdict:
            previous = verdict["previous"]
            if previous is not None:  # the report's index: the carried call, or one of these
                row["previous_call"] = carry.last_call if carried and previous == 0 else previous - len(carried) + carry.next_call
            if tokenizer is not None:
                try:
                    row[_TOKENS] = _prefix_tokens(asm, tokenizer, request, verdict["cacheable_prefix_chars"])
                except AssemblyError as e:  # internal only: the report judged the request valid
                    row.update(error_code=e.code, error_path=e.path, error_message=e.message)
            carry.last_call, carry.last_request = call, request
        rows.append(row)
    carry.next_call += len(calls)
    return rows


def _row(
    call: int, verdict: Mapping[str, Any], given: bool, recorded: Any, tokens: bool, unread: Optional[AssemblyError]
) -> Dict[str, Any]:
    row: Dict[str, Any] = dict.fromkeys(_columns(tokens))
    row["call_index"] = call
    if "error" in verdict:
        e = verdict["error"]
        row.update(error_code=e["code"], error_path=e["path"], error_message=e["message"])
        return row
    row.update(extends=verdict["extends"], prompt_chars=verdict["prompt_chars"])
    row["cacheable_prefix_chars"] = verdict["cacheable_prefix_chars"]
    brk = verdict["break"]
    if brk is not None:
        row.update({"break_" + k: brk[k] for k in _BREAK})
    usage = verdict["usage"]
    if unread is not None:  # no usage could be made of the value (usage_value): reported as the core's invalid_usage
        row.update(usage_class="invalid_usage", error_code=unread.code, error_path=unread.path, error_message=unread.message)
    elif usage is not None and "error" in usage:  # invalid_usage: the call is reported, its usage is not
        e = usage["error"]
        row.update(usage_class=usage["class"], error_code=e["code"], error_path=e["path"], error_message=e["message"])
    elif given and usage is not None:
        row.update(usage_class=usage["class"], cached_tokens=usage["cached_tokens"], written_tokens=usage["written_tokens"])
        row["input_tokens"] = _input_tokens(recorded)
    return row


def _prefix_tokens(asm: Assembler, tokenizer: Tokenizer, request: Any, chars: int) -> int:
    if chars == 0:
        return 0
    text = "".join(block["text"] for message in _assembled(asm, request)["messages"] for block in message["content"])
    return _count(tokenizer, text[:chars])  # a str counts code points, as the report does


def _call_parts(item: Tuple[Any, ...]) -> Tuple[Any, Tuple[Any, bool, Any]]:
    if len(item) == 2:
        return item[0], (item[1], False, None)
    run_id, request, usage = item
    return run_id, (request, True, usage)


def cache_rows(
    calls: Iterable[Tuple[Any, ...]],
    *,
    tokenizer: Optional[Tokenizer] = None,
    assembler: Optional[Assembler] = None,
    window: int = 256,
) -> Iterator[Dict[str, Any]]:
    """One row per recorded call, lazily: the core's cache report of each call as columns.

    ``calls``: ``(run_id, request)`` or ``(run_id, request, usage)`` tuples, each run's calls together and in
    call order (a log sorted by run id, stably); a request is a dict, JSON text or msgpack bytes; ``usage``
    the provider's recorded usage for that call (its usage dict, or the whole response holding one under
    ``usage``: Anthropic's, OpenAI's Chat Completions or Responses, DeepSeek's field names; its JSON text; or
    the provider SDK's own response object, read through ``model_dump()``), ``None`` where none was recorded. A run's calls are reported ``window`` at a time, each window with the last valid call
    before it (memory: one window).

    A row: ``run_id`` and :data:`CACHE_COLUMNS`: ``call_index`` (from 0 within the run), ``previous_call``
    (the call it is compared with: the last valid one before it; None for the run's first), ``extends`` (its
    prompt is the previous one's, whole, followed by more), the break (``break_segment``: ``run``,
    ``injections``, ``goal`` or ``history``; ``break_message``, ``break_char``, ``break_step``,
    ``break_cause``: ``run_changed``, ``injections_changed``, ``goal_changed``, ``history_rewritten``,
    ``steps_removed``), ``prompt_chars`` and ``cacheable_prefix_chars`` (code points). With a usage:
    ``usage_class`` (``first``, ``hit``, ``prefix_break``, ``provider_miss``, ``write_only``, ``unknown_usage``,
    ``no_usage`` for ``None``), ``cached_tokens`` (the tokens the provider read from its cache),
    ``written_tokens`` (those it wrote; None where the usage records no writes) and ``input_tokens`` (the provider's
    ``input_tokens`` or ``prompt_tokens``, as recorded: Anthropic's leaves the cached ones out, OpenAI's and
    DeepSeek's count them); without one (a pair), these are None.

    An invalid request is its row's error (``error_code``, ``error_path``, ``error_message``; the other
    columns None) and is left out of the run (the next call is compared with the last valid one). A usage
    that is no usage (a list, text that is not JSON, an object without ``model_dump()``) is its row's error at
    path ``usage`` (``usage_class`` ``invalid_usage``), the call still reported. Neither fails the iteration.

    ``tokenizer``: a callable counting the tokens of a text (:data:`Tokenizer`); adds
    ``cacheable_prefix_tokens``, its count of the cacheable prefix's text (the call's message texts joined,
    cut at ``cacheable_prefix_chars``; no role or template tokens; 0 for an empty prefix), beside the
    characters. It assembles each call once more. A run id met again after another run is a ValueError.
    """
    asm = assembler or default_assembler()
    seen = set()
    for key, group in itertools.groupby((_call_parts(tuple(c)) for c in calls), key=lambda p: _run_key(p[0])):
        run_id = key[1]
        if key in seen:
            raise ValueError(
                "cache_rows: the calls of run %r are not together (it is met again after another run): sort the "
                "calls by run id, stably, so each run's calls stay in call order" % (run_id,)
            )
        seen.add(key)
        carry, parts = _Carry(run_id), (part for _, part in group)
        while True:
            batch = list(itertools.islice(parts, window))
            if not batch:
                break
            for row in _rows(asm, carry, batch, tokenizer):
                yield dict(run_id=run_id, **row)


def _counts(usage: Any) -> Any:
    """A usage value of a batch, its null keys absent and its whole floats ints again (pandas and NumPy
    give an int of a struct that has nulls as a float: ``460.0``; the core reads only ints)."""
    usage = _absent(_parsed(usage))
    if isinstance(usage, Mapping):
        return {k: _counts(v) for k, v in usage.items()}
    return int(usage) if isinstance(usage, float) and usage.is_integer() else usage


class CacheRows:
    """:func:`cache_rows` as a batched callable for ``datasets.Dataset.map(batched=True)`` and Ray
    (``map_groups``, ``map_batches``): a batch of calls in, the batch out with :data:`CACHE_COLUMNS` added,
    one row per call in the batch's own order, typed by :func:`cache_arrow_schema` whatever the batch
    holds (a ``pyarrow.Table``; a DataFrame for a DataFrame, the added columns Arrow-typed)::

        ds = ds.map(CacheRows(usage="usage"), batched=True, with_indices=True)
        ds.groupby("run_id").map_groups(CacheRows, fn_constructor_kwargs={"call": "step", "usage": "usage"},
                                        batch_format="pyarrow")          # Ray: one run per batch

    ``run_id`` and ``request`` name the columns; ``usage``, if given, the column of recorded usage;
    ``call``, if given, a column the calls of a run are put in order by (a group by run id keeps no
    order); the rows come back in the batch's order all the same. ``tokenizer`` as :func:`cache_rows`.
    A usage column of structs (the providers' field names side by side, nulls where a shape lacks one)
    or of JSON text: on Ray's ``"numpy"`` format, Ray infers a struct column again from the batch's dicts
    and can fail to join the batches' types; give ``batch_format="pyarrow"`` or the usage as JSON text.

    One report per run of the batch. A run that goes on from the previous batch of this worker goes on
    from where it stood (``datasets``' batches of a data set sorted by run id), so ``batch_size`` does not
    change a row. ``with_indices=True`` lets a new ``map`` with the same callable start afresh (at index 0).
    With ``num_proc=2`` each process reads a contiguous shard: a run the shard boundary cuts starts again
    after it (call 0, no previous); give each process whole runs (Ray's ``map_groups``), or use one process.
    A run met again after others is a ValueError (within a batch too, unless ``call`` orders it: with a
    call column a batch's rows may come in any order), as is a batch that already has one of the added
    columns. Run ids are told apart by type and value (``1``, ``True`` and ``1.0`` are three runs).
    The instance carries the package version and the module's sha256, so a cache keyed by its hash
    (``datasets``) recomputes after an upgrade.
    """

    def __init__(
        self,
        run_id: str = "run_id",
        request: str = "request",
        *,
        usage: Optional[str] = None,
        call: Optional[str] = None,
        tokenizer: Optional[Tokenizer] = None,
    ) -> None:
        self.run_id, self.request, self.usage, self.call, self.tokenizer = run_id, request, usage, call, tokenizer
        self._assembler: Optional[Assembler] = None
        self._carry: Optional[_Carry] = None
        self._seen: set = set()  # type: ignore[type-arg]

    def __getstate__(self) -> Dict[str, Any]:
        options = {k: getattr(self, k) for k in ("run_id", "request", "usage", "call", "tokenizer")}
        return dict(options, version=_runtime.version(), module_sha256=_runtime.module_sha256())

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(**{k: state[k] for k in ("run_id", "request", "usage", "call", "tokenizer")})  # type: ignore[misc]

    def schema(self) -> Any:
        """The ``pyarrow.Schema`` of the columns this callable adds."""
        return cache_arrow_schema(tokenizer=self.tokenizer is not None)

    def features(self, input_features: Optional[Any] = None) -> Any:
        """``datasets.Features`` of the output: ``input_features`` plus :meth:`schema`'s."""
        import datasets  # type: ignore[import-not-found, import-untyped, unused-ignore]

        out = datasets.Features(dict(input_features) if input_features is not None else {})
        out.update(datasets.Features.from_arrow_schema(self.schema()))
        return out

    def __call__(self, batch: Any, indices: Optional[Sequence[int]] = None) -> Any:
        if indices is None and _is_hf_batch(batch):  # a second map would carry on the first one's runs
            raise TypeError(
                "CacheRows on a datasets map needs with_indices=True: ds.map(CacheRows(...), batched=True, "
                "with_indices=True); the indices say where a map starts, so that a run goes on across batches "
                "but not across maps"
            )
        if indices is not None and len(indices) and indices[0] == 0:  # a new map from the data set's start
            self._carry, self._seen = None, set()
        names = list(batch.column_names if hasattr(batch, "column_names") else batch.keys())
        wanted = [c for c in (self.run_id, self.request, self.usage, self.call) if c is not None]
        if [c for c in wanted if c not in names]:
            raise KeyError(
                "CacheRows: the batch has no column %s (columns: %s); name them with run_id=, request=, usage=, call="
                % (", ".join(repr(c) for c in wanted if c not in names), names)
            )
        taken = [c for c in self.schema().names if c in names]
        if taken:
            raise ValueError(
                "CacheRows: the batch already has the column(s) %s it adds; remove them (remove_columns=, "
                "drop_columns) or rename them first" % ", ".join(map(repr, taken))
            )
        column = batch.column if hasattr(batch, "column") and not isinstance(batch, Mapping) else batch.__getitem__
        if isinstance(column(self.request), (str, bytes, bytearray, Mapping)):
            raise TypeError("CacheRows got one row, not a batch: call map(..., batched=True)")
        cols = self._columns({c: _values(column(c)) for c in wanted})
        return _with_columns(batch, cols, self.schema())

    def _columns(self, values: Dict[str, List[Any]]) -> Dict[str, List[Any]]:
        ids = values[self.run_id]
        runs: Dict[Tuple[type, Any], List[int]] = {}  # by _run_key, in the batch's order
        for i, run_id in enumerate(ids):
            key = _run_key(run_id)
            # In call order (no call column), a run met again after another is refused here as a later
            # batch would refuse it, so batch_size changes no verdict.
            if self.call is None and key in runs and _run_key(ids[i - 1]) != key:
                raise ValueError(
                    "CacheRows: the calls of run %r are not together (it is met again after another run): sort the "
                    "data set by run id, stably, so each run's calls stay in call order" % (run_id,)
                )
            runs.setdefault(key, []).append(i)
        if self._assembler is None:
            self._assembler = Assembler(max_instances=1)
        out: List[Optional[Dict[str, Any]]] = [None] * len(ids)
        last = self._carry
        for key, rows in runs.items():
            run_id = key[1]
            if self.call is not None:
                rows.sort(key=values[self.call].__getitem__)
            if last is not None and key == _run_key(last.run_id):
                carry = last
            elif key in self._seen:
                raise ValueError(
                    "CacheRows: the calls of run %r are not together (it is met again after another run): sort the "
                    "data set by run id, stably, so each run's calls stay in call order" % (run_id,)
                )
            else:
                carry = _Carry(run_id)
            self._seen.add(key)
            requests, usage = values[self.request], values.get(self.usage) if self.usage is not None else None
            calls = [(_absent(requests[i]), usage is not None, None if usage is None else _counts(usage[i])) for i in rows]
            for i, row in zip(rows, _rows(self._assembler, carry, calls, self.tokenizer)):
                out[i] = row
            self._carry = carry
        return {k: [row[k] for row in out] for k in self.schema().names}  # type: ignore[index]
