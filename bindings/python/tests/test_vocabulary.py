"""The names every host shares (AssembleRequest, AssembleResponse, add_step
returning the prompt, response(), step_count) and the deprecated aliases of
the old Python names (Request, Response, Prompt.steps), deprecated at
0.2.0, are gone."""

from __future__ import annotations


import polyloop_assembly as pa

REQ: pa.AssembleRequest = {
    "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}],
    "steps": [{"raw_output": "a", "observation": "b"}],
    "observation_template": "Observation: {observation}",
}


def test_the_shared_names_and_their_aliases() -> None:
    for name in ("AssembleRequest", "AssembleResponse"):
        assert name in pa.__all__
    for name in ("Request", "Response"):  # removed after their deprecation at 0.2.0
        assert not hasattr(pa, name) and name not in pa.__all__
    prompt = pa.Prompt(REQ)
    assert prompt.add_step("c", "d") is prompt  # add_step returns the prompt: calls chain
    assert prompt.add_step("e", "f").add_step("g", "h") is prompt
    assert prompt.step_count == 4
    whole = dict(REQ, steps=list(REQ["steps"]) + [{"raw_output": x, "observation": y} for x, y in ("cd", "ef", "gh")])
    assert prompt.response() == pa.assemble(whole)  # type: ignore[arg-type]
    assert not hasattr(prompt, "steps")  # removed after its deprecation at 0.2.0: step_count
