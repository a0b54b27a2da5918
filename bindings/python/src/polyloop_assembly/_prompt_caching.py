"""Prompt caching made visible: a run's cache report and the provider's
request body (the project's docs/SPEC.md §7.12 and §7.13, in the source
repository). The core answers both; these facades forward to the generic
call, typed to the leaf by the generated types (_types.py).
"""

from __future__ import annotations

import copy as _copy
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union, cast, overload

from ._assembler import Assembler, Prompt, default_assembler, prompt_side
from . import _codec
from ._codec import usage_value
from ._types import (
    AnthropicBody,
    AssembleRequest,
    BedrockBody,
    CacheCall,
    CacheReport,
    ExportBody,
    GeminiBody,
    OpenAIChatBody,
    OpenRouterBody,
)
from ._types import OpenAIResponsesBody, Provider

__all__ = ["CacheRun", "RequestLike", "UsageLike", "cache_report", "export"]

#: A request as :func:`cache_report` and :func:`export` take it: a dict, a :class:`Prompt` (as it is at the call),
#: or a request's JSON text, or its msgpack bytes.
RequestLike = Union[AssembleRequest, Prompt, str, bytes, bytearray, memoryview]
#: A provider's recorded usage of one call: its usage object, or a whole response holding one under ``usage``, its
#: JSON text, or the provider SDK's own object (read through ``model_dump()`` or ``to_dict()``).
UsageLike = Any

TTL = Literal["5m", "1h"]


def _as_list(values: Any) -> Any:
    """A list of ``values`` (a :class:`Prompt` as its prompt form); a mapping, a string or bytes as they are, so the
    core refuses what is no list."""
    if isinstance(values, (Mapping, str, bytes, bytearray, memoryview, Prompt)):
        return prompt_side(values)
    return [prompt_side(v) for v in values]


def cache_report(
    requests: Sequence[RequestLike],
    usage: Optional[Sequence[Optional[UsageLike]]] = None,
    *,
    assembler: Optional[Assembler] = None,
) -> CacheReport:
    """Report on the calls of a run, in call order: for each, whether its prompt extends the previous call's
    (``extends``), the first ``break`` (segment, message, char, cause: ``run_changed``, ``injections_changed``,
    ``goal_changed``, ``history_rewritten``, ``steps_removed``), ``cacheable_prefix_chars``; the stable prefixes
    (``groups``) and ``totals``. ``requests`` is a list of dicts, :class:`Prompt` objects, JSON texts or msgpack
    bytes (one request where the list belongs: :class:`AssemblyError` ``malformed_request`` at ``requests``);
    ``usage``, one per request, the provider's recorded usage (``None`` where none): a usage dict or a whole
    response, its JSON text, or the provider SDK's own object (``anthropic.types.Message``,
    ``openai.types.chat.ChatCompletion``, ``openai.types.responses.Response`` or their ``usage``, read through
    ``model_dump()``; anything else raises ``malformed_request`` at ``usage[i]``): each call then gets a class,
    ``first``, ``hit``, ``prefix_break``, ``write_only``, ``provider_miss`` or ``unknown_usage`` (a usage of no
    shape the report reads: never taken for a miss), with ``cached_tokens`` and ``written_tokens``. An invalid request is its call's
    ``{"error": …}`` (narrow with ``"error" in call``); the report never raises for one."""
    given = None if usage is None else [usage_value(u, "usage[%d]" % i) for i, u in enumerate(_as_list(usage))]
    args = (_as_list(requests), given)
    return cast(CacheReport, (assembler or default_assembler()).call("cache_report", *args))


