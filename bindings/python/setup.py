"""Build hook of the package: refuse to build a package without its module.

The WebAssembly module (``assembly.wasm``), ``VERSION`` and ``LICENSE`` are
staged into this directory by the repository's ``make dist`` (the module is
built from the Go source, never committed). A wheel or an sdist built without
them would install and then fail at the first call, so the build stops here,
saying what to run. An sdist made by ``make dist`` carries all three, so it
builds (and installs) without Go.
"""

import os
import sys

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
STAGED = ("src/polyloop_assembly/assembly.wasm", "src/polyloop_assembly/VERSION", "LICENSE")

missing = [p for p in STAGED if not os.path.isfile(os.path.join(HERE, p))]
if missing:
    sys.exit(
        "polyloop-assembly: cannot build the package: %s missing from %s. They are built from the Go "
        "source and staged by the repository's Makefile: run `make dist` at the repository root (it "
        "writes a wheel and an sdist to dist/), then `pip install dist/polyloop_assembly-*.whl`. "
        "(Installing polyloop-assembly from PyPI needs none of this.)"
        % (", ".join(missing) + (" is" if len(missing) == 1 else " are"), HERE)
    )

setup()
