"""The prompt vectors (testdata/prompt-vectors; rules in its README.md).

The binding's Prompt keeps its own copy of the incremental rules (overflow,
the steps[k] path of a refused step, the prompt unchanged after it); each
step's expected response is the reference's answer to one request holding
all the steps so far.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Dict, List

import pytest

import polyloop_assembly as pa

from conftest import REPO
from test_vectors import request_to_python

PROMPTS = REPO / "testdata" / "prompt-vectors" / "prompts.json"
CASE_KEYS = {"name", "description", "request", "response", "steps"}
STEP_KEYS = {"raw_output", "observation", "response", "error"}


def load_prompts() -> List[Dict[str, Any]]:
    """Rule 1: unknown keys, duplicate names and steps without exactly one of
    response / error are errors."""
    doc = json.loads(PROMPTS.read_text(encoding="ascii"))
    assert set(doc) == {"description", "cases"}
    names = set()
    for c in doc["cases"]:
        assert set(c) == CASE_KEYS, c["name"]
        assert c["name"] not in names, c["name"]
        names.add(c["name"])
        for s in c["steps"]:
            assert set(s) <= STEP_KEYS and ("response" in s) != ("error" in s), c["name"]
    return list(doc["cases"])


CASES = load_prompts()


def expected(b64: str) -> Any:
    return request_to_python(base64.b64decode(b64, validate=True))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_prompt_vector(case: Dict[str, Any]) -> None:
    p = pa.Prompt(case["request"])
    want = expected(case["response"])
    assert p.response() == want, "the first response"
    for i, s in enumerate(case["steps"]):
        if "error" in s:
            with pytest.raises(pa.AssemblyError) as info:
                p.add_step(s["raw_output"], s["observation"])
            assert (info.value.code, info.value.path) == (s["error"]["code"], s["error"]["path"]), "step %d" % i
        else:
            p.add_step(s["raw_output"], s["observation"])
            want = expected(s["response"])
        assert p.response() == want, "after step %d (%r, %r)" % (i, s["raw_output"], s["observation"])
        assert p.context_overflow is want["context_overflow"] and p.prompt_chars == want["prompt_chars"], "step %d" % i


def test_prompt_vectors_cover_the_rules() -> None:
    """The file holds refused steps, overflow turning on, and steps after a refusal."""
    refused = [s for c in CASES for s in c["steps"] if "error" in s]
    assert len(CASES) >= 8 and len(refused) >= 5
    overflow = {expected(s["response"])["context_overflow"] for c in CASES for s in c["steps"] if "response" in s}
    assert overflow == {True, False}
