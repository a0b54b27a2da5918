"""A Ray cluster of two nodes on this machine (``ray.cluster_utils.Cluster``:
a head and a second node, each with its own temp dir and its own module
cache), the package installed from the built wheel into each worker's
site directory (``pip install --target``, a node's setup step), tasks
pinned to both nodes: the same response bytes as a serial run, each node
compiling the module once.

Slow (two Ray nodes and two pip installs): run with POLYLOOP_RAY_CLUSTER=1 and
a wheel in dist/: ``make test.data.cluster`` builds it and runs this file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List

import pytest

import polyloop_assembly as pa

if os.environ.get("POLYLOOP_RAY_CLUSTER") != "1":
    pytest.skip("the two-node cluster: set POLYLOOP_RAY_CLUSTER=1", allow_module_level=True)

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "examples" / "datasets"))
import trajectories  # noqa: E402

LINES = trajectories.lines(2000, seed=5)


def _render_on_node(lines: List[str]) -> Dict[str, Any]:
    """Runs on a worker: renders ``lines`` and says where and with what."""
    import os as _os

    import ray as _ray

    import polyloop_assembly as _pa
    from polyloop_assembly import _runtime, data

    rows = data.RenderBatch(column="text", response=True)({"text": lines})
    return {
        "node": _ray.get_runtime_context().get_node_id(),
        "pid": _os.getpid(),
        "file": _pa.__file__,
        "cache": str(_runtime.get_runtime().cache_path),
        "status": _runtime.get_runtime().cache_status,
        "responses": rows.column("response").to_pylist(),  # a typed pyarrow Table (RenderBatch)
    }


def test_two_nodes_render_the_serial_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    wheels = sorted((REPO / "dist").glob("polyloop_assembly-*-py3-none-any.whl"))
    assert wheels, "no wheel in dist/: run make dist"
    if ray.is_initialized():
        ray.shutdown()
    short = Path(tempfile.mkdtemp(prefix="plr", dir="/tmp"))  # Ray's socket paths are at most 107 bytes
    # Cluster() writes the head's address to <Ray's default temp root>/ray/
    # ray_current_cluster without creating that directory (FileNotFoundError
    # on a machine where Ray never ran), and a later ray.init() on the machine
    # would read it: give Ray a temp root of its own.
    (short / "ray").mkdir()
    monkeypatch.setenv("RAY_TMPDIR", str(short))
    caches = [tmp_path / "cache-head", tmp_path / "cache-node2"]
    sites = [tmp_path / "site-head", tmp_path / "site-node2"]
    for site in sites:  # each node installs the wheel, as a cluster's setup step would
        pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site)]
        subprocess.run([*pip, str(wheels[-1])], check=True)
    cluster = Cluster()
    try:
        nodes = []
        for k, (cache, site) in enumerate(zip(caches, sites)):
            env_vars = {"POLYLOOP_ASSEMBLY_CACHE_DIR": str(cache), "PYTHONPATH": str(site)}
            nodes.append(cluster.add_node(num_cpus=1, temp_dir=str(short / ("n%d" % k)), env_vars=env_vars))
        ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False, configure_logging=False)
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers lack this test file
        remote = ray.remote(num_cpus=1)(_render_on_node)
        chunks = [LINES[i : i + 250] for i in range(0, len(LINES), 250)]
        refs = [
            remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(nodes[i % 2].node_id, soft=False)).remote(c)
            for i, c in enumerate(chunks)
        ]
        results = ray.get(refs, timeout=600)
    finally:
        ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(short, ignore_errors=True)
    want = [pa.assemble_json_bytes(x) for x in LINES]
    assert [r for res in results for r in res["responses"]] == want
    by_node = {n.node_id: cache for n, cache in zip(nodes, caches)}
    assert {res["node"] for res in results} == set(by_node)  # both nodes ran tasks
    by_site = {n.node_id: site for n, site in zip(nodes, sites)}
    for res in results:
        assert res["file"].startswith(str(by_site[res["node"]])), "the worker did not import its node's wheel"
        assert res["cache"].startswith(str(by_node[res["node"]])), "a node used another node's cache"
    for node in by_node:  # each node compiled once (one process, its fresh cache), any other process loaded it
        mine = [res for res in results if res["node"] == node]
        assert len({res["pid"] for res in mine if res["status"] == "cold"}) == 1, mine
        assert {res["status"] for res in mine} <= {"cold", "warm"} and len({res["cache"] for res in mine}) == 1
    assert all(list(c.rglob("*")) for c in caches)
