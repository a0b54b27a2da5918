"""The migration check: prompts a legacy loop recorded against the ones the requests render now.

    python examples/datasets/migration_check.py

Builds a small recorded set (one prompt altered, as a hand-written loop
might have), then checks it two ways: one prompt at a time with
``polyloop_assembly.compare``, and as one batch with
``polyloop_assembly.data.CompareRecorded`` (what ``datasets.map(...,
batched=True)`` or Ray's ``map_batches`` call). Prints where each changed
prompt first differs; exits 1 if any does.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List

import polyloop_assembly as pa
from polyloop_assembly.data import CompareRecorded


def recorded_set(n: int = 5) -> Dict[str, List[Any]]:
    """``n`` requests and the messages a legacy loop sent for them; the third was sent with a trailing space."""
    requests = [
        {
            "run_messages": [{"role": "system", "content": [{"type": "text", "text": "You are a careful agent."}]}],
            "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "Task %d" % i}]}],
            "steps": [{"raw_output": "ls", "observation": "a.txt b.txt"}] * i,
            "observation_template": "Observation: {observation}",
        }
        for i in range(n)
    ]
    sent = [pa.assemble(r)["messages"] for r in requests]
    sent[2][-1]["content"][0]["text"] += " "  # what the legacy loop did differently
    return {"sent": sent, "request": requests}


def main() -> int:
    rows = recorded_set()
    for k, (sent, request) in enumerate(zip(rows["sent"], rows["request"])):  # one at a time
        c = pa.compare(sent, request)
        if not c["identical"]:
            d = c["first_difference"]
            print("row %d: first difference in message %d, char %d (%s)" % (k, d["message"], d["char"], d["segment"]))
    out = CompareRecorded(recorded="sent", request="request")(rows).to_pydict()  # one batch: a pyarrow.Table
    changed = [k for k, same in enumerate(out["identical"]) if not same]
    print("changed rows:", changed)
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
