"""The data-set ways side by side on the same 10,000 generated trajectories
(the figures of bindings/python/README.md, "Data sets"):

    python examples/datasets/measure.py

Needs ray[data] and datasets (make python.data-deps). Prints rows/s per way
and Ray's start-up cost; checks every way's response bytes against the serial run.
"""

import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trajectories as T, render
import polyloop_assembly as pa
from polyloop_assembly import data, _codec
N = 10000
lines = T.lines(N, 13)
d = tempfile.mkdtemp(); p = os.path.join(d, "t.jsonl")
open(p, "w", encoding="utf-8").write("".join(l + "\n" for l in lines))
nbytes = os.path.getsize(p)
res = {}
def rec(name, secs, extra=""):
    res[name] = secs
    print("%-52s %6.2f s  %7.0f rows/s  %5.1f MB/s of input %s" % (name, secs, N / secs, nbytes / secs / 1e6, extra), flush=True)
t0 = time.perf_counter(); serial = data.render_rows(lines, pa.Assembler(max_instances=1)); rec("one process: render_rows (serial)", time.perf_counter() - t0)
json_lines = [l for (k, _), l in zip(T.requests(N, 13), lines) if k != "not-json"]
for w in (1, 2):  # parsed lazily, as a pipeline reading a file would
    t0 = time.perf_counter(); n = sum(1 for _ in pa.assemble_many((json.loads(l) for l in json_lines), workers=w)); rec("assemble_many(dict), workers=%d (%d requests, JSON parsed lazily)" % (w, n), time.perf_counter() - t0)
for w in (1, 2):  # the JSON text judged inside the module, as the CLI judges it
    t0 = time.perf_counter(); n = sum(1 for _ in pa.assemble_json_many(lines, workers=w)); rec("assemble_json_many(lines), workers=%d (%d requests)" % (w, n), time.perf_counter() - t0)
wires = [_codec.encode(json.loads(l)) for l in json_lines]
for w in (1, 2):
    t0 = time.perf_counter(); n = sum(1 for _ in pa.assemble_bytes_many(wires, workers=w)); rec("assemble_bytes_many(bytes), workers=%d" % w, time.perf_counter() - t0)
import datasets
for npr in (1, 2):
    t0 = time.perf_counter(); out = render.hf_pipeline(p, num_proc=npr, cache_dir=os.path.join(d, "hf%d" % npr)); rec("datasets.map(num_proc=%d) incl. load" % npr, time.perf_counter() - t0)
    assert out["response"] == serial["response"]
import ray
t0 = time.perf_counter(); ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False); tinit = time.perf_counter() - t0
print("ray.init(num_cpus=2): %.2f s" % tinit)
for conc in (1, 2):
    t0 = time.perf_counter(); rows = render.ray_pipeline(p, concurrency=conc).take_all(); rec("Ray map_batches, %d actor(s) (after init)" % conc, time.perf_counter() - t0)
    assert [r["response"] for r in rows] == serial["response"]
# second run: actors warm? (a new pipeline starts new actors)
t0 = time.perf_counter(); rows = render.ray_pipeline(p, concurrency=2).take_all(); rec("Ray map_batches, 2 actors, again", time.perf_counter() - t0)
# tiny pipeline: start-up of a pipeline
t0 = time.perf_counter(); rows = render.ray_pipeline(p, concurrency=2).limit(10).take_all(); print("Ray pipeline of 10 rows: %.2f s" % (time.perf_counter() - t0))
ray.shutdown()
print("load", os.getloadavg())
