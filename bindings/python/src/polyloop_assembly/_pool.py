"""A pool of instances of the module: at most ``max_instances`` alive, one call each at a time."""

from __future__ import annotations

import atexit
import collections
import os
import itertools
import operator
import threading
import time
import weakref
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple, TypeVar

from . import _fork, _runtime
from ._consts import CALL_ASSEMBLE, DEFAULT_MEMORY_LIMIT_BYTES, DEFAULT_RECYCLE_ABOVE_BYTES
from ._errors import InstanceFailure
from ._instance import Instance

T = TypeVar("T")

_pools: "weakref.WeakSet[Pool]" = weakref.WeakSet()


#: The arguments of a waiting thread's ``Lock.acquire(True, _PATIENCE)``: it waits in turns of this many
#: seconds, and between them hands on a slot a giver left free (a giver interrupted between giving its slot
#: back and handing it on).
_BLOCK = (True,)
_PATIENCE = (0.05,)
_NOBLOCK = (False,)
#: A thread's turn: having taken a slot, it takes it again for this many seconds of calls, waiting threads
#: or not, before handing it on (a hand-off per call costs two thread switches: with more threads than
#: instances, half the throughput). The first waiting thread wakes after a turn at most, and takes a slot
#: left free, so a turn-holder that stops calling delays it no longer (issue 44).
_TURN = 0.002
_HEAD_PATIENCE = (_TURN,)
#: Consumes an iterator in one C call: the steps of a pipeline of C calls happen together, so an
#: interrupt (KeyboardInterrupt, raised between bytecodes) lands before or after them, never between.
_drain: Callable[[Iterable[Any]], None] = collections.deque(maxlen=0).extend
_release = type(threading.Lock()).release
_second = operator.itemgetter(1)


