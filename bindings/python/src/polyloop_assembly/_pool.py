"""A pool of instances of the module: at most ``max_instances`` alive, one call each at a time."""

from __future__ import annotations

import atexit
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


class _Slot:
    """The place of one instance in a pool: taken from the pool's queue for a
    call and put back after it, holding an instance or ``None`` (the taker
    makes one)."""

    __slots__ = ("instance",)

    def __init__(self) -> None:
        self.instance: Optional[Instance] = None


#: The argument of the one ``SimpleQueue.get(True)`` call that takes a slot.
_BLOCK = (True,)


class Pool:
    """A pool of at most ``max_instances`` instances of the module.

    Thread-safe: each call takes a slot (waiting while all ``max_instances``
    are busy), runs on its instance alone (made on first use) and gives it
    back. An instance that trapped, exited or ran out of memory is discarded,
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
        self._slots = tuple(_Slot() for _ in range(self.max_instances))
        self._queue: "queue.SimpleQueue[_Slot]" = queue.SimpleQueue()
        for slot in self._slots:
            self._queue.put(slot)

    @property
    def _idle(self) -> List[Instance]:
        """The instances alive, for tests (at rest, all of them are idle)."""
        return [s.instance for s in self._slots if s.instance is not None]

    @property
    def _live(self) -> int:
        """How many instances are alive (at most ``max_instances``)."""
        return len(self._idle)

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
        held: List[_Slot] = []
        keep = False
        try:
            # One C call takes a slot and holds it: an exception raised by a
            # signal handler lands before the slot is taken (SimpleQueue.get
            # waits interruptibly) or after it is held, never between.
            held.extend(map(self._queue.get, _BLOCK))
            slot = held[0]
            instance = slot.instance
            if instance is None:
                instance = slot.instance = self._new_instance(self.memory_limit_bytes)
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
            if held:  # no call before the put: nothing can interrupt it
                if not keep:
                    held[0].instance = None
                self._queue.put(held[0])

    def clear(self) -> None:
        """Drop the instances: idle ones now, busy ones when given back.
        Never waits (the interpreter's exit calls it)."""
        for slot in self._slots:
            slot.instance = None

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
