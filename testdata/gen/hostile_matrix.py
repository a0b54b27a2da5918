"""The adversarial matrix of the hostile vectors (issue 44): every entry a
caller's bytes reach the core by (the arguments of cache_report, export and
compare, which the CLI's cache, export and compare subcommands and the data
adapters send; a request of the report, an export's request, options and
body, a usage) crossed with every hostile category (depth, a key twice,
the byte 0xc1, integers at the edges, floats where an int belongs, NaN and
infinity, invalid UTF-8 and lone surrogates, paths without a leading dot,
wrong types, empty and long strings, msgpack cut short at each position,
the str forms, ext and bin).

Each verdict is derived here from the case's construction by the rules of
docs/SPEC.md, never taken from the core: §2.1 (the first problem wins; a
value's problem at the value's path, a key's at the map's path, a key twice
at the key; bytes cut short at the path of the value being read, at the
map's path where a key should start), §2.2 (paths: no leading dot at the top,
`.key` or `["key"]`), §2.3 and §7.13 (a passed-through value nests at most
64 levels, past which it is malformed_request at the value 65 deep; a body
value is one JSON can hold), §7.12 (a usage that cannot be read is that
call's invalid_usage, its error at a path within the usage; a count is an
int from 0 to 2^53 - 1; only a usage that cannot be skipped is the whole
report's error, at that usage), §7.9 (a compare side's error prefixed by
the side).
"""

from __future__ import annotations

import json
import re
from typing import Callable

from reference import Arr, BadStr, Bin, Ext, Float, Int, Map, Raw, Str, pack

REQ = {
    "run_messages": [{"role": "system", "content": [{"type": "text", "text": "Be careful."}]}],
    "steps": [{"raw_output": "a", "observation": "r"}],
    "observation_template": "{observation}",
}
C1 = Raw(b"\xc1")  # the byte no msgpack value starts with
BAD_UTF8 = [b"\xff", b"a\xe2\x82", b"\xc0\xaf", b"\xed\xa0\x80"]  # a stray byte, cut short, overlong, a lone surrogate
LIMIT = 64  # docs/SPEC.md §2.3: a passed-through value nests at most 64 levels

Add = Callable[..., None]


def err(code: str, path: str) -> dict:
    return {"code": code, "path": path}


def seg(key: str) -> str:
    """docs/SPEC.md §2.2: a key after a path, `.key` or `["key"]`."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return "." + key
    return "[" + json.dumps(key, ensure_ascii=False) + "]"


def top(key: str) -> str:
    """A key at the top of a call's arguments: no leading dot (§2.2)."""
    return seg(key).removeprefix(".")


def nest(n: int, leaf: object) -> Raw:
    """n arrays one inside the other around leaf (the innermost value is n deep)."""
    return Raw(b"\x91" * n + pack(leaf))


def deep_path(base: str, n: int) -> str:
    """The path of the value LIMIT + 1 deep in nest(n, …) at base (base's value is at depth 0; n > LIMIT)."""
    assert n > LIMIT
    return base + "[0]" * (LIMIT + 1)


def exp(request: object = REQ, provider: object = "anthropic", options: object = None) -> Map:
    return Map([("request", request), ("provider", provider), ("options", options)])


def body(fields: object, provider: str = "anthropic") -> Map:
    return exp(provider=provider, options={"body": fields})


def rep(requests: object, usage: object = None) -> Map:
    return Map([("requests", requests), ("usage", usage)])


def usage1(u: object) -> Map:
    """A report of one call and its usage."""
    return rep([REQ], [u])


def cmp(a: object = REQ, b: object = REQ) -> Map:
    return Map([("a", a), ("b", b)])


def dup(*pairs: tuple[object, object]) -> Map:
    return Map(list(pairs))


OK_CALL = {"ok": True}


def usage_err(code: str, path: str) -> dict:
    return {"calls": [{"usage_error": err(code, path)}]}


def call_err(code: str, path: str) -> dict:
    return {"calls": [{"error": err(code, path)}]}


def request_with(**fields: object) -> Map:
    """REQ with fields replaced or added (in REQ's order, new ones last)."""
    pairs = dict(REQ)
    pairs.update(fields)
    return Map(list(pairs.items()))


# Places of a request, each a request builder and the path within it: the
# same problem there is the export's error at request.<path>, the report's
# call error at <path>, compare's at a.<path>.
def request_entries(add: Add, name: str, req: object, path: str, skippable: bool = True) -> None:
    """skippable False: req's msgpack cannot be skipped (0xc1 in it), so that the report's requests after it cannot be
    found: the whole report's error, at the value's path within the arguments (§2.1), not that call's."""
    add(f"export request: {name}", "export", exp(request=req), error=err(*_at(path, "request")))
    if skippable:
        add(f"cache_report request: {name}", "cache_report", rep([REQ, req]), calls=[OK_CALL, {"error": err(*_at(path, ""))}])
    else:
        add(f"cache_report request: {name}", "cache_report", rep([REQ, req]), error=err(*_at(path, "requests[1]")))
    add(f"compare side: {name}", "compare", cmp(b=req), error=err(*_at(path, "b")))


