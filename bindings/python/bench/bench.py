"""Benchmarks of the Python binding, one run: ``make bench.python``.

- ``assemble`` on the tiny, typical (20-step ReAct) and ~1 MB requests, against
  the pure-Python reference (``testdata/gen/reference.py``); the requests are
  the same bytes as the JavaScript benchmark's (bindings/js/bench/requests.mjs);
- ``Prompt.add_step`` at step 10, 1,000 and 10,000 with 1 KB steps;
- import + first call in a fresh process with a warm and a cold module cache;
- the same message lists built by hand in Python beside ``assemble(dict)``, and
  (``--json``, for ``make bench``) the throughput of ``assemble_many``,
  ``assemble_bytes_many`` and the CLI's ``--batch`` at 1 and N workers (data sets).

Goals: typical at most 2x the reference; add_step at most 30 µs at step 1,000
and flat; first call with a warm cache at most 30 ms; typical ``assemble(dict)``
at most 1.0x the hand-built lists (make bench prints its floor beside it); N workers at least 0.9 × N times one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import polyloop_assembly as pa

REPO = Path(__file__).resolve().parents[3]


def _load_reference() -> Any:
    path = REPO / "testdata" / "gen" / "reference.py"
    spec = importlib.util.spec_from_file_location("polyloop_reference", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["polyloop_reference"] = mod
    spec.loader.exec_module(mod)
    return mod


R = _load_reference()


# --- the requests (as in bindings/js/bench/requests.mjs) ------------------------


def msg(role: str, text: str) -> Dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def fill(unit: str, n: int) -> str:
    s = unit
    while len(s) < n:
        s += s
    return s[:n]


TOOLS = "Tools:\n" + "\n".join(
    "- tool_%d(query: str, limit: int = 10) -> list[str]: searches source %d for documents matching the query "
    "and returns their identifiers, newest first." % (i, i)
    for i in range(12)
)


def tiny_request() -> Dict[str, Any]:
    return {
        "v": 1,
        "run_messages": [msg("system", "You are a helpful agent.")],
        "goal_messages": [msg("user", "What is 2 + 2?")],
        "steps": [{"raw_output": "Thought: easy.\nAction: calc(2+2)", "observation": "4"}],
        "observation_template": "Observation: {observation}",
    }


def typical_request() -> Dict[str, Any]:
    steps = [
        {
            "raw_output": "Thought: step %d, I should look at source %d next because the previous result was "
            'incomplete.\nAction: tool_%d(query="café prices %d", limit=5)' % (i, i % 12, i % 12, i),
            "observation": fill("result %d: doc-%d-a, doc-%d-b (naïve match, score 0.%d) " % (i, i, i, i), 900),
        }
        for i in range(20)
    ]
    return {
        "v": 1,
        "run_messages": [
            msg("system", "You are a ReAct agent. Think step by step, then act with exactly one tool call.\n\n" + TOOLS),
            msg("user", "Example question: who wrote Hamlet?"),
            msg("assistant", 'Thought: I know this.\nAction: finish("Shakespeare")'),
        ],
        "injections": {
            "memory": [
                {"entry_id": "mem-1", "content": "The user prefers answers in metric units."},
                {"entry_id": "mem-2", "content": "Previous run: prices were found in source 3."},
            ],
            "tips": [{"entry_id": "tip-7", "content": "Prefer tool_3 for prices."}],
        },
        "goal_messages": [msg("user", "Find the average price of a café au lait in Lyon in 2024.")],
        "steps": steps,
        "observation_template": "Observation: {observation}",
        "max_prompt_chars": 60000,
    }


def large_request() -> Dict[str, Any]:
    obs = fill("row; naïve café Ünïcode 日本語 text — plus plain ASCII filler to make it long. ", 4800)
    steps = [{"raw_output": "Thought: page %d.\nAction: read_page(%d)" % (i, i), "observation": obs} for i in range(200)]
    return {
        "v": 1,
        "run_messages": [msg("system", "You read documents page by page.\n\n" + TOOLS)],
        "goal_messages": [msg("user", "Summarise the document.")],
        "steps": steps,
        "observation_template": "Page:\n{observation}",
    }


# --- the same message lists built by hand (the object path's yardstick)


def hand_built(req: Dict[str, Any]) -> Tuple[List[Dict[str, Any]], List[int]]:
    """What a Python loop writing the messages itself does: new message dicts for
    the run, injection and goal messages and each step's two, the observation
    rendered with str.format, and the characters counted. Equal to the
    response's messages and message_chars for requests whose template
    str.format renders (checked before timing)."""
    msgs = [
        {"role": m["role"], "content": [{"type": b["type"], "text": b["text"]} for b in m["content"]]}
        for m in req.get("run_messages", [])
    ]
    for entries in req.get("injections", {}).values():
        for e in entries:
            msgs.append({"role": "user", "content": [{"type": "text", "text": e["content"]}]})
    msgs += [
        {"role": m["role"], "content": [{"type": b["type"], "text": b["text"]} for b in m["content"]]}
        for m in req.get("goal_messages", [])
    ]
    fmt = req["observation_template"].format
    for st in req.get("steps", []):
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": st["raw_output"]}]})
        msgs.append({"role": "user", "content": [{"type": "text", "text": fmt(observation=st["observation"])}]})
    return msgs, [sum(len(b["text"]) for b in m["content"]) for m in msgs]


def containers_of(messages: List[Dict[str, Any]]) -> List[Tuple[str, str, str]]:
    """The answer's one-block messages as (role, type, text), for made_again."""
    return [(m["role"], m["content"][0]["type"], m["content"][0]["text"]) for m in messages]


