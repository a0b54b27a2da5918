"""docs/SPEC.md §7.3 and §7.3.1 through the Python Prompt: after every ``add_step``
the prompt is one ``assemble`` of the whole request, and ``add_step`` refuses
with ``too_large`` exactly when that ``assemble`` does.

The oracle is ``assemble_bytes`` of one request holding all the steps (a
different export than ``add_step``): after each step the prompt's
``response()`` equals its decoded response and the prompt's state
``response_bytes`` (kept by the core, read through the private
``_response_size``) equals its length. Random requests with injections,
budgets up to 2**64 - 1 and templates of large widths; the message-count
header widths at 15/16 and 65535/65536; prompt_chars at the int widths.

The response limit itself (1.5 GiB) cannot be lowered from Python: the core's
property tests cover the boundary byte by byte; here a step whose whole
response would be over it (decided before rendering, from the template's
widths) is refused with the code, path and message ``assemble`` gives, the
prompt unchanged, while the same prompt takes steps that fit. The full-size
case is tests/test_limits.py::test_prompt_at_the_limit.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any, Dict, List, Optional

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polyloop_assembly as pa
from polyloop_assembly import _codec
from polyloop_assembly._consts import MSG_RESPONSE_TOO_LARGE

from strategies import TEXT, request, valid_template

# Templates whose renderings cross the int widths of message_chars and
# prompt_chars (127/128, 255/256, 65535/65536) with small observations.
WIDE = st.sampled_from([126, 127, 128, 254, 255, 256, 65534, 65535, 65536, 70000]).map(lambda w: "{observation:>%d}" % w)
TEMPLATE = st.one_of(valid_template(), WIDE, st.tuples(WIDE, valid_template()).map("".join))
SMALL_STEP = st.fixed_dictionaries({"raw_output": TEXT, "observation": TEXT})

# One step renders an observation of 1600 MiB: its whole response is over the
# 1.5 GiB limit, which the core knows from the widths without rendering it.
HUGE = "{observation:1048576}" * 1600


def _whole(req: Dict[str, Any], added: List[Dict[str, Any]]) -> Dict[str, Any]:
    out = dict(req)
    out["steps"] = list(req.get("steps", [])) + added
    return out


def _assembled(req: Dict[str, Any]) -> bytes:
    """The response bytes of one assemble of ``req`` (ok or error)."""
    return pa.assemble_bytes(_codec.encode(req))


def _check_equals_whole(prompt: pa.Prompt, whole: Dict[str, Any], what: str) -> None:
    resp = _assembled(whole)
    want = msgpack.unpackb(resp, raw=False)
    assert want["ok"], (what, resp[:300])
    assert prompt.response() == want, what
    assert prompt._response_size() == len(resp), what
    assert prompt.step_count == len(whole.get("steps", [])), what


def _error_of(fn: Any) -> Optional[pa.AssemblyError]:
    try:
        fn()
    except pa.AssemblyError as e:
        return e
    return None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(request(template=TEMPLATE), st.lists(SMALL_STEP, max_size=8))
def test_prompt_equals_the_whole_request_after_every_step(req: Dict[str, Any], added: List[Dict[str, Any]]) -> None:
    prompt = pa.Prompt(req)  # type: ignore[arg-type]
    _check_equals_whole(prompt, req, "before any step")
    for k, s in enumerate(added):
        prompt.add_step(s["raw_output"], s["observation"])
        _check_equals_whole(prompt, _whole(req, added[: k + 1]), "after step %d" % k)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(request(), st.lists(SMALL_STEP, min_size=1, max_size=4))
def test_add_step_refuses_exactly_when_assemble_would(req: Dict[str, Any], added: List[Dict[str, Any]]) -> None:
    """The request with its own template (steps fit) and with HUGE (no step
    fits), with and without its steps: the constructor and each add_step fail
    exactly when one assemble of the whole request does, with the same code,
    path and message; a refused step leaves the prompt unchanged."""
    refused = 0
    for base in (req, dict(req, observation_template=HUGE), dict(req, observation_template=HUGE, steps=[])):
        made = _error_of(lambda: pa.Prompt(base))  # type: ignore[arg-type]
        want = _error_of(lambda: pa.assemble(base))  # type: ignore[arg-type]
        assert _triple(made) == _triple(want)
        if made is not None:
            continue
        prompt = pa.Prompt(base)  # type: ignore[arg-type]
        held: List[Dict[str, Any]] = []
        for s in added:
            before = (prompt.response(), prompt._response_size(), prompt.step_count)
            got = _error_of(lambda: prompt.add_step(s["raw_output"], s["observation"]))
            want = _error_of(lambda: pa.assemble(_whole(base, held + [s])))  # type: ignore[arg-type]
            assert _triple(got) == _triple(want), "step %d" % len(held)
            if got is None:
                held.append(s)
                _check_equals_whole(prompt, _whole(base, held), "after %d steps" % len(held))
                continue
            refused += 1
            assert (prompt.response(), prompt._response_size(), prompt.step_count) == before, "a refused step changed the prompt"
    if req.get("observation_template") != HUGE:
        assert refused >= len(added), "the HUGE prompt without steps refused fewer steps than it was given"


def _triple(e: Optional[pa.AssemblyError]) -> Any:
    return None if e is None else (e.code, e.path, e.message)


def test_the_message_is_the_core_s() -> None:
    """The too_large add_step raises is the message of docs/SPEC.md §4 (the
    generated constant), as one assemble of the same steps has it."""
    prompt = pa.Prompt({"observation_template": HUGE})
    with pytest.raises(pa.AssemblyError) as info:
        prompt.add_step("", "")
    assert (info.value.code, info.value.path, info.value.message) == ("too_large", "", MSG_RESPONSE_TOO_LARGE)
    assert (len(prompt), prompt.step_count, prompt._response_size()) == (0, 0, len(_assembled({"observation_template": HUGE})))


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
    widths = {len(msgpack.packb([0] * len(prompt))) - len(prompt)}  # the array header's width
    for i in range(4):
        s = {"raw_output": "r%d" % i, "observation": "o"}
        added.append(s)
        prompt.add_step(s["raw_output"], s["observation"])
        widths.add(len(msgpack.packb([0] * len(prompt))) - len(prompt))
        _check_equals_whole(prompt, _whole(req, added), "at %d messages" % len(prompt))
    assert len(widths) == 2, "the header width did not change"


def test_prompt_chars_int_widths() -> None:
    """prompt_chars lands exactly on 127, 128, 255, 256, 65535, 65536 (its int
    grows at 128, 256 and 65536)."""
    req: Dict[str, Any] = {"observation_template": "{observation}"}
    prompt = pa.Prompt(req)  # type: ignore[arg-type]
    added: List[Dict[str, Any]] = []
    for total in (1, 127, 128, 255, 256, 65535, 65536, 65537):
        s = {"raw_output": "", "observation": "x" * (total - prompt.prompt_chars)}
        added.append(s)
        prompt.add_step(s["raw_output"], s["observation"])
        assert prompt.prompt_chars == total
        _check_equals_whole(prompt, _whole(req, added), "at prompt_chars %d" % total)


def test_copies_and_pickles_keep_their_own_state() -> None:
    req: Dict[str, Any] = {"injections": {"m": [{"entry_id": "e", "content": "c"}]}, "observation_template": "{observation}"}
    a = pa.Prompt(req)  # type: ignore[arg-type]
    a.add_step("r", "o")
    one = [{"raw_output": "r", "observation": "o"}]
    for b in (a.copy(), copy.copy(a), copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        _check_equals_whole(b, _whole(req, one), "the copy")
        b.add_step("more", "text")
        _check_equals_whole(a, _whole(req, one), "the original")
        _check_equals_whole(b, _whole(req, one + [{"raw_output": "more", "observation": "text"}]), "the copy after a step")