def _at(pv: str, prefix: str) -> tuple[str, str]:
    code, path = pv.split(" ", 1)
    if not prefix:
        return code, path
    if not path:
        return code, prefix
    return code, prefix + (path if path.startswith("[") else "." + path)


def depth_cases(add: Add) -> None:
    for n in (29, 30, 63, 64, 65, 100, 8000):
        over = n > LIMIT
        v = {"model": "m", "x": nest(n, "leaf")}
        if over:
            add(f"export body: {n} deep", "export", body(v), error=err("malformed_request", deep_path("options.body.x", n)))
        else:
            add(f"export body: {n} deep", "export", body(v), ok=True)
    for n in (64, 65, 8000):
        u = {"cache_read_input_tokens": 1, "x": nest(n, 1)}
        verdict = usage_err("malformed_request", deep_path("usage.x", n)) if n > LIMIT else {"calls": [OK_CALL]}
        add(f"usage: {n} deep", "cache_report", usage1(u), **verdict)
    # maps in maps: {"a": {"a": …}} n deep
    for n in (64, 65):
        v: object = 1
        for _ in range(n):
            v = {"a": v}
        if n > LIMIT:
            add(
                f"export body: {n} maps deep",
                "export",
                body({"x": v}),
                error=err("malformed_request", "options.body.x" + ".a" * (LIMIT + 1)),
            )
        else:
            add(f"export body: {n} maps deep", "export", body({"x": v}), ok=True)
    # a whole response: the usage under usage, one level down
    resp = {"usage": {"cache_read_input_tokens": 1}, "x": nest(8000, 1)}
    add("usage: a response 8000 deep", "cache_report", usage1(resp), **usage_err("malformed_request", deep_path("usage.x", 8000)))
    resp = {"usage": {"cache_read_input_tokens": 1, "x": nest(70, 1)}}
    add(
        "usage: a response's usage 70 deep",
        "cache_report",
        usage1(resp),
        **usage_err("malformed_request", "usage.usage.x" + "[0]" * LIMIT),
    )
    # a request's array nested where a map belongs: its type, whatever its depth
    for n in (65, 8000):
        request_entries(add, f"steps {n} deep", request_with(steps=nest(n, 1)), "malformed_request steps[0]")


def dup_cases(add: Add) -> None:
    twice = dup(("k", 1), ("k", 2))
    add("export body: a key twice 2 deep", "export", body({"a": {"b": twice}}), error=err("duplicate_key", "options.body.a.b.k"))
    add(
        "export body: a key twice 64 deep",
        "export",
        body({"x": nest(LIMIT - 1, twice)}),
        error=err("duplicate_key", "options.body.x" + "[0]" * (LIMIT - 1) + ".k"),
    )
    add(
        "export body: a key twice in two str forms",
        "export",
        body(dup(("model", "a"), (Str("model", "str32"), "b"))),
        error=err("duplicate_key", "options.body.model"),
    )
    add("export body: an empty key twice", "export", body(dup(("", 1), ("", 2))), error=err("duplicate_key", 'options.body[""]'))
    add(
        "export body: a quoted key twice",
        "export",
        body(dup(('a"b', 1), ('a"b', 2))),
        error=err("duplicate_key", 'options.body["a\\"b"]'),
    )
    add(
        "export options: body twice",
        "export",
        exp(options=dup(("body", {}), ("body", {}))),
        error=err("duplicate_key", "options.body"),
    )
    add("compare: b twice", "compare", dup(("a", REQ), ("b", REQ), ("b", REQ)), error=err("duplicate_key", "b"))
    add(
        "cache_report: requests, usage, requests",
        "cache_report",
        dup(("requests", [REQ]), ("usage", None), ("requests", [])),
        error=err("duplicate_key", "requests"),
    )
    step_twice = dup(("raw_output", "a"), ("observation", "r"), ("observation", "s"))
    request_entries(add, "a step's key twice", request_with(steps=[step_twice]), "duplicate_key steps[0].observation")
    role_twice = dup(("role", "system"), ("role", "user"), ("content", []))
    request_entries(add, "a message's key twice", request_with(run_messages=[role_twice]), "duplicate_key run_messages[0].role")
    chan_twice = dup(("c", [{"entry_id": "e", "content": "x"}]), ("c", []))
    request_entries(add, "a channel twice", request_with(injections=chan_twice), 'duplicate_key injections["c"]')
    usage_dups = [
        (
            "cache_creation",
            {"cache_creation": dup(("ephemeral_5m_input_tokens", 1), ("ephemeral_5m_input_tokens", 2))},
            "usage.cache_creation.ephemeral_5m_input_tokens",
        ),
        ("a response's usage", dup(("usage", {"cache_read_input_tokens": 1}), ("usage", {})), "usage.usage"),
        (
            "in a response's usage",
            {"usage": dup(("cache_read_input_tokens", 1), ("cache_read_input_tokens", 1))},
            "usage.usage.cache_read_input_tokens",
        ),
        (
            "the miss reason's type",
            {
                "usage": {"cache_read_input_tokens": 0},
                "diagnostics": {"cache_miss_reason": dup(("type", "tools_changed"), ("type", "x"))},
            },
            "usage.diagnostics.cache_miss_reason.type",
        ),
        ("a field the report does not read", {"cache_read_input_tokens": 1, "x": [twice]}, "usage.x[0].k"),
        ("twenty keys, then one again", dup(*[(f"k{i}", i) for i in range(20)], ("k3", 0)), "usage.k3"),
        (
            "in two str forms",
            dup((Str("cache_read_input_tokens", "str8"), 1), (Str("cache_read_input_tokens", "str16"), 1)),
            "usage.cache_read_input_tokens",
        ),
    ]
    for name, u, path in usage_dups:
        add(f"usage: a key twice, {name}", "cache_report", usage1(u), **usage_err("duplicate_key", path))


