"""Typed shapes of the wire format v1 as TypedDicts (the README's "Types"; the
project's docs/SPEC.md §2 and §6, in the source repository).

They describe well-formed values for type checkers only: at run time any
mapping is accepted and the WebAssembly core alone decides what is valid.
"""

from __future__ import annotations

from typing import Dict, List, Literal, Optional, TypedDict

from ._consts import ErrorCode

__all__ = [
    "AssembleRequest",
    "AssembleResponse",
    "Block",
    "CompareSide",
    "Comparison",
    "Difference",
    "PrefixDigestsMatch",
    "ErrorCode",
    "ErrorDetail",
    "ErrorResponse",
    "Injected",
    "Injection",
    "Message",
    "PrefixDigests",
    "Request",
    "Response",
    "Role",
    "Step",
]

#: Roles of a message.
Role = Literal["system", "user", "assistant"]


class Block(TypedDict):
    """A content block; ``type`` is always ``"text"`` in wire version 1."""

    type: Literal["text"]
    text: str


class Message(TypedDict):
    """A chat message: a role and its content blocks."""

    role: Role
    content: List[Block]


class Injection(TypedDict):
    """An entry pasted by the injection slot; ``entry_id`` must be non-empty."""

    entry_id: str
    content: str


class Step(TypedDict):
    """A completed step: the text handed back for the history and the observation."""

    raw_output: str
    observation: str


class _RequestRequired(TypedDict):
    observation_template: str


class AssembleRequest(_RequestRequired, total=False):
    """An assembly request. Only ``observation_template`` is required."""

    v: int
    run_messages: List[Message]
    injections: Dict[str, List[Injection]]
    goal_messages: List[Message]
    steps: List[Step]
    max_prompt_chars: Optional[int]


class Injected(TypedDict):
    """One message pasted by the injection slot."""

    channel: str
    entry_id: str
    message_index: int


class PrefixDigests(TypedDict):
    """Lowercase hex SHA-256 of the canonical encoding of ``messages[0:end of the
    segment]``; equal digests mean an identical cacheable prefix."""

    run: str
    injections: str
    goal: str


class AssembleResponse(TypedDict):
    """A successful assembly; ``ok`` is always True."""

    v: int
    ok: bool
    messages: List[Message]
    message_chars: List[int]
    prompt_chars: int
    context_overflow: bool
    injected: List[Injected]
    prefix_digests: PrefixDigests


#: Deprecated alias of :class:`AssembleRequest` (the same object), kept for one release.
Request = AssembleRequest

#: Deprecated alias of :class:`AssembleResponse` (the same object), kept for one release.
Response = AssembleResponse


class _ErrorDetailRequired(TypedDict):
    code: ErrorCode
    message: str
    path: str


class ErrorDetail(_ErrorDetailRequired, total=False):
    """The ``error`` member of an error response; ``offset`` (the code-point
    offset in the template) only in ``invalid_template`` errors."""

    offset: int


class ErrorResponse(TypedDict):
    """An error response as ``assemble_bytes`` returns it, decoded; ``ok`` is False."""

    v: int
    ok: bool
    error: ErrorDetail


# --- the comparison of two prompts (docs/SPEC.md §7.9, in the source repository) ------------------------


class CompareSide(TypedDict):
    """One side of a comparison: a request (assembled) or a recorded message list."""

    kind: Literal["request", "messages"]
    messages: int
    prompt_chars: int


class Difference(TypedDict):
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


class PrefixDigestsMatch(TypedDict):
    """Whether each prefix digest still matches; None where it cannot be told."""

    run: Optional[bool]
    injections: Optional[bool]
    goal: Optional[bool]


class Comparison(TypedDict):
    """The answer of :func:`polyloop_assembly.compare`."""

    identical: bool
    a: CompareSide
    b: CompareSide
    first_difference: Optional[Difference]
    prefix_digests: PrefixDigestsMatch
    cacheable_prefix_chars: int
