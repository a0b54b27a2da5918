"""One local Ray cluster (2 CPUs) for the whole session: ``ray.init`` costs
seconds, so the tests share it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

#: The repository's root (test_docs_ray.py reads the docs through tests/test_docs.py, which takes it from here).
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def ray_local() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield ray
    finally:
        ray.shutdown()