def c1_cases(add: Add) -> None:
    """0xc1 where a value starts: at that value's path; where a key starts: at the map's path (§2.1)."""
    add("export: 0xc1 as the provider", "export", exp(provider=C1), error=err("malformed_request", "provider"))
    add("export: 0xc1 as the options", "export", exp(options=C1), error=err("malformed_request", "options"))
    add("export: 0xc1 as the request", "export", exp(request=C1), error=err("malformed_request", "request"))
    add("export: 0xc1 where a key starts", "export", Map([("request", REQ), (C1, 1)]), error=err("malformed_request", ""))
    add("export: 0xc1 as ttl", "export", exp(options={"ttl": C1}), error=err("malformed_request", "options.ttl"))
    add("export: 0xc1 where an option starts", "export", exp(options=Map([(C1, 1)])), error=err("malformed_request", "options"))
    add("export body: 0xc1 as a value", "export", body({"x": C1}), error=err("malformed_request", "options.body.x"))
    add("export body: 0xc1 in a list", "export", body({"x": [1, C1]}), error=err("malformed_request", "options.body.x[1]"))
    add(
        "export body: 0xc1 where a key starts",
        "export",
        body(Map([("model", "m"), (C1, 1)])),
        error=err("malformed_request", "options.body"),
    )
    request_entries(add, "0xc1 as the steps", request_with(steps=C1), "malformed_request steps", skippable=False)
    request_entries(
        add,
        "0xc1 as a text",
        request_with(steps=[{"raw_output": C1, "observation": "r"}]),
        "malformed_request steps[0].raw_output",
        skippable=False,
    )
    add("compare: 0xc1 as a side", "compare", cmp(a=C1), error=err("malformed_request", "a"))
    add("compare: 0xc1 where a key starts", "compare", Map([("a", REQ), (C1, REQ)]), error=err("malformed_request", ""))
    add("cache_report: 0xc1 as the usage", "cache_report", rep([REQ], C1), error=err("malformed_request", "usage"))
    add("cache_report: 0xc1 as the requests", "cache_report", rep(C1), error=err("malformed_request", "requests"))
    add(
        "cache_report: 0xc1 where a key starts",
        "cache_report",
        Map([("requests", [REQ]), (C1, None)]),
        error=err("malformed_request", ""),
    )
    # a usage that cannot be skipped is the whole report's error, at that usage (§7.12)
    add("cache_report: 0xc1 as a usage", "cache_report", rep([REQ, REQ], [None, C1]), error=err("malformed_request", "usage[1]"))
    add(
        "cache_report: 0xc1 inside a usage",
        "cache_report",
        rep([REQ], [{"cache_read_input_tokens": C1}]),
        error=err("malformed_request", "usage[0]"),
    )


