"""Ledgers: the in-memory default and the persistent SQLite one."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tooltap.harness import Ledger, LedgerEntry, MemoryLedger, SQLiteLedger


def test_memory_ledger_roundtrip_and_eviction(caplog: pytest.LogCaptureFixture) -> None:
    ledger = MemoryLedger(max_entries=3)
    assert isinstance(ledger, Ledger)
    assert ledger.get("call:a") is None
    with caplog.at_level(logging.WARNING, logger="tooltap.runner"):
        for key in "abcd":
            ledger.put(f"call:{key}", LedgerEntry("done", "t", {"v": key}))
    assert len(ledger) == 3
    assert ledger.get("call:a") is None  # the oldest went first
    assert ledger.evictions == 1
    assert "MemoryLedger full (max_entries=3)" in caplog.text
    got = ledger.get("call:d")
    assert got is not None and got.output == {"v": "d"} and got.state == "done"


def test_memory_ledger_never_evicts_a_pending_entry() -> None:
    ledger = MemoryLedger(max_entries=2)
    assert ledger.claim("call:running", "pay").won
    for key in "abc":
        ledger.put(f"call:{key}", LedgerEntry("done", "t"))
    running = ledger.get("call:running")
    assert running is not None and (running.state, running.tool) == ("pending", "pay")
    assert [k for k in ("call:a", "call:b", "call:c") if ledger.get(k)] == ["call:c"]
    assert ledger.evictions == 2
    for key in "xyz":  # only pending entries: they all stay, beyond max_entries
        assert ledger.claim(f"call:{key}").won
    assert len(ledger) == 4 and ledger.get("call:c") is None


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_claim_is_won_once_and_shows_the_entry_to_the_others(tmp_path: Path, kind: str) -> None:
    ledger = MemoryLedger() if kind == "memory" else SQLiteLedger(tmp_path / "l.db")
    first = ledger.claim("call:x", "pay")
    assert first.won and first.entry is None
    second = ledger.claim("call:x", "pay")
    assert not second.won and second.entry is not None
    assert (second.entry.state, second.entry.tool) == ("pending", "pay")
    ledger.put("call:x", LedgerEntry("done", "pay", {"paid": 5}))
    third = ledger.claim("call:x", "pay")
    assert not third.won and third.entry == ledger.get("call:x")
    assert third.entry is not None and third.entry.output == {"paid": 5}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_in_doubt_entries_are_listed_resolved_or_forgotten(tmp_path: Path, kind: str) -> None:
    ledger = MemoryLedger() if kind == "memory" else SQLiteLedger(tmp_path / "l.db")
    assert ledger.claim("call:old", "pay").won
    assert ledger.claim("call:other", "mail").won
    ledger.put("call:done", LedgerEntry("done", "pay", 1))
    assert sorted(ledger.in_doubt()) == ["call:old", "call:other"]
    time.sleep(0.05)
    assert ledger.claim("call:new", "pay").won
    assert sorted(ledger.in_doubt(older_than=0.04)) == ["call:old", "call:other"]
    ledger.resolve("call:old", {"paid": 5})
    resolved = ledger.get("call:old")
    assert resolved is not None and resolved.state == "done" and resolved.tool == "pay"
    assert (resolved.output, resolved.is_error) == ({"paid": 5}, False)
    ledger.resolve("call:other", "the mail bounced", is_error=True)
    bounced = ledger.get("call:other")
    assert bounced is not None and bounced.is_error and bounced.error_type == "resolved_error"
    ledger.forget("call:new")
    assert ledger.get("call:new") is None and ledger.in_doubt() == {}
    assert ledger.claim("call:new", "pay").won  # forgotten: it may run again


def test_memory_ledger_claims_are_atomic_across_threads() -> None:
    ledger = MemoryLedger()
    barrier = threading.Barrier(8)
    wins: list[bool] = []

    def claim() -> None:
        barrier.wait(5)
        wins.append(ledger.claim("call:x").won)

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == [False] * 7 + [True]


def test_sqlite_ledger_persists_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    entry = LedgerEntry("done", "save", {"saved": [1, 2]}, True, "ValueError")
    with SQLiteLedger(path) as first:
        assert isinstance(first, Ledger)
        first.put("call:x", LedgerEntry("pending", "save"))
        first.put("call:x", entry)
        first.put("call:y", LedgerEntry("pending", "save"))
    with SQLiteLedger(path) as second:
        assert second.get("call:x") == entry
        pending = second.get("call:y")
        assert pending is not None and pending.state == "pending" and pending.output is None
        assert second.get("call:z") is None


def test_sqlite_ledger_stores_non_json_output_as_text(tmp_path: Path) -> None:
    with SQLiteLedger(tmp_path / "l.db") as ledger:
        ledger.put("k", LedgerEntry("done", "t", {"path": Path("/tmp/x")}))
        got = ledger.get("k")
    assert got is not None and got.output == {"path": "/tmp/x"}


def test_sqlite_ledger_is_thread_safe(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    with SQLiteLedger(tmp_path / "l.db") as ledger:

        def work(n: int) -> None:
            try:
                for i in range(20):
                    ledger.put(f"call:{n}:{i}", LedgerEntry("done", "t", i))
                    assert ledger.get(f"call:{n}:{i}") is not None
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        got = ledger.get("call:3:19")
        assert got is not None and got.output == 19


def _failing_setup(code: int, times: int) -> type[sqlite3.Connection]:
    """A real SQLite connection whose first ``times`` journal-mode switches fail with
    ``code``: what SQLite returns, without waiting, to a connection that opens a file while
    another one is switching it to WAL."""

    class Connection(sqlite3.Connection):
        attempts = 0

        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            if sql.startswith("PRAGMA journal_mode"):
                Connection.attempts += 1
                if Connection.attempts <= times:
                    exc = sqlite3.OperationalError("database is locked")
                    exc.sqlite_errorcode = code
                    raise exc
            return super().execute(sql, *args)

    return Connection


def _connecting_with(monkeypatch: pytest.MonkeyPatch, connection: type[sqlite3.Connection]) -> None:
    connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: connect(*a, **k, factory=connection))


def test_opening_while_another_connection_switches_the_file_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    connection = _failing_setup(sqlite3.SQLITE_BUSY, times=3)
    _connecting_with(monkeypatch, connection)
    with SQLiteLedger(tmp_path / "l.db", timeout=5.0) as ledger:
        assert ledger.claim("call:1", "save").won
    assert connection.attempts == 4  # three refused, the fourth took


def test_opening_stops_retrying_at_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    connection = _failing_setup(sqlite3.SQLITE_BUSY, times=10**6)
    _connecting_with(monkeypatch, connection)
    start = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        SQLiteLedger(tmp_path / "l.db", timeout=0.3)
    assert time.monotonic() - start < 3.0
    assert connection.attempts > 1


def test_an_error_other_than_a_busy_file_is_raised_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    connection = _failing_setup(sqlite3.SQLITE_IOERR, times=1)
    _connecting_with(monkeypatch, connection)
    with pytest.raises(sqlite3.OperationalError):
        SQLiteLedger(tmp_path / "l.db", timeout=5.0)
    assert connection.attempts == 1
