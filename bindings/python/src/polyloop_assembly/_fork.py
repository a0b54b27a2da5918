"""Fork handling: what a child made by ``os.fork`` resets (locks held by other threads, the parent's
idle instances), right after the fork, before any other code of it."""

from __future__ import annotations

import os
import threading
from typing import Callable, Generic, List, Optional, TypeVar

T = TypeVar("T")

_resets: List[Callable[[], None]] = []
_generation = 0


def generation() -> int:
    """How many forks separate this process from the one that imported the package (state of another
    generation, such as threads, is not in this process)."""
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
    """A process-wide value created on first use, once, under a lock a forked child gets afresh."""

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