def int_cases(add: Add) -> None:
    """A count of tokens is an int from 0 to 2^53 - 1, any width; else that call's invalid_usage at the count (§7.12)."""
    fine = [(2**53 - 1, None), (5, "uint64"), (5, "int64"), (0, "int8"), (2**32, None)]
    for n, fmt in fine:
        add(
            f"usage: a count of {n} ({fmt or 'shortest'})",
            "cache_report",
            usage1({"cache_read_input_tokens": Int(n, fmt)}),
            calls=[OK_CALL],
        )
    bad = [
        (2**53 + 1, None),
        (2**62, None),
        (2**63 - 1, None),
        (2**63, None),
        (-1, "int64"),
        (-(2**63), None),
        (-(2**53) - 1, None),
    ]
    for n, fmt in bad:
        add(
            f"usage: a count of {n}",
            "cache_report",
            usage1({"cache_read_input_tokens": Int(n, fmt)}),
            **usage_err("malformed_request", "usage.cache_read_input_tokens"),
        )
    counts = [
        ({"cache_creation_input_tokens": 2**53}, "usage.cache_creation_input_tokens"),
        ({"cache_creation": {"ephemeral_1h_input_tokens": -1}}, "usage.cache_creation.ephemeral_1h_input_tokens"),
        ({"prompt_tokens_details": {"cached_tokens": 2**63}}, "usage.prompt_tokens_details.cached_tokens"),
        ({"input_tokens_details": {"cache_write_tokens": 2**64 - 1}}, "usage.input_tokens_details.cache_write_tokens"),
        ({"usageMetadata": {"cachedContentTokenCount": 2**64 - 1}}, "usage.usageMetadata.cachedContentTokenCount"),
        ({"cacheWriteInputTokens": -5}, "usage.cacheWriteInputTokens"),
        ({"prompt_cache_hit_tokens": 2**53 + 1}, "usage.prompt_cache_hit_tokens"),
        ({"usage": {"cache_read_input_tokens": 2**62}}, "usage.usage.cache_read_input_tokens"),
    ]
    for u, path in counts:
        add(
            f"usage: {path.removeprefix('usage.')} out of range",
            "cache_report",
            usage1(u),
            **usage_err("malformed_request", path),
        )
    # options: max_breakpoints 0–4, lookback ≥ 0 (§7.13)
    for v in (5, -1, 2**63, 2**64 - 1):
        add(
            f"export options: max_breakpoints {v}",
            "export",
            exp(options={"max_breakpoints": v}),
            error=err("malformed_request", "options.max_breakpoints"),
        )
    add("export options: max_breakpoints 4 as uint64", "export", exp(options={"max_breakpoints": Int(4, "uint64")}), ok=True)
    add(
        "export options: lookback -1", "export", exp(options={"lookback": -1}), error=err("malformed_request", "options.lookback")
    )
    add("export options: lookback 0", "export", exp(options={"lookback": 0}), ok=True)
    # a request's ints (§2.1): v ≠ 1 is unsupported_version, a budget < 0 invalid_budget
    for v in (2**64 - 1, 2**63, -1):
        request_entries(add, f"v {v}", request_with(v=v), "unsupported_version v")
    request_entries(
        add,
        "v 1 as uint64",
        request_with(v=Int(1, "uint64"), steps=[{"raw_output": "", "observation": 5}]),
        "malformed_request steps[0].observation",
    )
    request_entries(add, "a budget of -1", request_with(max_prompt_chars=-1), "invalid_budget max_prompt_chars")
    request_entries(add, "a budget of -2^63", request_with(max_prompt_chars=-(2**63)), "invalid_budget max_prompt_chars")
    # a body passes every int JSON text can write through
    add(
        "export body: ints at the edges",
        "export",
        body({"model": "m", "a": 2**64 - 1, "b": -(2**63), "c": 2**53 + 1, "d": Int(1, "int64")}, "openai-chat"),
        ok=True,
    )


def float_cases(add: Add) -> None:
    """A float where an int belongs is malformed_request at it; JSON holds no NaN or infinity (§2.1, §7.13)."""
    for f in (Float(5.0), Float(5.0, double=False)):
        add(
            f"usage: a count that is a float ({'64' if f.double else '32'} bits)",
            "cache_report",
            usage1({"cache_read_input_tokens": f}),
            **usage_err("malformed_request", "usage.cache_read_input_tokens"),
        )
    add(
        "usage: a count that is NaN",
        "cache_report",
        usage1({"prompt_tokens_details": {"cached_tokens": Float(float("nan"))}}),
        **usage_err("malformed_request", "usage.prompt_tokens_details.cached_tokens"),
    )
    add(
        "usage: NaN in a field the report does not read",
        "cache_report",
        usage1({"cache_read_input_tokens": 1, "cost": Float(float("nan"))}),
        calls=[OK_CALL],
    )
    add(
        "export options: max_breakpoints 2.0",
        "export",
        exp(options={"max_breakpoints": Float(2.0)}),
        error=err("malformed_request", "options.max_breakpoints"),
    )
    add(
        "export options: lookback 1.5",
        "export",
        exp(options={"lookback": Float(1.5, double=False)}),
        error=err("malformed_request", "options.lookback"),
    )
    request_entries(add, "v 1.0", request_with(v=Float(1.0)), "malformed_request v")
    request_entries(add, "a budget of 10.0", request_with(max_prompt_chars=Float(10.0)), "malformed_request max_prompt_chars")
    for name, f in [
        ("NaN", Float(float("nan"))),
        ("infinity", Float(float("inf"))),
        ("-infinity (32 bits)", Float(float("-inf"), double=False)),
    ]:
        add(
            f"export body: {name}",
            "export",
            body({"model": "m", "temperature": f}),
            error=err("malformed_request", "options.body.temperature"),
        )
    add(
        "export body: NaN in a list",
        "export",
        body({"x": [Float(1.5), Float(float("nan"))]}),
        error=err("malformed_request", "options.body.x[1]"),
    )
    add("export body: finite floats", "export", body({"x": [Float(-0.0), Float(1e308), Float(1.5, double=False)]}), ok=True)


