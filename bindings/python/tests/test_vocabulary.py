"""The names every host shares (AssembleRequest, AssembleResponse, add_step
returning the prompt, response(), step_count) and the deprecated aliases of
the old Python names (Request, Response, Prompt.steps): the same objects and
the same behaviour."""

from __future__ import annotations

import warnings

import pytest

import polyloop_assembly as pa

REQ: pa.AssembleRequest = {
    "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}],
    "steps": [{"raw_output": "a", "observation": "b"}],
    "observation_template": "Observation: {observation}",
}


def test_the_shared_names_and_their_aliases() -> None:
    assert pa.Request is pa.AssembleRequest and pa.Response is pa.AssembleResponse
    for name in ("AssembleRequest", "AssembleResponse", "Request", "Response"):
        assert name in pa.__all__
    prompt = pa.Prompt(REQ)
    assert prompt.add_step("c", "d") is prompt  # add_step returns the prompt: calls chain
    assert prompt.add_step("e", "f").add_step("g", "h") is prompt
    assert prompt.step_count == 4
    whole = dict(REQ, steps=list(REQ["steps"]) + [{"raw_output": x, "observation": y} for x, y in ("cd", "ef", "gh")])
    assert prompt.response() == pa.assemble(whole)  # type: ignore[arg-type]
    with pytest.warns(DeprecationWarning, match="step_count"):
        assert prompt.steps == prompt.step_count == 4


def test_the_alias_warns_only_where_it_is_read() -> None:
    prompt = pa.Prompt(REQ)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new names warn nothing
        prompt.add_step("c", "d")
        assert (prompt.step_count, len(prompt.response()["messages"])) == (2, 5)
        with pytest.raises(DeprecationWarning):
            prompt.steps
