"""Shared fixtures: the repository paths and the pure-Python reference.

The reference (``testdata/gen/reference.py``) is the independent oracle: it
shares no code with the Go core, the binding or the msgpack package.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[3]
REFERENCE_PATH = REPO / "testdata" / "gen" / "reference.py"
VECTORS_DIR = REPO / "testdata" / "vectors"


def load_reference() -> ModuleType:
    """Import testdata/gen/reference.py by path (it is not a package)."""
    if "polyloop_reference" in sys.modules:
        return sys.modules["polyloop_reference"]
    if not REFERENCE_PATH.is_file():
        raise FileNotFoundError("the pure-Python reference is missing: %s" % REFERENCE_PATH)
    spec = importlib.util.spec_from_file_location("polyloop_reference", REFERENCE_PATH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["polyloop_reference"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def ref() -> ModuleType:
    return load_reference()