def utf8_cases(add: Add) -> None:
    """Invalid UTF-8 (surrogates included): a key's at the map's path, a value's at the value's (§2, §2.1)."""
    names = ["a stray byte", "cut short", "overlong", "a lone surrogate"]
    for name, b in zip(names, BAD_UTF8):
        add(
            f"export body: a value, {name}", "export", body({"model": BadStr(b)}), error=err("invalid_utf8", "options.body.model")
        )
        add(
            f"export body: a key, {name}",
            "export",
            body(Map([("model", "m"), (BadStr(b), 1)])),
            error=err("invalid_utf8", "options.body"),
        )
        add(f"usage: a key, {name}", "cache_report", usage1(Map([(BadStr(b), 1)])), **usage_err("invalid_utf8", "usage"))
        request_entries(
            add,
            f"a text, {name}",
            request_with(steps=[{"raw_output": BadStr(b), "observation": "r"}]),
            "invalid_utf8 steps[0].raw_output",
        )
    bad = BadStr(b"\xed\xb0\x80")  # a low surrogate alone
    add("export: the provider's name", "export", exp(provider=bad), error=err("invalid_utf8", "provider"))
    add("export: an argument's name", "export", Map([("request", REQ), (bad, 1)]), error=err("invalid_utf8", ""))
    add("export options: an option's name", "export", exp(options=Map([(bad, 1)])), error=err("invalid_utf8", "options"))
    add("export options: ttl", "export", exp(options={"ttl": bad}), error=err("invalid_utf8", "options.ttl"))
    add(
        "export options: prompt_cache_key",
        "export",
        exp(provider="openai-chat", options={"prompt_cache_key": bad}),
        error=err("invalid_utf8", "options.prompt_cache_key"),
    )
    add(
        "export options: cached_content",
        "export",
        exp(provider="gemini", options={"cached_content": bad}),
        error=err("invalid_utf8", "options.cached_content"),
    )
    add("export body: a key 3 deep", "export", body({"a": [Map([(bad, 1)])]}), error=err("invalid_utf8", "options.body.a[0]"))
    add(
        "usage: a key 2 deep",
        "cache_report",
        usage1({"prompt_tokens_details": Map([(bad, 1)])}),
        **usage_err("invalid_utf8", "usage.prompt_tokens_details"),
    )
    resp = {"usage": {"cache_read_input_tokens": 0}, "diagnostics": {"cache_miss_reason": {"type": bad}}}
    add(
        "usage: the miss reason's type",
        "cache_report",
        usage1(resp),
        **usage_err("invalid_utf8", "usage.diagnostics.cache_miss_reason.type"),
    )
    add("compare: a side's name", "compare", Map([("a", REQ), (bad, REQ)]), error=err("invalid_utf8", ""))
    add(
        "cache_report: an argument's name", "cache_report", Map([("requests", [REQ]), (bad, None)]), error=err("invalid_utf8", "")
    )
    request_entries(add, "a channel's name", request_with(injections=Map([(bad, [])])), "invalid_utf8 injections")
    # a lone surrogate as JSON text's escape: the same verdict as its bytes (§2.3)
    text = '{"observation_template": "{observation}", "steps": [{"raw_output": "\\ud800", "observation": "r"}]}'
    request_entries(add, "JSON text with a lone surrogate escape", text, "invalid_utf8 steps[0].raw_output")


def path_cases(add: Add) -> None:
    """Paths: a top-level key has no leading dot, a key not an identifier is quoted (§2.2)."""
    add(
        "cache_report: an unknown argument, not an identifier",
        "cache_report",
        Map([("requests", []), ("a.b", 1)]),
        error=err("unknown_field", top("a.b")),
    )
    add(
        "compare: an unknown argument, not an identifier",
        "compare",
        Map([("a", REQ), ("b", REQ), ("", 1)]),
        error=err("unknown_field", top("")),
    )
    add("compare: b missing", "compare", Map([("a", REQ)]), error=err("missing_field", "b"))
    request_entries(add, "an unknown field", request_with(zzz=1), "unknown_field zzz")
    request_entries(add, "an unknown field, not an identifier", request_with(**{"1x": 1}), 'unknown_field ["1x"]')
    request_entries(add, "the template missing", Map([("steps", [])]), "missing_field observation_template")
    add(
        "export options: an unknown option, not an identifier",
        "export",
        exp(options={"ttl ": "5m"}),
        error=err("unknown_field", 'options["ttl "]'),
    )
    add(
        "usage: a field not an identifier is no error",
        "cache_report",
        usage1({"a b": 1, "cache_read_input_tokens": 2}),
        calls=[OK_CALL],
    )


