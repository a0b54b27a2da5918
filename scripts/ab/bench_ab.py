"""One side of the A/B benchmark (scripts/ab/run): times the Python binding found
under --src on the shared requests and prints one JSON object: the best sample of each
call, in seconds (load only ever adds time). The runner calls it for the old and the new tree in alternation, so both
are measured side by side under the same load."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def per_call(fn, seconds: float, samples: int) -> float:
    fn()
    n = 1
    while True:  # calls per sample: enough for seconds/samples
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= seconds / samples / 4:
            break
        n *= 2
    n = max(1, int(n * (seconds / samples) / max(dt, 1e-9)))
    out = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t0) / n)
    return min(out)  # the best sample: load only ever adds time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--reqs", required=True)
    ap.add_argument("--seconds", type=float, default=0.4)
    args = ap.parse_args()
    sys.path.insert(0, args.src)
    import polyloop_assembly as pa

    assert Path(pa.__file__).resolve().is_relative_to(Path(args.src).resolve()), pa.__file__
    reqs = Path(args.reqs)
    out = {}
    for name in ("tiny", "typical", "1MB"):
        req = json.loads((reqs / (name + ".json")).read_text())
        pa.assemble(req)
        out["assemble " + name] = per_call(lambda req=req: pa.assemble(req), args.seconds, 5)
    base = json.loads((reqs / "addstep.json").read_text())
    step = base.pop("step")
    # Warm-up: a throwaway prompt of 3,000 steps before any timing.
    warm = pa.Prompt(base)
    for _ in range(3000):
        warm.add_step(step["raw_output"], step["observation"])
    for h in (10, 1000, 10000):
        prompt = pa.Prompt(base)
        for _ in range(h):
            prompt.add_step(step["raw_output"], step["observation"])
        # add_step grows the prompt: measure in short bursts from copies at history h
        samples = []
        for _ in range(7):
            p = prompt.copy()
            t0 = time.perf_counter()
            for _ in range(200):
                p.add_step(step["raw_output"], step["observation"])
            samples.append((time.perf_counter() - t0) / 200)
        out["add_step at %d" % h] = min(samples)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
