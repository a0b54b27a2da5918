"""Hypothesis strategies for requests, templates and bad values.

Plain Python values only (str, int, list, dict): the reference packs them
canonically with its own writer (``R.pack``) and the binding encodes them
with msgpack, so the two never share an encoder.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from hypothesis import strategies as st

# Text: mostly arbitrary code points (no surrogates: those are bad values, see
# BAD_VALUES), with the characters that matter most mixed in.
_SPECIAL = st.sampled_from(["{", "}", "{}", "\x00", "é", "e\u0301", "🙂", "\U000e0001", "\u200d", "\uffff", "\n", "'", '"', "\\"])
TEXT = st.one_of(
    st.text(max_size=12),
    st.lists(st.one_of(st.text(max_size=4), _SPECIAL), max_size=5).map("".join),
)
NONEMPTY_TEXT = TEXT.filter(bool)

_FILL = st.sampled_from(["", "*", " ", "0", "é", "🙂", "<", "x"])
_ALIGN = st.sampled_from(["", "<", ">", "^"])


@st.composite
def _spec(draw: Any) -> str:
    fill = draw(_FILL)
    align = draw(_ALIGN)
    if fill and not align:
        fill = ""
    zero = draw(st.sampled_from(["", "0"]))
    width = draw(st.one_of(st.just(""), st.integers(0, 30).map(str)))
    precision = draw(st.one_of(st.just(""), st.integers(0, 12).map(lambda n: "." + str(n))))
    kind = draw(st.sampled_from(["", "s"]))
    return fill + align + zero + width + precision + kind


@st.composite
def field(draw: Any) -> str:
    conv = draw(st.sampled_from(["", "!s", "!r", "!a"]))
    spec = draw(st.one_of(st.just(""), _spec().map(lambda s: ":" + s)))
    return "{observation" + conv + spec + "}"


_LITERAL = TEXT.map(lambda s: s.replace("{", "{{").replace("}", "}}"))


@st.composite
def valid_template(draw: Any) -> str:
    """A template the spec accepts: literal text and at least one observation field."""
    parts = draw(st.lists(st.one_of(_LITERAL, field()), max_size=4))
    parts.insert(draw(st.integers(0, len(parts))), draw(field()))
    return "".join(parts)


_TEMPLATE_NOISE = st.sampled_from(
    [
        "{",
        "}",
        "{}",
        "{0}",
        "{observation",
        "observation}",
        "{observation.x}",
        "{observation[0]}",
        "{observation!x}",
        "{observation:{w}}",
        "{observation:>1048577}",
        "{observation:=5}",
        "{observation:,}",
        "{observation:d}",
        "{obs}",
        "{{observation}}",
        "{observation!}",
        "{observation:%}",
        "{ observation}",
        "{observation:.}",
        "{observation:<<5}",
    ]
)


@st.composite
def any_template(draw: Any) -> str:
    """Valid templates and near misses, to compare validation."""
    if draw(st.booleans()):
        return draw(valid_template())
    parts = draw(st.lists(st.one_of(_LITERAL, field(), _TEMPLATE_NOISE, TEXT), max_size=5))
    return "".join(parts)


ROLE = st.sampled_from(["system", "user", "assistant"])


def _message() -> Any:
    return st.fixed_dictionaries(
        {"role": ROLE, "content": st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}), max_size=3)}
    )


MESSAGES = st.lists(_message(), max_size=3)
STEP = st.fixed_dictionaries({"raw_output": TEXT, "observation": TEXT})
STEPS = st.lists(STEP, max_size=4)
INJECTIONS = st.dictionaries(
    TEXT,
    st.lists(st.fixed_dictionaries({"entry_id": NONEMPTY_TEXT, "content": TEXT}), max_size=3),
    max_size=3,
)
BUDGET = st.one_of(st.none(), st.integers(0, 400), st.integers(0, 2**64 - 1))

_FIELDS = ["v", "run_messages", "injections", "goal_messages", "steps", "observation_template", "max_prompt_chars"]


@st.composite
def request(draw: Any, template: Optional[Any] = None, with_steps: bool = True) -> Dict[str, Any]:
    """A valid request with a random subset of the optional fields, in a random order."""
    values: Dict[str, Any] = {
        "v": 1,
        "run_messages": draw(MESSAGES),
        "injections": draw(INJECTIONS),
        "goal_messages": draw(MESSAGES),
        "steps": draw(STEPS) if with_steps else [],
        "observation_template": draw(template if template is not None else valid_template()),
        "max_prompt_chars": draw(BUDGET),
    }
    keep = [k for k in _FIELDS if k == "observation_template" or draw(st.booleans())]
    order = draw(st.permutations(keep))
    return {k: values[k] for k in order}


# --- bad values ------------------------------------------------------------------

#: Python values that are wrong somewhere in a request (or right elsewhere).
BAD_VALUES: List[Any] = [
    None,
    True,
    False,
    1.5,
    1.0,
    float("inf"),
    b"xy",
    bytearray(b"z"),
    -1,
    0,
    7,
    "",
    "robot",
    "text",
    2**70,
    -(2**70),
    2**64,
    "a\udc80",
    "\ud800\udc00",
    "\udfff",
    [],
    {},
    ["x"],
    {"k": "v"},
    (1,),
    object(),
    {1, 2},
]

#: Keys to add to a map: unknown, duplicate-looking, non-str, invalid UTF-8.
BAD_KEYS: List[Any] = ["foo", "a b", "", "role", "text", "v", 1, None, True, 2.5, b"k", (1, 2), "k\udc80", 2**70]


def to_wire(v: Any, R: Any) -> Any:
    """The wire form of a Python value, as reference nodes: what the binding's
    encoding rules (polyloop_assembly._codec) promise, written independently."""
    if v is None:
        return R.Nil
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        if -(2**63) <= v < 2**64:
            return R.Int(v)
        return R.Ext(3, str(v).encode("ascii"))  # beyond 64 bits: ext 3 (EXT_BIG_INT), its decimal text
    if isinstance(v, float):
        return R.Float(v)
    if isinstance(v, (bytes, bytearray)):
        return R.Bin(bytes(v))
    if isinstance(v, str):
        try:
            v.encode("utf-8")
            return v
        except UnicodeEncodeError:
            return R.BadStr(v.encode("utf-8", "surrogatepass"))
    if isinstance(v, dict):
        return R.Map([(to_wire(k, R), to_wire(x, R)) for k, x in v.items()])
    if isinstance(v, (list, tuple)):
        return [to_wire(x, R) for x in v]
    return R.Ext(0, b"")


def paths_of(value: Any, prefix: tuple = ()) -> List[tuple]:
    """Every position (a tuple of keys/indices) inside a request value."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths_of(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths_of(v, prefix + (i,))
    return out


def replace_at(value: Any, where: tuple, new: Any) -> Any:
    """A copy of value with the element at where replaced (dict order kept)."""
    if not where:
        return new
    head, rest = where[0], where[1:]
    if isinstance(value, dict):
        return {k: (replace_at(v, rest, new) if k == head else v) for k, v in value.items()}
    return [replace_at(v, rest, new) if i == head else v for i, v in enumerate(value)]


def add_key_at(value: Any, where: tuple, key: Any, new: Any) -> Any:
    """A copy of value with key: new added to the map at where."""
    if not where:
        out = dict(value)
        out[key] = new
        return out
    head, rest = where[0], where[1:]
    if isinstance(value, dict):
        return {k: (add_key_at(v, rest, key, new) if k == head else v) for k, v in value.items()}
    return [add_key_at(v, rest, key, new) if i == head else v for i, v in enumerate(value)]


def maps_of(value: Any, prefix: tuple = ()) -> List[tuple]:
    return [p for p in paths_of(value, prefix) if isinstance(_get(value, p), dict)]


def _get(value: Any, where: tuple) -> Any:
    for k in where:
        value = value[k]
    return value