def type_cases(add: Add) -> None:
    """A value of the wrong msgpack type is malformed_request at the value's path (§2.1, §7.12, §7.13)."""
    mr = "malformed_request"
    export_fields = [
        ("request", exp(request=5), "request"),
        ("request true", exp(request=True), "request"),
        ("provider", exp(provider=5), "provider"),
        ("provider a list", exp(provider=["anthropic"]), "provider"),
        ("options", exp(options=5), "options"),
        ("options a list", exp(options=[]), "options"),
        ("ttl", exp(options={"ttl": 5}), "options.ttl"),
        ("ttl unknown", exp(options={"ttl": "2h"}), "options.ttl"),
        ("max_breakpoints a str", exp(options={"max_breakpoints": "4"}), "options.max_breakpoints"),
        ("lookback a bool", exp(options={"lookback": True}), "options.lookback"),
        ("prompt_cache_key", exp(provider="openai-chat", options={"prompt_cache_key": 5}), "options.prompt_cache_key"),
        (
            "explicit_breakpoints",
            exp(provider="openai-chat", options={"explicit_breakpoints": 1}),
            "options.explicit_breakpoints",
        ),
        ("explicit_breakpoints with anthropic", exp(options={"explicit_breakpoints": True}), "options.explicit_breakpoints"),
        ("cached_content", exp(provider="gemini", options={"cached_content": 5}), "options.cached_content"),
        ("cached_content with anthropic", exp(options={"cached_content": "cachedContents/x"}), "options.cached_content"),
        ("body", exp(options={"body": 5}), "options.body"),
        ("a body field the export writes", body({"messages": []}), "options.body.messages"),
        ("a body field named error", body({"error": 1}, "gemini"), "options.body.error"),
        (
            "a body field cachedContent with cached_content",
            exp(provider="gemini", options={"cached_content": "cachedContents/x", "body": {"cachedContent": "y"}}),
            "options.body.cachedContent",
        ),
        ("a body key that is an int", body(Map([("model", "m"), (1, 2)])), "options.body"),
    ]
    for name, args, path in export_fields:
        add(f"export, wrong type: {name}", "export", args, error=err(mr, path))
    report_fields = [
        ("requests", rep(5), "requests"),
        ("usage", rep([REQ], 5), "usage"),
        ("usage a map", rep([REQ], {"cache_read_input_tokens": 1}), "usage"),
        ("more usages than requests", rep([REQ], [None, None]), "usage"),
    ]
    for name, args, path in report_fields:
        add(f"cache_report, wrong type: {name}", "cache_report", args, error=err(mr, path))
    for name, u in [("a str", "x"), ("an int", 5), ("a bool", True), ("a bin", Bin(b"\x80")), ("an ext", Ext(1, b"x"))]:
        add(f"usage: {name}", "cache_report", rep([REQ, REQ], [u, None]), calls=[{"usage_error": err(mr, "usage")}, OK_CALL])
    resp = {"usage": {"cache_read_input_tokens": 0}, "diagnostics": {"cache_miss_reason": {"type": 5}}}
    add(
        "usage: the miss reason's type an int",
        "cache_report",
        usage1(resp),
        **usage_err(mr, "usage.diagnostics.cache_miss_reason.type"),
    )
    add(
        "usage: a count that is a list",
        "cache_report",
        usage1({"cache_read_input_tokens": [1]}),
        **usage_err(mr, "usage.cache_read_input_tokens"),
    )
    add("usage: nil is none recorded", "cache_report", rep([REQ], [None]), calls=[OK_CALL])
    request_fields = [
        ("steps a str", request_with(steps="x"), "steps"),
        ("a step a list", request_with(steps=[[]]), "steps[0]"),
        ("the template an int", request_with(observation_template=5), "observation_template"),
        ("a role an int", request_with(run_messages=[{"role": 5, "content": []}]), "run_messages[0].role"),
        ("v a str", request_with(v="1"), "v"),
        ("injections a list", request_with(injections=[]), "injections"),
        ("a channel a map", request_with(injections={"c": {}}), 'injections["c"]'),
        ("a text nil", request_with(steps=[{"raw_output": None, "observation": "r"}]), "steps[0].raw_output"),
    ]
    for name, req, path in request_fields:
        request_entries(add, f"wrong type: {name}", req, f"{mr} {path}")
    add("compare: a side that is an int", "compare", cmp(a=5), error=err(mr, "a"))
    add("compare: a side that is a bool", "compare", cmp(b=False), error=err(mr, "b"))


def string_cases(add: Add) -> None:
    """Empty and long strings: empty where a name is needed is refused; otherwise text of any length is text."""
    mr = "malformed_request"
    add("export: an empty provider", "export", exp(provider=""), error=err(mr, "provider"))
    add("export options: an empty ttl", "export", exp(options={"ttl": ""}), error=err(mr, "options.ttl"))
    add("export body: an empty key and value", "export", body({"": ""}), ok=True)
    add("export body: a value of 70,000 characters (str32)", "export", body({"model": "m", "x": "é" + "x" * 69_999}), ok=True)
    long_key = "k" * 300
    add(
        "export body: a key of 300 characters twice",
        "export",
        body(dup((long_key, 1), (Str(long_key, "str32"), 2))),
        error=err("duplicate_key", "options.body." + long_key),
    )
    add("cache_report: no requests", "cache_report", rep([], []), calls=[])
    add("compare: an empty str side", "compare", cmp(a=""), error=err(mr, "a"))
    add("compare: an empty bin side", "compare", cmp(b=Bin(b"")), error=err(mr, "b"))
    request_entries(
        add,
        "an empty entry_id",
        request_with(injections={"c": [{"entry_id": "", "content": "x"}]}),
        'invalid_entry_id injections["c"][0].entry_id',
    )
    request_entries(
        add,
        "an empty channel name is a name",
        request_with(injections={"": [{"entry_id": "e", "content": "x"}]}, steps=[{"raw_output": "a", "observation": 5}]),
        "malformed_request steps[0].observation",
    )
    big = "x" * 70_000
    add(
        "cache_report: a text of 70,000 characters",
        "cache_report",
        rep([request_with(steps=[{"raw_output": big, "observation": "r"}])]),
        calls=[OK_CALL],
    )
    deep = '{"observation_template": "{observation}", "steps": ' + "[" * 8000 + "]" * 8000 + "}"
    request_entries(add, "JSON text 8000 deep", deep, "malformed_request steps[0]")


