#!/usr/bin/env python3.12
"""CPython 3.12 oracle for the Go observation-template engine (core/template.go).

Modes (stdlib only; run with python3.12, whose Unicode 15.0 matches Go's):

``--mode cases --seed N --count M`` (default)
    A seeded generator of (template, observation) pairs: valid and invalid
    templates covering every conversion and format-spec feature, fills
    (non-ASCII and astral), Nd digits of many scripts, huge and overflowing
    numbers, brace soup; observations with quotes, backslashes, control
    characters, DEL, C1 controls, unassigned, private-use and format
    characters, combining marks and astral characters. Each pair is evaluated
    with CPython, ``t.format(observation=obs)``, and written as one JSON line:

    ``template``, ``observation``, ``ok`` (bool), ``output`` (when ok),
    ``output_omitted`` / ``output_len`` (ok, but the output is too large to
    ship: a width above 1,048,576 that Go must refuse), ``reduced_width``
    (the width was above 5,000,000 and CPython ran with it reduced to 1 so as
    not to allocate it), ``error_type`` / ``error`` (when CPython raised), and
    ``gaps``: the GAP classes present in the template, computed here from
    ``string.Formatter().parse`` (= ``_string.formatter_parser``) and the
    spec text: ``attribute``, ``index``, ``nested``, ``width``, ``nofield``.

``--mode printable``
    One line: for every code point 0..0x10FFFF, ``1`` if
    ``chr(c).isprintable()`` else ``0``.

``--mode decimal``
    One JSON line: ``[[code point, unicodedata.decimal], ...]`` for every code
    point that has a decimal value.

``--mode reprblocks``
    One JSON line per block of 64 consecutive code points (surrogates
    skipped), ``{"s", "r": repr(s), "a": ascii(s)}``, plus blocks mixing
    quotes and backslashes.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import unicodedata

import _string

from reference import spec_width, template_error_offset  # the one width parser and the offset rules of testdata/gen

MAX_WIDTH = 1 << 20  # widths above this are a GAP of the Go engine
REAL_WIDTH_LIMIT = 5_000_000  # CPython really allocates widths up to this
PY_SSIZE_T_MAX = (1 << 63) - 1

# --------------------------------------------------------------------------
# GAP classes, computed independently of the Go code.


def parse_fields(t: str):
    """The (literal, name, spec, conversion) tuples of t, and the ValueError
    that stopped the parse (or None)."""
    out = []
    try:
        for item in _string.formatter_parser(t):
            out.append(item)
    except ValueError as e:
        return out, e
    return out, None


def gap_classes(t: str) -> list[str]:
    items, err = parse_fields(t)
    classes = set()
    nfields = 0
    for _lit, name, spec, _conv in items:
        if name is None:
            continue
        nfields += 1
        try:
            _first, rest = _string.formatter_field_name_split(name)
            for is_attr, _key in rest:
                classes.add("attribute" if is_attr else "index")
        except ValueError:
            pass
        if "{" in spec or "}" in spec:
            classes.add("nested")
        else:
            w = spec_width(spec)
            if w is not None and MAX_WIDTH < w[0] <= PY_SSIZE_T_MAX:
                classes.add("width")
    if err is None and nfields == 0:
        classes.add("nofield")
    return sorted(classes)


# --------------------------------------------------------------------------
# Evaluation with CPython, keeping allocations bounded.


def max_width(items) -> int:
    """The largest width CPython would allocate for (overflows excluded)."""
    m = -1
    for _lit, name, spec, _conv in items:
        if name is None or not spec or "{" in spec:
            continue
        w = spec_width(spec)
        if w is not None and w[0] <= PY_SSIZE_T_MAX:  # an overflow raises, never allocates
            m = max(m, w[0])
    return m


def escape_literal(s: str) -> str:
    return s.replace("{", "{{").replace("}", "}}")


def rebuild_reduced(items) -> str:
    """An equivalent template with every width above REAL_WIDTH_LIMIT made 1."""
    parts = []
    for lit, name, spec, conv in items:
        parts.append(escape_literal(lit))
        if name is None:
            continue
        if spec and "{" not in spec:
            w = spec_width(spec)
            if w is not None and REAL_WIDTH_LIMIT < w[0] <= PY_SSIZE_T_MAX:
                spec = spec[: w[1]] + "1" + spec[w[2] :]
        parts.append("{" + name)
        if conv is not None:
            parts.append("!" + conv)
        parts.append(":" + spec + "}")
    return "".join(parts)


def long_digit_run(s: str, k: int = 7) -> bool:
    run = 0
    for ch in s:
        if unicodedata.decimal(ch, None) is not None:
            run += 1
            if run >= k:
                return True
        else:
            run = 0
    return False


def evaluate(t: str, obs: str) -> dict:
    rec = {"template": t, "observation": obs, "gaps": gap_classes(t), "offset": template_error_offset(t)}
    items, perr = parse_fields(t)
    target = t
    if "nested" in rec["gaps"] and (long_digit_run(t) or long_digit_run(obs)):
        # A nested spec could expand to a huge width; CPython's answer is not
        # needed (Go refuses nested specs), so do not risk the allocation.
        rec["skipped"] = "nested spec with a long digit run"
        return rec
    mw = max_width(items)
    if mw > REAL_WIDTH_LIMIT:
        if perr is not None:
            rec.update(ok=False, error_type=type(perr).__name__, error=str(perr))
            return rec
        target = rebuild_reduced(items)
        rec["reduced_width"] = True
    try:
        out = target.format(observation=obs)
    except Exception as e:  # noqa: BLE001 - every CPython error is a rejection
        rec.update(ok=False, error_type=type(e).__name__, error=str(e))
        return rec
    rec["ok"] = True
    if mw > MAX_WIDTH:
        rec["output_omitted"] = True
        rec["output_len"] = len(out)
    else:
        rec["output"] = out
    return rec


# --------------------------------------------------------------------------
# Generators.

ND_ZEROS = [c for c in range(0x110000) if unicodedata.category(chr(c)) == "Nd" and unicodedata.decimal(chr(c)) == 0]

OBS_ATOMS = [
    "a",
    "Z",
    "0",
    "9",
    " ",
    "  ",
    "'",
    '"',
    "\\",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\x00",
    "\x01",
    "\x07",
    "\x1b",
    "\x1f",
    "\x7f",
    "\x80",
    "\x85",
    "\x9f",
    "\xa0",
    "\xad",
    "é",
    "ß",
    "ÿ",
    "Ā",
    "\u0300",
    "e\u0301",
    "\u0378",
    "\u05d0",
    "\u061c",
    "\u0660",
    "\u0967",
    "\u200b",
    "\u200d",
    "\u200e",
    "\u2028",
    "\u2029",
    "\u202e",
    "\u2066",
    "\u3000",
    "中文",
    "日本語",
    "\ufeff",
    "\ufffd",
    "\ufffe",
    "\uffff",
    "\ue000",
    "\uf8ff",
    "\U000f0000",
    "\U0010fffd",
    "\U0010ffff",
    "\U0001f600",
    "\U0001f468\u200d\U0001f469",
    "\U0001d7ce",
    "\U000e0001",
    "\U000e007f",
    "\U0001f1fa\U0001f1f8",
    "\U00010000",
    "\U0002a6d6",
    "\U0003134b",
    "\U0003fffe",
    "{",
    "}",
    "{observation}",
    "%s",
    "Output:",
    "```",
    "\u00bd",
    "\u2160",
    "\u0e51",
    "\U0001fbf9",
    "\u2800",
]

FILL_POOL = [
    " ",
    "*",
    "0",
    "-",
    "_",
    ".",
    "=",
    "<",
    ">",
    "^",
    ":",
    "!",
    "[",
    "]",
    "#",
    "+",
    "z",
    ",",
    "'",
    '"',
    "\\",
    "\x00",
    "\t",
    "\n",
    "\x7f",
    "\x85",
    "é",
    "中",
    "\u0300",
    "\u200b",
    "\ufeff",
    "\U0001f600",
    "\U0010ffff",
    "\ue000",
    "\u0660",
    "\u0967",
    "\U0001d7d8",
    "s",
    "a",
    "r",
]


def rand_char(r: random.Random) -> str:
    while True:
        c = r.choice(
            [
                r.randrange(0x20, 0x7F),
                r.randrange(0, 0x100),
                r.randrange(0, 0x3000),
                r.randrange(0, 0x10000),
                r.randrange(0, 0x110000),
            ]
        )
        if not 0xD800 <= c <= 0xDFFF:
            return chr(c)


def gen_obs(r: random.Random) -> str:
    roll = r.random()
    if roll < 0.05:
        return ""
    if roll < 0.80:
        n = r.randrange(1, 12)
    elif roll < 0.97:
        n = r.randrange(10, 120)
    else:
        n = r.randrange(100, 3000)
    parts = []
    for _ in range(n):
        if r.random() < 0.7:
            parts.append(r.choice(OBS_ATOMS))
        else:
            parts.append(rand_char(r))
    return "".join(parts)


def nd_digits(r: random.Random, value: int, mixed: bool) -> str:
    zero = r.choice(ND_ZEROS)
    out = []
    for ch in str(value):
        if mixed:
            zero = r.choice(ND_ZEROS)
        out.append(chr(zero + int(ch)))
    return "".join(out)


def gen_number(r: random.Random, kind: str) -> str:
    roll = r.random()
    if roll < 0.55:
        v = r.randrange(0, 30)
    elif roll < 0.75:
        v = r.randrange(0, 400)
    elif roll < 0.80:
        v = r.choice([0, 1, 2, 10, 100])
    elif roll < 0.8005 and kind == "width":
        v = r.choice([MAX_WIDTH - 1, MAX_WIDTH])  # accepted by both, big output
    elif roll < 0.8015 and kind == "width":
        v = r.randrange(MAX_WIDTH + 1, REAL_WIDTH_LIMIT)  # GAP, CPython allocates
    elif roll < 0.86:
        v = r.choice([MAX_WIDTH + 1, 10**7, 10**9, 10**12, 10**18, PY_SSIZE_T_MAX, r.randrange(10**8, 10**18)])
    elif roll < 0.90:
        v = r.choice([PY_SSIZE_T_MAX + 1, 10**19, 10**30, PY_SSIZE_T_MAX * 10 + 7])  # overflow
    else:
        v = r.randrange(0, 60)
    style = r.random()
    if style < 0.75:
        s = str(v)
    elif style < 0.9:
        s = nd_digits(r, v, mixed=False)
    else:
        s = nd_digits(r, v, mixed=True)
    if r.random() < 0.05:
        s = "0" * r.randrange(1, 4) + s
    return s


def gen_spec(r: random.Random) -> str:
    parts = []
    if r.random() < 0.3:
        parts.append(r.choice(FILL_POOL) if r.random() < 0.8 else rand_char(r))
        parts.append(r.choice("<>^^>=" if r.random() < 0.9 else "<>^"))
    elif r.random() < 0.35:
        parts.append(r.choice("<>^<>^="))
    if r.random() < 0.04:
        parts.append(r.choice(" +-"))
    if r.random() < 0.03:
        parts.append("z")
    if r.random() < 0.03:
        parts.append("#")
    if r.random() < 0.15:
        parts.append("0")
    if r.random() < 0.6:
        parts.append(gen_number(r, "width"))
    if r.random() < 0.05:
        parts.append(r.choice([",", "_", ",_", "_,", ",,", "__"]))
    if r.random() < 0.35:
        parts.append(".")
        if r.random() < 0.93:
            parts.append(gen_number(r, "precision"))
    roll = r.random()
    if roll < 0.12:
        parts.append("s")
    elif roll < 0.16:
        parts.append(r.choice(["d", "x", "r", "%", "\x00", "é", "S", "c", "n", "f", "e"]))
    elif roll < 0.18:
        parts.append(r.choice(["ss", "s ", "xs", "%s", "s\x00"]))
    if r.random() < 0.04:
        k = r.randrange(len(parts) + 1)
        parts.insert(k, r.choice(["{", "}", "{}", "{observation}", "{0}", ":", "!", "[", "]", rand_char(r)]))
    return "".join(parts)


NAMES_BAD = [
    "",
    "0",
    "1",
    "\u0660",
    "obs",
    "Observation",
    " observation",
    "observation ",
    "observatio",
    "observation.x",
    "observation.upper",
    "observation.__class__",
    "observation.__doc__",
    "observation[0]",
    "observation[-1]",
    "observation[x]",
    "observation[]",
    "observation.",
    "observation[0]x",
    "observation[0].real",
    "observation[",
    "observation]",
    "observation{",
    "99999999999999999999",
    "observation\x00",
    "observation\u200b",
    "ｏｂｓｅｒｖａｔｉｏｎ",
    "observation[}]",
    "observation[:]",
    "observation[!r]",
    "kwargs",
]


def gen_field(r: random.Random) -> str:
    name = "observation" if r.random() < 0.88 else r.choice(NAMES_BAD)
    out = ["{", name]
    roll = r.random()
    if roll < 0.12:
        out.append("!r")
    elif roll < 0.22:
        out.append("!a")
    elif roll < 0.27:
        out.append("!s")
    elif roll < 0.29:
        out.append("!\x00")
    elif roll < 0.32:
        out.append("!" + r.choice(["", "x", "R", "S", "rs", "}", ":", "!", "é", "\U0001f600", " ", "\x01"]))
    if r.random() < 0.6:
        out.append(":")
        if r.random() < 0.9:
            out.append(gen_spec(r))
    if r.random() < 0.985:
        out.append("}")
    return "".join(out)


LIT_ATOMS = [
    "Output:",
    "\n",
    "```",
    " ",
    "obs",
    "{{",
    "}}",
    "{{observation}}",
    "é",
    "\U0001f600",
    "\t",
    "\x00",
    ":",
    "!",
    "[",
    "]",
    ".",
    "'",
    '"',
    "\\",
    "%s",
    "$",
    "0",
    "٣",
    "\u200b",
]


def gen_literal(r: random.Random) -> str:
    n = r.choice([0, 0, 1, 1, 2, 3, 5])
    parts = [r.choice(LIT_ATOMS) if r.random() < 0.8 else rand_char(r) for _ in range(n)]
    if r.random() < 0.02:
        parts.append(r.choice(["{", "}"]))
    return "".join(parts)


SOUP = [
    "{",
    "}",
    "{",
    "}",
    "{{",
    "}}",
    "observation",
    "observation",
    "!",
    ":",
    "r",
    "s",
    "a",
    "[",
    "]",
    ".",
    "0",
    "5",
    "9",
    "<",
    ">",
    "^",
    "=",
    "x",
    " ",
    "é",
    "\U0001f600",
    "٣",
    "\x00",
    ",",
    "_",
    "z",
    "#",
    "+",
]


def gen_soup(r: random.Random) -> str:
    return "".join(r.choice(SOUP) for _ in range(r.randrange(1, 16)))


BASE = [
    "{observation}",
    "Output:\n```\n{observation}\n```\n\n",
    "Observation: {observation!r}",
    "{observation:>20}",
    "[{observation:.50}]",
    "{observation!a:^30.10}",
]


def mutate(r: random.Random, t: str) -> str:
    s = list(t)
    for _ in range(r.randrange(1, 4)):
        op = r.random()
        k = r.randrange(len(s) + 1)
        if op < 0.4:
            s.insert(k, r.choice(SOUP) if r.random() < 0.7 else rand_char(r))
        elif op < 0.7 and s:
            del s[min(k, len(s) - 1)]
        elif s:
            s[min(k, len(s) - 1)] = r.choice(SOUP)
    return "".join(s)


CORNERS = [
    "{observation}",
    "",
    "Output:",
    "{{observation}}",
    "{{",
    "}}",
    "{",
    "}",
    "{}",
    "{0}",
    "{observation}}",
    "{{{observation}}}",
    "{observation!r}",
    "{observation!a}",
    "{observation!s}",
    "{observation!\x00}",
    "{observation!\x00:>5}",
    "{observation!}",
    "{observation!}}",
    "{observation!",
    "{observation!r",
    "{observation!r!s}",
    "{observation!rs}",
    "{observation!x}",
    "{observation:}",
    "{observation!r:}",
    "{observation:s}",
    "{observation:ss}",
    "{observation:05}",
    "{observation:>05}",
    "{observation:<0}",
    "{observation:00}",
    "{observation:0}",
    "{observation:^6}",
    "{observation:^7}",
    "{observation:.0}",
    "{observation:.}",
    "{observation:.,}",
    "{observation:,}",
    "{observation:_}",
    "{observation:,_}",
    "{observation:_,}",
    "{observation:,,}",
    "{observation:=}",
    "{observation:=5}",
    "{observation:0=5}",
    "{observation:z}",
    "{observation:#}",
    "{observation: }",
    "{observation:+}",
    "{observation:-5}",
    "{observation:\x00}",
    "{observation:%s}",
    "{observation:d}",
    "{observation:٣>5}",
    "{observation:٠5}",
    "{observation:\U0001f600^7}",
    "{observation:{{}}}",
    "{observation:{}}",
    "{observation:{observation}}",
    "{observation.upper}",
    "{observation.__doc__}",
    "{observation[0]}",
    "{observation[}]}",
    "{observation[0}",
    "{observation:1048576}",
    "{observation:1048577}",
    "{observation:9223372036854775807}",
    "{observation:9223372036854775808}",
    "{observation:.9223372036854775807}",
    "{observation:.9223372036854775808}",
    "{observation:99999999999999999999}",
    "{observation!a:.3}",
    "{observation!r:^9}",
    "{observation!r:.1}",
    "{observation!r:.0}",
    "{observation:{",
    "{observation:",
    "{observation",
    "{observation}{observation!r}{observation!a:>3}",
    "a}b{observation}",
    "{observation}{",
]

CORNER_OBS = ["ab'cé", "", "'", '"', "'\"", "\\\n\t\r\x00\x7f\x85\xa0\xad\u2028\U0001f600\U000e0001\ue000\u0378"]


def gen_case(r: random.Random, i: int) -> tuple[str, str]:
    if i < len(CORNERS) * len(CORNER_OBS):
        return CORNERS[i // len(CORNER_OBS)], CORNER_OBS[i % len(CORNER_OBS)]
    roll = r.random()
    if roll < 0.70:
        k = r.choice([0, 1, 1, 1, 1, 1, 2, 2, 3, 4])
        parts = [gen_literal(r)]
        for _ in range(k):
            parts.append(gen_field(r))
            parts.append(gen_literal(r))
        t = "".join(parts)
    elif roll < 0.88:
        t = gen_soup(r)
    else:
        t = mutate(r, r.choice(BASE))
    return t, gen_obs(r)


def dump(rec: dict) -> str:
    return json.dumps(rec, ensure_ascii=True, separators=(",", ":"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["cases", "printable", "decimal", "reprblocks"], default="cases")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=20000)
    args = ap.parse_args()
    if sys.version_info[:2] != (3, 12):
        sys.exit("formatdiff.py must run under CPython 3.12 (Unicode 15.0), got " + sys.version)
    out = sys.stdout
    if args.mode == "printable":
        out.write("".join("1" if chr(c).isprintable() else "0" for c in range(0x110000)) + "\n")
        return
    if args.mode == "decimal":
        pairs = [[c, unicodedata.decimal(chr(c))] for c in range(0x110000) if unicodedata.decimal(chr(c), None) is not None]
        out.write(json.dumps(pairs) + "\n")
        return
    if args.mode == "reprblocks":
        cps = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
        for k in range(0, len(cps), 64):
            s = "".join(chr(c) for c in cps[k : k + 64])
            out.write(dump({"s": s, "r": repr(s), "a": ascii(s)}) + "\n")
        r = random.Random(args.seed)
        for _ in range(2000):
            s = "".join(
                r.choice(["'", '"', "\\", "a", "\n", "é", "\x7f", "\U0001f600", "\u0378"]) for _ in range(r.randrange(0, 8))
            )
            out.write(dump({"s": s, "r": repr(s), "a": ascii(s)}) + "\n")
        return
    r = random.Random(args.seed)
    for i in range(args.count):
        t, obs = gen_case(r, i)
        out.write(dump(evaluate(t, obs)) + "\n")


if __name__ == "__main__":
    main()
