"""The pool's fairness and throughput (issue 44), for ``make bench``: threads sharing an assembler of one instance.

    python pool_bench.py --json OUT [--quick]

Each round runs, one right after the other (the order turning from round to round), 1, 2 and 8 threads calling
``assemble_bytes`` of a tiny request on one ``Assembler(max_instances=1)`` for a few seconds. Per round and thread
count it records the calls per second of all threads together, the calls of the slowest thread over the fastest's,
and the longest single call (its wait for the instance included). Writes::

    {"threads": [{"threads": N, "calls_per_s": [...], "slowest_over_fastest": [...], "longest_call_s": [...],
                  "over_one_thread": [...]}, ...]}

one value per round; ``over_one_thread`` is that round's calls per second over the 1-thread run of the same round (the
cost of the turns and the queue, on a shared machine a ratio taken side by side).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any, Dict, List, Tuple

import msgpack

import polyloop_assembly as pa

COUNTS = (1, 2, 8)


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
    figures: Dict[int, Dict[str, List[float]]] = {
        n: {"calls_per_s": [], "slowest_over_fastest": [], "longest_call_s": [], "over_one_thread": []} for n in COUNTS
    }
    for r in range(rounds):
        order = COUNTS if r % 2 == 0 else tuple(reversed(COUNTS))
        got = {n: crowd(asm, wire, n, seconds) for n in order}
        for n in COUNTS:
            rate, fair, worst = got[n]
            f = figures[n]
            f["calls_per_s"].append(rate)
            f["slowest_over_fastest"].append(fair)
            f["longest_call_s"].append(worst)
            f["over_one_thread"].append(rate / got[1][0])
        print("pool_bench.py: round %d: %s" % (r + 1, {n: round(got[n][0]) for n in COUNTS}), file=sys.stderr)
    with open(out, "w") as f:
        json.dump({"threads": [dict(threads=n, **figures[n]) for n in COUNTS]}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
