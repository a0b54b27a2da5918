"""Many requests in one process: :func:`assemble_many`, :func:`assemble_json_many`, :func:`assemble_bytes_many`.

A chunk of requests (at most 1 MiB) is one crossing, the module's ``batch`` call,
around which alone the GIL is released: worker threads add cores to the module's
work (for encoding and decoding too, use processes). Input is read lazily, at
most ``window`` ahead of the result yielded."""

from __future__ import annotations

import _thread
import collections
import functools
import itertools
import os
import queue
from typing import Any, Callable, Deque, Iterable, Iterator, List, Literal, Optional, Protocol, Tuple
from typing import TypeVar, Union, cast, overload

from . import _crossing, _fork
from ._assembler import Assembler, default_assembler
from ._crossing import BytesLike, JSONText
from ._consts import CALL_ASSEMBLE, CALL_ASSEMBLE_JSON
from ._errors import AssemblyError
from ._types import AssembleRequest, AssembleResponse

T = TypeVar("T")
In = TypeVar("In", contravariant=True)
Out = TypeVar("Out", covariant=True)

#: What ``errors=`` accepts: ``"return"`` yields an :class:`AssemblyError` in
#: the failed request's place; ``"raise"`` raises it there and stops.
ErrorMode = Literal["return", "raise"]

#: Requests per batch crossing at most, in bytes (linear memory holds a batch and its answers at once).
_BATCH_BYTES = 1 << 20
_CHUNK = 64  # requests per task at most: a task's own cost (~10 µs) and hand-offs stay small beside its calls


class _Raised:
    """An exception other than AssemblyError, raised again at its request's place."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


#: What stands in a result's place for an error kept there.
_KEPT = (AssemblyError, _Raised)

#: A call prepared for a batch: ``(op, request bytes, extra)``; the worker's
#: result is the module's answer, or ``(answer, extra)`` when extra is not None.
Prepared = Tuple[int, bytes, Any]

#: A call in two halves: the op whose answers it takes; what prepares a request
#: as it is read (in the reading thread, so a caller that yields one dict again,
#: edited, gets each state it yielded); and what the consumer runs on the answer
#: just before yielding it (decoding: dicts made in one thread and dropped in
#: another, queued meanwhile, cost several times their making), or None.
Halves = Tuple[int, Callable[[Any], Prepared], Optional[Callable[[Any], Any]]]


def _caught(f: Callable[[Any], Any], x: Any) -> Any:
    """``f(x)``, or its exception kept in the item's place (:class:`AssemblyError` or :class:`_Raised`)."""
    try:
        return f(x)
    except AssemblyError as e:
        return e
    except Exception as e:
        return _Raised(e)


def _run_batch(asm: Assembler, op: int, chunk: List[Any]) -> List[Any]:
    """The results of a chunk of prepared calls of call ``op``, in one crossing; a kept exception stays in its place."""
    out: List[Any] = [None] * len(chunk)
    calls: List[Tuple[int, Any]] = []
    items: List[Tuple[int, bytes]] = []
    for i, p in enumerate(chunk):
        if isinstance(p, _KEPT):
            out[i] = p
            continue
        calls.append((i, p[2]))
        items.append((p[0], p[1]))
    for (i, extra), answer in zip(calls, _crossing.run_batch(asm.pool, op=op, items=items)):
        out[i] = answer if extra is None or isinstance(answer, AssemblyError) else (answer, extra)
    return out


def _emit(result: Any, errors: ErrorMode) -> Any:
    """A kept error at its place: raised (any but an AssemblyError always; that with ``errors="raise"``), or returned."""
    if isinstance(result, _Raised):
        raise result.exc
    if errors == "raise" and isinstance(result, AssemblyError):
        raise result
    return result


