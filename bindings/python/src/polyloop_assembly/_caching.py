"""Prompt caching made visible: a run's cache report and the provider's
request body (the project's docs/SPEC.md §7.12 and §7.13, in the source
repository). The core answers both; these facades forward to the generic
call, typed to the leaf by the generated types (_types.py).
"""

from __future__ import annotations

from typing import Any, Dict, Literal, Mapping, Optional, Sequence, Union, cast, overload

from ._assembler import Assembler, default_assembler
from ._types import AnthropicBody, AssembleRequest, CacheReport, ExportBody, OpenAIChatBody, OpenAIResponsesBody, Provider

__all__ = ["RequestLike", "UsageLike", "cache_report", "export"]

#: A request as :func:`cache_report` and :func:`export` take it: a dict, or its JSON text, or its msgpack bytes.
RequestLike = Union[AssembleRequest, str, bytes, bytearray, memoryview]  # the integrator adds Prompt here
#: A provider's recorded usage of one call: its usage object, or a whole response holding one under ``usage``.
UsageLike = Mapping[str, Any]

TTL = Literal["5m", "1h"]


def _as_list(values: Any) -> Any:
    """A list of ``values``; a mapping, a string or bytes as they are, so the core refuses what is no list."""
    if isinstance(values, (Mapping, str, bytes, bytearray, memoryview)):
        return values
    return list(values)


def cache_report(
    requests: Sequence[RequestLike],
    usage: Optional[Sequence[Optional[UsageLike]]] = None,
    *,
    assembler: Optional[Assembler] = None,
) -> CacheReport:
    """Report on the calls of a run, in call order: for each, whether its prompt extends the previous call's
    (``extends``), the first ``break`` (segment, message, char, cause: ``run_changed``, ``injections_changed``,
    ``goal_changed``, ``history_rewritten``, ``steps_removed``), ``cacheable_prefix_chars``; the stable prefixes
    (``groups``) and ``totals``. ``requests`` is a list of dicts, JSON texts or msgpack bytes (one request where
    the list belongs: :class:`AssemblyError` ``malformed_request`` at ``requests``); ``usage``, one per request,
    the provider's recorded usage (a usage dict or a whole response; ``None`` where none): each call then gets
    a class, ``first``, ``hit``, ``prefix_break`` or ``provider_miss``. An invalid request is its call's
    ``{"error": …}`` (narrow with ``"error" in call``); the report never raises for one."""
    args = (_as_list(requests), None if usage is None else _as_list(usage))
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
    body: Optional[Mapping[str, Any]] = ...,
    assembler: Optional[Assembler] = ...,
) -> OpenAIChatBody: ...
@overload
def export(
    request: RequestLike,
    provider: Literal["openai-responses"],
    *,
    ttl: Optional[TTL] = ...,
    max_breakpoints: Optional[int] = ...,
    lookback: Optional[int] = ...,
    prompt_cache_key: Optional[str] = ...,
    body: Optional[Mapping[str, Any]] = ...,
    assembler: Optional[Assembler] = ...,
) -> OpenAIResponsesBody: ...
@overload
def export(
    request: RequestLike,
    provider: Provider,
    *,
    ttl: Optional[TTL] = ...,
    max_breakpoints: Optional[int] = ...,
    lookback: Optional[int] = ...,
    prompt_cache_key: Optional[str] = ...,
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
    body: Optional[Mapping[str, Any]] = None,
    assembler: Optional[Assembler] = None,
) -> ExportBody:
    """The provider's request body for ``request``'s prompt, every text untouched, typed by ``provider``:
    Anthropic's ``system`` and ``messages`` with ``cache_control`` on the last block of the run, injections, goal
    and prompt (``ttl``, ``max_breakpoints`` up to 4, ``lookback`` blocks); OpenAI's ``messages`` (``openai-chat``)
    or ``input`` (``openai-responses``) with ``prompt_cache_key`` (the run digest unless given). ``body`` holds the
    provider's other fields (``model``, ``max_tokens``, ``tools``), written first as given (in the answer, not its
    type). Raises :class:`AssemblyError` (a system message after another role, for Anthropic, at its request
    path)."""
    options: Dict[str, Any] = dict(ttl=ttl, max_breakpoints=max_breakpoints, lookback=lookback)
    options.update(prompt_cache_key=prompt_cache_key, body=body)
    given = {k: v for k, v in options.items() if v is not None}
    return cast(ExportBody, (assembler or default_assembler()).call("export", request, provider, given))
