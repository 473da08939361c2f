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

__all__ = ["in_child", "new_lock"]

_log = logging.getLogger("tooltap")
_locks: weakref.WeakSet[threading.Lock] = weakref.WeakSet()
_hooks: list[Callable[[], None]] = []


def new_lock() -> threading.Lock:
    """A ``threading.Lock`` that is free again in a forked child."""
    lock = threading.Lock()
    _locks.add(lock)
    return lock


def in_child(hook: Callable[[], None]) -> Callable[[], None]:
    """Run ``hook`` in every forked child, after the locks are reset (a decorator)."""
    _hooks.append(hook)
    return hook


def _after_fork_in_child() -> None:
    for lock in list(_locks):
        lock._at_fork_reinit()  # type: ignore[attr-defined]
    for hook in _hooks:
        try:
            hook()
        except Exception:  # noqa: BLE001 - never into the forking app
            _log.debug("tooltap: fork hook %r raised (contained)", hook, exc_info=True)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
