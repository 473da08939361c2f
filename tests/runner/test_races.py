"""A side effect runs at most once when racers share one ledger: processes, threads, tasks.

Every race is aligned by a barrier and every racer receives the same side-effecting
call. The handler appends a line to a file, so executions are counted on disk, not
by the racers' own reports. Exactly one racer runs the call; every other one gets
the winner's stored result (``replayed``) or ``in_doubt``, never a second run.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import signal
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.runner.races import charge_call, charging_registry, hang, race
from tooltap.harness import MemoryLedger, SQLiteLedger, ToolRegistry, TurnResult

PROCESSES = 3
PROCESS_ROUNDS = 1000
THREADS = 4
THREAD_ROUNDS = 1000
TASKS = 100
TASK_ROUNDS = 5
#: The longest ledger calls may hold the loop in all (one waiting on the held write lock
#: on the loop would hold it about 0.3 s).
SLOW = 0.05
Tick = tuple[float, float]


def executions(effects: Path) -> Counter[int]:
    """Round -> how many times its side effect happened."""
    if not effects.exists():
        return Counter()
    return Counter(int(line.split()[0]) for line in effects.read_text().splitlines())


def check_rounds(effects: Path, seen: list[tuple[int, str, Any]], racers: int, rounds: int) -> None:
    """One execution per round; one ``ok`` and the winner's output (or in doubt) for the rest."""
    count = executions(effects)
    assert sorted(count) == list(range(rounds))
    assert set(count.values()) == {1}, {r: c for r, c in count.items() if c != 1}
    by_round: dict[int, list[tuple[str, Any]]] = {}
    for n, status, output in seen:
        by_round.setdefault(n, []).append((status, output))
    assert sorted(by_round) == list(range(rounds))
    for n, answers in by_round.items():
        assert len(answers) == racers
        statuses = Counter(status for status, _ in answers)
        assert statuses["ok"] == 1, (n, answers)
        assert set(statuses) <= {"ok", "replayed", "in_doubt"}, (n, answers)
        (winner,) = [output for status, output in answers if status == "ok"]
        assert winner["round"] == n
        assert all(out == winner for status, out in answers if status == "replayed")