@overload
def export(
    request: RequestLike,
    provider: Literal["anthropic"],
    *,
    ttl: Optional[TTL] = ...,
    max_breakpoints: Optional[int] = ...,
    lookback: Optional[int] = ...,
    prompt_cache_key: Optional[str] = ...,
    explicit_breakpoints: Optional[bool] = ...,
    cached_content: Optional[str] = ...,
    body: Optional[Mapping[str, Any]] = ...,
    assembler: Optional[Assembler] = ...,
) -> AnthropicBody: ...
@overload
def export(
    request: RequestLike,
    provider: Literal["openai-chat"],
    *,
    ttl: Optional[TTL] = ...,
    max_breakpoints: Optional[int] = ...,
    lookback: Optional[int] = ...,
    prompt_cache_key: Optional[str] = ...,
    explicit_breakpoints: Optional[bool] = ...,
    cached_content: Optional[str] = ...,
    body: Optional[Mapping[str, Any]] = ...,
    assembler: Optional[Assembler] = ...,
) -> OpenAIChatBody: ...
@overload
def export(
    request: RequestLike,
    provider: Literal["openrouter"],
    *,
    ttl: Optional[TTL] = ...,
    max_breakpoints: Optional[int] = ...,
    lookback: Optional[int] = ...,
    prompt_cache_key: Optional[str] = ...,
    explicit_breakpoints: Optional[bool] = ...,
    cached_content: Optional[str] = ...,
    body: Optional[Mapping[str, Any]] = ...,
    assembler: Optional[Assembler] = ...,
) -> OpenRouterBody: ...
@overload
def export(
    request: RequestLike,
    provider: Literal["openai-responses"],
    *,
    ttl: Optional[TTL] = ...,
    max_breakpoints: Optional[int] = ...,
    lookback: Optional[int] = ...,
    prompt_cache_key: Optional[str] = ...,
    explicit_breakpoints: Optional[bool] = ...,
    cached_content: Optional[str] = ...,
    body: Optional[Mapping[str, Any]] = ...,
    assembler: Optional[Assembler] = ...,
) -> OpenAIResponsesBody: ...
@overload
def export(
    request: RequestLike,
    provider: Literal["bedrock-converse"],
    *,
    ttl: Optional[TTL] = ...,
    max_breakpoints: Optional[int] = ...,
    lookback: Optional[int] = ...,
    prompt_cache_key: Optional[str] = ...,
    explicit_breakpoints: Optional[bool] = ...,
    cached_content: Optional[str] = ...,
    body: Optional[Mapping[str, Any]] = ...,
    assembler: Optional[Assembler] = ...,
) -> BedrockBody: ...
@overload
def export(
    request: RequestLike,
    provider: Literal["gemini"],
    *,
    ttl: Optional[TTL] = ...,
    max_breakpoints: Optional[int] = ...,
    lookback: Optional[int] = ...,
    prompt_cache_key: Optional[str] = ...,
    explicit_breakpoints: Optional[bool] = ...,
    cached_content: Optional[str] = ...,
    body: Optional[Mapping[str, Any]] = ...,
    assembler: Optional[Assembler] = ...,
) -> GeminiBody: ...
@overload
def export(
    request: RequestLike,
    provider: Literal["gemini-cache"],
    *,
    ttl: Optional[TTL] = ...,
    max_breakpoints: Optional[int] = ...,
    lookback: Optional[int] = ...,
    prompt_cache_key: Optional[str] = ...,
    explicit_breakpoints: Optional[bool] = ...,
    cached_content: Optional[str] = ...,
    body: Optional[Mapping[str, Any]] = ...,
    assembler: Optional[Assembler] = ...,
) -> GeminiBody: ...
@overload
def export(
    request: RequestLike,
    provider: Provider,
    *,
    ttl: Optional[TTL] = ...,
    max_breakpoints: Optional[int] = ...,
    lookback: Optional[int] = ...,
    prompt_cache_key: Optional[str] = ...,
    explicit_breakpoints: Optional[bool] = ...,
    cached_content: Optional[str] = ...,
    body: Optional[Mapping[str, Any]] = ...,
    assembler: Optional[Assembler] = ...,
) -> ExportBody: ...
def export(
    request: RequestLike,
    provider: Provider,
    *,
    ttl: Optional[TTL] = None,
    max_breakpoints: Optional[int] = None,
    lookback: Optional[int] = None,
    prompt_cache_key: Optional[str] = None,
    explicit_breakpoints: Optional[bool] = None,
    cached_content: Optional[str] = None,
    body: Optional[Mapping[str, Any]] = None,
    assembler: Optional[Assembler] = None,
) -> ExportBody:
    """The provider's request body for ``request``'s prompt, every text untouched, typed by ``provider``:
    Anthropic's ``system`` and ``messages`` with ``cache_control`` on the last block of the run, injections, goal
    and prompt (``ttl``, ``max_breakpoints`` up to 4, ``lookback`` blocks); OpenAI's ``messages`` (``openai-chat``)
    or ``input`` (``openai-responses``) with ``prompt_cache_key`` (the run digest unless given; with
    ``explicit_breakpoints=True``, OpenAI's ``prompt_cache_breakpoint`` on the blocks Anthropic's would mark, none on
    an assistant's); OpenRouter's ``messages`` (``openrouter``: OpenAI's, with Anthropic's ``cache_control``); Bedrock Converse's
    ``system`` and ``messages`` (``bedrock-converse``: consecutive messages of one role joined, a ``cachePoint`` block
    after each block Anthropic's would mark) or Gemini's ``systemInstruction`` and ``contents`` (``gemini``, joined
    alike, no cache point; ``gemini-cache``: the ``cachedContents`` body of the run and injections, and ``gemini``
    with ``cached_content="cachedContents/…"`` the call naming it, with the goal and history only). ``body`` holds the
    provider's other fields (``model``, ``max_tokens``, ``tools``), written first as given (in the answer, not its
    type). Raises :class:`AssemblyError` (a system message after another role, for Anthropic, at its request
    path)."""
    options: Dict[str, Any] = dict(ttl=ttl, max_breakpoints=max_breakpoints, lookback=lookback)
    options.update(prompt_cache_key=prompt_cache_key, explicit_breakpoints=explicit_breakpoints, cached_content=cached_content)
    options.update(body=body)
    given = {k: v for k, v in options.items() if v is not None}
    return cast(ExportBody, (assembler or default_assembler()).call("export", prompt_side(request), provider, given))