def cut_cases(add: Add) -> None:
    """Msgpack cut short at each position: at the path of the value being read, at the map's path where a key
    should start or inside a key (§2.1). The arguments are written as segments, each with the path a cut at its
    start or inside it gets; the request comes first, whole, so that every cut falls in the parts built here."""
    segments = [
        (b"\x83", ""),
        (pack("request"), ""),
        (pack(REQ), None),  # not cut here
        (pack("provider"), ""),
        (pack("anthropic"), "provider"),
        (pack("options"), ""),
        (b"\x83", "options"),
        (pack("ttl"), "options"),
        (pack(Str("5m", "str16")), "options.ttl"),
        (pack("max_breakpoints"), "options"),
        (pack(Int(3, "uint32")), "options.max_breakpoints"),
        (pack("body"), "options"),
        (b"\x82", "options.body"),
        (pack("model"), "options.body"),
        (pack("m"), "options.body.model"),
        (pack("x"), "options.body"),
        (b"\x92", "options.body.x"),
        (pack(Float(1.5)), "options.body.x[0]"),
        (pack({"k": "v"}), "options.body.x[1]"),
    ]
    whole = b"".join(s for s, _ in segments)
    add("export: the whole of the cut arguments", "export", Raw(whole), ok=True)
    pos = 0
    for i, (s, path) in enumerate(segments):
        starts = [pos] if path is not None else []
        if path is not None and len(s) > 1:
            starts.append(pos + len(s) - 1)  # inside it: its last byte missing
        # inside a map value written as one segment: a cut after its key is at the key's value
        if s == pack({"k": "v"}):
            starts, path_at = [pos + j for j in range(5)], [path, path, path, path + ".k", path + ".k"]
        else:
            path_at = [path] * len(starts)
        for at, p in zip(starts, path_at):
            add(f"export cut at byte {at} of {len(whole)}", "export", Raw(whole[:at]), error=err("malformed_request", p))
        pos += len(s)
    # a report: a cut inside a request or a usage that cannot be skipped is the arguments' error at it
    args = pack(rep([REQ, REQ], [{"cache_read_input_tokens": 1}, None]))
    req_at = args.index(pack(REQ))
    usage_at = args.index(pack({"cache_read_input_tokens": 1}))
    for at, path in [
        (req_at + 5, "requests[0]"),
        (req_at + len(pack(REQ)) + 9, "requests[1]"),
        (usage_at + 3, "usage[0]"),
        (usage_at + len(pack({"cache_read_input_tokens": 1})) - 1, "usage[0]"),
    ]:
        add(f"cache_report cut at byte {at} of {len(args)}", "cache_report", Raw(args[:at]), error=err("malformed_request", path))
    add("cache_report cut before the usage", "cache_report", Raw(args[: usage_at - 1]), error=err("malformed_request", "usage"))


def form_cases(add: Add) -> None:
    """Any valid encoding is accepted: str8/16/32 keys and values, any int width, map16/32 and array16/32 (§2)."""
    args = Map(
        [
            (Str("request", "str32"), REQ),
            (Str("provider", "str8"), Str("anthropic", "str16")),
            (Str("options", "str16"), Map([("ttl", Str("1h", "str32"))], fmt="map32")),
        ],
        fmt="map16",
    )
    add("export: every key and str in a long form", "export", args, ok=True)
    add("export body: a list as array32", "export", body({"x": Arr([1, 2], fmt="array32")}), ok=True)
    u = Map([(Str("cache_read_input_tokens", "str32"), Int(7, "uint16"))], fmt="map32")
    add(
        "usage: a map32 of a str32 key and a uint16",
        "cache_report",
        rep(Arr([REQ], fmt="array16"), Arr([u], fmt="array32")),
        calls=[OK_CALL],
    )
    add(
        "cache_report: arguments as map32",
        "cache_report",
        Map([("requests", [REQ]), ("usage", None)], fmt="map32"),
        calls=[OK_CALL],
    )
    add("compare: sides under str16 keys", "compare", Map([(Str("a", "str16"), REQ), (Str("b", "str8"), REQ)]), ok=True)


