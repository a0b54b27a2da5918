"""The package as a user sees it: version, module hash, metadata, command line.

Run by ``make test.python`` against the editable install and by ``make
test.python.dist`` against the built wheel installed in a fresh venv
(``POLYLOOP_ASSEMBLY_TEST_INSTALLED=1``), where it also checks that the
package under test is the installed one, not the source tree.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import polyloop_assembly as pa

from conftest import REPO

INSTALLED = os.environ.get("POLYLOOP_ASSEMBLY_TEST_INSTALLED") == "1"


def test_version_is_the_projects_version() -> None:
    assert pa.__version__ == (REPO / "VERSION").read_text().strip()
    assert metadata.version("polyloop-assembly") == pa.__version__


def test_module_sha256_is_the_hash_of_the_module_it_runs() -> None:
    want = hashlib.sha256((REPO / "wasm" / "assembly.wasm").read_bytes()).hexdigest()
    assert pa.module_sha256 == want
    assert pa.default_assembler() and pa.assemble({"observation_template": "{observation}"})["ok"] is True
    from polyloop_assembly import _runtime

    assert _runtime.get_runtime().module_sha256 == want


def test_licence_and_urls_in_the_metadata() -> None:
    meta = metadata.metadata("polyloop-assembly")
    assert meta["License-Expression"] == "Apache-2.0"
    urls = meta.get_all("Project-URL") or []
    assert "Repository, https://github.com/polyloop/assembly" in urls
    assert "Homepage, https://github.com/polyloop/assembly" in urls
    files = metadata.files("polyloop-assembly") or []
    if INSTALLED:  # an editable install lists no files
        assert any(str(f).endswith("licenses/LICENSE") for f in files)


def test_the_command_line_version() -> None:
    out = subprocess.run([sys.executable, "-m", "polyloop_assembly", "version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "polyloop-assembly %s (module sha256 %s, wasmtime %s)" % (
        pa.__version__,
        pa.module_sha256,
        metadata.version("wasmtime"),
    )


@pytest.mark.skipif(not INSTALLED, reason="only against the installed wheel (make test.python.dist)")
def test_the_package_under_test_is_the_installed_wheel() -> None:
    here = Path(pa.__file__).resolve()
    assert not here.is_relative_to(REPO.resolve()), here
    assert here.is_relative_to(Path(sys.prefix).resolve()), (here, sys.prefix)
    assert (here.parent / "assembly.wasm").is_file() and (here.parent / "py.typed").is_file()


def test_building_leaves_nothing_untracked() -> None:
    """What a build writes into the checkout (pip's build/, the egg-info, dist/,
    the staged module, VERSION and LICENSE) is ignored by git."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    written = [
        "bindings/python/build/lib/polyloop_assembly/_assembler.py",
        "bindings/python/src/polyloop_assembly.egg-info/PKG-INFO",
        "bindings/python/src/polyloop_assembly/assembly.wasm",
        "bindings/python/src/polyloop_assembly/VERSION",
        "bindings/python/LICENSE",
        "dist/polyloop_assembly-0.0.0-py3-none-any.whl",
    ]
    out = subprocess.run(["git", "-C", str(REPO), "check-ignore", "--no-index", *written], capture_output=True, text=True)
    assert out.stdout.split() == written, "not ignored: %s" % sorted(set(written) - set(out.stdout.split()))