def test_processes_sharing_one_sqlite_file_run_each_call_once(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    db, effects = tmp_path / "ledger.db", tmp_path / "effects"
    reports = [tmp_path / f"report{i}.json" for i in range(PROCESSES)]
    workers = [
        ctx.Process(target=race, args=(str(db), str(effects), PROCESS_ROUNDS, barrier, str(r)))
        for r in reports
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [w.exitcode for w in workers] == [0] * PROCESSES
    seen = [tuple(row) for r in reports for row in json.loads(r.read_text())]
    check_rounds(effects, seen, PROCESSES, PROCESS_ROUNDS)  # type: ignore[arg-type]
    winners = Counter(out["by"] for n, status, out in seen if status == "ok")
    assert len(winners) > 1  # the races were real: more than one process won some


@pytest.mark.parametrize("sharing", ["sqlite_file", "memory_ledger", "one_registry"])
def test_threads_run_each_call_once(tmp_path: Path, sharing: str) -> None:
    """Own connections to one file; one MemoryLedger; one registry (its in-flight map)."""
    effects = tmp_path / "effects"
    memory = MemoryLedger()
    shared = charging_registry(memory, effects)
    barrier = threading.Barrier(THREADS, timeout=30)
    seen: list[tuple[int, str, Any]] = []
    errors: list[BaseException] = []

    def racer() -> None:
        try:
            if sharing == "sqlite_file":
                ledger = SQLiteLedger(tmp_path / "ledger.db", timeout=30.0)
                registry = charging_registry(ledger, effects)
            else:
                registry = (
                    shared if sharing == "one_registry" else charging_registry(memory, effects)
                )
            for n in range(THREAD_ROUNDS):
                barrier.wait()
                (outcome,) = registry.run_sync([charge_call(n)]).outcomes
                seen.append((n, outcome.status, outcome.output))
            if sharing == "sqlite_file":
                ledger.close()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=racer) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    check_rounds(effects, seen, THREADS, THREAD_ROUNDS)


class ThreadNoting(SQLiteLedger):
    """A SQLite ledger that notes which thread each of its calls ran on, and how long
    each call took (``calls``: thread id -> durations)."""

    calls: dict[int, list[float]]

    def _noted(self, call: Any, *args: Any) -> Any:
        start = time.perf_counter()
        try:
            return call(*args)
        finally:
            spent = time.perf_counter() - start
            self.calls.setdefault(threading.get_ident(), []).append(spent)

    def get(self, key: str) -> Any:
        return self._noted(super().get, key)

    def put(self, key: str, entry: Any) -> None:
        self._noted(super().put, key, entry)

    def claim(self, key: str, tool: str = "") -> Any:
        return self._noted(super().claim, key, tool)


def hold_write_lock(db: Path, seconds: float, held: threading.Event) -> None:
    """Keep the database write-locked for ``seconds`` (a busy peer, a slow disk)."""
    connection = sqlite3.connect(db, isolation_level=None)
    connection.execute("BEGIN IMMEDIATE")
    held.set()
    time.sleep(seconds)
    connection.execute("COMMIT")
    connection.close()


@pytest.mark.parametrize("handler", ["sync", "async"])
async def test_tasks_on_one_loop_run_each_call_once_and_never_block_it(
    tmp_path: Path, handler: str
) -> None:
    """100 tasks, each with its own registry and connection to one file, one loop.

    The database is write-locked for a while by another connection as the first round
    starts: a ledger call on the loop would hold it that long. Every ledger call is timed
    and noted with the thread it ran on (``ThreadNoting``): none may run on the loop.
    """
    effects, db = tmp_path / "effects", tmp_path / "ledger.db"
    ledgers = [ThreadNoting(db, timeout=30.0) for _ in range(TASKS)]
    loop_thread = threading.get_ident()
    calls: dict[int, list[float]] = {}
    for ledger in ledgers:
        ledger.calls = calls
    make = charging_registry if handler == "sync" else _async_charging
    registries = [make(ledger, effects) for ledger in ledgers]

    async def round_of(n: int) -> None:
        results: list[TurnResult] = await asyncio.gather(
            *(r.run([charge_call(n)]) for r in registries)
        )
        seen.extend((n, res.outcomes[0].status, res.outcomes[0].output) for res in results)

    seen: list[tuple[int, str, Any]] = []
    await round_of(0)  # warm-up (worker threads started, schemas compiled), not measured
    held = threading.Event()
    locker = threading.Thread(target=hold_write_lock, args=(db, 0.3, held))
    locker.start()
    held.wait(5)
    try:
        for n in range(1, TASK_ROUNDS):
            await round_of(n)
    finally:
        locker.join()
        for ledger in ledgers:
            ledger.close()
    check_rounds(effects, seen, TASKS, TASK_ROUNDS)
    # Ledger I/O is the only blocking work of run(): none of it held the loop thread, while
    # in worker threads it did wait for the held write lock (so a call on the loop would).
    on_loop = calls.get(loop_thread, [])
    blocked = sum(on_loop)
    assert blocked < SLOW, f"ledger calls held the event loop for {blocked * 1000:.0f} ms"
    assert not on_loop and calls, "every ledger call ran in a worker thread"
    assert max(d for ds in calls.values() for d in ds) > 0.1  # the write lock was waited for


def _async_charging(ledger: SQLiteLedger, effects: Path) -> ToolRegistry:
    """Like ``charging_registry``, with an async handler."""
    registry = ToolRegistry(ledger=ledger, peer_wait=10.0)

    @registry.tool(side_effects=True)
    async def charge(round: int) -> dict[str, int]:
        await asyncio.sleep(0)
        with effects.open("a") as out:
            out.write(f"{round} {os.getpid()}\n")
        return {"round": round, "by": os.getpid()}

    return registry


def test_a_worker_killed_mid_effect_leaves_the_call_in_doubt(tmp_path: Path) -> None:
    db, effects = tmp_path / "ledger.db", tmp_path / "effects"
    worker = multiprocessing.get_context("spawn").Process(target=hang, args=(str(db), str(effects)))
    worker.start()
    deadline = time.monotonic() + 30
    while not executions(effects) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert executions(effects) == {0: 1}  # the effect has happened; no result yet
    assert worker.pid is not None
    os.kill(worker.pid, signal.SIGKILL)
    worker.join(timeout=10)
    assert worker.exitcode == -signal.SIGKILL
    with SQLiteLedger(db) as ledger:
        registry = charging_registry(ledger, effects)
        registry.peer_wait = 0.2
        started = time.monotonic()
        (outcome,) = registry.run_sync([charge_call(0)]).outcomes
        waited = time.monotonic() - started
        assert outcome.status == "in_doubt" and outcome.is_error
        assert "not repeated" in outcome.output
        assert waited < 5  # bounded by peer_wait from the claim, not forever
        assert executions(effects) == {0: 1}
        (key,) = ledger.in_doubt()
        assert key.startswith("call:call_0:") and ledger.in_doubt()[key].tool == "charge"
        (again,) = registry.run_sync([charge_call(0)]).outcomes  # an old claim: no wait
        assert again.status == "in_doubt"
        # The operator checked: the charge went through. From now on it is answered.
        ledger.resolve(key, {"round": 0, "by": "operator"})
        assert ledger.in_doubt() == {}
        (resolved,) = registry.run_sync([charge_call(0)]).outcomes
        assert resolved.status == "replayed" and resolved.output == {"round": 0, "by": "operator"}
        # Had it not gone through, forgetting the entry lets the call run again.
        ledger.forget(key)
        (rerun,) = registry.run_sync([charge_call(0)]).outcomes
        assert rerun.status == "ok" and executions(effects) == {0: 2}
