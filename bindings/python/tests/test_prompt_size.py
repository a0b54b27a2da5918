"""docs/SPEC.md §7.3 in the Python Prompt: ``add_step`` refuses with ``too_large``
exactly when one ``assemble`` of the same steps would.

The Prompt keeps the size of the whole canonical response step by step
(``polyloop_assembly._respsize``, a rule that mirrors core.ResponseSizer), so
the rule is proven against the core here:

- after every ``add_step`` the kept size equals ``len(assemble_bytes(...))``
  of one request holding all the steps (random requests with injections,
  budgets up to 2**64 - 1, templates of large widths; the message-count
  header widths at 15/16 and 65535/65536; prompt_chars at the int widths);
- with the limit lowered to a size near the whole response's, ``add_step``
  refuses exactly when that response is over it, with the core's code, path
  and message, and the prompt is unchanged after it.

The full-size case (1.5 GiB) is tests/test_limits.py::test_prompt_at_the_limit.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any, Dict, Iterator, List

import msgpack
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import polyloop_assembly as pa
from polyloop_assembly import _codec, _respsize

from strategies import TEXT, request, valid_template

# Templates whose renderings cross the int widths of message_chars and
# prompt_chars (127/128, 255/256, 65535/65536) with small observations.
WIDE = st.sampled_from([126, 127, 128, 254, 255, 256, 65534, 65535, 65536, 70000]).map(lambda w: "{observation:>%d}" % w)
TEMPLATE = st.one_of(valid_template(), WIDE, st.tuples(WIDE, valid_template()).map("".join))
SMALL_STEP = st.fixed_dictionaries({"raw_output": TEXT, "observation": TEXT})


def _whole(req: Dict[str, Any], added: List[Dict[str, Any]]) -> Dict[str, Any]:
    out = dict(req)
    out["steps"] = list(req.get("steps", [])) + added
    return out


def _size(req: Dict[str, Any]) -> int:
    resp = pa.assemble_bytes(_codec.encode(req))
    assert msgpack.unpackb(resp, raw=False)["ok"], resp[:300]
    return len(resp)


@pytest.fixture
def low_limit(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    def set_limit(n: int) -> None:
        monkeypatch.setattr(_respsize, "MAX_RESPONSE_BYTES", n)

    yield set_limit


def test_empty_fixed_is_the_core_s() -> None:
    """EMPTY_FIXED: the response to a request of only a template, less its headers."""
    n = _size({"observation_template": "{observation}"})
    assert n == _respsize.EMPTY_FIXED + _respsize.variable(0, 0) == 309


def test_the_message_is_the_core_s() -> None:
    """The core's own too_large (a response over 1.5 GiB, decided before
    rendering) has the message, code and path add_step raises."""
    resp = pa.assemble_bytes(
        _codec.encode({"observation_template": "{observation:1048576}" * 1600, "steps": [{"raw_output": "", "observation": ""}]})
    )
    err = msgpack.unpackb(resp, raw=False)["error"]
    assert (err["code"], err["path"], err["message"]) == ("too_large", "", _respsize.MSG_RESPONSE_TOO_LARGE)
    assert _respsize.MAX_RESPONSE_BYTES == 1536 << 20


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(request(template=TEMPLATE), st.lists(SMALL_STEP, max_size=8))
def test_kept_size_equals_the_whole_response(req: Dict[str, Any], added: List[Dict[str, Any]]) -> None:
    prompt = pa.Prompt(req)  # type: ignore[arg-type]
    assert prompt._response_size() == _size(req)
    for k, s in enumerate(added):
        prompt.add_step(s["raw_output"], s["observation"])
        assert prompt._response_size() == _size(_whole(req, added[: k + 1])), "after step %d" % k


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(request(template=TEMPLATE), st.lists(SMALL_STEP, min_size=1, max_size=6), st.data())
def test_add_step_refuses_exactly_when_assemble_would(
    low_limit: Any, req: Dict[str, Any], added: List[Dict[str, Any]], data: Any
) -> None:
    """With the limit lowered near the whole response's size (at a size, or
    one byte below it), add_step succeeds while assemble of all the steps fits
    and refuses the first step whose whole response does not."""
    sizes = [_size(_whole(req, added[:k])) for k in range(len(added) + 1)]
    limit = data.draw(st.sampled_from(sizes[1:])) - data.draw(st.sampled_from([0, 1]))
    assume(sizes[0] <= limit)
    low_limit(limit)
    prompt = pa.Prompt(req)  # type: ignore[arg-type]
    for k, s in enumerate(added, start=1):
        before = (prompt.messages, prompt.message_chars, prompt.prompt_chars, prompt.steps, prompt._response_size())
        if sizes[k] <= limit:
            prompt.add_step(s["raw_output"], s["observation"])
            assert prompt._response_size() == sizes[k]
            continue
        with pytest.raises(pa.AssemblyError) as info:
            prompt.add_step(s["raw_output"], s["observation"])
        assert (info.value.code, info.value.path, info.value.message) == ("too_large", "", _respsize.MSG_RESPONSE_TOO_LARGE)
        after = (prompt.messages, prompt.message_chars, prompt.prompt_chars, prompt.steps, prompt._response_size())
        assert after == before, "a refused step changed the prompt"
        return
    assert sizes[-1] <= limit


@pytest.mark.parametrize("first_messages", [13, 14, 65529, 65530])
def test_message_count_header_widths(first_messages: int) -> None:
    """The messages and message_chars headers grow at 16 and 65536 entries:
    the kept size crosses both, from odd and even counts (so 15 and 65535
    themselves are hit too)."""
    run = [{"role": "user", "content": []}] * (first_messages % 2)
    req = {
        "run_messages": run,
        "steps": [{"raw_output": "", "observation": ""}] * (first_messages // 2),
        "observation_template": "{observation}",
    }
    prompt = pa.Prompt(req)  # type: ignore[arg-type]
    assert len(prompt) == first_messages
    added: List[Dict[str, Any]] = []
    crossed = {_respsize.array_header(len(prompt))}
    for i in range(4):
        s = {"raw_output": "r%d" % i, "observation": "o"}
        added.append(s)
        prompt.add_step(s["raw_output"], s["observation"])
        crossed.add(_respsize.array_header(len(prompt)))
        assert prompt._response_size() == _size(_whole(req, added)), "at %d messages" % len(prompt)
    assert len(crossed) == 2, "the header width did not change"


def test_prompt_chars_int_widths() -> None:
    """prompt_chars lands exactly on 127, 128, 255, 256, 65535, 65536 (its int
    grows at 128, 256 and 65536)."""
    req = {"observation_template": "{observation}"}
    prompt = pa.Prompt(req)  # type: ignore[arg-type]
    added: List[Dict[str, Any]] = []
    for total in (1, 127, 128, 255, 256, 65535, 65536, 65537):
        s = {"raw_output": "", "observation": "x" * (total - prompt.prompt_chars)}
        added.append(s)
        prompt.add_step(s["raw_output"], s["observation"])
        assert prompt.prompt_chars == total
        assert prompt._response_size() == _size(_whole(req, added)), "at prompt_chars %d" % total


def test_copies_and_pickles_keep_their_own_size() -> None:
    req = {"injections": {"m": [{"entry_id": "e", "content": "c"}]}, "observation_template": "{observation}"}
    a = pa.Prompt(req)  # type: ignore[arg-type]
    a.add_step("r", "o")
    size = a._response_size()
    for b in (a.copy(), copy.copy(a), copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert b._response_size() == size
        b.add_step("more", "text")
        assert a._response_size() == size
        assert b._response_size() == _size(
            _whole(req, [{"raw_output": "r", "observation": "o"}, {"raw_output": "more", "observation": "text"}])
        )
