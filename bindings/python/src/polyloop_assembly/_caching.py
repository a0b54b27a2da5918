"""Prompt caching made visible: a run's cache report and the provider's
request body (the project's docs/SPEC.md §7.12 and §7.13, in the source
repository). The core answers both; these facades forward to the generic
call.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Literal, Optional

from ._assembler import Assembler, default_assembler
from ._codec import usage_value

__all__ = ["Provider", "cache_report", "export"]

#: The request bodies :func:`export` writes.
Provider = Literal["anthropic", "openai-chat", "openai-responses"]


def cache_report(
    requests: Iterable[Any], usage: Optional[Iterable[Any]] = None, *, assembler: Optional[Assembler] = None
) -> Dict[str, Any]:
    """Report on the calls of a run, in call order: for each, whether its prompt extends the previous call's
    (``extends``), the first ``break`` (segment, message, char, cause: ``run_changed``, ``injections_changed``,
    ``goal_changed``, ``history_rewritten``, ``steps_removed``), ``cacheable_prefix_chars``; the stable prefixes
    (``groups``) and ``totals``. ``requests`` are dicts, JSON text or msgpack bytes; ``usage``, one per request,
    the provider's recorded usage (``None`` where none): a usage dict or a whole response, its JSON text, or the
    provider SDK's own object (``anthropic.types.Message``, ``openai.types.chat.ChatCompletion``,
    ``openai.types.responses.Response`` or their ``usage``, read through ``model_dump()``): each call then gets a
    class, ``first``, ``hit``, ``prefix_break`` or ``provider_miss``. An invalid request is its call's
    ``error``; the report never raises for one. A usage that is none of these (text that is not JSON, another
    object) raises :class:`AssemblyError` (``malformed_request`` at ``usage[i]``)."""
    given = None if usage is None else [usage_value(u, "usage[%d]" % i) for i, u in enumerate(usage)]
    return dict((assembler or default_assembler()).call("cache_report", list(requests), given))


def export(
    request: Any,
    provider: Provider,
    *,
    ttl: Optional[Literal["5m", "1h"]] = None,
    max_breakpoints: Optional[int] = None,
    lookback: Optional[int] = None,
    prompt_cache_key: Optional[str] = None,
    body: Optional[Dict[str, Any]] = None,
    assembler: Optional[Assembler] = None,
) -> Dict[str, Any]:
    """The provider's request body for ``request``'s prompt, every text untouched: Anthropic's ``system`` and
    ``messages`` with ``cache_control`` on the last block of the run, injections, goal and prompt (``ttl``,
    ``max_breakpoints`` up to 4, ``lookback`` blocks); OpenAI's ``messages`` (``openai-chat``) or ``input``
    (``openai-responses``) with ``prompt_cache_key`` (the run digest unless given). ``body`` holds the provider's
    other fields (``model``, ``max_tokens``, ``tools``), written first as given. Raises :class:`AssemblyError`
    (a system message after another role, for Anthropic, at its request path)."""
    options: Dict[str, Any] = dict(ttl=ttl, max_breakpoints=max_breakpoints, lookback=lookback)
    options.update(prompt_cache_key=prompt_cache_key, body=body)
    given = {k: v for k, v in options.items() if v is not None}
    return dict((assembler or default_assembler()).call("export", request, provider, given))
