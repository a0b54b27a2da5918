"""The incremental Prompt: after k steps it equals one assemble of the request
with those k steps (docs/SPEC.md §7), and add_step never re-sends the history."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterator, List

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polyloop_assembly as pa
from polyloop_assembly import _codec, _consts, _crossing

from conftest import load_reference
from strategies import STEP, request

R = load_reference()

FIELDS = ("messages", "message_chars", "prompt_chars", "context_overflow", "injected", "prefix_digests")


def _with_steps(req: dict, steps: List[dict]) -> dict:
    out = dict(req)
    out["steps"] = list(req.get("steps", [])) + steps
    return out


def _reference_response(req: dict) -> dict:
    resp, err = R.assemble_bytes(R.pack(req))
    assert err is None, err
    return msgpack.unpackb(resp, raw=False)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request(), st.lists(STEP, max_size=6))
def test_prompt_after_k_steps_equals_assemble_with_k_steps(req: dict, added: List[dict]) -> None:
    prompt = pa.Prompt(req)
    for i, s in enumerate(added):
        prompt.add_step(s["raw_output"], s["observation"])
        # after every step, not only the last one
        full = _with_steps(req, added[: i + 1])
        want = _reference_response(full)  # the independent oracle
        assert pa.assemble(full) == want
        got = prompt.response()
        assert got == want
        for name in FIELDS:
            assert getattr(prompt, name) == want[name], name
    assert prompt.step_count == len(req.get("steps", [])) + len(added)
    assert len(prompt) == len(prompt.messages)


def _base(**extra: Any) -> dict:
    req = {
        "run_messages": [{"role": "system", "content": [{"type": "text", "text": "You are a careful agent."}]}],
        "injections": {"memory": [{"entry_id": "m1", "content": "the user likes tea"}]},
        "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "Find the file."}]}],
        "steps": [{"raw_output": "Thought: ls", "observation": "a b c"}] * 3,
        "observation_template": "Observation: {observation!r}",
    }
    req.update(extra)
    return req


@pytest.mark.parametrize(
    "raw,obs,code,field",
    [
        ("x\udc80", "o", "invalid_utf8", "raw_output"),
        ("r", "caf\udce9", "invalid_utf8", "observation"),
        (None, "o", "malformed_request", "raw_output"),
        ("r", 5, "malformed_request", "observation"),
        ("r", True, "malformed_request", "observation"),
        (b"r", "o", "malformed_request", "raw_output"),
        ("r", object(), "malformed_request", "observation"),
        ("r", 2**80, "malformed_request", "observation"),
    ],
)
def test_add_step_errors_name_the_real_step_index(raw: Any, obs: Any, code: str, field: str) -> None:
    prompt = pa.Prompt(_base())
    prompt.add_step("ok", "fine")
    prompt.add_step("ok", "fine")
    before = prompt.response()
    with pytest.raises(pa.AssemblyError) as info:
        prompt.add_step(raw, obs)
    assert (info.value.code, info.value.path) == (code, "steps[5].%s" % field)
    # the same mistake in one full request: same code, path and message
    full = _with_steps(_base(), [{"raw_output": "ok", "observation": "fine"}] * 2 + [{"raw_output": raw, "observation": obs}])
    with pytest.raises(pa.AssemblyError) as whole:
        pa.assemble(full)
    assert (whole.value.code, whole.value.path, whole.value.message) == (info.value.code, info.value.path, info.value.message)
    assert prompt.response() == before  # unchanged
    prompt.add_step("next", "works")
    assert prompt.step_count == 6


class _Unreadable(Mapping):  # type: ignore[type-arg]
    """A user's Mapping whose iteration raises."""

    def __len__(self) -> int:
        return 1

    def __getitem__(self, k: Any) -> Any:
        raise KeyError(k)

    def __iter__(self) -> Iterator[Any]:
        raise ValueError("the rows are gone")


def _released() -> memoryview:
    view = memoryview(b"obs")
    view.release()
    return view


