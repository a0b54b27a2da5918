"""Write testdata/hostile-vectors/hostile.json: hostile arguments of the
module's calls (docs/SPEC.md §7.12 cache_report, §7.13 export) that no
typed API can make (a key twice in a map, a byte no msgpack value starts
with, counts past what a host holds), with the verdict every host gives.

Run with CPython 3.12 (`make vectors`); deterministic. The verdicts are
written here by hand from the spec, not taken from the core: a key twice is
duplicate_key at that key (§2.2: a top-level path has no leading dot); a
usage that cannot be read is that call's invalid_usage, never the report's
error; a request element that cannot even be skipped ends the list, an
error of the arguments at its index. Each case: its name, the call, the
call's arguments (msgpack, base64), and the verdict: `error` ({code, path}
of the whole answer), `ok` (an answer that is no error) or `calls` (per
call of a report: `ok`, `error` or `usage_error`, each {code, path}). The
adversarial matrix of issue 44 is hostile_matrix.py's.
"""

from __future__ import annotations

import base64
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hostile_matrix import matrix  # noqa: E402
from reference import Raw, pack  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hostile-vectors", "hostile.json")

REQ = {
    "run_messages": [{"role": "system", "content": [{"type": "text", "text": "Be careful."}]}],
    "steps": [{"raw_output": "a", "observation": "r"}],
    "observation_template": "{observation}",
}


def dup_map(*pairs: tuple[str, object]) -> Raw:
    """A map of these pairs as they are, a key twice included (a dict cannot hold one)."""
    assert len(pairs) < 16
    return Raw(bytes([0x80 | len(pairs)]) + b"".join(pack(k) + pack(v) for k, v in pairs))


def export_args(request: object = REQ, provider: object = "anthropic", options: object = None) -> object:
    return {"request": request, "provider": provider, "options": options}


def report_args(requests: object, usage: object = None) -> object:
    return {"requests": requests, "usage": usage}


def err(code: str, path: str) -> dict:
    return {"code": code, "path": path}


OK = {"ok": True}


