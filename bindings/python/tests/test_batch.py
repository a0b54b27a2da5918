"""assemble_many / assemble_bytes_many (data sets): the serial answers, in
input order, from threads over the pool; lazy input, bounded read-ahead,
errors as values or raised, progress."""

from __future__ import annotations

import io
import itertools
import json
import os
import select
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import msgpack
import pytest

import polyloop_assembly as pa
from polyloop_assembly import _codec, _consts, _crossing
from polyloop_assembly._errors import InstanceFailure

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "datasets"))
import trajectories  # noqa: E402

REQUESTS = [r for kind, r in trajectories.requests(600, seed=5) if kind != "not-json"]


def _serial(reqs: List[Any]) -> List[Any]:
    out: List[Any] = []
    for r in reqs:
        try:
            out.append(pa.assemble(r))
        except pa.AssemblyError as e:
            out.append(e)
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, pa.AssemblyError):
        return isinstance(b, pa.AssemblyError) and (a.code, a.path, a.message) == (b.code, b.path, b.message)
    return a == b


def _same_verdict(a: Any, b: Any) -> bool:
    """_same for a request and its JSON text: the same answer, an error by code and path (an int beyond
    64 bits is a float to the JSON reader, "found a float", and an int beyond 64 bits to the codec)."""
    if isinstance(a, pa.AssemblyError):
        return isinstance(b, pa.AssemblyError) and (a.code, a.path) == (b.code, b.path)
    return a == b


SERIAL = _serial(REQUESTS)


def test_the_set_has_both_kinds() -> None:
    assert sum(isinstance(r, pa.AssemblyError) for r in SERIAL) > 30
    assert sum(isinstance(r, dict) for r in SERIAL) > 300


@pytest.mark.parametrize("workers,window", [(1, None), (2, None), (3, 7), (2, 1)])
def test_equals_serial_in_order(workers: int, window: Any) -> None:
    got = list(pa.assemble_many(REQUESTS, workers=workers, window=window))
    assert len(got) == len(SERIAL)
    assert all(_same(a, b) for a, b in zip(got, SERIAL))


def test_json_lines_equal_serial(tmp_path: Path) -> None:
    """assemble_json_many over the lines of a file as read (newlines kept): the
    serial assemble_json answers in order; a blank line is an error in its place."""
    lines = trajectories.lines(300, seed=7)
    lines.insert(5, "")
    lines.append('{"v": 1, "v": 1, "observation_template": "{observation}"}')
    p = tmp_path / "t.jsonl"
    p.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    want: List[Any] = []
    for line in lines:
        try:
            want.append(pa.assemble_json(line + "\n"))
        except pa.AssemblyError as e:
            want.append(e)
    with open(p, encoding="utf-8") as f:
        got = list(pa.assemble_json_many(f, workers=2))
    assert len(got) == len(lines) and all(_same(a, b) for a, b in zip(got, want))
    assert isinstance(got[5], pa.AssemblyError) and (got[5].code, got[5].path) == ("malformed_request", "")
    assert isinstance(got[-1], pa.AssemblyError) and (got[-1].code, got[-1].path) == ("duplicate_key", "v")
    with open(p, "rb") as fb:  # bytes lines too
        assert all(_same(a, b) for a, b in zip(pa.assemble_json_many(fb, workers=1), want))


def test_bytes_equal_serial_bytes() -> None:
    wires = [_codec.encode(r) for r in REQUESTS]
    want = [pa.assemble_bytes(w) for w in wires]
    assert list(pa.assemble_bytes_many(wires, workers=2)) == want
    assert list(pa.assemble_bytes_many(iter(wires), workers=2, window=5)) == want
    # the decoded error responses are the serial errors
    for w, s in zip(want, SERIAL):
        resp = msgpack.unpackb(w, raw=False)
        if isinstance(s, pa.AssemblyError) and resp["ok"] is False:
            assert (resp["error"]["code"], resp["error"]["path"]) == (s.code, s.path)


def test_errors_raise_at_their_place() -> None:
    first_bad = next(i for i, r in enumerate(SERIAL) if isinstance(r, pa.AssemblyError))
    got: List[Any] = []
    with pytest.raises(pa.AssemblyError) as info:
        for r in pa.assemble_many(REQUESTS, workers=2, errors="raise"):
            got.append(r)
    assert len(got) == first_bad
    assert _same(info.value, SERIAL[first_bad])


