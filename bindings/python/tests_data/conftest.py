"""One local Ray cluster (2 CPUs) for the whole session: ``ray.init`` costs
seconds, so the tests share it."""

from __future__ import annotations

from typing import Any, Iterator

import pytest


@pytest.fixture(scope="session")
def ray_local() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield ray
    finally:
        ray.shutdown()
