"""The one description of the shape of every vector set under testdata/.

The generators (gen_vectors.py, gen_prompt_vectors.py, gen_json_vectors.py)
check each file against it before writing it, and the reference suite
(test_reference.py, ``make test``) checks the committed files against it, so
a host's runner can read the files without re-validating their shape. The
formats are described in each set's README.md; this module is their
executable form.

Common to every set: the files are ASCII JSON without repeated keys; a file
is ``{"description": str, "cases": [case, ...]}`` with at least one case;
case names are kebab-case, unique across the set's files and sorted inside a
file; a base64 value is standard base64 (RFC 4648, with padding); an error is
``{"code", "path"}`` with a code of docs/SPEC.md §6, plus ``offset`` (a
non-negative int) exactly when the code is ``invalid_template`` — and only
the wire vectors carry template errors.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from typing import Any, Callable, Dict

import reference as R

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

NAME_RE = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
B64, STR, OBJ, ERROR, STEPS, TRUE = "base64", "str", "object", "error", "steps", "true"

# Each set: its directory, the keys a case may have with their kinds, the
# keys it must have, and the pairs of which a case has exactly one.
SETS: Dict[str, Dict[str, Any]] = {
    "vectors": {
        "case": {"name": STR, "description": STR, "request": B64, "response": B64, "error": ERROR},
        "required": ("name", "description", "request"),
        "one_of": ("response", "error"),
    },
    "json-vectors": {
        "case": {
            "name": STR,
            "description": STR,
            "request": B64,
            "msgpack": B64,
            "response": B64,
            "error": ERROR,
            "syntax": TRUE,
        },
        "required": ("name", "description", "request"),
        "one_of": ("response", "error"),
    },
    "prompt-vectors": {
        "case": {"name": STR, "description": STR, "request": OBJ, "response": B64, "steps": STEPS},
        "required": ("name", "description", "request", "response", "steps"),
        "one_of": None,
    },
}
STEP = {"raw_output": STR, "observation": STR, "response": B64, "error": ERROR}


class SchemaError(ValueError):
    """A vector file that is not in its set's format."""


def _fail(where: str, why: str) -> None:
    raise SchemaError("%s: %s" % (where, why))


def _no_repeats(pairs: list) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise SchemaError("repeated JSON key %r" % k)
        out[k] = v
    return out


def _check_error(e: Any, where: str, offsets: bool) -> None:
    if not isinstance(e, dict) or not {"code", "path"} <= set(e) <= {"code", "path", "offset"}:
        _fail(where, "an error is {code, path[, offset]}: %r" % (e,))
    if e["code"] not in R.ALL_CODES or not isinstance(e["path"], str):
        _fail(where, "code %r is not a code of docs/SPEC.md §6, or the path is not a str" % (e["code"],))
    template = e["code"] == R.INVALID_TEMPLATE
    if ("offset" in e) != (template and offsets):
        _fail(where, "offset is present exactly for invalid_template (wire vectors only)")
    if "offset" in e and (type(e["offset"]) is not int or e["offset"] < 0):
        _fail(where, "offset is a non-negative int")


def _check_value(kind: str, v: Any, where: str, set_name: str) -> None:
    if kind == STR and not isinstance(v, str):
        _fail(where, "not a str")
    elif kind == OBJ and not isinstance(v, dict):
        _fail(where, "not a JSON object")
    elif kind == TRUE and v is not True:
        _fail(where, "only true is written")
    elif kind == B64:
        try:
            ok = isinstance(v, str) and base64.b64encode(base64.b64decode(v, validate=True)).decode() == v
        except binascii.Error:
            ok = False
        if not ok:
            _fail(where, "not standard base64")
    elif kind == ERROR:
        _check_error(v, where, offsets=set_name == "vectors")
    elif kind == STEPS:
        if not isinstance(v, list) or not v:
            _fail(where, "steps is a non-empty list")
        for i, s in enumerate(v):
            _check_keys(s, STEP, ("raw_output", "observation"), ("response", "error"), "%s[%d]" % (where, i), set_name)


def _check_keys(obj: Any, kinds: dict, required: tuple, one_of: Any, where: str, set_name: str) -> None:
    if not isinstance(obj, dict):
        _fail(where, "not a JSON object")
    if set(obj) - set(kinds) or set(required) - set(obj):
        _fail(where, "keys %s; allowed %s, required %s" % (sorted(obj), sorted(kinds), list(required)))
    if one_of is not None and (one_of[0] in obj) == (one_of[1] in obj):
        _fail(where, "exactly one of %s and %s" % one_of)
    for k, v in obj.items():
        _check_value(kinds[k], v, "%s.%s" % (where, k), set_name)


def _check_json_case(c: dict, where: str) -> None:
    """json-vectors: msgpack is absent exactly for a syntax error, which is
    malformed_request at ""."""
    if c.get("syntax", False) == ("msgpack" in c):
        _fail(where, "a syntax-error case has no msgpack, every other case has one")
    if c.get("syntax") and c.get("error") != {"code": R.MALFORMED, "path": ""}:
        _fail(where, 'a syntax error is malformed_request at ""')


EXTRA: Dict[str, Callable[[dict, str], None]] = {"json-vectors": _check_json_case}


def check_texts(set_name: str, texts: Dict[str, str]) -> int:
    """Check the files of one set (file name -> text); return the number of cases."""
    spec = SETS[set_name]
    if not texts:
        _fail(set_name, "no files")
    seen: Dict[str, str] = {}
    for fname, text in sorted(texts.items()):
        if not fname.endswith(".json") or not text.isascii():
            _fail(fname, "a vector file is ASCII *.json")
        doc = json.loads(text, object_pairs_hook=_no_repeats)
        if not isinstance(doc, dict) or set(doc) != {"description", "cases"} or not isinstance(doc["description"], str):
            _fail(fname, "a file is {description, cases}")
        cases = doc["cases"]
        if not isinstance(cases, list) or not cases:
            _fail(fname, "no cases")
        for c in cases:
            name = c.get("name") if isinstance(c, dict) else None
            where = "%s/%s" % (fname, name)
            _check_keys(c, spec["case"], spec["required"], spec["one_of"], where, set_name)
            if not NAME_RE.fullmatch(name) or name in seen:
                _fail(where, "a name is kebab-case and unique in the set (also in %s)" % seen.get(name))
            seen[name] = fname
            EXTRA.get(set_name, lambda c, w: None)(c, where)
        names = [c["name"] for c in cases]
        if names != sorted(names):
            _fail(fname, "cases are sorted by name")
    return len(seen)


def check_dir(set_name: str) -> int:
    """Check the committed files of testdata/<set_name>; return the number of cases."""
    d = os.path.join(TESTDATA, set_name)
    texts = {}
    for f in sorted(os.listdir(d)):
        if f.endswith(".json"):
            with open(os.path.join(d, f), encoding="ascii") as fh:
                texts[f] = fh.read()
    return check_texts(set_name, texts)
