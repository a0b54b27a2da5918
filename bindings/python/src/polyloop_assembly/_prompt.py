"""The incremental form for agent loops: :class:`Prompt`, a shim over the module's
``add_step`` export (the README's "API"; the project's docs/SPEC.md §7.3 and
§7.3.1, in the source repository).

The Prompt holds what ``add_step`` needs and what it shows: the template, the
budget, the messages, their sizes, what was injected, the prefix digests and
the prompt's state ``(steps, messages, prompt_chars, response_bytes,
request_bytes)``, which the module's ``prompt_start`` answers with the first
assemble. Each
step sends the core the template, the budget, the state and the step; the
core judges the step as ``steps[k]`` of the whole request, decides
``context_overflow`` and the response limit, and answers the step's two
messages and the next state. Nothing of that rule is written here.
"""

from __future__ import annotations

import copy as _copy
import operator
import warnings
from typing import Any, Dict, List, Optional, Tuple, cast

import msgpack  # type: ignore[import-untyped]

from . import _codec
from ._assembler import Assembler, _decode_ok, _encode, default_assembler
from ._consts import MSG_BAD_RESPONSE, WIRE_VERSION
from ._errors import AssemblyError
from ._types import AssembleRequest, AssembleResponse, Injected, Message, PrefixDigests

__all__ = ["Prompt"]

#: The keys of the prompt state, in the order of the add_step request and response.
_STATE_KEYS = ("steps", "messages", "prompt_chars", "response_bytes", "request_bytes")

# The fixed parts of an add_step request after its head (see Prompt._init_packer).
_K_MESSAGES, _K_CHARS, _K_BYTES, _K_REQUEST = (msgpack.packb(k) for k in _STATE_KEYS[1:])
_K_STEP_RAW = msgpack.packb("step") + b"\x82" + msgpack.packb("raw_output")
_K_OBSERVATION = msgpack.packb("observation")

State = Tuple[int, int, int, int, int]


def _state_of(response: Dict[str, Any]) -> State:
    """The prompt state of a prompt_start or add_step response."""
    try:
        st = response["prompt"]
        return cast(State, tuple(st[k] for k in _STATE_KEYS))
    except (KeyError, TypeError):
        raise AssemblyError("internal", "", MSG_BAD_RESPONSE, detail="the module answered %.200r" % (response,)) from None


def _copy_messages(messages: List[Message]) -> List[Message]:
    """New message dicts, content lists and block dicts of the same strings."""
    return [cast(Message, {**m, "content": [dict(b) for b in m["content"]]}) for m in messages]


