"""The size of a prompt's canonical response, kept step by step (docs/SPEC.md §7.3).

One :func:`~polyloop_assembly.assemble` refuses a request whose canonical ok
response would be over :data:`MAX_RESPONSE_BYTES` (``too_large`` at ``""``,
docs/SPEC.md §4). A :class:`~polyloop_assembly.Prompt` never sends the whole
request, so it must know that size itself, at a cost independent of the
history: ``add_step`` refuses exactly when one ``assemble`` of the same steps
would. This module is the one place the binding knows anything about the
response's size; it mirrors ``core.ResponseSizer`` (core/size.go).

The rule, from the response's canonical layout (docs/SPEC.md §6): an ok
response is ``{v, ok, messages: [m...], message_chars: [c...], prompt_chars,
context_overflow, injected, prefix_digests}``, so its size is

    size = fixed + sum(entry(m, c)) + 2 * array_header(n) + uint(prompt_chars)

where ``fixed`` depends only on ``injected`` (which steps never change),
``entry(m, c)`` is what one message adds (its encoding and its
``message_chars`` entry, wherever it stands), ``n`` the number of messages.
The binding measures each part from real responses instead of encoding
anything itself: for a response of ``L`` bytes with ``n`` messages and
``prompt_chars`` ``p``, ``L - variable(n, p)`` is ``fixed + sum(entry)``; a
step's own response (no injected entries) gives its messages' entries as
``L - variable(n, p) - EMPTY_FIXED``. What is left to write here is the
msgpack header widths and :data:`EMPTY_FIXED`; tests/test_prompt_size.py
checks the kept size against ``len(assemble_bytes(...))`` of the whole
request after every step, and that ``add_step`` refuses exactly when that
response is over the limit.
"""

from __future__ import annotations

from ._errors import AssemblyError

__all__ = [
    "EMPTY_FIXED",
    "MAX_RESPONSE_BYTES",
    "MSG_RESPONSE_TOO_LARGE",
    "array_header",
    "check",
    "rest",
    "size",
    "step_entries",
    "uint",
    "variable",
]

#: The largest canonical response (core.MaxResponseBytes): 1.5 GiB.
MAX_RESPONSE_BYTES = 3 << 29

#: The core's message for a response over the limit (core/size.go, checkResponseSize).
MSG_RESPONSE_TOO_LARGE = (
    "the response would be over the 1.5 GiB limit; split the request (fewer steps, or a narrower template width)"
)

#: ``fixed`` of a response with nothing injected: the size of the response to
#: ``{"observation_template": ...}`` (309 bytes: no messages) less its
#: ``variable(0, 0)`` of 3 bytes. The eight keys and their fixed values, the
#: empty ``injected`` array and the three 64-digit prefix digests.
EMPTY_FIXED = 306


def array_header(n: int) -> int:
    """Bytes of a msgpack array header for ``n`` elements (shortest form)."""
    return 1 if n <= 15 else 3 if n <= 0xFFFF else 5


def uint(n: int) -> int:
    """Bytes of a non-negative msgpack int (shortest form)."""
    return 1 if n <= 0x7F else 2 if n <= 0xFF else 3 if n <= 0xFFFF else 5 if n <= 0xFFFFFFFF else 9


def variable(messages: int, prompt_chars: int) -> int:
    """The part of a response's size that is not a sum over its parts: the
    headers of ``messages`` and ``message_chars`` and the ``prompt_chars`` int."""
    return 2 * array_header(messages) + uint(prompt_chars)


def rest(nbytes: int, messages: int, prompt_chars: int) -> int:
    """``fixed + sum(entry)`` of a response of ``nbytes`` bytes with that many
    ``messages`` and that ``prompt_chars``: its size but :func:`variable`."""
    return nbytes - variable(messages, prompt_chars)


def step_entries(step_nbytes: int, step_messages: int, step_chars: int) -> int:
    """``sum(entry)`` of a step's messages, from the step's own response (a
    request of the template and that one step: nothing injected)."""
    return rest(step_nbytes, step_messages, step_chars) - EMPTY_FIXED


def size(rest_: int, messages: int, prompt_chars: int) -> int:
    """The size of a response whose :func:`rest` is ``rest_``, with those totals."""
    return rest_ + variable(messages, prompt_chars)


def check(size_: int) -> None:
    """Raise ``too_large`` at ``""`` (the core's words) if a response of
    ``size_`` bytes is over :data:`MAX_RESPONSE_BYTES` (read at call time, so
    tests can lower it)."""
    if size_ > MAX_RESPONSE_BYTES:
        raise AssemblyError("too_large", "", MSG_RESPONSE_TOO_LARGE)
