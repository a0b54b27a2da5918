"""The smoke set of the installed-wheel check (a pytest plugin: ``-p dist_smoke``).

``tests/dist_check.py`` runs the shared vectors and the package checks in full
on one CPython and this smoke set on the others. The wheel is py3-none-any:
its files, and the module's answers, are the same on every interpreter; what
can differ from one CPython to the next is whether the package installs and
imports there, what ``importlib.metadata`` reads from its dist-info, how the
module loads (wasmtime-py on that interpreter, the compile cache the first
interpreter filled), and the Python side of each call (the codec turning
values into msgpack and back, the errors raised). So the smoke set keeps:

- every test that is not a vector case (tests/test_package.py whole: version,
  module hash, metadata, licence, the command line, the installed package being
  the wheel; and the vector files' own checks), except
  ``test_json_vectors_equal_the_cli``, which compares the module with the
  command-line tool (Go, not Python) on every JSON case;
- of each vector test (``assemble_bytes``, ``assemble``, ``assemble_json_bytes``
  and ``assemble_json``, ``Prompt.add_step``), the first ok case and the first
  error case of every vector file (for the prompt vectors: the first case
  without and the first with a refused step): each call on each theme (UTF-8, sizes,
  templates, errors of each family...) once through its answer path and once
  through its error path.

The other cases are deselected (pytest counts them as deselected, not as
passed).
"""

from __future__ import annotations

from typing import Any, List, Optional, Set, Tuple

import pytest

# Not Python-dependent and the slowest of the files: the full run has it.
FULL_ONLY = {"test_json_vectors_equal_the_cli"}


def _case_of(item: pytest.Item) -> Optional[Any]:
    """The vector case a parametrized test runs (a vectorsets.Case), if any."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    for v in params.values():
        if hasattr(v, "file") and hasattr(v, "error") and hasattr(v, "request"):
            return v
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    keep: List[pytest.Item] = []
    dropped: List[pytest.Item] = []
    seen: Set[Tuple[str, str, str, bool]] = set()
    for item in items:
        name = getattr(item, "originalname", item.name)
        case = _case_of(item)
        if case is None:
            (dropped if name in FULL_ONLY else keep).append(item)
            continue
        refused = case.error is not None or any("error" in s for s in getattr(case, "steps", ()))
        key = (item.nodeid.split("::", 1)[0], name, case.file, refused)
        (dropped if key in seen else keep).append(item)
        seen.add(key)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep
