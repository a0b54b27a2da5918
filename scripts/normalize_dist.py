"""Rewrite a wheel and an sdist so that one commit always gives the same bytes.

    python scripts/normalize_dist.py --epoch SECONDS dist/polyloop_assembly-*

setuptools stamps its archives with the build's clock and the builder's
files: the sdist's members carry their mtimes, the builder's uid, gid and
names, and the gzip header the time of the build; the wheel's entries carry
the files' mtimes and the umask's modes. This rewrites each archive in place
with the same members and contents, in sorted order (the wheel's .dist-info
last, RECORD at the very end, as the wheel format asks), every timestamp set
to --epoch (`make dist` passes SOURCE_DATE_EPOCH, the commit's time), owners
0/0 without names, modes 0644 (0755 for directories and executables) and a
gzip header without a name or a time. The wheel's RECORD stays valid: it
hashes contents only.
"""

import argparse
import gzip
import io
import os
import sys
import tarfile
import time
import zipfile

# The earliest time a zip entry can hold (1980-01-01).
ZIP_EPOCH = 315532800


def mode_of(executable: bool, directory: bool = False) -> int:
    """0755 for directories and executables, 0644 for the other files."""
    return 0o755 if executable or directory else 0o644


def normalize_sdist(path: str, epoch: int) -> None:
    """Re-pack a .tar.gz: sorted members, fixed times, owners and modes."""
    with tarfile.open(path, "r:gz") as src:
        members = sorted(src.getmembers(), key=lambda m: m.name)
        blobs = {m.name: src.extractfile(m).read() for m in members if m.isfile()}
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as dst:
        for m in members:
            if not (m.isfile() or m.isdir()):
                sys.exit("%s: %s is neither a file nor a directory" % (path, m.name))
            m.mtime = epoch
            m.uid = m.gid = 0
            m.uname = m.gname = ""
            m.mode = mode_of(bool(m.mode & 0o111), m.isdir())
            m.pax_headers = {}
            dst.addfile(m, io.BytesIO(blobs[m.name]) if m.isfile() else None)
    with open(path, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, compresslevel=9, mtime=0) as gz:
        gz.write(raw.getvalue())


def wheel_order(name: str) -> tuple:
    """The package's files, then .dist-info's, then RECORD."""
    top = name.split("/", 1)[0]
    dist_info = top.endswith(".dist-info")
    return (dist_info, dist_info and name.endswith("/RECORD"), name)


def normalize_wheel(path: str, epoch: int) -> None:
    """Re-write a .whl: sorted entries, fixed times and modes, deflated."""
    stamp = time.gmtime(max(epoch, ZIP_EPOCH))[:6]
    with zipfile.ZipFile(path) as src:
        entries = [(i, src.read(i)) for i in src.infolist()]
    entries.sort(key=lambda e: wheel_order(e[0].filename))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for old, data in entries:
            info = zipfile.ZipInfo(old.filename, date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix: external_attr holds the mode.
            directory = old.filename.endswith("/")
            kind = 0o040000 if directory else 0o100000
            info.external_attr = (kind | mode_of(bool((old.external_attr >> 16) & 0o111), directory)) << 16
            dst.writestr(info, data, compresslevel=9)
    with open(path, "wb") as f:
        f.write(out.getvalue())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--epoch", type=int, required=True, help="the time every entry gets (SOURCE_DATE_EPOCH)")
    ap.add_argument("archives", nargs="+", help="*.whl and *.tar.gz files, rewritten in place")
    args = ap.parse_args()
    for path in args.archives:
        if path.endswith(".whl"):
            normalize_wheel(path, args.epoch)
        elif path.endswith(".tar.gz"):
            normalize_sdist(path, args.epoch)
        else:
            sys.exit("%s: neither a wheel (.whl) nor an sdist (.tar.gz)" % path)
        print("normalized %s (%d bytes)" % (os.path.basename(path), os.path.getsize(path)))


if __name__ == "__main__":
    main()
