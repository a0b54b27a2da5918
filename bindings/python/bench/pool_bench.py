"""The pool's fairness and throughput (issue 44), for ``make bench``: threads sharing an assembler of one instance.

    python pool_bench.py --json OUT [--quick]

Each round runs, one right after the other (the order turning from round to round), 1, 2 and 8 threads calling
``assemble_bytes`` of a tiny request on one ``Assembler(max_instances=1)`` for a few seconds, and the same on the
pool as it was before the turns (``_pool.py`` at BEFORE, read with ``git show``: the issue's "no lower than today's").
Per round and thread count it records the calls per second of all threads together, the calls of the slowest thread
over the fastest's, and the longest single call (its wait for the instance included). Writes::

    {"threads": [{"threads": N, "calls_per_s": [...], "slowest_over_fastest": [...], "longest_call_s": [...],
                  "over_one_thread": [...], "over_before": [...]}, ...]}

one value per round; ``over_one_thread`` is that round's calls per second over the 1-thread run of the same round,
``over_before`` over the pool before the turns with as many threads in the same round (empty without git).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import msgpack

import polyloop_assembly as pa

COUNTS = (1, 2, 8)
#: The commit before the pool served waiting threads in turn (2b3d9af): its pool is the one issue 44 measured.
BEFORE = "2b3d9af^"


def pool_before() -> Optional[Any]:
    """The ``Pool`` class of ``_pool.py`` at BEFORE, loaded inside this package (its relative imports), or None
    outside a git checkout."""
    root = Path(__file__).resolve().parents[3]
    try:
        src = subprocess.run(
            ["git", "show", BEFORE + ":bindings/python/src/polyloop_assembly/_pool.py"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    mod = types.ModuleType("polyloop_assembly._pool_before")
    mod.__package__ = "polyloop_assembly"
    exec(compile(src, "_pool.py@" + BEFORE, "exec"), mod.__dict__)
    return mod.Pool


def tiny_wire() -> bytes:
    req = {
        "run_messages": [{"role": "system", "content": [{"type": "text", "text": "You are terse."}]}],
        "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "Say hi."}]}],
    }
    return msgpack.packb(req)


def crowd(asm: Any, wire: bytes, threads: int, seconds: float) -> Tuple[float, float, float]:
    """Calls per second of all threads, slowest thread's calls / fastest's, longest call (s)."""
    counts = [0] * threads
    longest = [0.0] * threads
    start = threading.Barrier(threads + 1)
    stop = [0.0]

    def work(k: int) -> None:
        n, worst = 0, 0.0
        clock = time.perf_counter
        start.wait()
        end = stop[0]
        while True:
            t0 = clock()
            if t0 >= end:
                break
            asm.assemble_bytes(wire)
            t1 = clock()
            worst = max(worst, t1 - t0)
            n += 1
        counts[k], longest[k] = n, worst

    ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    stop[0] = time.perf_counter() + seconds
    start.wait()
    for t in ts:
        t.join()
    return sum(counts) / seconds, min(counts) / max(max(counts), 1), max(longest)


def main(argv: List[str]) -> None:
    out = argv[argv.index("--json") + 1]
    rounds, seconds = (3, 1.0) if "--quick" in argv else (7, 2.0)
    wire = tiny_wire()
    asm = pa.Assembler(max_instances=1)
    asm.assemble_bytes(wire)
    before = pool_before()
    old: Optional[Any] = None
    if before is not None:
        old = pa.Assembler(max_instances=1)
        old._pool = before(1)
        old.assemble_bytes(wire)
    keys = ("calls_per_s", "slowest_over_fastest", "longest_call_s", "over_one_thread", "over_before")
    figures: Dict[int, Dict[str, List[float]]] = {n: {k: [] for k in keys} for n in COUNTS}
    for r in range(rounds):
        order = COUNTS if r % 2 == 0 else tuple(reversed(COUNTS))
        got: Dict[int, Tuple[float, float, float]] = {}
        was: Dict[int, float] = {}
        for n in order:
            if old is not None and r % 2 == 1:
                was[n] = crowd(old, wire, n, seconds)[0]
            got[n] = crowd(asm, wire, n, seconds)
            if old is not None and r % 2 == 0:
                was[n] = crowd(old, wire, n, seconds)[0]
        for n in COUNTS:
            rate, fair, worst = got[n]
            f = figures[n]
            f["calls_per_s"].append(rate)
            f["slowest_over_fastest"].append(fair)
            f["longest_call_s"].append(worst)
            f["over_one_thread"].append(rate / got[1][0])
            if n in was:
                f["over_before"].append(rate / was[n])
        print("pool_bench.py: round %d: %s, before %s" % (r + 1, {n: round(got[n][0]) for n in COUNTS}, was), file=sys.stderr)
    with open(out, "w") as f:
        json.dump(
            {"before": BEFORE if old is not None else "", "threads": [dict(threads=n, **figures[n]) for n in COUNTS]}, f, indent=1
        )


if __name__ == "__main__":
    main(sys.argv[1:])