def ext_bin_cases(add: Add) -> None:
    """ext where a str or int belongs is malformed_request at it; bin is no str (§2): msgpack bytes only where a
    request or a side is (§7.9, §7.12)."""
    mr = "malformed_request"
    exts = [
        ("fixext1", Ext(1, b"x")),
        ("fixext16", Ext(5, b"x" * 16)),
        ("ext8", Ext(-1, b"abc")),
        ("ext32", Ext(7, b"y" * 70_000)),
    ]
    for name, e in exts:
        if name != "ext32":  # one long ext is enough
            add(f"export: the provider an {name}", "export", exp(provider=e), error=err(mr, "provider"))
        add(f"export body: an {name}", "export", body({"model": "m", "x": e}), error=err(mr, "options.body.x"))
    add(
        "usage: a count that is an ext",
        "cache_report",
        usage1({"cache_read_input_tokens": Ext(1, b"\x05")}),
        **usage_err(mr, "usage.cache_read_input_tokens"),
    )
    add(
        "usage: a count beyond 64 bits (ext 3)",
        "cache_report",
        usage1({"cache_read_input_tokens": Ext(3, b"18446744073709551616")}),
        **usage_err(mr, "usage.cache_read_input_tokens"),
    )
    add(
        "usage: an ext in a field the report does not read",
        "cache_report",
        usage1({"cache_read_input_tokens": 1, "x": Ext(9, b"z")}),
        calls=[OK_CALL],
    )
    request_entries(
        add,
        "a text that is an ext",
        request_with(steps=[{"raw_output": Ext(1, b"a"), "observation": "r"}]),
        f"{mr} steps[0].raw_output",
    )
    request_entries(
        add,
        "a text that is a bin",
        request_with(steps=[{"raw_output": Bin(b"a"), "observation": "r"}]),
        f"{mr} steps[0].raw_output",
    )
    add("export: the provider a bin", "export", exp(provider=Bin(b"anthropic")), error=err(mr, "provider"))
    add("export options: ttl a bin", "export", exp(options={"ttl": Bin(b"5m")}), error=err(mr, "options.ttl"))
    add(
        "export options: prompt_cache_key a bin",
        "export",
        exp(provider="openai-responses", options={"prompt_cache_key": Bin(b"k")}),
        error=err(mr, "options.prompt_cache_key"),
    )
    add("export body: a bin value", "export", body({"x": Bin(b"\x00")}), error=err(mr, "options.body.x"))
    add("export body: a bin key", "export", body(Map([(Bin(b"model"), "m")])), error=err(mr, "options.body"))
    add("export: an argument's name a bin", "export", Map([(Bin(b"request"), REQ)]), error=err(mr, ""))
    add(
        "usage: a key that is a bin",
        "cache_report",
        usage1(Map([(Bin(b"cache_read_input_tokens"), 1)])),
        **usage_err(mr, "usage"),
    )
    add(
        "usage: a key 2 deep that is a bin",
        "cache_report",
        usage1({"prompt_tokens_details": Map([(Bin(b"cached_tokens"), 1)])}),
        **usage_err(mr, "usage.prompt_tokens_details"),
    )
    resp = {"usage": {"cache_read_input_tokens": 0}, "diagnostics": {"cache_miss_reason": {"type": Bin(b"tools_changed")}}}
    add(
        "usage: the miss reason's type a bin",
        "cache_report",
        usage1(resp),
        **usage_err(mr, "usage.diagnostics.cache_miss_reason.type"),
    )
    add("cache_report: a request's msgpack in a bin", "cache_report", rep([Bin(pack(REQ))]), calls=[OK_CALL])
    add("export: a request's msgpack in a bin", "export", exp(request=Bin(pack(REQ))), ok=True)
    add("compare: a side's msgpack in a bin", "compare", cmp(a=Bin(pack(REQ))), ok=True)
    add("compare: a side's bin with bytes after its value", "compare", cmp(a=Bin(pack(REQ) + b"\x01")), error=err(mr, "a"))


def bytes_cases(add: Add) -> None:
    """One reading of bytes (issue 44): a bin holds msgpack when it starts with a map, array or str header, else
    JSON text, judged as the command-line tool judges a file (§7.9); the same in every entry a request goes by."""
    text = json.dumps(REQ).encode()
    for name, b in [("JSON text", text), ("JSON text after white space", b"\n\t " + text)]:
        add(f"export: a request's {name} in a bin", "export", exp(request=Bin(b)), ok=True)
        add(f"cache_report: a request's {name} in a bin", "cache_report", rep([Bin(b)]), calls=[OK_CALL])
        add(f"compare: a side's {name} in a bin", "compare", cmp(b=Bin(b)), ok=True)
    bad = b'{"observation_template": "{observation}", "steps": [{"raw_output": 1, "observation": "r"}]}'
    request_entries(add, "JSON text in a bin, a wrong type", Bin(bad), "malformed_request steps[0].raw_output")
    request_entries(
        add,
        "JSON text in a bin, a key twice",
        Bin(b'{"observation_template": "{observation}", "observation_template": "{observation}"}'),
        "duplicate_key observation_template",
    )
    request_entries(add, "JSON text in a bin, cut short", Bin(text[:-1]), "malformed_request ")
    request_entries(add, "msgpack in a bin, cut short", Bin(pack(REQ)[:-1]), "malformed_request ")


def matrix(add: Add) -> None:
    for part in (
        depth_cases,
        dup_cases,
        c1_cases,
        int_cases,
        float_cases,
        utf8_cases,
        path_cases,
        type_cases,
        string_cases,
        cut_cases,
        form_cases,
        ext_bin_cases,
        bytes_cases,
    ):
        part(add)
