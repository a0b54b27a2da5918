"""A pool of instances of the module: at most ``max_instances`` alive, one call each at a time."""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from typing import Callable, List, Optional, Sequence, Tuple, TypeVar

from . import _fork, _runtime
from ._consts import CALL_ASSEMBLE, DEFAULT_MEMORY_LIMIT_BYTES, DEFAULT_RECYCLE_ABOVE_BYTES
from ._errors import InstanceFailure
from ._instance import Instance

__all__ = ["DEFAULT_MEMORY_LIMIT_BYTES", "DEFAULT_RECYCLE_ABOVE_BYTES", "Pool"]

T = TypeVar("T")

_pools: "weakref.WeakSet[Pool]" = weakref.WeakSet()


class Pool:
    """A pool of at most ``max_instances`` instances of the module.

    Thread-safe: each call takes an idle instance (or creates one while fewer
    than ``max_instances`` exist, else waits for one), runs on it alone and
    gives it back. An instance that trapped, exited or ran out of memory is
    discarded, as is one whose linear memory grew past ``recycle_above_bytes``.

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
        self._cond = threading.Condition(threading.Lock())
        self._idle: List[Instance] = []
        self._live = 0
        #: Instances discarded after a failure (for tests and monitoring).
        self.discarded_failed = 0
        #: Instances discarded because their memory outgrew ``recycle_above_bytes``.
        self.discarded_grown = 0
        _pools.add(self)

    def _acquire(self) -> Instance:
        with self._cond:
            while True:
                if self._idle:
                    return self._idle.pop()
                if self._live < self.max_instances:
                    self._live += 1
                    break
                self._cond.wait()
        try:
            return self._new_instance(self.memory_limit_bytes)
        except BaseException:
            with self._cond:
                self._live -= 1
                self._cond.notify()
            raise

    def _release(self, instance: Instance, keep: bool) -> None:
        with self._cond:
            if keep:
                self._idle.append(instance)
            else:
                self._live -= 1
            self._cond.notify()

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
        """``run(instance)`` on an instance taken from the pool and
        given back after (discarded if it failed or its memory outgrew
        ``recycle_above_bytes``)."""
        instance = self._acquire()
        keep = False
        try:
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
            self._release(instance, keep)

    def clear(self) -> None:
        """Drop the idle instances (busy ones are dropped when given back)."""
        with self._cond:
            self._live -= len(self._idle)
            self._idle.clear()
            self._cond.notify_all()

    def _reset_after_fork(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._idle = []
        self._live = 0


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
