"""The call path side by side: this package beside another copy of it, in one process.

    python bench/threads_bench.py --requests DIR [--against DIR] [--rounds N] [--count N] [--only WHAT]

``--requests DIR``: the request files of internal/testing/benchreq
(``go run ./internal/testing/benchreq/gen DIR``): ``tiny.msgpack`` and
``typical.msgpack``. ``--against DIR``: a directory holding another copy of
the package renamed (e.g. ``polyloop_assembly_old/``, from ``git archive`` of
an older commit, with its ``assembly.wasm`` and ``VERSION`` copied in): every
figure is then measured for both, the runs alternated round by round, so the
load of a shared machine falls on both alike. On such a machine only ratios
mean something; each figure is the median over the rounds. A control
(``hashlib.sha256`` over 1 MB on 1 and 2 threads: the GIL released, nothing
shared) shows what the machine's load lets two threads gain at all; a
ratio near the control's is all the threads can show on that machine.

Figures: the round trip of ``assemble_bytes`` (tiny and typical) on one
thread, and the throughput of ``assemble_bytes_many`` and ``assemble_many``
over ``--count`` copies of the typical request at 1 and 2 workers, with the
ratio 2 workers / 1 worker (the threads' gain); and the calls per second of 2 and 8
threads sharing one instance (``tiny``, more threads than instances: the pool's turns). ``--only threads2`` runs just
2-worker ``assemble_bytes_many`` for ``--rounds`` rounds, ``--side this`` or
``against`` for one package alone (for ``strace -f -c -e trace=futex``).
``--only split``: this package's CPU time per request, in all and inside the
module call, and the bound on the threads' gain that follows (load-proof).
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Dict, List, Tuple

import msgpack


def _packages(against: str) -> List[Tuple[str, ModuleType]]:
    new = importlib.import_module("polyloop_assembly")
    out = [("this", new)]
    if against:
        path = Path(against)
        names = [p.name for p in path.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
        if len(names) != 1:
            raise SystemExit("--against %s: want one package directory in it, found %r" % (against, names))
        sys.path.insert(0, str(path))
        out.append((names[0], importlib.import_module(names[0])))
    return out


def _round_trip(pa: ModuleType, wire: bytes, seconds: float) -> float:
    """Mean seconds per assemble_bytes over about ``seconds``."""
    call = pa.assemble_bytes
    n = 0
    t0 = time.perf_counter()
    while True:
        for _ in range(50):
            call(wire)
        n += 50
        t = time.perf_counter() - t0
        if t >= seconds:
            return t / n


_assemblers: Dict[Tuple[str, int], Any] = {}


def _throughput(pa: ModuleType, what: str, wire: bytes, count: int, workers: int) -> float:
    """Requests per second of ``count`` copies of ``wire`` through assemble_bytes_many or assemble_many
    (on an assembler of ``workers`` instances, kept from round to round)."""
    asm = _assemblers.get((pa.__name__, workers))
    if asm is None:
        asm = _assemblers[(pa.__name__, workers)] = pa.Assembler(max_instances=workers)
    if what == "bytes":
        items: Any = (wire for _ in range(count))
        many = pa.assemble_bytes_many
    else:
        req = msgpack.unpackb(wire, raw=False)
        items = (req for _ in range(count))
        many = pa.assemble_many
    t0 = time.perf_counter()
    for r in many(items, workers=workers, assembler=asm):
        if isinstance(r, pa.AssemblyError):
            raise r
    return count / (time.perf_counter() - t0)


def _crowded(pa: ModuleType, wire: bytes, threads: int, seconds: float) -> float:
    """Calls per second of ``threads`` threads calling assemble_bytes on an assembler of one instance (more
    threads than instances: the pool's queue and turns, issue 44)."""
    asm = pa.Assembler(max_instances=1)
    asm.assemble_bytes(wire)
    counts = [0] * threads
    stop = time.perf_counter() + seconds

    def work(k: int) -> None:
        n = 0
        while time.perf_counter() < stop:
            asm.assemble_bytes(wire)
            n += 1
        counts[k] = n

    ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(counts) / seconds


def _split(pa: ModuleType, what: str, wire: bytes, count: int, workers: int) -> Tuple[float, float]:
    """CPU µs per request in all, and inside the module call (the one place the
    GIL is released), over ``count`` requests at ``workers`` workers: the
    rest holds the GIL, so ``all / (all - inside)`` bounds what threads can
    gain (Amdahl), whatever the machine's load. The timing wrapper's own cost
    counts as GIL-held: the bound is a low one."""
    from polyloop_assembly import _capi

    real = _capi.call_unchecked
    inside = [0]
    clock = time.thread_time_ns

    def timed(*args: Any) -> Any:
        t0 = clock()
        try:
            return real(*args)
        finally:
            inside[0] += clock() - t0

    _capi.call_unchecked = timed
    try:
        c0 = time.process_time_ns()
        _throughput(pa, what, wire, count, workers)
        total = time.process_time_ns() - c0
    finally:
        _capi.call_unchecked = real
    return total / count / 1e3, inside[0] / count / 1e3


def _control(workers: int, calls: int = 40) -> float:
    """Calls per second of hashlib.sha256 over 1 MB on ``workers`` threads: work
    that releases the GIL for about a millisecond per call and shares nothing,
    so 2 workers / 1 is what this machine's load lets two threads gain at all."""
    import hashlib
    import threading

    data = bytes(1 << 20)

    def work() -> None:
        for _ in range(calls):
            hashlib.sha256(data).digest()

    threads = [threading.Thread(target=work) for _ in range(workers)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return workers * calls / (time.perf_counter() - t0)


def _rounds(figures: Dict[str, Callable[[], float]], rounds: int) -> Dict[str, List[float]]:
    samples: Dict[str, List[float]] = {k: [] for k in figures}
    for _ in range(rounds):
        for k, fn in figures.items():
            samples[k].append(fn())
    return samples


def main() -> None:
    ap = argparse.ArgumentParser(prog="threads_bench.py")
    ap.add_argument("--requests", required=True)
    ap.add_argument("--against", default="")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=0.3, help="per round-trip sample")
    ap.add_argument("--only", default="", choices=["", "threads2", "threads1", "split"])
    ap.add_argument("--side", default="both", choices=["both", "this", "against"], help="which packages to time")
    args = ap.parse_args()
    d = Path(args.requests)
    tiny, typical = (d / "tiny.msgpack").read_bytes(), (d / "typical.msgpack").read_bytes()
    pkgs = _packages(args.against)
    for name, pa in pkgs:
        assert pa.assemble_bytes(typical) == pkgs[0][1].assemble_bytes(typical), name  # the same answer
    pkgs = {"both": pkgs, "this": pkgs[:1], "against": pkgs[1:]}[args.side]
    if args.only == "split":
        for what in ("bytes", "dict"):
            for w in (1, 2):
                runs = [_split(pkgs[0][1], what, typical, args.count, w) for _ in range(args.rounds)]
                total, inside = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
                print(
                    "%s_many w=%d: CPU per request %.1f µs, in the module call %.1f µs, GIL held %.1f µs: "
                    "threads gain at most %.2fx" % (what, w, total, inside, total - inside, total / (total - inside))
                )
        return
    figures: Dict[str, Callable[[], float]] = {}
    if not args.only:
        figures["control w=1 calls/s"] = lambda: _control(1)
        figures["control w=2 calls/s"] = lambda: _control(2)
    for name, pa in pkgs:
        if args.only:
            w = 2 if args.only == "threads2" else 1
            figures["%s bytes_many w=%d" % (name, w)] = lambda pa=pa, w=w: _throughput(pa, "bytes", typical, args.count, w)
            continue
        figures["%s tiny µs" % name] = lambda pa=pa: 1e6 * _round_trip(pa, tiny, args.seconds)
        figures["%s typical µs" % name] = lambda pa=pa: 1e6 * _round_trip(pa, typical, args.seconds)
        for n in (2, 8):  # more threads than instances
            figures["%s 1 instance %d threads calls/s" % (name, n)] = lambda pa=pa, n=n: _crowded(pa, tiny, n, args.seconds)
        for what in ("bytes", "dict"):
            for w in (1, 2):
                key = "%s %s_many w=%d req/s" % (name, what, w)
                figures[key] = lambda pa=pa, what=what, w=w: _throughput(pa, what, typical, args.count, w)
    samples = _rounds(figures, args.rounds)
    for k, v in samples.items():
        print("%-40s median %10.1f   samples %s" % (k, statistics.median(v), " ".join("%.1f" % x for x in v)))
    pairs = [("control", "control w=1 calls/s", "control w=2 calls/s")]
    for name, _ in pkgs:
        for what in ("bytes", "dict"):
            pairs.append(
                ("%s %s_many" % (name, what), "%s %s_many w=1 req/s" % (name, what), "%s %s_many w=2 req/s" % (name, what))
            )
    for label, k1, k2 in pairs:
        one, two = samples.get(k1), samples.get(k2)
        if one and two:
            ratios = [b / a for a, b in zip(one, two)]
            print(
                "%-40s median %10.2f   per round %s"
                % ("%s 2 workers / 1" % label, statistics.median(ratios), " ".join("%.2f" % r for r in ratios))
            )


if __name__ == "__main__":
    main()
