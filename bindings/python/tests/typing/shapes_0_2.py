"""The wire types as version 0.2 wrote them by hand (an independent oracle
for the generated ones in polyloop_assembly._types): type-checked with
``mypy --strict`` in tests/test_typing.py, each generated type must be
assignable to the hand-written one and back, so user code type-checks the
same as before."""

from __future__ import annotations

from typing import Dict, List, Literal, Optional, TypedDict

import polyloop_assembly as pa
from polyloop_assembly import ErrorCode

#: Roles of a message.
OldRole = Literal["system", "user", "assistant"]


class OldBlock(TypedDict):
    """A content block; ``type`` is always ``"text"`` in wire version 1."""

    type: Literal["text"]
    text: str


class OldMessage(TypedDict):
    """A chat message: a role and its content blocks."""

    role: OldRole
    content: List[OldBlock]


class OldInjection(TypedDict):
    """An entry pasted by the injection slot; ``entry_id`` must be non-empty."""

    entry_id: str
    content: str


class OldStep(TypedDict):
    """A completed step: the text handed back for the history and the observation."""

    raw_output: str
    observation: str


class _OldRequestRequired(TypedDict):
    observation_template: str


class OldAssembleRequest(_OldRequestRequired, total=False):
    """An assembly request. Only ``observation_template`` is required."""

    v: int
    run_messages: List[OldMessage]
    injections: Dict[str, List[OldInjection]]
    goal_messages: List[OldMessage]
    steps: List[OldStep]
    max_prompt_chars: Optional[int]


class OldInjected(TypedDict):
    """One message pasted by the injection slot."""

    channel: str
    entry_id: str
    message_index: int


class OldPrefixDigests(TypedDict):
    """Lowercase hex SHA-256 of the canonical encoding of ``messages[0:end of the
    segment]``; equal digests mean an identical cacheable prefix."""

    run: str
    injections: str
    goal: str


class OldAssembleResponse(TypedDict):
    """A successful assembly; ``ok`` is always True."""

    v: int
    ok: bool
    messages: List[OldMessage]
    message_chars: List[int]
    prompt_chars: int
    context_overflow: bool
    injected: List[OldInjected]
    prefix_digests: OldPrefixDigests


class _OldErrorDetailRequired(TypedDict):
    code: ErrorCode
    message: str
    path: str


class OldErrorDetail(_OldErrorDetailRequired, total=False):
    """The ``error`` member of an error response; ``offset`` (the code-point
    offset in the template) only in ``invalid_template`` errors."""

    offset: int


class OldErrorResponse(TypedDict):
    """An error response as ``assemble_bytes`` returns it, decoded; ``ok`` is False."""

    v: int
    ok: bool
    error: OldErrorDetail


# --- the comparison of two prompts (docs/SPEC.md §7.9, in the source repository) ------------------------


class OldCompareSide(TypedDict):
    """One side of a comparison: a request (assembled) or a recorded message list."""

    kind: Literal["request", "messages"]
    messages: int
    prompt_chars: int


class OldDifference(TypedDict):
    """Where two prompts first differ (docs/SPEC.md §7.9, in the source repository)."""

    message: int
    char: int
    kind: Literal["role", "text", "blocks", "length"]
    segment: Optional[Literal["run", "injections", "goal", "history"]]
    step: Optional[int]
    role_a: Optional[str]
    role_b: Optional[str]
    excerpt_before: str
    excerpt_a: Optional[str]
    excerpt_b: Optional[str]


class OldPrefixDigestsMatch(TypedDict):
    """Whether each prefix digest still matches; None where it cannot be told."""

    run: Optional[bool]
    injections: Optional[bool]
    goal: Optional[bool]


class OldComparison(TypedDict):
    """The answer of :func:`polyloop_assembly.compare`."""

    identical: bool
    a: OldCompareSide
    b: OldCompareSide
    first_difference: Optional[OldDifference]
    prefix_digests: OldPrefixDigestsMatch
    cacheable_prefix_chars: int


# Each generated type is the hand-written one, both ways.


def block_to_old(x: pa.Block) -> OldBlock:
    return x


def block_from_old(x: OldBlock) -> pa.Block:
    return x


def message_to_old(x: pa.Message) -> OldMessage:
    return x


def message_from_old(x: OldMessage) -> pa.Message:
    return x


def injection_to_old(x: pa.Injection) -> OldInjection:
    return x


def injection_from_old(x: OldInjection) -> pa.Injection:
    return x


def step_to_old(x: pa.Step) -> OldStep:
    return x


def step_from_old(x: OldStep) -> pa.Step:
    return x


def assemble_request_to_old(x: pa.AssembleRequest) -> OldAssembleRequest:
    return x


def assemble_request_from_old(x: OldAssembleRequest) -> pa.AssembleRequest:
    return x


def injected_to_old(x: pa.Injected) -> OldInjected:
    return x


def injected_from_old(x: OldInjected) -> pa.Injected:
    return x


def prefix_digests_to_old(x: pa.PrefixDigests) -> OldPrefixDigests:
    return x


def prefix_digests_from_old(x: OldPrefixDigests) -> pa.PrefixDigests:
    return x


def assemble_response_to_old(x: pa.AssembleResponse) -> OldAssembleResponse:
    return x


def assemble_response_from_old(x: OldAssembleResponse) -> pa.AssembleResponse:
    return x


def error_detail_to_old(x: pa.ErrorDetail) -> OldErrorDetail:
    return x


def error_detail_from_old(x: OldErrorDetail) -> pa.ErrorDetail:
    return x


def error_response_to_old(x: pa.ErrorResponse) -> OldErrorResponse:
    return x


def error_response_from_old(x: OldErrorResponse) -> pa.ErrorResponse:
    return x


def compare_side_to_old(x: pa.CompareSide) -> OldCompareSide:
    return x


def compare_side_from_old(x: OldCompareSide) -> pa.CompareSide:
    return x


def difference_to_old(x: pa.Difference) -> OldDifference:
    return x


def difference_from_old(x: OldDifference) -> pa.Difference:
    return x


def prefix_digests_match_to_old(x: pa.PrefixDigestsMatch) -> OldPrefixDigestsMatch:
    return x


def prefix_digests_match_from_old(x: OldPrefixDigestsMatch) -> pa.PrefixDigestsMatch:
    return x


def comparison_to_old(x: pa.Comparison) -> OldComparison:
    return x


def comparison_from_old(x: OldComparison) -> pa.Comparison:
    return x


def role_both_ways(x: pa.Role, y: OldRole) -> List[OldRole]:
    back: pa.Role = y
    return [x, back]
