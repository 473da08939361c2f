"""The ledger of executed calls: a call already executed is answered, never run again.

Only calls of tools with side effects are recorded. Before such a call runs, its keys
are *claimed*: one atomic step that stores ``pending`` unless the key is already
there. Exactly one claimant wins and runs the call, then replaces ``pending`` by
``done``; every other claimant is answered from the entry (waiting for ``done``).

A ``pending`` entry that stays behind means the run started and never reported back
(a crash, a kill, a timeout): the call is *in doubt*. It is not run again until an
operator resolves it: :meth:`MemoryLedger.in_doubt` / :meth:`SQLiteLedger.in_doubt`
list such entries; ``resolve(key, output)`` records what the effect turned out to be
(the call is then answered with it), ``forget(key)`` lets the call run again.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from os import PathLike
from typing import Any, Literal, Protocol, Self, runtime_checkable

from .._forks import new_lock

__all__ = ["Claim", "Ledger", "LedgerEntry", "MemoryLedger", "SQLiteLedger"]

_log = logging.getLogger("tooltap.runner")


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


@dataclass(frozen=True, slots=True)
class Claim:
    """The answer to :meth:`Ledger.claim`: ``won`` (run the call) or the entry already there."""

    won: bool
    entry: LedgerEntry | None = None


@runtime_checkable
class Ledger(Protocol):
    """Storage for :class:`LedgerEntry` values by key. Implementations must be thread-safe.

    ``claim`` must be atomic across every user of the storage (threads, processes):
    of concurrent claims of one key, exactly one wins.
    """

    def get(self, key: str) -> LedgerEntry | None:
        """The entry stored under ``key``, or None."""
        ...

    def put(self, key: str, entry: LedgerEntry) -> None:
        """Store (or replace) the entry under ``key``."""
        ...

    def claim(self, key: str, tool: str = "") -> Claim:
        """Store a ``pending`` entry under ``key`` unless one exists (won), else return it."""
        ...

    def forget(self, key: str) -> None:
        """Remove the entry under ``key`` (if any): its call may run again."""
        ...


def _done(tool: str, output: Any, is_error: bool) -> LedgerEntry:
    return LedgerEntry("done", tool, output, is_error, "resolved_error" if is_error else None)


class MemoryLedger:
    """In-process ledger for the side-effecting calls of one process (the default).

    It keeps at most ``max_entries`` finished (``done``) entries, forgetting the oldest
    first: a call re-sent after that many newer side-effecting calls would run again.
    Each such eviction is counted in ``evictions`` and logged (the first time, then at
    every power of ten). ``pending`` entries are never evicted, so the ledger may hold
    more than ``max_entries`` while that many calls are running or in doubt.
    Use :class:`SQLiteLedger` for a record without bound, shared across processes.
    """

    def __init__(self, max_entries: int = 10_000) -> None:
        if max_entries < 1:
            raise ValueError("MemoryLedger.max_entries must be at least 1")
        self.max_entries = max_entries
        #: Finished entries forgotten to stay within ``max_entries``.
        self.evictions = 0
        self._entries: dict[str, LedgerEntry] = {}
        self._done: OrderedDict[str, None] = OrderedDict()  # done keys, oldest first
        self._lock = new_lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> LedgerEntry | None:
        """The entry stored under ``key``, or None."""
        with self._lock:
            return self._entries.get(key)

    def put(self, key: str, entry: LedgerEntry) -> None:
        """Store the entry; forget the oldest finished ones beyond ``max_entries``."""
        with self._lock:
            self._store(key, entry)

    def claim(self, key: str, tool: str = "") -> Claim:
        """Store ``pending`` under ``key`` unless an entry exists (atomic under a lock)."""
        with self._lock:
            existing = self._entries.get(key)
            if existing is not None:
                return Claim(False, existing)
            self._store(key, LedgerEntry("pending", tool))
            return Claim(True)

    def forget(self, key: str) -> None:
        """Remove the entry under ``key`` (if any): its call may run again."""
        with self._lock:
            self._entries.pop(key, None)
            self._done.pop(key, None)

    def in_doubt(self, older_than: float = 0.0) -> dict[str, LedgerEntry]:
        """``pending`` entries recorded at least ``older_than`` seconds ago, by key."""
        cutoff = time.time() - older_than
        with self._lock:
            return {
                k: e
                for k, e in self._entries.items()
                if e.state == "pending" and e.recorded_at <= cutoff
            }

    def resolve(self, key: str, output: Any, *, is_error: bool = False) -> None:
        """Record the outcome of an in-doubt call: it is answered with ``output`` from now on."""
        with self._lock:
            existing = self._entries.get(key)
            self._store(key, _done(existing.tool if existing else "", output, is_error))

    def _store(self, key: str, entry: LedgerEntry) -> None:
        self._entries[key] = entry
        if entry.state == "done":
            self._done[key] = None
            self._done.move_to_end(key)
        else:
            self._done.pop(key, None)
        while len(self._entries) > self.max_entries and self._done:
            oldest, _ = self._done.popitem(last=False)
            del self._entries[oldest]
            self.evictions += 1
            if _is_power_of_ten(self.evictions):
                _log.warning(
                    "tooltap: MemoryLedger full (max_entries=%d): %d finished side-effect "
                    "records forgotten; a call re-sent after that many newer ones would run "
                    "again (use SQLiteLedger for a record without bound)",
                    self.max_entries,
                    self.evictions,
                )


def _is_power_of_ten(n: int) -> bool:
    while n % 10 == 0:
        n //= 10
    return n == 1


_COLUMNS = "state, tool, output, is_error, error_type, recorded_at"


class SQLiteLedger:
    """A persistent ledger in one SQLite file (stdlib ``sqlite3``), shared across processes.

    Claims are one ``INSERT ... ON CONFLICT DO NOTHING`` in an immediate transaction, so
    of any number of processes claiming a key exactly one wins. Nothing is evicted.
    The file is put in WAL mode (readers never wait for the writer), so it needs a local
    filesystem, not a network share. Outputs are stored as JSON; values JSON cannot
    hold are stored as their ``str()``. Opening and calls block (up to ``timeout`` seconds on
    a locked database): async code runs them in a worker thread.
    """

    def __init__(self, path: str | PathLike[str], *, timeout: float = 5.0) -> None:
        self.path = path
        self._lock = new_lock()
        self._db = sqlite3.connect(
            path, timeout=timeout, check_same_thread=False, isolation_level=None
        )
        deadline = time.monotonic() + timeout
        pause = 0.001
        while True:
            try:
                with self._lock:
                    self._db.execute("PRAGMA journal_mode=WAL")
                    self._db.execute(
                        "CREATE TABLE IF NOT EXISTS tooltap_ledger ("
                        " key TEXT PRIMARY KEY, state TEXT NOT NULL, tool TEXT NOT NULL,"
                        " output TEXT, is_error INTEGER NOT NULL, error_type TEXT,"
                        " recorded_at REAL NOT NULL)"
                    )
                break
            except sqlite3.OperationalError as exc:
                # Switching a file to WAL while another connection opens it fails at once,
                # without the busy timeout: wait and retry, within the same timeout.
                busy = exc.sqlite_errorcode in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
                if not busy or time.monotonic() + pause > deadline:
                    self._db.close()
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.05)

    def get(self, key: str) -> LedgerEntry | None:
        """The entry stored under ``key``, or None."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM tooltap_ledger WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else _entry(row)

    def put(self, key: str, entry: LedgerEntry) -> None:
        """Store (or replace) the entry under ``key``, durably."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO tooltap_ledger VALUES (?, ?, ?, ?, ?, ?, ?)",
                _row(key, entry),
            )

    def claim(self, key: str, tool: str = "") -> Claim:
        """Store ``pending`` under ``key`` unless an entry exists; atomic across processes."""
        row = _row(key, LedgerEntry("pending", tool))
        with self._lock:
            cursor = self._db.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            try:
                cursor.execute(
                    "INSERT INTO tooltap_ledger VALUES (?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (key) DO NOTHING",
                    row,
                )
                won = cursor.rowcount == 1
                existing = None
                if not won:
                    existing = cursor.execute(
                        f"SELECT {_COLUMNS} FROM tooltap_ledger WHERE key = ?", (key,)
                    ).fetchone()
                cursor.execute("COMMIT")
            except BaseException:
                cursor.execute("ROLLBACK")
                raise
            finally:
                cursor.close()
        return Claim(won, None if existing is None else _entry(existing))

    def forget(self, key: str) -> None:
        """Remove the entry under ``key`` (if any): its call may run again."""
        with self._lock:
            self._db.execute("DELETE FROM tooltap_ledger WHERE key = ?", (key,))

    def in_doubt(self, older_than: float = 0.0) -> dict[str, LedgerEntry]:
        """``pending`` entries recorded at least ``older_than`` seconds ago, by key."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT key, {_COLUMNS} FROM tooltap_ledger"
                " WHERE state = 'pending' AND recorded_at <= ? ORDER BY recorded_at",
                (time.time() - older_than,),
            ).fetchall()
        return {row[0]: _entry(row[1:]) for row in rows}

    def resolve(self, key: str, output: Any, *, is_error: bool = False) -> None:
        """Record the outcome of an in-doubt call: it is answered with ``output`` from now on."""
        existing = self.get(key)
        self.put(key, _done(existing.tool if existing else "", output, is_error))

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _row(key: str, entry: LedgerEntry) -> tuple[Any, ...]:
    output = None if entry.output is None else json.dumps(entry.output, default=str)
    return (
        key,
        entry.state,
        entry.tool,
        output,
        int(entry.is_error),
        entry.error_type,
        entry.recorded_at,
    )


def _entry(row: tuple[Any, ...]) -> LedgerEntry:
    state, tool, output, is_error, error_type, recorded_at = row
    value = None if output is None else json.loads(output)
    return LedgerEntry(state, tool, value, bool(is_error), error_type, recorded_at)
