"""The side-effecting calls running now in one process, by ledger key.

A second run of a key (another task, thread or event loop of the same process)
waits for the first one's ledger entry instead of claiming the key in the ledger.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future

from .ledger import LedgerEntry

__all__ = ["InFlight"]


class InFlight:
    """Futures of running calls by key; each settles with the entry its run left."""

    __slots__ = ("_lock", "_running")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, Future[LedgerEntry]] = {}

    def __len__(self) -> int:
        return len(self._running)

    def start(self, keys: Sequence[str]) -> tuple[Future[LedgerEntry], bool]:
        """The future of a run already holding one of ``keys`` (False), else a new one (True).

        A new future is registered under every key until :meth:`finish`.
        """
        with self._lock:
            for key in keys:
                running = self._running.get(key)
                if running is not None:
                    return running, False
            future: Future[LedgerEntry] = Future()
            for key in keys:
                self._running[key] = future
            return future, True

    def finish(self, keys: Sequence[str], future: Future[LedgerEntry], entry: LedgerEntry) -> None:
        """Settle ``future`` with ``entry`` and unregister it."""
        with self._lock:
            for key in keys:
                if self._running.get(key) is future:
                    del self._running[key]
        if not future.done():
            future.set_result(entry)