def cases() -> list[dict]:
    out: list[dict] = []

    def add(name: str, call: str, args: object, **verdict: object) -> None:
        out.append({"name": name, "call": call, "args": base64.b64encode(pack(args)).decode(), **verdict})

    # A key twice: duplicate_key at the key, wherever the map is.
    add(
        "export: provider twice",
        "export",
        dup_map(("request", REQ), ("provider", "anthropic"), ("provider", "gemini")),
        error=err("duplicate_key", "provider"),
    )
    add(
        "export: request twice",
        "export",
        dup_map(("request", REQ), ("request", REQ), ("provider", "anthropic")),
        error=err("duplicate_key", "request"),
    )
    add(
        "export: options twice",
        "export",
        dup_map(("request", REQ), ("provider", "anthropic"), ("options", None), ("options", None)),
        error=err("duplicate_key", "options"),
    )
    add(
        "export: an unknown argument",
        "export",
        dup_map(("request", REQ), ("provider", "anthropic"), ("zzz", 1)),
        error=err("unknown_field", "zzz"),
    )
    add(
        "export: an unknown argument, not an identifier",
        "export",
        dup_map(("request", REQ), ("provider", "anthropic"), ("a b", 1)),
        error=err("unknown_field", '["a b"]'),
    )
    add(
        "export: ttl twice",
        "export",
        export_args(options=dup_map(("ttl", "5m"), ("ttl", "1h"))),
        error=err("duplicate_key", "options.ttl"),
    )
    add(
        "export: body key twice",
        "export",
        export_args(options={"body": dup_map(("model", "a"), ("model", "b"))}),
        error=err("duplicate_key", "options.body.model"),
    )
    add(
        "export: body key twice, nested",
        "export",
        export_args(options={"body": {"model": "a", "x": [dup_map(("k", 1), ("k", 2))]}}),
        error=err("duplicate_key", "options.body.x[0].k"),
    )
    add(
        "export: body key twice, nested, not an identifier",
        "export",
        export_args(provider="openai-chat", options={"body": {"model": "a", "x": dup_map(("a b", 1), ("a b", 1))}}),
        error=err("duplicate_key", 'options.body.x["a b"]'),
    )
    add(
        "export: body, ten keys then one twice (the set)",
        "export",
        export_args(options={"body": dup_map(*[(f"k{i}", i) for i in range(10)], ("k3", 0))}),
        error=err("duplicate_key", "options.body.k3"),
    )
    add(
        "export: request key twice",
        "export",
        export_args(request=dup_map(*REQ.items(), ("observation_template", "{observation}"))),
        error=err("duplicate_key", "request.observation_template"),
    )
    add(
        "cache_report: requests twice",
        "cache_report",
        dup_map(("requests", [REQ]), ("requests", [REQ])),
        error=err("duplicate_key", "requests"),
    )
    add(
        "cache_report: usage twice",
        "cache_report",
        dup_map(("requests", [REQ]), ("usage", None), ("usage", None)),
        error=err("duplicate_key", "usage"),
    )
    add(
        "cache_report: an unknown argument",
        "cache_report",
        dup_map(("requests", [REQ]), ("zzz", None)),
        error=err("unknown_field", "zzz"),
    )
    add(
        "cache_report: a request's key twice",
        "cache_report",
        report_args([REQ, dup_map(*REQ.items(), ("steps", []))]),
        calls=[OK, {"error": err("duplicate_key", "steps")}],
    )
    add(
        "cache_report: a usage key twice",
        "cache_report",
        report_args([REQ, REQ], [dup_map(("cache_read_input_tokens", 5), ("cache_read_input_tokens", 7)), None]),
        calls=[{"usage_error": err("duplicate_key", "usage.cache_read_input_tokens")}, OK],
    )
    add(
        "cache_report: a usage key twice, nested",
        "cache_report",
        report_args([REQ], [{"prompt_tokens_details": dup_map(("cached_tokens", 1), ("cached_tokens", 2))}]),
        calls=[{"usage_error": err("duplicate_key", "usage.prompt_tokens_details.cached_tokens")}],
    )
    # Counts no host holds exactly: that call's invalid_usage, never clamped.
    for n in (2**53, 2**62 + 1, 2**64 - 1):
        add(
            f"cache_report: a usage count of {n}",
            "cache_report",
            report_args([REQ, REQ], [{"cache_read_input_tokens": n}, {"cache_read_input_tokens": 1}]),
            calls=[{"usage_error": err("malformed_request", "usage.cache_read_input_tokens")}, OK],
        )
    add(
        "cache_report: a usage count of 2^53 - 1",
        "cache_report",
        report_args([REQ], [{"cache_read_input_tokens": 2**53 - 1}]),
        calls=[OK],
    )
    add(
        "cache_report: a usage key that is an int",
        "cache_report",
        report_args([REQ, REQ], [Raw(b"\x81\x01\x02"), None]),
        calls=[{"usage_error": err("malformed_request", "usage")}, OK],
    )
    # An element no msgpack value starts with cannot be skipped: the list ends there.
    add(
        "cache_report: the byte 0xc1 first",
        "cache_report",
        {"requests": Raw(b"\x92\xc1" + pack(REQ))},
        error=err("malformed_request", "requests[0]"),
    )
    add(
        "cache_report: the byte 0xc1 second",
        "cache_report",
        {"requests": Raw(b"\x93" + pack(REQ) + b"\xc1" + pack(REQ))},
        error=err("malformed_request", "requests[1]"),
    )
    add(
        "cache_report: one request where the list belongs",
        "cache_report",
        {"requests": REQ},
        error=err("malformed_request", "requests"),
    )
    # More verdicts of the arguments: each at the argument's own path, no leading dot.
    add("compare: a twice", "compare", dup_map(("a", REQ), ("a", REQ), ("b", REQ)), error=err("duplicate_key", "a"))
    add("compare: an unknown argument", "compare", dup_map(("a", REQ), ("b", REQ), ("zzz", 1)), error=err("unknown_field", "zzz"))
    add("export: an unknown provider", "export", export_args(provider="bedrock"), error=err("malformed_request", "provider"))
    add("export: the request missing", "export", {"provider": "anthropic"}, error=err("missing_field", "request"))
    add("export: the provider missing", "export", {"request": REQ}, error=err("missing_field", "provider"))
    add(
        "export: a body that is no map",
        "export",
        export_args(options={"body": [1]}),
        error=err("malformed_request", "options.body"),
    )
    add("export: an unknown option", "export", export_args(options={"zzz": 1}), error=err("unknown_field", "options.zzz"))
    add("cache_report: requests that are no list", "cache_report", {"requests": "x"}, error=err("malformed_request", "requests"))
    add(
        "cache_report: fewer usages than requests",
        "cache_report",
        report_args([REQ, REQ], [None]),
        error=err("malformed_request", "usage"),
    )
    add(
        "cache_report: a negative count",
        "cache_report",
        report_args([REQ], [{"cache_read_input_tokens": -1}]),
        calls=[{"usage_error": err("malformed_request", "usage.cache_read_input_tokens")}],
    )
    add(
        "cache_report: a count that is a str",
        "cache_report",
        report_args([REQ], [{"cache_read_input_tokens": "5"}]),
        calls=[{"usage_error": err("malformed_request", "usage.cache_read_input_tokens")}],
    )
    add(
        "cache_report: a usage that is a list",
        "cache_report",
        report_args([REQ, REQ], [[1], None]),
        calls=[{"usage_error": err("malformed_request", "usage")}, OK],
    )
    matrix(add)
    names = [c["name"] for c in out]
    assert len(names) == len(set(names)), "case names are unique"
    return out


def main() -> None:
    data = {"comment": "written by testdata/gen/gen_hostile_vectors.py; see testdata/hostile-vectors/README.md", "cases": cases()}
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