class Prompt:
    """The incremental form for agent loops.

    ``Prompt(request)`` assembles ``request`` once; ``add_step(raw_output,
    observation)`` then appends one step at a cost independent of the history
    already held: the module's ``add_step`` is sent the template, the budget,
    five numbers of the prompt's state and that step, never the history.
    After k steps, :attr:`messages`, :attr:`message_chars`,
    :attr:`prompt_chars`, :attr:`context_overflow`, :attr:`injected` and
    :attr:`prefix_digests` equal those of one :func:`assemble` of the request
    with those k steps appended to its ``steps``.

    A Prompt is owned by one loop: it is not safe to add steps to the same
    Prompt from several threads at once (the assembler it runs on is). To
    branch (best-of-n, tree search), :meth:`copy` it: the copies share
    nothing a step changes. A Prompt pickles (its assembler by reference).

    Raises:
        AssemblyError: from the constructor if ``request`` is invalid.
    """

    def __init__(self, request: AssembleRequest, *, assembler: Optional[Assembler] = None) -> None:
        self._assembler = assembler if assembler is not None else default_assembler()
        caught: List[BaseException] = []
        response = _decode_ok(self._assembler._prompt_start_bytes(_encode(request, caught)), caught)
        budget = request.get("max_prompt_chars")
        self._budget: Optional[int] = None if budget is None else operator.index(budget)
        self._template: str = request["observation_template"]
        self._messages: List[Message] = response["messages"]
        self._message_chars: List[int] = response["message_chars"]
        self._injected: List[Injected] = response["injected"]
        self._prefix_digests: PrefixDigests = response["prefix_digests"]
        self._overflow: bool = response["context_overflow"]
        self._state: State = _state_of(response)
        self._init_packer()

    def _init_packer(self) -> None:
        """Pack once what every add_step request of this prompt starts with:
        ``{v, observation_template, [max_prompt_chars], prompt: {steps: ``."""
        self._packer = _codec.new_fast_packer()  # a lone surrogate raises: add_step's slow way writes it
        pk = self._packer.pack
        head = [b"\x84" if self._budget is None else b"\x85", pk("v"), pk(WIRE_VERSION)]
        head += [pk("observation_template"), pk(self._template)]
        if self._budget is not None:
            head += [pk("max_prompt_chars"), pk(self._budget)]
        head += [pk("prompt"), b"\x85", pk("steps")]
        self._head = b"".join(head)

    def add_step(self, raw_output: str, observation: str) -> "Prompt":
        """Append one completed step: the assistant message ``raw_output`` as
        given, then the user message ``observation`` rendered through the
        request's observation template.

        Returns:
            This prompt (so calls chain).

        Raises:
            AssemblyError: a bad value, with its path at the step's real index
                (e.g. ``steps[7].observation``); or ``too_large`` at ``""``
                when the whole response would pass the 1.5 GiB limit, exactly
                when one :func:`assemble` of the request with all the steps
                would be ``too_large``. The Prompt is then unchanged.
        """
        caught: List[BaseException] = []
        steps, messages, chars, size, request_size = self._state
        try:
            pk = self._packer.pack
            head = (
                self._head,
                pk(steps),
                _K_MESSAGES,
                pk(messages),
                _K_CHARS,
                pk(chars),
                _K_BYTES,
                pk(size),
                _K_REQUEST,
                pk(request_size),
            )
            body = b"".join((*head, _K_STEP_RAW, pk(raw_output), _K_OBSERVATION, pk(observation)))
        except Exception:  # anything msgpack cannot pack directly: the codec's slow way writes it
            self._packer = _codec.new_fast_packer()
            body = self._encode_slow(raw_output, observation, caught)
        response = _decode_ok(self._assembler._add_step_bytes(body), caught)
        try:
            new_messages, new_chars, overflow = response["messages"], response["message_chars"], response["context_overflow"]
        except (KeyError, TypeError):
            raise AssemblyError("internal", "", MSG_BAD_RESPONSE, detail="add_step answered %.200r" % (response,)) from None
        state = _state_of(response)
        # The step is committed by in-place operators and stores alone: no
        # call, so an exception a signal handler raises (Ctrl-C) lands before
        # or after the commit, never inside it; the Prompt is whole either way.
        self._messages += new_messages
        self._message_chars += new_chars
        self._state = state
        self._overflow = overflow
        return self

    def _encode_slow(self, raw_output: Any, observation: Any, caught: List[BaseException]) -> bytes:
        """The add_step request of this step as the codec writes any value
        (unreadable values as EXT_UNREADABLE, whose exceptions go to ``caught``)."""
        request: Dict[str, Any] = {"v": WIRE_VERSION, "observation_template": self._template}
        if self._budget is not None:
            request["max_prompt_chars"] = self._budget
        request["prompt"] = dict(zip(_STATE_KEYS, self._state))
        request["step"] = {"raw_output": raw_output, "observation": observation}
        return _encode(request, caught)

    def copy(self) -> "Prompt":
        """An independent copy to branch from: steps added to one do not change the other.

        Costs a copy of the message list (not of the messages, which no step
        changes); both copies run on the same assembler.
        """
        other = Prompt.__new__(Prompt)
        other.__setstate__(self.__getstate__())
        return other

    def __copy__(self) -> "Prompt":
        return self.copy()

    def __deepcopy__(self, memo: Dict[int, Any]) -> "Prompt":
        other = Prompt.__new__(Prompt)
        state = self.__getstate__()
        assembler = state.pop("_assembler")
        state = _copy.deepcopy(state, memo)
        state["_assembler"] = assembler
        other.__setstate__(state)
        return other

    def __getstate__(self) -> Dict[str, Any]:
        return {
            "_assembler": self._assembler,
            "_budget": self._budget,
            "_template": self._template,
            "_messages": list(self._messages),
            "_message_chars": list(self._message_chars),
            "_injected": list(self._injected),
            "_prefix_digests": self._prefix_digests,
            "_overflow": self._overflow,
            "_state": self._state,
        }

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_packer()

    @property
    def messages(self) -> List[Message]:
        """The assembled messages: a copy the caller may edit (new message dicts,
        content lists and block dicts; O(messages) per access)."""
        return _copy_messages(self._messages)

    @property
    def message_chars(self) -> List[int]:
        """The size of each message in code points, parallel to :attr:`messages`."""
        return list(self._message_chars)

    @property
    def prompt_chars(self) -> int:
        """The sum of :attr:`message_chars`."""
        return self._state[2]

    @property
    def context_overflow(self) -> bool:
        """True iff the request gave ``max_prompt_chars`` and :attr:`prompt_chars` exceeds it (the core's verdict)."""
        return self._overflow

    @property
    def injected(self) -> List[Injected]:
        """What the injection slot pasted (steps never change it): a copy."""
        return [cast(Injected, dict(i)) for i in self._injected]

    @property
    def prefix_digests(self) -> PrefixDigests:
        """Digests of the run, injection and goal prefixes (steps never change them)."""
        return cast(PrefixDigests, dict(self._prefix_digests))

    @property
    def step_count(self) -> int:
        """The number of steps held: those of the request plus those added."""
        return self._state[0]

    @property
    def steps(self) -> int:
        """Deprecated alias of :attr:`step_count` (kept for one release)."""
        warnings.warn("Prompt.steps is deprecated; use Prompt.step_count", DeprecationWarning, stacklevel=2)
        return self._state[0]

    def response(self) -> AssembleResponse:
        """The response one :func:`assemble` of the request with all steps so far
        would return: a copy the caller may edit (O(messages))."""
        out: Dict[str, Any] = {
            "v": WIRE_VERSION,
            "ok": True,
            "messages": self.messages,
            "message_chars": self.message_chars,
            "prompt_chars": self._state[2],
            "context_overflow": self._overflow,
            "injected": self.injected,
            "prefix_digests": self.prefix_digests,
        }
        return cast(AssembleResponse, out)

    def _response_size(self) -> int:
        """The byte length of the canonical response one :func:`assemble` of the
        request with all steps so far would return (the state's ``response_bytes``,
        kept by the core)."""
        return self._state[3]

    def __len__(self) -> int:
        return len(self._messages)

    def __repr__(self) -> str:
        return "<Prompt steps=%d messages=%d prompt_chars=%d context_overflow=%s>" % (
            self._state[0],
            len(self._messages),
            self._state[2],
            self._overflow,
        )
