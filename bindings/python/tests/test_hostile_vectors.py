"""The hostile vectors (testdata/hostile-vectors/hostile.json, written by
testdata/gen/gen_hostile_vectors.py, their verdicts by hand from the spec):
arguments no typed API can make (a key twice, the byte 0xc1, counts past
2^53), sent as they are to the module Python runs; each gets its verdict,
code and path, as on every other host (host-test, Node)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, Dict, Optional

import msgpack

from polyloop_assembly import _consts, _runtime

CASES = json.loads((Path(__file__).resolve().parents[3] / "testdata" / "hostile-vectors" / "hostile.json").read_text("utf-8"))[
    "cases"
]


def _pick(e: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    return {"code": e["code"], "path": e["path"]} if e else None


def test_every_hostile_vector() -> None:
    assert len(CASES) >= 141  # issue 44: the adversarial matrix holds 141 cases at least
    inst = _runtime.get_runtime().new_instance()
    for c in CASES:
        args = base64.b64decode(c["args"])
        if c["call"] == "export":
            ans = msgpack.unpackb(inst.call(args, _consts.CALL_EXPORT), strict_map_key=False)
        else:
            ans = json.loads(
                inst.call(args, {"cache_report": _consts.CALL_CACHE_REPORT, "compare": _consts.CALL_COMPARE}[c["call"]])
            )
        if "error" in c:
            assert _pick(ans.get("error")) == c["error"], c["name"]
            continue
        if c.get("ok"):
            assert "error" not in ans, (c["name"], ans.get("error"))
            continue
        assert "error" not in ans and len(ans["calls"]) == len(c["calls"]), c["name"]
        for i, (want, got) in enumerate(zip(c["calls"], ans["calls"])):
            usage_error = (got.get("usage") or {}).get("error")
            if want.get("ok"):
                assert "error" not in got and usage_error is None, (c["name"], i)
            if "error" in want:
                assert _pick(got.get("error")) == want["error"], (c["name"], i)
            if "usage_error" in want:
                assert _pick(usage_error) == want["usage_error"], (c["name"], i)


def test_counts_past_2_53_are_that_call_s_invalid_usage_never_clamped() -> None:
    """Through the typed API: a count Python holds exactly but the report does not (over 2^53 - 1, over
    2^62, over 2^64) is that call's invalid_usage at its path; the other call is read."""
    import polyloop_assembly as pa

    req = {"observation_template": "{observation}", "steps": [{"raw_output": "a", "observation": "b"}]}
    for n in (2**53, 2**62 + 1, 2**64 - 1, 2**64):
        report = pa.cache_report([req, req], [{"cache_read_input_tokens": n}, {"cache_read_input_tokens": 3}])
        first, second = report["calls"]
        assert first["usage"]["class"] == "invalid_usage", n
        assert _pick(first["usage"]["error"]) == {"code": "malformed_request", "path": "usage.cache_read_input_tokens"}, n
        assert second["usage"]["cached_tokens"] == 3
    body = pa.export(req, "openai-chat", body={"model": "m", "seed": 2**64 - 1, "n": 2**62 + 1})
    assert (body["seed"], body["n"]) == (2**64 - 1, 2**62 + 1)  # passed through exactly