def _snapshot(request: Any) -> Any:
    """A request as it is now, to send and to give back as the next call's ``previous`` (a dict can be changed after
    its call): a mapping as its msgpack bytes, which the core reads as it reads the mapping; bytes-like as bytes."""
    if isinstance(request, Mapping):
        return _codec.encode(request)
    if isinstance(request, (bytearray, memoryview)):
        return bytes(request)
    return request


class CacheRun:
    """A run's cache report made call by call (the project's docs/SPEC.md §7.15, in the source repository): hand
    :meth:`call` each call's prompt (a :class:`Prompt` or a request) and the provider's recorded usage (or whole response); it answers that
    call's entry of :func:`cache_report` at once (``extends``, ``break`` with its segment and cause,
    ``cacheable_prefix_chars``, the usage class), and :meth:`report` the whole run's, equal to :func:`cache_report`
    over the same prompts and usage. A Prompt that only grew since the last call costs what it added; a new Prompt
    (a condensed history, an edited injection) is compared with the last one and its break named.

    >>> run = CacheRun()
    >>> entry = run.call(prompt, response.usage)   # doctest: +SKIP
    """

    def __init__(self, *, assembler: Optional[Assembler] = None) -> None:
        self._asm = assembler or default_assembler()
        self._run: Optional[Dict[str, Any]] = None
        self._calls: List[CacheCall] = []
        self._last: Optional[Tuple[Any, int]] = None  # the last valid call's prompt, and its messages then

    def call(self, prompt: RequestLike, usage: UsageLike = None) -> CacheCall:
        """Report on the run's next call: ``prompt`` is what was sent (a :class:`Prompt`, as it is now, or a request:
        a dict, JSON text or msgpack bytes, kept as it is at the call), ``usage`` the provider's usage or response (``None``:
        none recorded, class ``no_usage``). Returns the call's entry; an invalid request is an entry with ``error``."""
        last, previous = self._last, None
        if isinstance(prompt, Prompt) and last is not None and last[0] is prompt and len(prompt) >= last[1]:
            arg: Any = {"extends": last[1], "messages": prompt._messages[last[1] :]}
        else:
            arg = _snapshot(prompt_side(prompt))
            if last is not None:
                previous = last[0]._form(last[1]) if isinstance(last[0], Prompt) else last[0]
        answer = self._asm.call("cache_call", self._run, arg, previous, usage_value(usage, "usage"))
        entry: CacheCall = answer["call"]
        self._run = answer["run"]
        self._calls.append(entry)
        if "error" not in entry:
            self._last = (prompt, len(prompt)) if isinstance(prompt, Prompt) else (arg, 0)
        return _copy.deepcopy(entry)  # the caller's to edit: the run keeps its own

    def report(self) -> CacheReport:
        """The whole run's report so far: what :func:`cache_report` answers for the same prompts and usage."""
        if self._run is None:
            return cache_report([], [], assembler=self._asm)
        run = self._run
        return cast(CacheReport, _copy.deepcopy({"calls": self._calls, "groups": run["groups"], "totals": run["totals"]}))

    def __len__(self) -> int:
        return len(self._calls)
