"""Ledgers: the in-memory default and the persistent SQLite one."""

from __future__ import annotations

import threading
from pathlib import Path

from tooltap.harness import Ledger, LedgerEntry, MemoryLedger, SQLiteLedger


def test_memory_ledger_roundtrip_and_eviction() -> None:
    ledger = MemoryLedger(max_entries=3)
    assert isinstance(ledger, Ledger)
    assert ledger.get("call:a") is None
    for key in "abcd":
        ledger.put(f"call:{key}", LedgerEntry("done", "t", {"v": key}))
    assert len(ledger) == 3
    assert ledger.get("call:a") is None  # the oldest went first
    got = ledger.get("call:d")
    assert got is not None and got.output == {"v": "d"} and got.state == "done"


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
