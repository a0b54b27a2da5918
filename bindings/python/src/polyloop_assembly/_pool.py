"""A pool of instances of the module: at most ``max_instances`` alive, one call each at a time."""

from __future__ import annotations

import atexit
import collections
import os
import queue
import weakref
from typing import Callable, List, Optional, Sequence, Tuple, TypeVar

from . import _fork, _runtime
from ._consts import CALL_ASSEMBLE, DEFAULT_MEMORY_LIMIT_BYTES, DEFAULT_RECYCLE_ABOVE_BYTES
from ._errors import InstanceFailure
from ._instance import Instance

T = TypeVar("T")

_pools: "weakref.WeakSet[Pool]" = weakref.WeakSet()


#: The argument of the one ``SimpleQueue.get(True)`` call that takes a slot.
_BLOCK = (True,)


class Pool:
    """At most ``max_instances`` instances (the :class:`Assembler`'s arguments); a call takes a slot (waiting
    while all are busy), runs alone on the most recently used idle instance (or a new one) and gives both
    back. A failed instance is discarded, as is one grown past ``recycle_above_bytes``. Safe under Ctrl-C:
    no lock; one C call takes a slot and stores it where the ``finally`` gives it back."""

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
        # max_instances slot tokens in a C queue; the idle instances apart, last in first out (warm first).
        self._queue: "queue.SimpleQueue[bool]" = queue.SimpleQueue()
        for _ in range(self.max_instances):
            self._queue.put(True)
        self._idle_instances: "collections.deque[Instance]" = collections.deque()

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
            # One C call takes a slot and holds it: an interrupt lands before or after, never between.
            held.extend(map(self._queue.get, _BLOCK))
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
                # The slot first (no call before this put); an interrupt after it drops the instance.
                self._queue.put(held[0])
                if keep and len(self._idle_instances) < self.max_instances:
                    self._idle_instances.append(instance)  # type: ignore[arg-type]

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
