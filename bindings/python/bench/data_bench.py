"""Data-set ways side by side on the same N generated trajectories, each
beside an identity pipeline over the same data (the "data sets" table of
BENCHMARKS-notes.md):

    python bindings/python/bench/data_bench.py 10000 40000
    python bindings/python/bench/data_bench.py --runs 2000 --messages 4000

Needs ray[data] and datasets (make python.data-deps) and go (the CLI). Prints
one JSON object per measurement: way, rows, seconds, rows/s, cores, rows/s
per core and, beside it, that figure over the serial ``render_columns``'s
(``vs_serial_per_core``). Every way's output is checked against the serial run.
``--runs N``: runs into training rows (``data.run_rows``) against rendering
the same calls; ``--messages N``: reading ``Prompt.messages`` after each of N
steps, at step 10 and step N.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "examples" / "datasets"))
import trajectories  # noqa: E402

import polyloop_assembly as pa  # noqa: E402
from polyloop_assembly import _codec, data  # noqa: E402


def _cpu() -> Dict[int, float]:
    """CPU seconds (Linux /proc) of this process and every descendant (Ray's
    raylet and workers, datasets' pool), each with the children it reaped."""
    tick = os.sysconf("SC_CLK_TCK")
    procs: Dict[int, Any] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            procs[int(name)] = (int(fields[1]), sum(int(x) for x in fields[11:15]) / tick)
    mine = {os.getpid()}
    grew = True
    while grew:
        more = {pid for pid, (ppid, _) in procs.items() if ppid in mine} - mine
        grew = bool(more)
        mine |= more
    return {pid: procs[pid][1] for pid in mine if pid in procs}


_SERIAL: Dict[str, float] = {}  # rows per CPU-second of the serial render_columns


def _timed(way: str, n: int, cores: int, fn: Callable[[], Any]) -> Any:
    """Run fn; print rows/s (wall) and rows per CPU-second (the CPU time of
    every process of the way: on a shared machine, rows/s per core)."""
    c0 = _cpu()
    t0 = time.perf_counter()
    out = fn()
    secs = time.perf_counter() - t0
    c1 = _cpu()
    cpu = sum(v - c0.get(pid, 0.0) for pid, v in c1.items())
    rec = {"way": way, "rows": n, "seconds": round(secs, 3), "rows_per_s": round(n / secs), "cores": cores}
    rec.update(cpu_seconds=round(cpu, 2), rows_per_cpu_s=round(n / cpu) if cpu > 0 else None)
    if way.startswith("serial: render_columns") and cpu > 0:
        _SERIAL["rows_per_cpu_s"] = n / cpu
    if _SERIAL and cpu > 0:
        rec["vs_serial_per_core"] = round(n / cpu / _SERIAL["rows_per_cpu_s"], 2)
    print(json.dumps(rec), flush=True)
    return out


def _identity(batch: Any) -> Any:
    return batch


def run(n: int, tmp: Path, ray: Any, datasets: Any) -> None:
    lines = trajectories.lines(n, seed=13)
    path = tmp / ("t%d.jsonl" % n)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    wires = [_codec.encode(json.loads(line)) for line in lines if _json(line)]
    asm = pa.Assembler(max_instances=1)
    serial = _timed("serial: assemble_json_bytes loop", n, 1, lambda: [asm.assemble_json_bytes(x) for x in lines])
    _timed("serial: identity loop (bytes of each line)", n, 1, lambda: [x.encode() for x in lines])
    _timed("serial: render_columns (no response)", n, 1, lambda: data.render_columns(lines, asm))
    _timed("assemble_bytes_many, workers=2 (msgpack)", len(wires), 2, lambda: list(pa.assemble_bytes_many(wires, workers=2)))
    _timed("assemble_json_many, workers=2", n, 2, lambda: list(pa.assemble_json_many(lines, workers=2)))
    exe = tmp / "polyloop-assemble"
    if not exe.exists():
        subprocess.run(
            ["go", "build", "-o", str(exe), "./cmd/polyloop-assemble"],
            cwd=REPO,
            check=True,
            env=dict(os.environ, CGO_ENABLED="0"),
        )
    stream = path.read_bytes()
    cli = _timed(
        "CLI --batch (JSON lines)", n, 1, lambda: subprocess.run([str(exe), "--batch"], input=stream, capture_output=True).stdout
    )
    assert cli.count(b"\n") == n
    _ray(n, path, tmp, ray, serial)
    _datasets(n, path, tmp, datasets, serial)


def _json(line: str) -> bool:
    try:
        json.loads(line)
        return True
    except ValueError:
        return False


def _ray(n: int, path: Path, tmp: Path, ray: Any, serial: List[bytes]) -> None:
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    out = tmp / ("ray%d" % n)

    def pipe(fn: Any, **kw: Any) -> Callable[[], Any]:
        def go() -> Any:
            ds = data.ray_read_lines(str(path)).map_batches(fn, batch_format="pyarrow", **kw)
            ds.write_parquet(str(out / str(time.monotonic_ns())))

        return go

    _timed("Ray identity map_batches (ray_read_lines, write_parquet)", n, 2, pipe(_identity, batch_size=5000))
    for label, kw in [
        (
            "Ray RenderBatch, 2 actors x 0.5 CPU, batch 1000",
            dict(batch_size=1000, compute=ray.data.ActorPoolStrategy(size=2), num_cpus=0.5),
        ),
        (
            "Ray RenderBatch, 1 actor x 1 CPU, batch 5000",
            dict(batch_size=5000, compute=ray.data.ActorPoolStrategy(size=1), num_cpus=1),
        ),
        (
            "Ray RenderBatch, 2 actors x 0.5 CPU, batch 5000",
            dict(batch_size=5000, compute=ray.data.ActorPoolStrategy(size=2), num_cpus=0.5),
        ),
        ("Ray RenderBatch, tasks, batch 5000", dict(batch_size=5000)),
    ]:
        fn: Any = data.RenderBatch(column="text") if "tasks" in label else data.RenderBatch
        if "tasks" not in label:
            kw["fn_constructor_kwargs"] = {"column": "text"}
        _timed(label, n, 2, pipe(fn, **kw))
    rows = (
        data.ray_read_lines(str(path))
        .map_batches(
            data.RenderBatch,
            fn_constructor_kwargs={"column": "text", "response": True},
            batch_format="pyarrow",
            batch_size=5000,
            compute=ray.data.ActorPoolStrategy(size=2),
            num_cpus=0.5,
        )
        .take_all()
    )
    assert [r["response"] for r in rows] == serial


def _datasets(n: int, path: Path, tmp: Path, datasets: Any, serial: List[bytes]) -> None:
    def load() -> Any:
        return data.hf_read_lines(path, cache_dir=str(tmp / ("hf%d" % time.monotonic_ns())))

    def pipe(fn: Any, features: Any, out: str, arrow: bool = False, **kw: Any) -> Callable[[], Any]:
        def go() -> Any:
            ds = load()
            src = ds.with_format("arrow") if arrow else ds
            res = src.map(fn, batched=True, num_proc=2, features=features(ds), load_from_cache_file=False, **kw)
            res.to_parquet(str(tmp / out))
            return res.with_format(None)

        return go

    _timed(
        "datasets identity map (num_proc=2, to_parquet)",
        n,
        2,
        pipe(_identity, lambda ds: ds.features, "id.parquet", batch_size=1000),
    )
    _timed(
        "datasets identity map, format arrow",
        n,
        2,
        pipe(_identity, lambda ds: ds.features, "id.parquet", arrow=True, batch_size=1000),
    )
    for arrow in (False, True):
        _timed(
            "datasets RenderBatch (num_proc=2, batch 1000, %s, to_parquet)" % ("format arrow" if arrow else "dicts"),
            n,
            2,
            pipe(
                data.RenderBatch(column="text"),
                lambda ds: data.hf_features(ds.features),
                "r.parquet",
                arrow=arrow,
                batch_size=1000,
            ),
        )
    resp = _timed(
        "datasets RenderBatch response=True (num_proc=2, batch 1000, to_parquet)",
        n,
        2,
        pipe(
            data.RenderBatch(column="text", response=True),
            lambda ds: data.hf_features(ds.features, response=True),
            "rr.parquet",
            batch_size=1000,
        ),
    )
    assert resp["response"] == serial
    for name in ("r.parquet", "rr.parquet"):
        print(json.dumps({"parquet": name, "rows": n, "bytes": os.path.getsize(tmp / name)}), flush=True)


def runs(n_runs: int) -> None:
    """Runs into rows against rendering the same calls (each call once, serially)."""
    sys.path.insert(0, str(REPO / "bindings" / "python" / "tests"))
    from test_data_runs import RUNS, planted_runs

    calls, _ = planted_runs()
    calls = [c for c in calls if c[0] < min(n_runs, RUNS)]
    asm = pa.Assembler(max_instances=1)
    _timed("serial: render_columns (no response)", len(calls), 1, lambda: data.render_columns([q for _, q in calls], asm))
    rows = _timed("serial: run_rows (calls in, chain rows out)", len(calls), 1, lambda: list(data.run_rows(calls, assembler=asm)))
    print(json.dumps({"run_rows": len(rows), "calls": len(calls)}), flush=True)


def messages(steps: int) -> None:
    """Reading Prompt.messages after each of ``steps`` steps: the median read at step 10 and at the last."""
    p = pa.Prompt(
        {
            "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}],
            "observation_template": "{observation}",
        }
    )
    per: Dict[int, float] = {}
    for k in range(1, steps + 1):
        p.add_step("raw output %d" % k, "observation %d" % k)
        if k in (10, steps):
            times = []
            for _ in range(201):
                t0 = time.perf_counter()
                p.messages  # noqa: B018 - the read measured
                times.append(time.perf_counter() - t0)
            per[k] = sorted(times)[100]
        else:
            p.messages  # noqa: B018 - read after every step, as the README's loop does
    rec = {"way": "Prompt.messages read", "step_10_us": round(per[10] * 1e6, 3), "step_%d_us" % steps: round(per[steps] * 1e6, 3)}
    rec["ratio"] = round(per[steps] / per[10], 2)
    print(json.dumps(rec), flush=True)


def main() -> None:
    if sys.argv[1:2] in (["--runs"], ["--messages"]):
        args = sys.argv[1:]
        for flag, value in zip(args[::2], args[1::2]):
            (runs if flag == "--runs" else messages)(int(value))
        return
    import datasets
    import ray

    datasets.disable_progress_bars()
    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    print(json.dumps({"ray_init_seconds": round(time.perf_counter() - t0, 2)}), flush=True)
    ray.data.DataContext.get_current().enable_progress_bars = False
    with tempfile.TemporaryDirectory() as d:
        for n in [int(a) for a in sys.argv[1:]] or [10000]:
            run(n, Path(d), ray, datasets)
    print(json.dumps({"loadavg": os.getloadavg()}))


if __name__ == "__main__":
    main()
