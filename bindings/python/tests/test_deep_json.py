"""Deep JSON through ``assemble_json_bytes`` (docs/SPEC.md §2.3, the depth bound).

Each case is a text of about 1 or 10 MB, and 100 MB of ``[`` (and 1,000 MB
of each with ``POLYLOOP_LIMITS=full``, make test.limits), built in a
child process (one per case, its peak RSS measured): ``[`` only and
``{"a":`` only (no value ever ends: the syntax error at the end), arrays
opened and closed in ``steps[0]``, and objects under an unknown key. The
answer must be the one every host gives, byte for byte: for the requests,
``assemble_bytes`` of the msgpack the text says (built here, deep: the
core reads deep msgpack at any depth); for the syntax errors, the message
spelled out. The call may add at most 1.5 times the text to the memory the
child held before it (the module's copy of the text and the reader's stack
of at most half a byte per byte), plus a constant.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Dict

import pytest

# The memory a call may add: MEM_PER_BYTE * text + MEM_CONST.
MEM_PER_BYTE = 1.5
MEM_CONST = 64 << 20

CHILD = r"""
import json, os, sys
import msgpack
import polyloop_assembly as pa

name, n = sys.argv[1], int(sys.argv[2])
tmpl = b'"observation_template":"{observation}"'
if name == "[":
    text = b"[" * n
elif name == '{"a":':
    text = b'{"a":' * (n // 5)
elif name == "steps":
    k = (n - 60) // 2
    text = b"{" + tmpl + b',"steps":[' + b"[" * k + b"]" * k + b"]}"
else:  # unknown
    j = (n - 60) // 6
    text = b'{"x":' + b'{"a":' * j + b"0" + b"}" * j + b"," + tmpl + b"}"
pa.assemble_json_bytes(b"{}")  # the instance (and the module's compile, on a cold cache), before the measure
with open("/proc/self/clear_refs", "w") as f:  # the peak (VmHWM) from here: a compile before is not the call's
    f.write("5")
rss0 = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
got = pa.assemble_json_bytes(text)
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) * 1024
size = len(text)
del text
head = msgpack.packb("observation_template") + msgpack.packb("{observation}")
if name == "steps":
    want = pa.assemble_bytes(b"\x82" + head + msgpack.packb("steps") + b"\x91" + b"\x91" * (k - 1) + b"\x90")
elif name == "unknown":
    want = pa.assemble_bytes(b"\x82" + msgpack.packb("x") + b"\x81\xa1a" * j + b"\x00" + head)
else:
    want = None
print(json.dumps({"size": size, "rss0": rss0, "peak": peak, "same": want is None or got == want,
                  "error": msgpack.unpackb(got, raw=False).get("error")}))
"""


def run_child(name: str, n: int) -> Dict[str, Any]:
    p = subprocess.run([sys.executable, "-c", CHILD, name, str(n)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


CASES = [(name, n) for n in (1 << 20, 10 << 20) for name in ("[", '{"a":', "steps", "unknown")] + [("[", 100 << 20)]
if os.environ.get("POLYLOOP_LIMITS") == "full":  # make test.limits
    CASES += [(name, 1000 << 20) for name in ("[", '{"a":', "steps", "unknown")]


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="measures RSS with /proc (Linux)")
@pytest.mark.parametrize("name,n", CASES, ids=["%s-%dMiB" % (name, n >> 20) for name, n in CASES])
def test_deep_json(name: str, n: int) -> None:
    out = run_child(name, n)
    e, size = out["error"], out["size"]
    assert out["same"], "%s: %r, unlike assemble_bytes of the msgpack the text says" % (name, e)
    if name in ("[", '{"a":'):
        message = "invalid JSON at byte %d: unexpected end of input, expected a value; send one JSON object per request"
        assert e == {"code": "malformed_request", "message": message % size, "path": ""}
    else:
        assert e["code"] == {"steps": "malformed_request", "unknown": "unknown_field"}[name], e
        assert e["path"] == {"steps": "steps[0]", "unknown": "x"}[name], e
    added = out["peak"] - out["rss0"]
    print(
        "%-8s %10d B  python  peak RSS %5d MB, the call adding %5d MB (%.2f B/B)"
        % (name, size, out["peak"] >> 20, added >> 20, added / size)
    )
    assert added <= MEM_PER_BYTE * size + MEM_CONST, "%s, %d bytes: the call added %d MB, over %.1f times the text and %d MB" % (
        name,
        size,
        added >> 20,
        MEM_PER_BYTE,
        MEM_CONST >> 20,
    )
