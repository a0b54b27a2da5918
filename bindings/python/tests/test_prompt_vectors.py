"""The prompt vectors (testdata/prompt-vectors; rules in its README.md).

The binding's Prompt keeps its own copy of the incremental rules (overflow,
the steps[k] path of a refused step, the prompt unchanged after it); each
step's expected response is the reference's answer to one request holding
all the steps so far.
"""

from __future__ import annotations

import pytest

import polyloop_assembly as pa

from vectorsets import Case, check_error, load, request_to_python

CASES = load("prompt-vectors")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_prompt_vector(case: Case) -> None:
    assert case.response is not None
    p = pa.Prompt(case.request)
    want = request_to_python(case.response)
    assert p.response() == want, "the first response"
    for i, s in enumerate(case.steps):
        if "error" in s:
            with pytest.raises(pa.AssemblyError) as info:
                p.add_step(s["raw_output"], s["observation"])
            check_error(info.value, s["error"], "step %d" % i)
        else:
            p.add_step(s["raw_output"], s["observation"])
            want = request_to_python(s["response"])
        assert p.response() == want, "after step %d (%r, %r)" % (i, s["raw_output"], s["observation"])
        assert p.context_overflow is want["context_overflow"] and p.prompt_chars == want["prompt_chars"], "step %d" % i


def test_prompt_vectors_cover_the_rules() -> None:
    """The file holds refused steps, overflow turning on, and steps after a refusal."""
    refused = [s for c in CASES for s in c.steps if "error" in s]
    assert len(CASES) >= 8 and len(refused) >= 5
    overflow = {request_to_python(s["response"])["context_overflow"] for c in CASES for s in c.steps if "response" in s}
    assert overflow == {True, False}
