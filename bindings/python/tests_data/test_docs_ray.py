"""The documented Ray recipes (``<!-- docs-test: needs ray (…) -->`` blocks,
tests/test_docs.py reads them) run as written on this suite's Ray cluster of
2 CPUs (conftest.ray_local): a block's own ``ray.init(num_cpus=2, …)`` and
``ray.shutdown()`` are that cluster's, so the recipe runs on exactly the
machine it documents without starting a second Ray (a minute on 2 cores)."""

from __future__ import annotations

import contextlib
import faulthandler
import importlib.util
import io
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def _docs_test() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "tests" / "test_docs.py"
    spec = importlib.util.spec_from_file_location("_docs_blocks", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


DOCS = _docs_test()
RAY_BLOCKS = [(w, code) for w, code, skip in DOCS.BLOCKS if skip is not None and skip.startswith("only with ray ")]


def test_ray_blocks_found() -> None:
    assert RAY_BLOCKS, "no docs-test: needs ray block found (docs/DATASETS.md has the RunRows recipe)"


@pytest.mark.parametrize(("where", "code"), RAY_BLOCKS, ids=[w for w, _ in RAY_BLOCKS])
def test_ray_block_runs_on_two_cpus(where: str, code: str, ray_local: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    ray = ray_local
    assert ray.cluster_resources().get("CPU") == 2, "the recipe is documented for a 2-CPU cluster"
    monkeypatch.setattr(ray, "init", lambda *args, **kwargs: None)  # the cluster is up: the block's own init
    monkeypatch.setattr(ray, "shutdown", lambda *args, **kwargs: None)  # and the session's fixture ends it
    out = io.StringIO()
    # A recipe whose actors leave the shuffle no CPU waits for ever: the process ends after 10 minutes, with tracebacks.
    faulthandler.dump_traceback_later(600, exit=True)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, where, "exec"), {"__name__": "__docs__"})
    finally:
        faulthandler.cancel_dump_traceback_later()
    want = DOCS.expected_output(code)
    if want is not None:
        assert out.getvalue() == want, "%s prints what its doc does not say" % where
