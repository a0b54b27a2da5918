"""Data-set ways side by side on the same N generated trajectories, each
beside an identity pipeline over the same data (the "data sets" table of
BENCHMARKS-notes.md):

    python bindings/python/bench/data_bench.py 10000 40000
    python bindings/python/bench/data_bench.py --runs 2000 --messages 4000
    python bindings/python/bench/data_bench.py --json OUT [--quick]

Needs ray[data] and datasets (make python.data-deps) and go (the CLI). Prints
one JSON object per measurement: way, rows, seconds, rows/s, cores, rows/s
per core and, beside it, that figure over the serial ``render_columns``'s
(``vs_serial_per_core``). Every way's output is checked against the serial run.
``--runs N``: runs into training rows (``data.run_rows``) against rendering
the same calls; ``--messages N``: reading ``Prompt.messages`` after each of N
steps, at step 10 and step N.

``--json OUT`` is the mode of ``make bench`` (tools/benchreport, datasets.go):
each way at 40,000 rows between two runs of the serial binding doing the same
work (its serial pair; the faster of the two counts), the engines' identity pipelines, a control (plain CPU work
in 2 processes against 1: what the machine lent), runs into rows
(``run_rows``, ``RunRows``) against rendering the same calls and the reads
of ``Prompt.messages``, in rounds;
raw figures into OUT. ``--quick`` (``make bench.quick``): 5,000 rows, no
``datasets`` or Ray (their start-up alone exceeds its budget), fewer rounds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

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


def _planted_calls(n_runs: int) -> List[Tuple[int, Any]]:
    """The calls of the first ``n_runs`` planted runs (tests/test_data_runs.py: 5–40 steps, 5 % condensed)."""
    sys.path.insert(0, str(REPO / "bindings" / "python" / "tests"))
    from test_data_runs import RUNS, planted_runs

    calls, _ = planted_runs()
    return [c for c in calls if c[0] < min(n_runs, RUNS)]


def runs(n_runs: int) -> None:
    """Runs into rows against rendering the same calls (each call once, serially)."""
    calls = _planted_calls(n_runs)
    asm = pa.Assembler(max_instances=1)
    _timed("serial: render_columns (no response)", len(calls), 1, lambda: data.render_columns([q for _, q in calls], asm))
    rows = _timed("serial: run_rows (calls in, chain rows out)", len(calls), 1, lambda: list(data.run_rows(calls, assembler=asm)))
    print(json.dumps({"run_rows": len(rows), "calls": len(calls)}), flush=True)


def _message_reads(steps: int, window: int = 20) -> Tuple[float, float]:
    """One prompt grown by ``steps`` steps, ``Prompt.messages`` read once after each step (as the README's
    loop reads it); the median of those reads over the first ``window`` steps (around step 10) and over
    the last ``window`` (around step ``steps``), in seconds."""
    p = pa.Prompt(
        {
            "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}],
            "observation_template": "{observation}",
        }
    )
    clock = time.perf_counter_ns
    reads: List[int] = []
    for k in range(1, steps + 1):
        p.add_step("raw output %d" % k, "observation %d" % k)
        t0 = clock()
        p.messages  # noqa: B018 - the read measured
        reads.append(clock() - t0)
    first, last = sorted(reads[:window]), sorted(reads[-window:])
    return first[window // 2] / 1e9, last[window // 2] / 1e9


def messages(steps: int) -> None:
    """Reading Prompt.messages after each of ``steps`` steps: the median read around step 10 and the last."""
    at10, atn = _message_reads(steps)
    rec = {"way": "Prompt.messages read", "step_10_us": round(at10 * 1e6, 3), "step_%d_us" % steps: round(atn * 1e6, 3)}
    rec["ratio"] = round(atn / at10, 2)
    print(json.dumps(rec), flush=True)


# --- make bench: --json ---------------------------------------------------------------------------------


def _measure(fn: Callable[[], Any], own: bool = False) -> Tuple[float, float]:
    """Wall and CPU seconds of fn(): of this process and its descendants, or with ``own`` of this process
    alone (a serial run, while Ray's daemons, children of this process, spend their own)."""
    own0, c0 = time.process_time(), {} if own else _cpu()
    t0 = time.perf_counter()
    fn()
    secs = time.perf_counter() - t0
    if own:
        return secs, time.process_time() - own0
    return secs, sum(v - c0.get(pid, 0.0) for pid, v in _cpu().items())


def _spin(n: int) -> int:
    x = 0
    for i in range(n):
        x ^= i
    return x


def _control() -> Dict[str, float]:
    """Plain CPU work (no I/O, nothing shared) in 2 processes against the same in 1: what the machine
    lent a way of 2 processes at that moment (2.0 on 2 idle cores)."""
    import multiprocessing

    n = 3_000_000
    with multiprocessing.get_context("fork").Pool(2) as pool:
        pool.map(_spin, [1000, 1000])  # started
        one, _ = _measure(lambda: _spin(n))
        two, _ = _measure(lambda: pool.map(_spin, [n, n]))
    return {"one_s": one, "two_s": two, "gain": 2 * one / two}


class _Identity:
    """A Ray actor that passes its batches through (the pipeline's floor)."""

    def __call__(self, batch: Any) -> Any:
        return batch


def _way(
    out: Dict[str, Any], name: str, cores: int, serial: str, fn: Callable[[], Any], pair: Callable[[], Any], rows: int = 0
) -> None:
    """Measure ``fn`` between two runs of ``pair`` (the serial binding doing the same work), into
    out["ways"]; the serial figure is the faster of the two (a burst of load on one does not flatter fn)."""
    before = _measure(pair, own=True)
    ws, wc = _measure(fn)
    after = _measure(pair, own=True)
    ss, sc = min(before, after)
    rec = dict(way=name, cores=cores, serial=serial, rows=rows or out["rows"], seconds=ws, cpu_seconds=wc)
    rec.update(serial_seconds=ss, serial_cpu_seconds=sc, serial_runs_seconds=[before[0], after[0]])
    out["ways"].append(rec)
    print(json.dumps(rec), file=sys.stderr, flush=True)


def _floor(out: Dict[str, Any], name: str, fn: Callable[[], Any]) -> None:
    secs, cpu = _measure(fn)
    out["identity"][name] = {"seconds": secs, "cpu_seconds": cpu}
    print(json.dumps({"identity": name, "seconds": secs}), file=sys.stderr, flush=True)


def _bench_ways(out: Dict[str, Any], tmp: Path, quick: bool) -> None:
    n = out["rows"]
    lines = trajectories.lines(n, seed=13)
    path = tmp / "t.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    wires = [_codec.encode(json.loads(line)) for line in lines if _json(line)]
    asm = pa.Assembler(max_instances=2)

    def columns() -> Any:
        return data.render_columns(lines, asm)

    for many, items, wire in ((pa.assemble_json_many, lines, ""), (pa.assemble_bytes_many, wires, " (msgpack)")):

        def ways(workers: int, many: Any = many, items: List[Any] = items) -> Callable[[], Any]:
            return lambda: list(many(items, workers=workers, assembler=asm))

        name = many.__name__
        _way(out, "%s, workers=2%s" % (name, wire), 2, "%s, workers=1" % name, ways(2), ways(1), rows=len(items))
    if quick:
        out["skipped"]["datasets and Ray"] = (
            "make bench.quick leaves them out (importing them, starting Ray, ~6 s, and a pipeline's workers "
            "exceed its minute); make bench measures them at 40,000 rows"
        )
        return
    for name, engine in (("datasets", _bench_datasets), ("Ray", _bench_ray)):
        try:
            engine(out, path, tmp, columns)
        except Exception as e:  # one engine failing leaves the other figures measured
            out["skipped"][name] = "failed: %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            print(out["skipped"][name], file=sys.stderr, flush=True)


def _bench_datasets(out: Dict[str, Any], path: Path, tmp: Path, columns: Callable[[], Any]) -> None:
    try:
        import datasets
    except ImportError as e:
        out["skipped"]["datasets"] = "%s: make python.data-deps installs it" % e
        return
    import render as example  # examples/datasets/render.py: the documented pipeline

    datasets.disable_progress_bars()
    out["versions"]["datasets"] = datasets.__version__

    def hf(num_proc: int) -> Callable[[], Any]:
        def go() -> Any:
            cache = str(tmp / ("hf%d" % time.monotonic_ns()))
            example.hf_pipeline(str(path), num_proc=num_proc, cache_dir=cache).to_parquet(str(tmp / "hf.parquet"))

        return go

    def identity() -> Any:
        ds = data.hf_read_lines(path, cache_dir=str(tmp / ("hf%d" % time.monotonic_ns())))
        res = ds.map(_Identity(), batched=True, batch_size=1000, num_proc=2, load_from_cache_file=False)
        res.to_parquet(str(tmp / "id.parquet"))

    _floor(out, "datasets", identity)
    for num_proc in (1, 2):
        way = "datasets map(RenderBatch), num_proc=%d (hf_read_lines, to_parquet)" % num_proc
        _way(out, way, num_proc, "render_columns", hf(num_proc), columns)


def _bench_ray(out: Dict[str, Any], path: Path, tmp: Path, columns: Callable[[], Any]) -> None:
    try:
        import ray
    except ImportError as e:
        out["skipped"]["Ray"] = "%s: make python.data-deps installs it" % e
        return
    import render as example

    out["versions"]["ray"] = ray.__version__
    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    out["ray_init_seconds"] = time.perf_counter() - t0
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:

        def identity() -> Any:
            ds = data.ray_read_lines(str(path)).map_batches(
                _Identity, batch_format="pyarrow", batch_size=1000, compute=ray.data.ActorPoolStrategy(size=2), num_cpus=0.5
            )
            ds.write_parquet(str(tmp / ("rayid%d" % time.monotonic_ns())))

        def render() -> Any:
            example.ray_pipeline(str(path)).write_parquet(str(tmp / ("ray%d" % time.monotonic_ns())))

        _floor(out, "Ray", identity)
        _way(
            out,
            "Ray map_batches(RenderBatch), 2 actors x 0.5 CPU, batch 1000 (write_parquet)",
            2,
            "render_columns",
            render,
            columns,
        )
    finally:
        ray.shutdown()


def _bench_runs(out: Dict[str, Any], n_runs: int, rounds: int) -> None:
    """Runs into rows (``run_rows``, and ``RunRows`` on the calls as one batch of columns) against rendering
    the same calls, round by round (the order reversed every other round); each row count checked."""
    calls = _planted_calls(n_runs)
    asm = pa.Assembler(max_instances=1)
    requests = [q for _, q in calls]
    batch = {"run_id": [run for run, _ in calls], "request": requests}
    chains: List[int] = []
    last = [i for i, (run, _) in enumerate(calls) if run == calls[-1][0]]
    batched = data.RunRows()
    batched({"run_id": [calls[i][0] for i in last], "request": [requests[i] for i in last]})  # warm: pyarrow, module
    data.render_columns(requests[:10], asm)
    ways: Dict[str, Callable[[], Any]] = {
        "render_s": lambda: data.render_columns(requests, asm),
        "run_rows_s": lambda: chains.append(sum(1 for _ in data.run_rows(calls, assembler=asm))),
        "run_rows_batch_s": lambda: chains.append(batched(batch).num_rows),
    }
    times: Dict[str, List[float]] = {k: [] for k in ways}
    for r in range(rounds):
        for k in list(ways) if r % 2 == 0 else list(ways)[::-1]:
            times[k].append(_measure(ways[k])[0])
    assert len(set(chains)) == 1, "run_rows and RunRows gave %s rows" % sorted(set(chains))
    out["runs"] = dict(runs=min(n_runs, 1000), calls=len(calls), rows=chains[0], **times)


def _bench_json(path: str, quick: bool) -> None:
    import platform

    out: Dict[str, Any] = {"quick": quick, "rows": 5_000 if quick else 40_000, "ways": [], "identity": {}, "skipped": {}}
    out["versions"] = {"python": platform.python_version(), "polyloop_assembly": pa.__version__}
    out["control_before"] = _control()
    with tempfile.TemporaryDirectory() as d:
        _bench_ways(out, Path(d), quick)
    out["control_after"] = _control()
    _bench_runs(out, 100 if quick else 1000, 3)
    steps = 4000
    reads = [_message_reads(steps) for _ in range(5 if quick else 9)]
    out["messages"] = {"steps": steps, "window": 20, "step_10_s": [a for a, _ in reads], "step_n_s": [b for _, b in reads]}
    out["loadavg"] = os.getloadavg()
    Path(path).write_text(json.dumps(out, indent=1), encoding="utf-8")


def main() -> None:
    if sys.argv[1:2] == ["--json"]:
        for k, v in (("HF_HUB_OFFLINE", "1"), ("HF_DATASETS_OFFLINE", "1"), ("RAY_USAGE_STATS_ENABLED", "0")):
            os.environ.setdefault(k, v)
        _bench_json(sys.argv[2], "--quick" in sys.argv[3:])
        return
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