def _strings_of(v: Any) -> List[str]:
    """Every str in v, keys too."""
    if isinstance(v, str):
        return [v]
    if isinstance(v, dict):
        return [s for k, x in v.items() for s in _strings_of(k) + _strings_of(x)]
    if isinstance(v, list):
        return [s for x in v for s in _strings_of(x)]
    return []


def _pieces(texts: List[str], strings: List[str]) -> List[Tuple[str, str, str]]:
    """Each text the request does not hold as (before, the longest request string in it, after)."""
    held, out = set(strings), []
    for x in texts:
        if x not in held:
            o = max((h for h in held if h and h in x), key=len, default="")
            i = x.find(o) if o else 0
            out.append((x[:i], o, x[i + len(o) :]))
    return out


def made_again(made: List[Tuple[str, str, str]]) -> List[Dict[str, Any]]:
    """New message dicts from texts that already exist, one block each: less than
    any decoder of the answer does (a floor of assemble(dict), not a way to assemble)."""
    return [{"role": r, "content": [{"type": t, "text": x}]} for r, t, x in made]


# --- throughput: many requests, 1 and N workers (data sets) ---------------------


def _cli_binary(tmp: str) -> Tuple[str, bool]:
    """The CLI built from this checkout ("" without Go), and whether it has --jobs."""
    exe = os.path.join(tmp, "polyloop-assemble")
    try:
        subprocess.run(
            ["go", "build", "-o", exe, "./cmd/polyloop-assemble"],
            cwd=REPO,
            check=True,
            capture_output=True,
            env=dict(os.environ, CGO_ENABLED="0"),
        )
    except (OSError, subprocess.CalledProcessError):
        return "", False
    usage = subprocess.run([exe, "--help"], capture_output=True, text=True)
    return exe, "--jobs" in usage.stdout + usage.stderr


