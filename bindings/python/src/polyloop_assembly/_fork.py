"""Fork handling: what a child process created by ``os.fork`` must reset.

Locks held by other threads at the fork stay locked forever in the child, and
the parent's idle instances must not be shared with it. Each module that owns
such state registers a reset here; the resets run in the child right after
the fork, before any other code of it.
"""

from __future__ import annotations

import os
import threading
from typing import Callable, Generic, List, Optional, TypeVar

__all__ = ["Lazy", "generation", "reset_in_child"]

T = TypeVar("T")

_resets: List[Callable[[], None]] = []
_generation = 0


def generation() -> int:
    """How many forks separate this process from the one that imported the
    package: state stamped with another generation (threads, futures) was
    made in an ancestor and is not there in this process."""
    return _generation


def reset_in_child(reset: Callable[[], None]) -> None:
    """Run ``reset`` in every child process created by ``os.fork`` (in registration order)."""
    _resets.append(reset)


def _after_fork_in_child() -> None:
    global _generation
    _generation += 1
    for reset in _resets:
        reset()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class Lazy(Generic[T]):
    """A process-wide value created on first use, once, under a lock that a
    forked child gets afresh (a lock held by another thread at the fork would
    stay held forever in the child)."""

    def __init__(self, create: Callable[[], T]) -> None:
        self._create = create
        self.value: Optional[T] = None
        self._lock = threading.Lock()
        reset_in_child(self._new_lock)

    def _new_lock(self) -> None:
        self._lock = threading.Lock()

    def get(self) -> T:
        """The value, created by the first caller."""
        value = self.value
        if value is None:
            with self._lock:
                value = self.value
                if value is None:
                    value = self.value = self._create()
        return value