@pytest.mark.parametrize("field", ["raw_output", "observation"])
@pytest.mark.parametrize("value", [_Unreadable(), _released()], ids=["mapping", "released memoryview"])
def test_an_unreadable_value_is_reported_at_the_real_step_index(field: str, value: Any) -> None:
    """A value whose reading raises, given at step 5, is malformed_request at
    steps[5].<field> (the core writes the path, docs/SPEC.md §7.6), as in one
    assemble of the whole request, with the user's exception as __cause__."""
    prompt = pa.Prompt(_base())
    prompt.add_step("ok", "fine")
    prompt.add_step("ok", "fine")
    before = prompt.response()
    step = {"raw_output": "r", "observation": "o", field: value}
    with pytest.raises(pa.AssemblyError) as info:
        prompt.add_step(step["raw_output"], step["observation"])
    assert (info.value.code, info.value.path) == ("malformed_request", "steps[5].%s" % field)
    assert type(value).__name__ in info.value.message and "not sent" in info.value.message
    assert info.value.__cause__ is not None
    with pytest.raises(pa.AssemblyError) as whole:
        pa.assemble(_with_steps(_base(), [{"raw_output": "ok", "observation": "fine"}] * 2 + [step]))
    assert (whole.value.code, whole.value.path, whole.value.message) == (info.value.code, info.value.path, info.value.message)
    assert type(whole.value.__cause__) is type(info.value.__cause__)
    assert prompt.response() == before
    prompt.add_step("next", "works")
    assert len(prompt) == len(before["messages"]) + 2


def test_add_step_with_a_value_msgpack_refuses() -> None:
    cyclic: List[Any] = []
    cyclic.append(cyclic)
    prompt = pa.Prompt(_base(steps=[]))
    with pytest.raises(pa.AssemblyError) as info:
        prompt.add_step("r", cyclic)
    assert (info.value.code, info.value.path) == ("malformed_request", "steps[0].observation")
    prompt.add_step("r", "o")  # the packer still works
    assert prompt.response() == _reference_response(_with_steps(_base(steps=[]), [{"raw_output": "r", "observation": "o"}]))


def test_invalid_request_raises_from_the_constructor() -> None:
    with pytest.raises(pa.AssemblyError) as info:
        pa.Prompt(_base(observation_template="no field"))
    assert (info.value.code, info.value.path) == ("invalid_template", "observation_template")
    with pytest.raises(pa.AssemblyError) as info:
        pa.Prompt(_base(max_prompt_chars=-3))
    assert info.value.code == "invalid_budget"


def test_context_overflow_follows_the_budget() -> None:
    req = _base(steps=[])
    base_chars = pa.assemble(req)["prompt_chars"]
    prompt = pa.Prompt(dict(req, max_prompt_chars=base_chars + 10))
    assert not prompt.context_overflow
    prompt.add_step("12345", "")  # +5, and the rendered observation "Observation: ''" (15)
    assert prompt.prompt_chars == base_chars + 20
    assert prompt.context_overflow
    assert prompt.response() == _reference_response(
        _with_steps(dict(req, max_prompt_chars=base_chars + 10), [{"raw_output": "12345", "observation": ""}])
    )
    no_budget = pa.Prompt(dict(req, max_prompt_chars=None))
    no_budget.add_step("x" * 1000, "y")
    assert not no_budget.context_overflow


def _record_add_steps(monkeypatch: pytest.MonkeyPatch) -> List[bytes]:
    """The request bytes of every add_step call that crosses into the module, in order."""
    sent: List[bytes] = []
    real = _crossing.run

    def recording(pool: Any, *, op: int, prepared: Any) -> bytes:
        if op == _consts.CALL_ADD_STEP:
            sent.append(prepared[1])
        return real(pool, op=op, prepared=prepared)

    monkeypatch.setattr(_crossing, "run", recording)
    return sent


