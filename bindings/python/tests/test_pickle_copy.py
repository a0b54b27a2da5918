"""Branching and shipping: Prompt.copy / copy.copy / deepcopy, and pickling
(the assembler by reference) so a function using one runs in worker processes."""

from __future__ import annotations

import copy
import functools
import multiprocessing
import os
import pickle
from typing import Any, Dict, List, Tuple

import polyloop_assembly as pa

REQUEST: Dict[str, Any] = {
    "run_messages": [{"role": "system", "content": [{"type": "text", "text": "You are an agent."}]}],
    "steps": [{"raw_output": "Thought: look", "observation": "found 3 files"}],
    "observation_template": "Observation: {observation!r:>20}",
    "max_prompt_chars": 200,
}


def _with_steps(steps: List[Tuple[str, str]]) -> Dict[str, Any]:
    return dict(REQUEST, steps=REQUEST["steps"] + [{"raw_output": r, "observation": o} for r, o in steps])


def test_prompt_copy_branches_independently() -> None:
    root = pa.Prompt(REQUEST)
    root.add_step("a", "1")
    for make in (pa.Prompt.copy, copy.copy, copy.deepcopy):
        left = make(root)
        right = make(root)
        assert left is not root and left.response() == root.response()
        left.add_step("left", "L")
        right.add_step("right", "R")
        right.add_step("more", "M" * 200)
        assert left.response() == pa.assemble(_with_steps([("a", "1"), ("left", "L")]))
        assert right.response() == pa.assemble(_with_steps([("a", "1"), ("right", "R"), ("more", "M" * 200)]))
        assert right.context_overflow and not left.context_overflow
        assert root.response() == pa.assemble(_with_steps([("a", "1")]))  # the original is untouched
        assert root.step_count == 2 and left.step_count == 3 and right.step_count == 4


def test_prompt_copy_keeps_its_assembler() -> None:
    asm = pa.Assembler(max_instances=1)
    p = asm.prompt(REQUEST)
    assert p.copy()._assembler is asm and copy.deepcopy(p)._assembler is asm


def test_assembler_pickles_by_reference() -> None:
    asm = pa.Assembler(max_instances=3, recycle_above_bytes=1 << 20, memory_limit_bytes=64 << 20)
    assert pickle.loads(pickle.dumps(asm)) is asm  # same process: the same object
    assert pickle.loads(pickle.dumps(pa.default_assembler())) is pa.default_assembler()
    assert copy.copy(asm) is asm and copy.deepcopy(asm) is asm
    p = asm.prompt(REQUEST)
    p.add_step("x", "y")
    back = pickle.loads(pickle.dumps(p))
    assert back.response() == p.response() and back._assembler is asm
    back.add_step("z", "w")
    assert back.step_count == p.step_count + 1


def _assemble_with(asm: pa.Assembler, steps: int) -> Tuple[int, Dict[str, Any], Tuple[int, int, int], int]:
    """Runs in a spawned worker: the assembler arrives by reference and is re-created there."""
    out = asm.assemble(_with_steps([("s%d" % i, "o%d" % i) for i in range(steps)]))
    pool = asm.pool
    return os.getpid(), dict(out), (pool.max_instances, pool.recycle_above_bytes, pool.memory_limit_bytes), id(asm)


def test_a_function_using_an_assembler_runs_in_spawned_workers() -> None:
    asm = pa.Assembler(max_instances=1, recycle_above_bytes=1 << 20, memory_limit_bytes=256 << 20)
    work = functools.partial(_assemble_with, asm)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        results = pool.map(work, range(6), chunksize=1)
    for steps, (pid, out, settings, _) in zip(range(6), results):
        assert pid != os.getpid()
        assert out == pa.assemble(_with_steps([("s%d" % i, "o%d" % i) for i in range(steps)]))
        assert settings == (1, 1 << 20, 256 << 20)  # re-created with the sender's settings
    # once per worker process, not once per task
    per_worker: Dict[int, set] = {}
    for pid, _, _, ident in results:
        per_worker.setdefault(pid, set()).add(ident)
    assert all(len(ids) == 1 for ids in per_worker.values()), per_worker