def test_a_non_bytes_item_raises_at_its_place() -> None:
    ok = _codec.encode(REQUESTS[0])
    got: List[Any] = []
    with pytest.raises(TypeError):
        for r in pa.assemble_bytes_many([ok, ok, "not bytes", ok], workers=2):  # type: ignore[list-item]
            got.append(r)
    assert len(got) == 2


def test_input_is_read_lazily_and_bounded() -> None:
    read = itertools.count()
    seen = [0]

    def endless() -> Iterator[Any]:
        for i in itertools.count():
            seen[0] = next(read) + 1
            yield REQUESTS[i % len(REQUESTS)]

    it = pa.assemble_many(endless(), workers=2, window=16)
    for k, _ in enumerate(it):
        assert seen[0] <= k + 1 + 16  # never more than the window ahead
        if k == 200:
            break
    it.close()  # type: ignore[attr-defined]


def test_stopping_early_stops_the_threads() -> None:
    before = threading.active_count()
    it = pa.assemble_many(REQUESTS, workers=3)
    next(it)
    it.close()  # type: ignore[attr-defined]
    assert threading.active_count() == before


def test_progress_callback_and_tqdm() -> None:
    calls: List[int] = []
    n = len(list(pa.assemble_many(REQUESTS[:50], workers=2, progress=calls.append)))
    assert calls == list(range(1, n + 1)) and n == 50
    tqdm = pytest.importorskip("tqdm").tqdm
    buf = io.StringIO()
    got = list(tqdm(pa.assemble_many(REQUESTS[:40], workers=2), total=40, file=buf, mininterval=0))
    assert all(_same(a, b) for a, b in zip(got, SERIAL[:40])) and "40/40" in buf.getvalue()


def test_bad_arguments_fail_at_the_call() -> None:
    with pytest.raises(ValueError, match="workers"):
        pa.assemble_many(REQUESTS, workers=0)
    with pytest.raises(ValueError, match="errors"):
        pa.assemble_many(REQUESTS, errors="ignore")  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="window"):
        pa.assemble_many(REQUESTS, window=0)


def test_own_assembler() -> None:
    asm = pa.Assembler(max_instances=2)
    got = list(pa.assemble_many(REQUESTS[:100], assembler=asm))
    assert all(_same(a, b) for a, b in zip(got, SERIAL[:100]))


def _then_oserror(reqs: List[Any]) -> Iterator[Any]:
    yield from reqs
    raise OSError("the disk went away")


@pytest.mark.parametrize("count", [10, 1000])
@pytest.mark.parametrize("workers,window", [(1, None), (2, None), (3, 7)])
@pytest.mark.parametrize("many", ["assemble_many", "assemble_json_many"])
def test_an_input_error_comes_after_every_result_read_before_it(count: int, workers: int, window: Any, many: str) -> None:
    """The input raising after ``count`` requests: the ``count`` results, in
    order (the serial ones), then the input's own exception."""
    reqs = [REQUESTS[i % len(REQUESTS)] for i in range(count)]
    want = [SERIAL[i % len(SERIAL)] for i in range(count)]
    if many == "assemble_json_many":
        reqs = [json.dumps(r) for r in reqs]
    got: List[Any] = []
    with pytest.raises(OSError, match="the disk went away"):
        for r in getattr(pa, many)(_then_oserror(reqs), workers=workers, window=window):
            got.append(r)
    assert len(got) == count
    assert all((_same_verdict if many == "assemble_json_many" else _same)(a, b) for a, b in zip(got, want))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_cannot_continue_an_inherited_batch() -> None:
    """The child of a fork continuing the parent's threaded iterator gets a
    RuntimeError saying what to do (it used to wait forever for the parent's
    threads); the parent goes on; workers=1 (no threads) continues in the child."""
    for workers, want in (
        (2, "RuntimeError: this assemble_many iterator was started before os.fork()"),
        (1, "ok %d" % (len(SERIAL) - 1)),
    ):
        it = pa.assemble_many(REQUESTS, workers=workers)
        first = next(it)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: report, never return into pytest
            try:
                msg = "ok %d" % sum(1 for _ in it)  # past the chunks the parent's threads finished
            except BaseException as e:
                msg = "%s: %s" % (type(e).__name__, e)
            os.write(w, msg.encode()[:4000])
            os._exit(0)
        os.close(w)
        try:
            ready, _, _ = select.select([r], [], [], 120)  # a hang is the failure: do not wait for ever
            got = os.read(r, 4096).decode() if ready else "no answer: the child hangs"
        finally:
            os.close(r)
            if not ready:
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        assert got.startswith(want), got
        rest = list(it)  # the parent's iterator is whole
        assert all(_same(a, b) for a, b in zip([first, *rest], SERIAL)) and len(rest) == len(SERIAL) - 1