def test_add_step_sends_only_the_template_the_state_and_the_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cost is independent of the history: every add_step sends the module's
    add_step export the template, the prompt's four-number state and the step
    (docs/SPEC.md §7.3.1), never the history; the state is that of the prompt
    before the step (response_bytes: the length of one assemble of it all)."""
    sent = _record_add_steps(monkeypatch)
    asm = pa.Assembler()
    prompt = asm.prompt(_base())
    states = []
    for _ in range(200):
        states.append({"steps": prompt.step_count, "messages": len(prompt), "prompt_chars": prompt.prompt_chars})
        prompt.add_step("r" * 100, "o" * 100)
    assert len(sent) == 200
    for k, (body, state) in enumerate(zip(sent, states)):
        got = msgpack.unpackb(body, raw=False)
        assert list(got) == ["v", "observation_template", "prompt", "step"]  # the order of docs/SPEC.md §7.3.1
        st = got.pop("prompt")
        assert got == {
            "v": 1,
            "observation_template": "Observation: {observation!r}",
            "step": {"raw_output": "r" * 100, "observation": "o" * 100},
        }
        assert list(st) == ["steps", "messages", "prompt_chars", "response_bytes", "request_bytes"]
        assert dict(st, response_bytes=None, request_bytes=None) == dict(state, response_bytes=None, request_bytes=None), (
            "step %d" % k
        )
        whole = _with_steps(_base(), [{"raw_output": "r" * 100, "observation": "o" * 100}] * k)
        # request_bytes: the length of the whole request's shortest encoding (docs/SPEC.md §7.3)
        assert st["request_bytes"] == len(R.pack({"v": 1, **whole})) == len(_codec.encode({"v": 1, **whole}, [])), "step %d" % k
        if k % 50 == 0:
            assert st["response_bytes"] == len(R.assemble_bytes(R.pack(whole))[0])
    assert prompt.step_count == 203


def test_add_step_sends_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    sent = _record_add_steps(monkeypatch)
    prompt = pa.Assembler().prompt(_base(max_prompt_chars=2**64 - 1))
    prompt.add_step("r", "o")
    got = msgpack.unpackb(sent[0], raw=False)
    assert list(got) == ["v", "observation_template", "max_prompt_chars", "prompt", "step"]
    assert got["max_prompt_chars"] == 2**64 - 1


def test_accessors_return_copies() -> None:
    prompt = pa.Prompt(_base())
    list(prompt.messages).clear()
    prompt.messages.copy().clear()
    with pytest.raises(AttributeError):
        prompt.messages.clear()  # type: ignore[attr-defined]  # an immutable view
    prompt.message_chars.clear()
    prompt.injected.clear()
    prompt.prefix_digests.clear()
    assert prompt.response() == _reference_response(_base())
    assert "Prompt steps=3" in repr(prompt)


def _edit(value: Any) -> None:
    """Edit every dict and list inside ``value`` in place."""
    if isinstance(value, dict):
        for k in list(value):
            _edit(value[k])
            value[k] = "edited" if isinstance(value[k], str) else value[k]
        value["cache_control"] = {"type": "ephemeral"}
    elif isinstance(value, list):
        for v in value:
            _edit(v)
        value.append("edited")


def test_edits_of_returned_values_leave_the_prompt_as_assemble() -> None:
    """Every value a Prompt returns is the caller's to edit (docs/SPEC.md §7.3):
    editing every dict and list of messages, message_chars, injected,
    prefix_digests and response() changes neither the prompt nor its next steps."""
    step = {"raw_output": "r", "observation": "o"}
    prompt = pa.Prompt(_base()).add_step(**step)
    for value in (
        list(prompt.messages),
        prompt.messages.copy(),
        prompt.messages[:],
        prompt.message_chars,
        prompt.injected,
        prompt.prefix_digests,
        prompt.response(),
    ):
        _edit(value)
        m = prompt.messages[0]
        m["content"][0]["text"] = "x"
        m["cache_control"] = {"type": "ephemeral"}
    prompt.add_step(**step)
    assert prompt.response() == _reference_response(_with_steps(_base(), [step, step]))