def _controls(wire: bytes, count: int, workers: List[int]) -> List[Tuple[str, int, Callable[[], None]]]:
    """Three controls measured in the same rounds as the ways: work on ``w``
    threads that releases the GIL and shares nothing, so 2 workers / 1 is
    what this machine lets two threads gain at all, for compute
    (hashlib.sha256 over 1 MB, in cache; ``count`` // 100 calls in all), for
    memory (ctypes.memmove of 8 MB, past the caches; as many) and for the
    module itself: ``count`` copies of ``wire`` in batches of 64 through the
    instance's batch call, one instance per thread, without the binding's
    reading, ordering or threads pool (the ceiling of assemble_bytes_many)."""
    import ctypes
    import hashlib
    import threading

    from polyloop_assembly._consts import CALL_ASSEMBLE
    from polyloop_assembly._runtime import new_instance

    instances = [new_instance() for _ in range(max(workers))]
    batch = [(CALL_ASSEMBLE, wire)] * 64
    batches = count // 64 - count // 64 % max(workers)  # the same in all at any worker count

    data = bytes(1 << 20)
    bufs = [((ctypes.c_char * (8 << 20))(), (ctypes.c_char * (8 << 20))()) for _ in range(max(workers))]
    calls = max(8, count // 100)

    def on_threads(w: int, one: Callable[[int], None], total: int = calls) -> Callable[[], None]:
        def run() -> None:
            ts = [threading.Thread(target=lambda k=k: [one(k) for _ in range(total // w)]) for k in range(w)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()

        return run

    def sha(k: int) -> None:
        hashlib.sha256(data).digest()

    def copy(k: int) -> None:
        ctypes.memmove(bufs[k][0], bufs[k][1], 8 << 20)

    def module(k: int) -> None:
        instances[k].call_batch(batch)

    out: List[Tuple[str, int, Callable[[], None]]] = []
    for name, one in (
        ("control: sha256 of 1 MB on threads (compute)", sha),
        ("control: memmove of 8 MB on threads (memory)", copy),
    ):
        out += [(name, w, on_threads(w, one)) for w in workers]
    out += [
        ("control: the module on threads (its batch call, an instance each)", w, on_threads(w, module, batches)) for w in workers
    ]
    return out


def throughput(wire: bytes, count: int, samples: int, workers: List[int]) -> List[Dict[str, Any]]:
    """Requests/s of `count` copies of one request through assemble_many (dict
    in, dict out), assemble_bytes_many (bytes) and the CLI's --batch (msgpack in
    and out, the Go native and wazero engines; --jobs when the CLI has it), each at 1 and
    N workers, and two controls (:func:`_controls`). Every round runs each way
    at 1 and at N workers one right after the other (the order alternating from
    round to round), so a way's N / 1 ratio can be taken round by round: on a
    shared machine the load changes from second to second."""
    import msgpack

    req = msgpack.unpackb(wire, raw=False)
    resp = pa.assemble_bytes(wire)
    runs: List[Tuple[str, int, Callable[[], None]]] = []
    for w in workers:

        def dicts(w: int = w) -> None:
            for r in pa.assemble_many((req for _ in range(count)), workers=w):
                assert not isinstance(r, pa.AssemblyError)

        runs.append(("assemble_many(dict)", w, dicts))
    for w in workers:

        def wires(w: int = w) -> None:
            for r in pa.assemble_bytes_many((wire for _ in range(count)), workers=w):
                assert r == resp

        runs.append(("assemble_bytes_many(bytes)", w, wires))
    tmp = tempfile.mkdtemp()
    exe, has_jobs = _cli_binary(tmp)
    if exe:
        stream = os.path.join(tmp, "requests.msgpack")
        answers = os.path.join(tmp, "answers.msgpack")
        with open(stream, "wb") as f:
            f.write(wire * count)
        # The native engine answers a typical request in microseconds, so the
        # CLI's one reader and one writer are a large part of its time; the
        # wazero engine shows how --jobs scales when the assembly dominates.
        wasm = os.path.join(REPO, "wasm", "assembly.wasm")
        engines = [("native", [])] + ([("wazero", ["--engine", "wazero", "--wasm", wasm])] if os.path.exists(wasm) else [])
        for engine, eflags in engines:
            for w in workers if has_jobs else [1]:

                def cli(w: int = w, eflags: List[str] = eflags, checked: List[bool] = []) -> None:
                    # The answers are not piped into this process (reading 300 MB
                    # through a pipe would be the figure): the first run writes
                    # them to a file and checks every byte, the timed ones send
                    # them to /dev/null and check the tool's count of answers.
                    flags = ["--jobs", str(w)] if has_jobs else []
                    with open(stream, "rb") as f, open(answers if not checked else os.devnull, "wb") as o:
                        done = subprocess.run(
                            [exe, *eflags, "--in", "msgpack", "--out", "msgpack", "--batch", *flags],
                            stdin=f,
                            stdout=o,
                            stderr=subprocess.PIPE,
                            text=True,
                            check=True,
                        )
                    assert "%s requests, 0 errors" % format(count, ",") in done.stderr, done.stderr
                    if not checked:
                        with open(answers, "rb") as o:
                            assert o.read() == resp * count
                        os.remove(answers)
                        checked.append(True)

                runs.append(("CLI --batch%s (Go, %s engine)" % (" --jobs N" if has_jobs else "", engine), w, cli))
    runs += _controls(wire, count, workers)
    for _, _, fn in runs:  # warm: instances made, threads and caches as they will be
        fn()
    groups: List[List[int]] = []  # the runs of one way, next to each other
    for k, (name, _, _) in enumerate(runs):
        if groups and runs[groups[-1][0]][0] == name:
            groups[-1].append(k)
        else:
            groups.append([k])
    times: List[List[float]] = [[] for _ in runs]
    for r in range(samples):
        for k in (k for g in groups for k in (reversed(g) if r % 2 else g)):
            t0 = time.perf_counter()
            runs[k][2]()
            times[k].append(time.perf_counter() - t0)
    return [
        {"engine": name, "workers": w, "requests": count, "response_bytes": len(resp) * count, "samples_s": times[k]}
        for k, (name, w, _) in enumerate(runs)
    ]


# --- timing ---------------------------------------------------------------------


def per_call(fn: Callable[[], Any], budget_s: float = 1.0, repeats: int = 5) -> float:
    """Median over `repeats` batches of the mean time per call, in seconds."""
    fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    n = max(1, int(budget_s / repeats / one))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n)
    return statistics.median(samples)


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return "%.1f µs" % (seconds * 1e6)
    if seconds < 1:
        return "%.2f ms" % (seconds * 1e3)
    return "%.2f s" % seconds


def bench_assemble() -> List[Tuple[str, ...]]:
    rows = []
    for name, req in (("tiny", tiny_request()), ("typical (20-step ReAct)", typical_request()), ("1 MB", large_request())):
        wire = R.pack(req)
        ref_bytes, err = R.assemble_bytes(wire)
        assert err is None and pa.assemble_bytes(wire) == ref_bytes, name  # same answer before timing
        t_dict = per_call(lambda: pa.assemble(req))
        t_bytes = per_call(lambda: pa.assemble_bytes(wire))
        t_ref = per_call(lambda: R.assemble_bytes(wire))
        whole = pa.assemble(req)
        same = hand_built(req) == (whole["messages"], whole["message_chars"])
        t_hand = per_call(lambda: hand_built(req)) if same else 0.0
        rows.append(
            (
                name,
                "%d B" % len(wire),
                fmt(t_dict),
                fmt(t_bytes),
                fmt(t_hand) if same else "–",
                "%.2fx" % (t_dict / t_hand) if same else "–",
                fmt(t_ref),
                "%.2fx" % (t_dict / t_ref),
            )
        )
    return rows


def bench_add_step() -> List[Tuple[str, ...]]:
    raw = fill("Thought: keep reading. Action: read(next) ", 512)
    obs = fill("output line — naïve café ", 512)
    base = typical_request()
    base["steps"] = []
    rows = []
    for at in (10, 1000, 10000):
        prompt = pa.Prompt(base)
        for _ in range(at):
            prompt.add_step(raw, obs)
        samples = []
        for _ in range(7):
            t0 = time.perf_counter()
            for _ in range(100):
                prompt.add_step(raw, obs)
            samples.append((time.perf_counter() - t0) / 100)
        rows.append(("add_step at step %d" % at, fmt(statistics.median(samples))))
    return rows


_CHILD = (
    "import time, sys, json\n"
    "t0 = time.perf_counter()\n"
    "import polyloop_assembly as pa\n"
    "t1 = time.perf_counter()\n"
    "pa.assemble(json.loads(sys.argv[1]))\n"
    "t2 = time.perf_counter()\n"
    "print(json.dumps([t1 - t0, t2 - t1]))\n"
)


def _child(cache: str, request: Any = None) -> Tuple[float, float]:
    env = dict(os.environ, POLYLOOP_ASSEMBLY_CACHE_DIR=cache)
    request = tiny_request() if request is None else request
    out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(request)], env=env, capture_output=True, text=True, check=True)
    t_import, t_first = json.loads(out.stdout)
    return t_import, t_first


def bench_first_call() -> List[Tuple[str, ...]]:
    with tempfile.TemporaryDirectory() as tmp:
        cold = _child(tmp)
        warm = [_child(tmp) for _ in range(5)]
    warm_import = statistics.median(w[0] for w in warm)
    warm_first = statistics.median(w[1] for w in warm)
    return [
        ("cold cache (compiles)", fmt(cold[0]), fmt(cold[1])),
        ("warm cache (median of 5)", fmt(warm_import), fmt(warm_first)),
    ]


def table(header: Tuple[str, ...], rows: List[Tuple[str, ...]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in rows])


def main() -> None:
    import platform

    from importlib import metadata

    import msgpack

    print(
        "polyloop-assembly Python binding — CPython %s, wasmtime %s, msgpack %s, %s, %d CPUs"
        % (
            platform.python_version(),
            metadata.version("wasmtime"),
            msgpack.version and ".".join(map(str, msgpack.version)),
            platform.machine(),
            os.cpu_count() or 0,
        )
    )
    pa.assemble(tiny_request())  # load the module before timing
    print()
    print(
        table(
            (
                "request",
                "size",
                "assemble(dict)",
                "assemble_bytes",
                "built by hand",
                "assemble / by hand",
                "reference",
                "assemble / reference",
            ),
            bench_assemble(),
        )
    )
    print()
    print(table(("incremental (1 KB steps)", "per call"), bench_add_step()))
    print()
    print(table(("import + first call, new process", "import", "first call"), bench_first_call()))


# --- machine-readable mode for `make bench` (tools/benchreport) -------------


def _samples(fns: List[Callable[[], Any]], samples: int, sample_s: float) -> Tuple[List[int], List[List[float]]]:
    """Times each fn side by side: every round runs one batch of each.
    Returns the batch sizes and, per fn, the mean seconds per call of each batch."""
    calls = []
    for fn in fns:
        w0 = time.perf_counter()
        for i in range(1000000):  # warm up for about a sample
            fn()
            if i >= 2 and time.perf_counter() - w0 > sample_s:
                break
        t0 = time.perf_counter()
        fn()
        calls.append(max(1, int(sample_s / max(time.perf_counter() - t0, 1e-7))))
    out: List[List[float]] = [[] for _ in fns]
    for _ in range(samples):
        for k, fn in enumerate(fns):
            n = calls[k]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            out[k].append((time.perf_counter() - t0) / n)
    return calls, out


def json_main(argv: List[str]) -> None:
    """``bench.py --requests DIR --json PATH``: the shared request files of
    internal/testing/benchreq (written by tools/benchreport) instead of this file's
    own requests, raw samples as JSON. Options: --names tiny,typical,1MB,16MB,
    --histories 10,1000, --samples N, --sample-seconds S."""
    import argparse
    import platform
    from importlib import metadata

    import msgpack

    from polyloop_assembly import _codec, _runtime

    ap = argparse.ArgumentParser(prog="bench.py")
    ap.add_argument("--requests", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--names", default="tiny,typical,1MB,16MB")
    ap.add_argument("--histories", default="10,100,1000,10000")
    ap.add_argument("--samples", type=int, default=7)
    ap.add_argument("--sample-seconds", type=float, default=0.15)
    ap.add_argument("--throughput-requests", type=int, default=20000)
    args = ap.parse_args(argv)
    d = Path(args.requests)
    out: Dict[str, Any] = {
        "versions": {
            "CPython": platform.python_version(),
            "wasmtime (PyPI)": metadata.version("wasmtime"),
            "msgpack (PyPI)": metadata.version("msgpack"),
        },
        "assemble": [],
        "add_step": [],
        "startup": [],
        "stages": [],
        "peak_memory": [],
        "throughput": [],
    }
    pa.assemble_bytes((d / "tiny.msgpack").read_bytes())  # load the module before timing
    for name in args.names.split(","):
        wire = (d / (name + ".msgpack")).read_bytes()
        req = msgpack.unpackb(wire, raw=False)
        ref_bytes, err = R.assemble_bytes(wire)
        assert err is None and pa.assemble_bytes(wire) == ref_bytes, name  # same answer before timing
        print("bench.py: %s" % name, file=sys.stderr)
        fns = [lambda: pa.assemble_bytes(wire), lambda: pa.assemble(req), lambda: R.assemble_bytes(wire)]
        engines = [
            ("wasmtime, assemble_bytes(bytes)", False),
            ("wasmtime, assemble(dict)", False),
            ("testdata/gen/reference.py assemble_bytes", True),
        ]
        whole = pa.assemble(req)
        if hand_built(req) == (whole["messages"], whole["message_chars"]):
            fns.append(lambda: hand_built(req))
            engines.append(("the same message lists built by hand (Python, no module)", False))
            # The floor of any assemble(dict) through the module, in the same
            # rounds (on the typical request, the goal line's): packing the
            # request, assemble_bytes (above), and making the answer's containers
            # from texts that already exist (what no decoder can skip: the values
            # returned are the caller's to edit).
            if name == "typical" and all(len(m["content"]) == 1 for m in whole["messages"]):
                made = containers_of(whole["messages"])
                assert made_again(made) == whole["messages"]
                fns.append(lambda: _codec.encode(req))
                engines.append(("floor part: the request packed alone (msgpack)", False))
                fns.append(lambda: made_again(made))
                engines.append(("floor part: the answer's containers alone, from existing texts", False))
                # The texts the request does not hold (rendered observations) are new
                # str objects; the least that makes one: joining the request's string
                # it holds with the text around it, given.
                pieces = _pieces([x for _, _, x in made], _strings_of(req))
                fns.append(lambda: [a + o + c for a, o, c in pieces])
                engines.append(("floor part: the answer's new texts alone, joined from the request's", False))
        calls, samples = _samples(fns, args.samples, args.sample_seconds)
        for k, (engine, ref) in enumerate(engines):
            out["assemble"].append(
                {"engine": engine, "request": name, "reference": ref, "calls": calls[k], "samples_s": samples[k]}
            )
        resp = pa.assemble_bytes(wire)
        _, st = _samples([lambda: _codec.encode(req), lambda: _codec.decode(resp)], 3, args.sample_seconds / 3)
        out["stages"].append(
            {
                "request": name,
                "median_s": {
                    "1 encode (dict to msgpack)": statistics.median(st[0]),
                    "2 assemble_bytes (copy in, module, copy out)": statistics.median(samples[0]),
                    "3 decode (msgpack to dict)": statistics.median(st[1]),
                    "all: assemble(dict)": statistics.median(samples[1]),
                },
            }
        )
        inst = _runtime.get_runtime().new_instance()
        inst.call(wire)
        out["peak_memory"].append({"request": name, "bytes": inst.memory_bytes})
    base_req = msgpack.unpackb((d / "addstep.msgpack").read_bytes(), raw=False)
    step = base_req.pop("steps")[0]
    # One prompt per history length, timed in the same rounds (_samples), so
    # a burst of load meets every length alike: the flat goal is their ratio.
    histories = [int(x) for x in args.histories.split(",")]
    prompts = []
    for h in histories:
        prompt = pa.Prompt(base_req)
        for _ in range(h):
            prompt.add_step(step["raw_output"], step["observation"])
        prompts.append(prompt)
    calls, samples = _samples(
        [lambda p=p: p.add_step(step["raw_output"], step["observation"]) for p in prompts],
        args.samples,
        args.sample_seconds / 4,
    )
    for k, h in enumerate(histories):
        out["add_step"].append({"history": h, "calls": calls[k], "samples_s": samples[k]})
    if "typical" in args.names.split(","):
        print("bench.py: throughput", file=sys.stderr)
        out["throughput"] = throughput(
            (d / "typical.msgpack").read_bytes(), args.throughput_requests, max(5, args.samples), [1, os.cpu_count() or 1]
        )
    with tempfile.TemporaryDirectory() as tmp:
        tiny = msgpack.unpackb((d / "tiny.msgpack").read_bytes(), raw=False)
        cold = _child(tmp, tiny)
        warm = [_child(tmp, tiny) for _ in range(args.samples)]
    out["startup"] = [
        {"figure": "import + first call, cold cache (compiles)", "samples_s": [cold[0] + cold[1]]},
        {"figure": "first call, warm cache (import + first call, new process)", "samples_s": [w[0] + w[1] for w in warm]},
        {"figure": "first call alone, warm cache (after import)", "samples_s": [w[1] for w in warm]},
    ]
    Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    if "--json" in sys.argv[1:]:
        json_main(sys.argv[1:])
    else:
        main()