@pytest.mark.parametrize("many", ["assemble_many", "assemble_json_many"])
def test_on_threads_the_consumer_makes_the_dicts(many: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With worker threads, the workers encode and call the module and the
    consuming thread decodes each response just before yielding it: dicts
    queued between threads cost the cyclic GC and the caches several times
    their making. The answers are the serial ones, errors in their places."""
    threads: List[int] = []
    real = _crossing.decode

    def decode(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(_crossing, "decode", decode)
    reqs: List[Any] = REQUESTS[:200]
    if many == "assemble_json_many":
        reqs = [json.dumps(r) for r in reqs]
    got = list(getattr(pa, many)(reqs, workers=2))
    assert len(got) == 200 and all(
        (_same_verdict if many == "assemble_json_many" else _same)(a, b) for a, b in zip(got, SERIAL[:200])
    )
    assert len(threads) == 200 and set(threads) == {threading.get_ident()}


def _spy_calls(monkeypatch: pytest.MonkeyPatch, asm: pa.Assembler, fail_batches: bool = False) -> List[Tuple[int, int]]:
    """Record each crossing of ``asm``'s pool as (op, request bytes): a batch
    as CALL_BATCH and its framed size (8 bytes per item and the requests), a
    single call as its op; with ``fail_batches`` every batch fails as a trap."""
    calls: List[Tuple[int, int]] = []
    call, call_batch = asm.pool.call, asm.pool.call_batch

    def spy(request: bytes, op: int = _consts.CALL_ASSEMBLE) -> bytes:
        calls.append((op, len(request)))
        return call(request, op)

    def spy_batch(items: Any) -> Any:
        calls.append((_consts.CALL_BATCH, sum(8 + len(data) for _, data in items)))
        if fail_batches:
            raise InstanceFailure("a trap for the test")
        return call_batch(items)

    monkeypatch.setattr(asm.pool, "call", spy)
    monkeypatch.setattr(asm.pool, "call_batch", spy_batch)
    return calls


@pytest.mark.parametrize("workers", [1, 2])
def test_a_chunk_is_one_crossing(workers: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The calls of a chunk go to the module in one ``batch`` call (the
    module's wasm/README.md, "Batches"): 128 requests make 2 crossings, not 128,
    and each answer is the bytes its own call gives."""
    asm = pa.Assembler()
    wires = [_codec.encode(r) for r in REQUESTS[:128]]
    serial = [asm.assemble_bytes(w) for w in wires]
    calls = _spy_calls(monkeypatch, asm)
    assert list(pa.assemble_bytes_many(wires, workers=workers, assembler=asm)) == serial
    assert [op for op, _ in calls] == [_consts.CALL_BATCH] * 2


def test_a_batch_that_fails_is_run_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the batch crossing fails (a trap: the instance is discarded), the
    chunk's requests run one by one, so each still gets its own answer."""
    asm = pa.Assembler()
    wires = [_codec.encode(r) for r in REQUESTS[:100]]
    serial = [asm.assemble_bytes(w) for w in wires]
    calls = _spy_calls(monkeypatch, asm, fail_batches=True)
    assert list(pa.assemble_bytes_many(wires, workers=2, assembler=asm)) == serial
    ops = [op for op, _ in calls]
    assert ops.count(_consts.CALL_BATCH) == 2 and ops.count(_consts.CALL_ASSEMBLE) == 100


def test_a_batch_is_bounded_in_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch carries at most 1 MiB of requests; a request that does not fit
    beside the one before it starts the next batch, and one alone is its own
    call. The request buffer grows inside a batch and each answer is still the
    bytes its own call gives."""
    asm = pa.Assembler()

    def sized(n: int) -> bytes:
        return _codec.encode({**REQUESTS[0], "run_messages": [{"role": "user", "content": [{"type": "text", "text": "x" * n}]}]})

    small, big, huge = _codec.encode(REQUESTS[0]), sized(600 << 10), sized(1200 << 10)
    wires = [small, big, big, small, huge, small]
    serial = [pa.Assembler().assemble_bytes(w) for w in wires]
    calls = _spy_calls(monkeypatch, asm)
    assert list(pa.assemble_bytes_many(wires, workers=1, assembler=asm)) == serial
    b, a = _consts.CALL_BATCH, _consts.CALL_ASSEMBLE
    assert [op for op, _ in calls] == [b, b, a, a]  # [small, big], [big, small], huge, small
    assert all(n <= 1 << 20 for op, n in calls if op == b)


@pytest.mark.parametrize("workers", [1, 2])
def test_large_requests_make_small_chunks(workers: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk stops before the request that would take it past 1 MiB: ~300 KB
    requests go three to a crossing, and what is read ahead is bounded in
    bytes (a few chunks of about 1 MiB), not 128 requests per worker."""
    asm = pa.Assembler()
    base = REQUESTS[0]
    wires = [
        _codec.encode(
            {**base, "run_messages": [{"role": "user", "content": [{"type": "text", "text": "%d" % i + "x" * (300 << 10)}]}]}
        )
        for i in range(20)
    ]
    serial = [pa.Assembler().assemble_bytes(w) for w in wires]
    calls = _spy_calls(monkeypatch, asm)
    read: List[int] = []

    def lazily() -> Iterator[bytes]:
        for i, w in enumerate(wires):
            read.append(i)
            yield w

    got: List[bytes] = []
    ahead = 0
    for r in pa.assemble_bytes_many(lazily(), workers=workers, assembler=asm):
        ahead = max(ahead, len(read) - len(got))
        got.append(r)
    assert got == serial
    assert calls == [(_consts.CALL_BATCH, sum(8 + len(w) for w in wires[k : k + 3])) for k in range(0, 20, 3)]
    assert ahead <= 2 * workers * 3 + 1, ahead  # chunks in flight of 3, and one read for the next


def test_a_batch_answer_of_the_wrong_shape_is_internal(monkeypatch: pytest.MonkeyPatch) -> None:
    """An answer that is not a batch answer of as many items (never from this
    module) is an ``internal`` error in each item's place, not a wrong row."""
    from polyloop_assembly import _instance

    wires = [_codec.encode(r) for r in REQUESTS[:4]]
    real = _instance.Instance._crossing
    for cut in (lambda n: n - 1, lambda n: 4, lambda n: 0):

        def short(self: Any, op: int, n: int, cut: Any = cut) -> Any:
            ptr, size = real(self, op, n)
            return (ptr, cut(size)) if op == _consts.CALL_BATCH else (ptr, size)

        monkeypatch.setattr(_instance.Instance, "_crossing", short)
        got = list(pa.assemble_bytes_many(wires, workers=1, assembler=pa.Assembler()))
        assert [(e.code, e.message) for e in got] == [("internal", _consts.MSG_BAD_RESPONSE)] * 4


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("many", ["assemble_many", "assemble_bytes_many"])
def test_a_request_edited_after_it_is_yielded(workers: int, many: str) -> None:
    """A generator that yields one dict (or bytearray) again and again, edited
    in between, gets one answer per state it yielded: the request is taken as
    it is read, not later on a worker, however far the batch reads ahead."""
    base = json.loads((Path(__file__).resolve().parents[3] / "examples" / "react.json").read_text(encoding="utf-8"))
    seen: List[Any] = []  # a copy of each state, taken as it was yielded

    def states(n: int) -> Iterator[Any]:
        req = json.loads(json.dumps(base))
        buf = bytearray()
        for i in range(n):
            req["run_messages"][0]["content"][0]["text"] = "state %d" % i
            if many == "assemble_many":
                seen.append(json.loads(json.dumps(req)))
                yield req
            else:
                buf[:] = _codec.encode(req)
                seen.append(bytes(buf))
                yield buf

    got = list(getattr(pa, many)(states(40), workers=workers))
    want = [pa.assemble(r) if many == "assemble_many" else pa.assemble_bytes(r) for r in seen]
    assert len(set(map(repr, want))) == 40 and got == want