def _generate(
    asm: Assembler,
    halves: Halves,
    it: Iterator[T],
    n: int,
    window: Optional[int],
    errors: ErrorMode,
    progress: Optional[Callable[[int], None]],
) -> Iterator[Any]:
    chunk = _CHUNK if window is None else max(1, min(_CHUNK, window // (2 * n)))
    ahead = max(1, (window if window is not None else 2 * n * _CHUNK) // chunk)  # chunks in flight
    op, prepare, finish = halves
    run = functools.partial(_run_batch, asm, op)
    reader = _Reader((_caught(prepare, item) for item in it), chunk)
    done = 0
    # One worker: the chunks run in this thread. The results' iterator is not
    # bound to a local: a traceback would keep it alive, and the threads must
    # shut down when this generator finishes, not at a later collection.
    for result in _serial(run, reader) if n == 1 else _threaded(run, reader, n, ahead):
        if finish is not None and not isinstance(result, _KEPT):
            result = _caught(finish, result)
        if isinstance(result, _KEPT):
            result = _emit(result, errors)
        yield result
        if progress is not None:
            done += 1
            progress(done)


def _serial(run: Callable[[List[Any]], List[Any]], reader: "_Reader") -> Iterator[Any]:
    """The results over the reader's chunks in this thread; the input's exception after those read before it."""
    while True:
        batch, failed = reader.read()
        yield from run(batch)
        if failed is not None:
            raise failed
        if not reader.more:
            return


class _Reader:
    """Reads prepared items in chunks of up to ``chunk``, fewer where the next would take the chunk
    past ``_BATCH_BYTES`` (one crossing): in flight is bounded in bytes as in requests. ``more``
    turns False when the input ends or raises."""

    __slots__ = ("_it", "_chunk", "_carry", "more")

    def __init__(self, it: Iterator[Any], chunk: int) -> None:
        self._it = it
        self._chunk = chunk
        self._carry: List[Any] = []  # an item read but left for the next chunk
        self.more = True

    def read(self) -> Tuple[List[Any], Optional[BaseException]]:
        """The next chunk, and the exception reading the input raised (the chunk's results are owed first)."""
        batch, self._carry = self._carry, []
        size = sum(8 + len(p[1]) for p in batch if p.__class__ is tuple)
        try:
            for p in self._it:
                n = 8 + len(p[1]) if p.__class__ is tuple else 0
                if batch and size + n > _BATCH_BYTES:
                    self._carry.append(p)
                    return batch, None
                batch.append(p)
                size += n
                if len(batch) == self._chunk:
                    return batch, None
        except Exception as e:
            self.more = False
            return batch, e
        self.more = bool(self._carry)
        return batch, None


def _threaded(run: Callable[[List[Any]], List[Any]], reader: _Reader, n: int, ahead: int) -> Iterator[Any]:
    """The results over the reader's chunks from ``n`` threads, ``ahead`` chunks in flight, in input order.

    Safe under Ctrl-C: this thread only starts threads (``_thread``) and puts and gets on
    C ``queue.SimpleQueue``s, so an exception a signal handler raises leaves no lock held."""
    tasks: "queue.SimpleQueue[Optional[Tuple[List[Any], queue.SimpleQueue[Any]]]]" = queue.SimpleQueue()
    done: "queue.SimpleQueue[None]" = queue.SimpleQueue()
    stop = [False]
    pending: "Deque[queue.SimpleQueue[Any]]" = collections.deque()
    born = _fork.generation()
    started = 0
    failed: Optional[BaseException] = None
    try:
        while started < n:
            _thread.start_new_thread(_work, (run, tasks, done, stop))
            started += 1
        while True:
            if _fork.generation() != born:  # continued in a forked child: the threads are the parent's
                raise RuntimeError(_FORKED)
            while reader.more and len(pending) < ahead:
                batch, failed = reader.read()
                if batch:
                    box: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
                    tasks.put((batch, box))
                    pending.append(box)
            if not pending:
                if failed is not None:
                    raise failed
                return
            ok, value = pending[0].get()
            pending.popleft()
            if not ok:
                raise value
            yield from value
    finally:
        # Stopped early, raised, or Ctrl-C: the chunks not begun are skipped, and
        # every worker gets its end in one C call (one more may have started than counted).
        stop[0] = True
        collections.deque(map(tasks.put, itertools.repeat(None, n)), maxlen=0)
        if _fork.generation() == born:  # in a forked child the threads are the parent's
            for _ in range(started):
                done.get()


def _work(
    run: Callable[[List[Any]], List[Any]],
    tasks: "queue.SimpleQueue[Optional[Tuple[List[Any], queue.SimpleQueue[Any]]]]",
    done: "queue.SimpleQueue[None]",
    stop: List[bool],
) -> None:
    """A worker: runs chunks until its end (``None``), putting ``(True, results)`` or ``(False, exception)`` in each box."""
    try:
        while True:
            item = tasks.get()
            if item is None:
                return
            batch, box = item
            if stop[0]:
                box.put((False, None))
                continue
            try:
                box.put((True, run(batch)))
            except BaseException as e:  # raised in the consumer, as Future.result() did
                box.put((False, e))
    finally:
        done.put(None)


_FORKED = (
    "this assemble_many iterator was started before os.fork(): its worker threads are in the parent "
    "process, so the child cannot continue it; in the child, call assemble_many again (or pass workers=1)"
)


class _Many(Protocol[In, Out]):
    """The three batch functions: requests ``In``, results ``Out`` (or the error in its place unless ``errors="raise"``)."""

    @overload
    def __call__(
        self,
        requests: Iterable[In],
        *,
        workers: Optional[int] = ...,
        window: Optional[int] = ...,
        errors: Literal["return"] = ...,
        progress: Optional[Callable[[int], None]] = ...,
        assembler: Optional[Assembler] = ...,
    ) -> Iterator[Union[Out, AssemblyError]]: ...

    @overload
    def __call__(
        self,
        requests: Iterable[In],
        *,
        workers: Optional[int] = ...,
        window: Optional[int] = ...,
        errors: Literal["raise"],
        progress: Optional[Callable[[int], None]] = ...,
        assembler: Optional[Assembler] = ...,
    ) -> Iterator[Out]: ...


def _dict_halves(asm: Assembler) -> Halves:
    def prepare(request: Any) -> Prepared:
        caught: List[BaseException] = []
        return (*_crossing.prepare_value(request, op=CALL_ASSEMBLE, caught=caught), caught)

    def decode(out: Tuple[bytes, List[BaseException]]) -> Any:
        return _crossing.decode(asm.pool, op=CALL_ASSEMBLE, answer=out[0], caught=out[1])

    return CALL_ASSEMBLE, prepare, decode


def _many(name: str, doc: str, halves: Callable[[Assembler], Halves]) -> Any:
    """The batch form of an :class:`Assembler` method, in ``halves``, with the signature of :class:`_Many`."""

    def many(
        requests: Iterable[Any],
        *,
        workers: Optional[int] = None,
        window: Optional[int] = None,
        errors: ErrorMode = "return",
        progress: Optional[Callable[[int], None]] = None,
        assembler: Optional[Assembler] = None,
    ) -> Iterator[Any]:
        asm = assembler if assembler is not None else default_assembler()
        if errors not in ("return", "raise"):
            raise ValueError('errors must be "return" or "raise", not %r' % (errors,))
        cap = getattr(asm.pool, "max_instances", None) or os.cpu_count() or 1
        n = max(1, min(os.cpu_count() or 1, cap)) if workers is None else workers
        if n < 1:
            raise ValueError("workers must be at least 1, got %d" % n)
        if window is not None and window < 1:
            raise ValueError("window must be at least 1, got %d" % window)
        return _generate(asm, halves(asm), iter(requests), n, window, errors, progress)

    many.__name__ = many.__qualname__ = name
    many.__doc__ = doc
    return many


assemble_many = cast(
    "_Many[AssembleRequest, AssembleResponse]",
    _many(
        "assemble_many",
        """Assemble many requests on a pool of threads; yield the responses in input order, each what
    :func:`assemble` returns for its request.

    Args:
        requests: any iterable, read lazily (at most ``window`` ahead of the response yielded). If
            reading it raises, the results of the requests read before are yielded first.
        workers: threads running calls (default: the CPUs, at most the pool's ``max_instances``);
            ``1`` runs every call in the consuming thread.
        window: requests in flight at most (default ``128 × workers``, about 2 MiB a worker at most).
        errors: ``"return"`` yields an invalid request's :class:`AssemblyError` in its place and goes
            on (a data set gets one row per request); ``"raise"`` raises it there and stops.
        progress: called with the number of results yielded so far, after each.
        assembler: the :class:`Assembler` whose pool runs the calls (default: the process-wide one).

    Raises:
        ValueError: ``workers`` or ``window`` < 1, or an unknown ``errors``.
        RuntimeError: continued in an ``os.fork`` child (``workers`` > 1), where its threads are not.
    """,
        _dict_halves,
    ),
)

assemble_bytes_many = cast(
    "_Many[BytesLike, bytes]",
    _many(
        "assemble_bytes_many",
        """The wire form of :func:`assemble_many`: msgpack request bytes in, response bytes out, each
    what :func:`assemble_bytes` answers (an invalid request: its error response; only ``internal``
    is an :class:`AssemblyError`; an item not bytes-like: TypeError at its place).""",
        lambda asm: (CALL_ASSEMBLE, lambda request: (*_crossing.prepare_bytes(request), None), None),
    ),
)

assemble_json_many = cast(
    "_Many[JSONText, AssembleResponse]",
    _many(
        "assemble_json_many",
        """:func:`assemble_many` for requests written as JSON text, each judged as :func:`assemble_json`
    judges it. The lines of a JSON-lines file can be passed as they are read from
    ``open(path, encoding="utf-8", newline="\n")`` or :func:`polyloop_assembly.data.jsonl_lines` (lines end at
    "\n" alone; a text-mode file's default ends one at a CR): the white space around a request is allowed; a
    blank line is a syntax error in its place (as the command-line tool's ``--batch``).""",
        lambda asm: (
            CALL_ASSEMBLE_JSON,
            lambda text: (*_crossing.in_python_words(_crossing.prepare_json(text)), None),
            lambda out: _crossing.decode(asm.pool, op=CALL_ASSEMBLE_JSON, answer=out),
        ),
    ),
)
