"""Fork safety: a forked child starts with every tooltap lock free and no inherited work.

A process that forks while other threads run (a prefork server, ``multiprocessing`` with
the fork start method) copies each lock in whatever state it was: one held by a thread
that does not exist in the child is held forever. Every lock tooltap creates comes from
``new_lock``, and ``os.register_at_fork`` re-initialises them all in the child; the hooks
given to ``in_child`` then drop per-process state the child must not inherit (bodies the
parent was reading, the parent's open calls).
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["OwnedLock", "holding_lock", "in_child", "new_lock", "new_rlock"]

_log = logging.getLogger("tooltap")
_locks: weakref.WeakSet[Any] = weakref.WeakSet()
_hooks: list[Callable[[], None]] = []


def new_lock() -> threading.Lock:
    """A ``threading.Lock`` that is free again in a forked child."""
    lock = threading.Lock()
    _locks.add(lock)
    return lock


def new_rlock() -> threading.RLock:
    """A ``threading.RLock`` that is free again in a forked child."""
    lock = threading.RLock()
    _locks.add(lock)
    return lock


class _Held(threading.local):
    """Per thread: how many ``OwnedLock``s it holds or is entering or leaving."""

    depth = 0


_held = _Held()


class OwnedLock:
    """A lock (a context manager) free again in a forked child, whose holders are known:
    code that may run inside a holder's critical section (a signal handler interrupting it)
    asks ``holding_lock`` instead of waiting on its own thread."""

    __slots__ = ("__weakref__", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        _locks.add(self)

    def __enter__(self) -> None:
        _held.depth += 1  # before acquiring: a signal may land
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()
        _held.depth -= 1

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """``threading.Lock.acquire``, outside ``with`` (not counted by ``holding_lock``)."""
        return self._lock.acquire(blocking, timeout)

    def _at_fork_reinit(self) -> None:
        self._lock._at_fork_reinit()  # type: ignore[attr-defined]


def holding_lock() -> bool:
    """Whether this thread holds an ``OwnedLock``, or is entering or leaving one (maybe
    interrupted there by the signal handler asking); a False answer is always right."""
    return bool(_held.depth)


def in_child(hook: Callable[[], None]) -> Callable[[], None]:
    """Run ``hook`` in every forked child, after the locks are reset (a decorator)."""
    _hooks.append(hook)
    return hook


def _after_fork_in_child() -> None:
    _held.depth = 0
    for lock in list(_locks):
        lock._at_fork_reinit()
    for hook in _hooks:
        try:
            hook()
        except Exception:  # noqa: BLE001 - never into the forking app
            _log.debug("tooltap: fork hook %r raised (contained)", hook, exc_info=True)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
