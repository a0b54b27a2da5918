"""The Python half of scripts/ab/run: the old and the new binding loaded in ONE
process and timed in interleaved, paired batches, so both meet the same load.

The old package (--old, a ``polyloop_assembly`` directory) is imported under the
name ``polyloop_assembly_old`` (its imports are relative); the new one is the
``polyloop_assembly`` under --new. Each round times a batch of the old side and
a batch of the new side (the order alternates) and keeps their ratio; a case's
figure is the median ratio over the rounds and each side's median time per call.
Prints one JSON object per case, one per line."""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable


def load(name: str, pkg_dir: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, pkg_dir / "__init__.py", submodule_search_locations=[str(pkg_dir)])
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def batch(fn: Callable[[], Any], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def size_batch(fn: Callable[[], Any], seconds: float) -> int:
    n = 1
    while batch(fn, n) * n < seconds / 4:
        n *= 2
    return max(1, int(n * seconds / max(batch(fn, n) * n, 1e-9)))


def paired(case: str, old: Callable[[int], float], new: Callable[[int], float], rounds: int) -> dict[str, Any]:
    """old(r) and new(r) each time one batch and return seconds per call."""
    to, tn, ratios = [], [], []
    for r in range(rounds):
        if r % 2:
            b, a = new(r), old(r)
        else:
            a, b = old(r), new(r)
        to.append(a)
        tn.append(b)
        ratios.append(b / a)
    return {
        "host": "python",
        "case": case,
        "old": statistics.median(to),
        "new": statistics.median(tn),
        "ratio": statistics.median(ratios),
    }


def assemble_cases(pa_old: Any, pa_new: Any, reqs: Path, rounds: int, seconds: float) -> None:
    for name in ("tiny", "typical", "1MB"):
        req = json.loads((reqs / (name + ".json")).read_text())
        fo, fn = (lambda req=req: pa_old.assemble(req)), (lambda req=req: pa_new.assemble(req))
        n = size_batch(fn, seconds)
        print(json.dumps(paired("assemble " + name, lambda r: batch(fo, n), lambda r: batch(fn, n), rounds)), flush=True)


def add_step_cases(pa_old: Any, pa_new: Any, reqs: Path, rounds: int) -> None:
    base = json.loads((reqs / "addstep.json").read_text())
    step = base.pop("step")
    raw, obs = step["raw_output"], step["observation"]

    def grown(pa: Any, h: int) -> Any:
        p = pa.Prompt(base)
        for _ in range(h):
            p.add_step(raw, obs)
        return p

    def timed(p: Any) -> float:
        q = p.copy()
        t0 = time.perf_counter()
        for _ in range(200):
            q.add_step(raw, obs)
        return (time.perf_counter() - t0) / 200

    grown(pa_old, 3000), grown(pa_new, 3000)  # warm-up
    for h in (10, 1000, 10000):
        po, pn = grown(pa_old, h), grown(pa_new, h)
        print(json.dumps(paired("add_step at %d" % h, lambda r: timed(po), lambda r: timed(pn), rounds)), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True, type=Path, help="the old polyloop_assembly package directory")
    ap.add_argument("--new", required=True, type=Path, help="the new polyloop_assembly package directory")
    ap.add_argument("--reqs", required=True, type=Path)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--seconds", type=float, default=0.02, help="the length of one batch")
    args = ap.parse_args()
    pa_old = load("polyloop_assembly_old", args.old)
    pa_new = load("polyloop_assembly", args.new)
    assemble_cases(pa_old, pa_new, args.reqs, args.rounds, args.seconds)
    add_step_cases(pa_old, pa_new, args.reqs, args.rounds)


if __name__ == "__main__":
    main()
