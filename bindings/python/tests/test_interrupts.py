"""Ctrl-C never breaks an assembler (issue 32): a storm of KeyboardInterrupts
from a 1 ms timer, landing on any line of the binding, 10,000 of them over
single calls, ``*_many``, the default assembler and ``Prompt``; afterwards the
assembler answers correctly at its full capacity, the Prompt is whole, and the
interpreter exits promptly. Each configuration runs in a subprocess with a
timeout, since the failure this guards against is a hang (a lock left held,
a slot lost, a worker thread stuck)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

INTERRUPTS = 10_000  # in all, over the configurations below

_CHILD = textwrap.dedent(
    r"""
    import signal, sys, threading, time
    import msgpack
    import polyloop_assembly as pa

    max_instances, interrupts = int(sys.argv[1]), int(sys.argv[2])
    REQ = {
        "run_messages": [{"role": "system", "content": [{"type": "text", "text": "You are a shell agent. é ü 🙂"}]}],
        "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "Count the files."}]}],
        "observation_template": "Output:\n{observation}\n",
        "steps": [{"raw_output": "ls | wc -l %d" % k, "observation": "x" * 300} for k in range(20)],
    }
    RAW = msgpack.packb(REQ)
    asm = pa.Assembler(max_instances=max_instances)
    want = asm.assemble_bytes(RAW)
    assert want == pa.assemble_bytes(RAW)
    base = dict(REQ, steps=[])
    prompt = asm.prompt(base)

    raised = [0]
    armed = [False]

    def handler(signum, frame):
        if armed[0]:
            armed[0] = False
            raised[0] += 1
            raise KeyboardInterrupt

    def new_prompt():
        global prompt
        prompt = asm.prompt(base)

    ops = [
        lambda: asm.assemble_bytes(RAW),
        lambda: asm.assemble(REQ),
        lambda: pa.assemble_bytes(RAW),
        lambda: list(pa.assemble_bytes_many([RAW] * 6, workers=2, assembler=asm)),
        lambda: list(pa.assemble_many([REQ] * 3, workers=2, assembler=asm)),
        lambda: list(pa.assemble_json_many(['{"observation_template": "{observation}"}'] * 6, workers=2)),
        lambda: prompt.add_step("ls", "o" * 100),
        lambda: prompt.messages,
        new_prompt,
    ]
    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
    k = 0
    try:
        while raised[0] < interrupts:
            op = ops[k % len(ops)]
            k += 1
            try:
                armed[0] = True
                op()
                armed[0] = False
            except KeyboardInterrupt:
                armed[0] = False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)

    # A working assembler: the same answers as before the storm.
    assert asm.assemble_bytes(RAW) == want
    assert pa.assemble_bytes(RAW) == want
    assert list(pa.assemble_bytes_many([RAW] * 4, workers=2, assembler=asm)) == [want] * 4
    # The Prompt is whole: its response is that of its own steps assembled anew.
    steps = [{"raw_output": "ls", "observation": "o" * 100}] * prompt.step_count
    assert prompt.response() == asm.assemble(dict(base, steps=steps)), prompt.step_count
    prompt.add_step("ls", "o" * 100)
    # Full capacity: max_instances calls hold an instance each at once.
    barrier = threading.Barrier(max_instances, timeout=20)
    errors = []

    def hold():
        try:
            asm.pool._on_instance(lambda instance: barrier.wait())
        except BaseException as e:  # a lost slot: the barrier breaks
            errors.append(repr(e))

    threads = [threading.Thread(target=hold) for _ in range(max_instances)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    print("OK %d interrupts, %d operations" % (raised[0], k), flush=True)
    """
)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer (POSIX)")
def test_ctrl_c_storm_leaves_a_working_assembler_and_a_prompt_exit() -> None:
    # Both configurations at once, one process each (the machine has 2 cores).
    runs = {
        n: subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(n), str(INTERRUPTS // 2)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, PYTHONFAULTHANDLER="1"),
        )
        for n in (1, 2)
    }
    for n, p in runs.items():
        try:
            out, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
            out, err = p.communicate()
            pytest.fail("max_instances=%d: no exit after 120 s (a lock held or a slot lost?)\n%s" % (n, err[-4000:]))
        # Issue 44: 114 "Exception ignored in Managed.__del__" tracebacks (an interrupt landing in a finalizer
        # of wasmtime's, which CPython drops) printed in a storm; they are dropped quietly.
        assert "Exception ignored" not in err, "max_instances=%d: %s" % (n, err[-4000:])
        assert p.returncode == 0 and out.startswith("OK"), "max_instances=%d: exit %d\n%s\n%s" % (
            n,
            p.returncode,
            out,
            err[-4000:],
        )