class Pool:
    """At most ``max_instances`` instances (the :class:`Assembler`'s arguments); a call takes a slot (waiting
    while all are busy), runs alone on the most recently used idle instance (or a new one) and gives both
    back. A failed instance is discarded, as is one grown past ``recycle_above_bytes``.

    Waiting threads are served in arrival order: each waits on a lock of its own, in a queue, and a slot
    given back is handed to the first of them (released with it), so a thread giving its slot back cannot
    take it again ahead of one waiting (issue 44: of two threads on one instance, one made every call),
    once its turn (:data:`_TURN`, 2 ms of calls) is over.
    Safe under Ctrl-C: every change of the slots is one C call (a pipeline drained at once), under a mutex
    held in ``with`` blocks, so an interrupt lands before or after it; a slot is always free, held (stored
    where the ``finally`` gives it back) or handed to a waiter's lock, which the waiter takes even when
    interrupted."""

    def __init__(
        self,
        max_instances: Optional[int] = None,
        recycle_above_bytes: int = DEFAULT_RECYCLE_ABOVE_BYTES,
        memory_limit_bytes: int = DEFAULT_MEMORY_LIMIT_BYTES,
        new_instance: Optional[Callable[[int], Instance]] = None,
    ) -> None:
        if max_instances is None:
            max_instances = os.cpu_count() or 1
        if max_instances < 1:
            raise ValueError("max_instances must be at least 1, got %d" % max_instances)
        if memory_limit_bytes < 1:
            raise ValueError("memory_limit_bytes must be at least 1, got %d" % memory_limit_bytes)
        self.max_instances = max_instances
        self.recycle_above_bytes = recycle_above_bytes
        self.memory_limit_bytes = memory_limit_bytes
        self._new_instance = new_instance or _runtime.new_instance
        self._open()
        #: Instances discarded after a failure (for tests and monitoring).
        self.discarded_failed = 0
        #: Instances discarded because their memory outgrew ``recycle_above_bytes``.
        self.discarded_grown = 0
        _pools.add(self)

    def _open(self) -> None:
        # max_instances slot tokens, free or held or handed; the waiting threads' locks, first come first
        # served; the idle instances apart, last in first out (warm first).
        self._free: "collections.deque[bool]" = collections.deque([True] * self.max_instances)
        self._waiters: "collections.deque[threading.Lock]" = collections.deque()
        self._mutex = threading.Lock()
        self._idle_instances: "collections.deque[Instance]" = collections.deque()
        self._turns = threading.local()  # .end: when this thread's turn on this pool ends (perf_counter)

    def call(self, request: bytes, op: int = CALL_ASSEMBLE) -> bytes:
        """:meth:`Instance.call` on a pooled instance (InstanceFailure: it was discarded)."""
        return self._on_instance(lambda instance: instance.call(request, op))

    def call_batch(self, items: Sequence[Tuple[int, bytes]]) -> Optional[List[bytes]]:
        """:meth:`Instance.call_batch` on a pooled instance (InstanceFailure: it was discarded)."""
        return self._on_instance(lambda instance: instance.call_batch(items))

    def _on_instance(self, run: Callable[[Instance], T]) -> T:
        """``run(instance)`` on the instance of a slot taken and given back (the instance discarded if the
        call failed, was interrupted, or grew past ``recycle_above_bytes``)."""
        held: List[bool] = []
        keep = False
        instance: Optional[Instance] = None
        try:
            self._take(held)
            try:
                instance = self._idle_instances.pop()  # an interrupt here drops only this instance
            except IndexError:
                instance = self._new_instance(self.memory_limit_bytes)
            out = run(instance)
            if instance.memory_bytes > self.recycle_above_bytes:
                self.discarded_grown += 1
            else:
                keep = True
            return out
        except InstanceFailure:
            self.discarded_failed += 1
            raise
        finally:
            if held:
                # The slot first (no call before this append); an interrupt after it drops the instance,
                # or leaves the slot free for a waiter to take (_take's turns).
                self._free.append(held[0])
                if keep and len(self._idle_instances) < self.max_instances:
                    self._idle_instances.append(instance)  # type: ignore[arg-type]
                # (a waiter that came after this check found the slot free: _wait_turn); within this thread's
                # turn the slot stays free for its next call, or for the first waiter when it wakes
                if self._waiters and getattr(self._turns, "end", 0.0) <= time.perf_counter():
                    with self._mutex:
                        self._hand_on()

    def _take(self, held: List[bool]) -> None:
        """Take a slot into ``held``: a free one when no thread waits or within this thread's turn, else in
        turn after those waiting."""
        now = time.perf_counter()
        end = getattr(self._turns, "end", 0.0)
        if not self._waiters or end > now:
            try:
                # One C call takes a slot and holds it: an interrupt lands before or after, never between.
                held.extend(itertools.islice(iter(self._free.popleft, None), 1))
                if end <= now:  # a new turn
                    self._turns.end = now + _TURN
                return
            except IndexError:  # none free
                pass
        self._wait_turn(held)
        self._turns.end = time.perf_counter() + _TURN

    def _wait_turn(self, held: List[bool]) -> None:
        """Wait in the queue until a slot is handed, and hold it in ``held``."""
        with self._mutex:
            mine = threading.Lock()
            mine.acquire()
            grab = map(mine.acquire, _NOBLOCK)  # made before it is needed: taking a handed slot is one call
            self._waiters.append(mine)
            # A slot given back while this thread came (its giver saw no waiter) is handed on now.
            self._hand_on()
        try:
            while True:
                # One C call waits a turn and, when a slot was handed, holds it.
                patience = _HEAD_PATIENCE if self._waiters and self._waiters[0] is mine else _PATIENCE
                held.extend(filter(None, map(mine.acquire, _BLOCK, patience)))
                if held:
                    return
                with self._mutex:
                    self._hand_on()
        except BaseException:  # interrupted while waiting: out of the queue, or hold what was handed
            with self._mutex:
                if mine in self._waiters:
                    self._waiters.remove(mine)
                elif not held:
                    held.extend(grab)
            raise

    def _hand_on(self) -> None:
        """Hand the free slots to the waiting threads, first come first served (the mutex held)."""
        while self._free and self._waiters:
            # One C call: a free slot and the first waiter out, its lock released: the slot is its.
            _drain(
                map(
                    _release,
                    map(
                        _second,
                        zip(
                            itertools.islice(iter(self._free.popleft, None), 1),
                            itertools.islice(iter(self._waiters.popleft, None), 1),
                        ),
                    ),
                )
            )

    def clear(self) -> None:
        """Drop the idle instances (a busy one is kept when given back); never waits."""
        self._idle_instances.clear()


def _reset_pools() -> None:
    for pool in list(_pools):
        pool._open()


_fork.reset_in_child(_reset_pools)


def _release_at_exit() -> None:
    """Free the instances and the module while wasmtime is whole (in the teardown its finalizers fail noisily)."""
    for pool in list(_pools):
        pool.clear()
    _runtime.release()


atexit.register(_release_at_exit)
