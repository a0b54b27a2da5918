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

__all__ = ["DEFAULT_MEMORY_LIMIT_BYTES", "DEFAULT_RECYCLE_ABOVE_BYTES", "Pool"]

T = TypeVar("T")

_pools: "weakref.WeakSet[Pool]" = weakref.WeakSet()


#: The argument of the one ``SimpleQueue.get(True)`` call that takes a slot.
_BLOCK = (True,)


class Pool:
    """A pool of at most ``max_instances`` instances of the module.

    Thread-safe: each call takes a slot (waiting while all ``max_instances``
    are busy), runs on the most recently used idle instance (or a new one)
    alone and gives both back. An instance that trapped, exited or ran out of memory is discarded,
    as is one whose linear memory grew past ``recycle_above_bytes``.

    Safe under Ctrl-C: a ``KeyboardInterrupt`` (any exception a signal
    handler raises) can land on any line and the pool stays whole. There is
    no lock: the slots wait in a ``queue.SimpleQueue``, and a slot is taken
    by one C call that stores it where the ``finally`` sees it
    (``held.extend(map(get, ...))``) and given back by the first call of that
    ``finally``, so no Python code runs between the queue and the holder. The
    instance of an interrupted call is discarded, never reused half-updated.

    Args:
        max_instances: most instances alive at once (a call waits when all
            are busy); default: the number of CPUs.
        recycle_above_bytes: an instance whose linear memory exceeds this
            after a call is discarded; default 256 MiB.
        memory_limit_bytes: cap on one instance's linear memory; a call that
            needs more fails with ``internal`` (out of memory); default 4 GiB.
        new_instance: creates an instance with a memory limit (the runtime's,
            by default).
    """

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
        # Capacity: max_instances slot tokens in a C queue; the idle
        # instances apart, last in first out (a warm instance serves next).
        self._queue: "queue.SimpleQueue[bool]" = queue.SimpleQueue()
        for _ in range(self.max_instances):
            self._queue.put(True)
        self._idle_instances: "collections.deque[Instance]" = collections.deque()

    @property
    def _idle(self) -> List[Instance]:
        """The idle instances (at rest, every instance alive), for tests."""
        return list(self._idle_instances)

    @property
    def _live(self) -> int:
        """How many instances are alive at rest (at most ``max_instances``)."""
        return len(self._idle_instances)

    def call(self, request: bytes, op: int = CALL_ASSEMBLE) -> bytes:
        """Run one request on a pooled instance as the module's call number
        ``op`` (``CALL_*`` of ``_consts``: ``CALL_ASSEMBLE``,
        ``CALL_ASSEMBLE_JSON`` for JSON text, ``CALL_ADD_STEP`` for an
        incremental prompt's step, ...).

        Raises:
            InstanceFailure: the instance failed (it has been discarded; the
                next call gets a fresh one).
        """
        return self._on_instance(lambda instance: instance.call(request, op))

    def call_batch(self, items: Sequence[Tuple[int, bytes]]) -> Optional[List[bytes]]:
        """:meth:`Instance.call_batch` on a pooled instance: the answers of
        ``(op, request)`` items in one crossing (None if the answer is not a
        batch answer).

        Raises:
            InstanceFailure: as :meth:`call`.
        """
        return self._on_instance(lambda instance: instance.call_batch(items))

    def _on_instance(self, run: Callable[[Instance], T]) -> T:
        """``run(instance)`` on the instance of a slot taken from the pool
        and given back after (its instance discarded if the call failed, was
        interrupted, or its memory outgrew ``recycle_above_bytes``)."""
        held: List[bool] = []
        keep = False
        instance: Optional[Instance] = None
        try:
            # One C call takes a slot and holds it: an exception raised by a
            # signal handler lands before the slot is taken (SimpleQueue.get
            # waits interruptibly) or after it is held, never between.
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
                # The slot first: no call before this put, so nothing can
                # interrupt it. An interrupt after it drops the instance.
                self._queue.put(held[0])
                if keep and len(self._idle_instances) < self.max_instances:
                    self._idle_instances.append(instance)  # type: ignore[arg-type]

    def clear(self) -> None:
        """Drop the idle instances (a busy one is kept when given back).
        Never waits (the interpreter's exit calls it)."""
        self._idle_instances.clear()

    def _reset_after_fork(self) -> None:
        self._open()


def _reset_pools() -> None:
    for pool in list(_pools):
        pool._reset_after_fork()


_fork.reset_in_child(_reset_pools)


def _release_at_exit() -> None:
    """Free the instances and the compiled module while wasmtime is still whole:
    freed later, during the interpreter's teardown, wasmtime's finalizers fail
    noisily ("Exception ignored in ... Managed.__del__")."""
    for pool in list(_pools):
        pool.clear()
    _runtime.release()


atexit.register(_release_at_exit)
