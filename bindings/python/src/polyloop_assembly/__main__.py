"""``python -m polyloop_assembly warm|version``: the package's command line."""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from . import _module_cache, _runtime


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m polyloop_assembly")
    parser.add_argument(
        "command",
        choices=["warm", "version"],
        help="warm: compile the WebAssembly module into the disk cache now, at install or deploy time (exits 1 if "
        "the cache cannot be written); version: the package version, the module's sha256 and wasmtime's version",
    )
    args = parser.parse_args(argv)
    if args.command == "version":
        print(
            "polyloop-assembly %s (module sha256 %s, wasmtime %s)"
            % (_runtime.version(), _runtime.module_sha256(), _module_cache.wasmtime_version())
        )
        return 0
    info = _runtime.warm()
    if info.status in ("warm", "cold"):
        what = "compiled and cached" if info.status == "cold" else "already cached"
        print("polyloop_assembly: %s: %s (%.2f s)" % (what, info.path, info.seconds))
        return 0
    print(
        "polyloop_assembly: not cached (%s): %s"
        % (info.status, "the cache is disabled" if info.path is None else "%s cannot be written" % info.path.parent),
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
