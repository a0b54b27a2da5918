"""Messages as a Python user holds them: :class:`MessagesView`, what ``Prompt.messages`` returns (O(1) to
read, whatever the history), and :func:`chat_messages`, the ``{role, content: str}`` form that chat
templates, TRL's conversational data sets and the providers' SDKs take."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Union, cast, overload

from ._types import Message

__all__ = ["MessagesView", "chat_messages"]


def _copy(m: Message) -> Message:
    return cast(Message, {**m, "content": [dict(b) for b in m["content"]]})


class MessagesView(Sequence):  # type: ignore[type-arg]
    """The first ``len`` messages of a prompt, as they were when read: an immutable sequence made in O(1)
    (the prompt only ever appends, so later steps never show in it). Each message read from it is a new
    dict the caller may edit; ``list(view)`` (or :meth:`copy`) is a list of such copies, and what
    ``json.dumps`` takes. It compares equal to a list of the same messages."""

    __slots__ = ("_items", "_len")

    def __init__(self, items: List[Message], length: int) -> None:
        self._items, self._len = items, length

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, i: int) -> Message: ...
    @overload
    def __getitem__(self, i: slice) -> List[Message]: ...
    def __getitem__(self, i: Union[int, slice]) -> Union[Message, List[Message]]:
        if isinstance(i, slice):
            return [_copy(self._items[k]) for k in range(self._len)[i]]
        return _copy(self._items[range(self._len)[i]])

    def __iter__(self) -> Iterator[Message]:
        items = self._items
        return (_copy(items[k]) for k in range(self._len))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (MessagesView, list, tuple)) or len(other) != self._len:
            return False
        return all(a == b for a, b in zip(self._items, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "MessagesView(%r)" % (self.copy(),)

    def copy(self) -> List[Message]:
        """The messages as a list of new dicts (O(messages))."""
        return list(self)


def chat_messages(messages: Iterable[Mapping[str, Any]]) -> List[Dict[str, str]]:
    """Messages (``{role, content: [{type: "text", text}]}``, as the core answers them) in the form chat
    templates, TRL and the providers' SDKs take: ``{"role": role, "content": str}``, each content the
    concatenation of its blocks' texts (every character kept; its length is the message's
    ``message_chars``). A block that is not text is a ValueError: pass the messages the core assembled."""
    out: List[Dict[str, str]] = []
    for i, m in enumerate(messages):
        texts = []
        for j, b in enumerate(m["content"]):
            if b.get("type") != "text" or not isinstance(b.get("text"), str):
                raise ValueError(
                    "chat_messages: messages[%d].content[%d] is not a text block {type: 'text', text: str}: "
                    "pass the messages the core assembled (Prompt.messages, a response's messages)" % (i, j)
                )
            texts.append(b["text"])
        out.append({"role": m["role"], "content": "".join(texts)})
    return out
