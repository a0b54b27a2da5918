"""``Prompt.messages`` costs O(1) to read, whatever the history, and stays safe to edit (issue 34, item 4);
``chat_messages`` gives ``{role, content: str}``. Flatness is measured, not timed here: reading the
messages after 4,000 steps copies no message (bench/data_bench.py --messages 4000 gives the times)."""

from __future__ import annotations

import copy
import json
from typing import Any, List

import pytest

import polyloop_assembly as pa
from polyloop_assembly import _messages, data


def _prompt() -> pa.Prompt:
    return pa.Prompt(
        {
            "run_messages": [{"role": "system", "content": [{"type": "text", "text": "sys\u2028tem"}]}],
            "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "go"}, {"type": "text", "text": "!"}]}],
            "observation_template": "Observation: {observation}",
        }
    )


def test_reading_messages_copies_nothing_whatever_the_history(monkeypatch: pytest.MonkeyPatch) -> None:
    copies: List[int] = []
    real = _messages._copy
    monkeypatch.setattr(_messages, "_copy", lambda m: copies.append(1) or real(m))
    p = _prompt()
    for k in range(4000):
        p.add_step("r%d" % k, "o%d" % k)
        view = p.messages
        assert len(view) == 2 + 2 * (k + 1)
    assert copies == []  # 4,000 reads, no message copied
    assert view[-1]["content"][0]["text"] == "Observation: o3999" and len(copies) == 1


def test_the_view_is_a_snapshot_equal_to_the_response() -> None:
    p = _prompt().add_step("a", "b")
    before = p.messages
    p.add_step("c", "d")
    assert len(before) == 4 and len(p.messages) == 6  # later steps never show in an earlier view
    assert p.messages == p.response()["messages"] == list(p.messages) == p.messages.copy()
    assert before == p.response()["messages"][:4] and before != p.messages
    assert p.messages[1:3] == p.response()["messages"][1:3] and p.messages[-1] == p.response()["messages"][-1]
    assert json.loads(json.dumps(list(p.messages))) == p.response()["messages"]
    with pytest.raises(IndexError):
        before[4]
    with pytest.raises(TypeError):
        hash(before)


def test_edits_never_reach_the_prompt() -> None:
    p = _prompt().add_step("a", "b")
    want = p.response()
    for m in (p.messages[0], p.messages[-1], *p.messages, *p.messages[:2], *copy.deepcopy(list(p.messages))):
        m["role"] = "x"
        m["content"][0]["text"] = "edited"
        m["content"].append({"type": "text", "text": "more"})
    listed: Any = list(p.messages)
    listed.clear()
    with pytest.raises(AttributeError):
        p.messages.append({})  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        p.messages[0] = {}  # type: ignore[index]
    assert p.response() == want
    p.add_step("c", "d")
    assert p.messages[: len(want["messages"])] == want["messages"]


def test_chat_messages_join_the_blocks() -> None:
    p = _prompt().add_step("a\x85", "b")
    chat = p.chat_messages()
    assert chat == data.chat_messages(p.messages) == data.chat_messages(p.response()["messages"])
    assert chat[0] == {"role": "system", "content": "sys\u2028tem"} and chat[1] == {"role": "user", "content": "go!"}
    assert [len(m["content"]) for m in chat] == p.message_chars  # code points, as the core counts them
    assert [m["role"] for m in chat] == [m["role"] for m in p.messages]
    with pytest.raises(ValueError, match=r"messages\[0\]\.content\[0\] is not a text block"):
        data.chat_messages([{"role": "user", "content": [{"type": "image"}]}])
