"""The ledger of executed calls: a call already executed is answered, never run again."""

from __future__ import annotations

import json
import sqlite3
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from os import PathLike
from typing import Any, Literal, Protocol, Self, runtime_checkable

from .._forks import new_lock

__all__ = ["Ledger", "LedgerEntry", "MemoryLedger", "SQLiteLedger"]


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """What the ledger knows of one call (or one idempotency key).

    ``pending`` is written before a tool with side effects runs and replaced by
    ``done`` after: a ``pending`` entry left behind means the outcome is unknown.
    """

    state: Literal["pending", "done"]
    tool: str
    output: Any = field(default=None, hash=False)
    is_error: bool = False
    error_type: str | None = None
    recorded_at: float = field(default_factory=time.time)


@runtime_checkable
class Ledger(Protocol):
    """Storage for :class:`LedgerEntry` values by key. Implementations must be thread-safe."""

    def get(self, key: str) -> LedgerEntry | None:
        """The entry stored under ``key``, or None."""
        ...

    def put(self, key: str, entry: LedgerEntry) -> None:
        """Store (or replace) the entry under ``key``."""
        ...


class MemoryLedger:
    """In-process ledger keeping the ``max_entries`` most recent keys (the default)."""

    def __init__(self, max_entries: int = 10_000) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[str, LedgerEntry] = OrderedDict()
        self._lock = new_lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> LedgerEntry | None:
        """The entry stored under ``key``, or None."""
        with self._lock:
            return self._entries.get(key)

    def put(self, key: str, entry: LedgerEntry) -> None:
        """Store the entry; forget the oldest keys beyond ``max_entries``."""
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)


class SQLiteLedger:
    """A persistent ledger in one SQLite file (stdlib ``sqlite3``), shared across processes.

    Outputs are stored as JSON; values JSON cannot hold are stored as their ``str()``.
    """

    def __init__(self, path: str | PathLike[str], *, timeout: float = 5.0) -> None:
        self.path = path
        self._lock = new_lock()
        self._db = sqlite3.connect(path, timeout=timeout, check_same_thread=False)
        with self._lock, self._db:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS tooltap_ledger ("
                " key TEXT PRIMARY KEY, state TEXT NOT NULL, tool TEXT NOT NULL,"
                " output TEXT, is_error INTEGER NOT NULL, error_type TEXT,"
                " recorded_at REAL NOT NULL)"
            )

    def get(self, key: str) -> LedgerEntry | None:
        """The entry stored under ``key``, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT state, tool, output, is_error, error_type, recorded_at"
                " FROM tooltap_ledger WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        state, tool, output, is_error, error_type, recorded_at = row
        value = None if output is None else json.loads(output)
        return LedgerEntry(state, tool, value, bool(is_error), error_type, recorded_at)

    def put(self, key: str, entry: LedgerEntry) -> None:
        """Store (or replace) the entry under ``key``, durably."""
        output = None if entry.output is None else json.dumps(entry.output, default=str)
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO tooltap_ledger VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    entry.state,
                    entry.tool,
                    output,
                    int(entry.is_error),
                    entry.error_type,
                    entry.recorded_at,
                ),
            )

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
