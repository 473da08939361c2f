"""Workers for the ledger races: each runs in its own process (spawned, not forked).

A worker opens its own ``SQLiteLedger`` on the shared file and its own registry, so
only the ledger stands between the racers. The tool's side effect is a line appended
to a file: the number of lines per round is the number of executions.
"""

from __future__ import annotations

import json
import os
import time
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from tooltap import ToolCall
from tooltap.harness import SQLiteLedger, ToolRegistry


def charge_call(round_no: int) -> ToolCall:
    """The same side-effecting call every racer receives in round ``round_no``."""
    return ToolCall(
        "charge", {"round": round_no}, "openai", f"call_{round_no}", 0, None, "openai.chat"
    )


def charging_registry(ledger: Any, effects: Path, *, hold: float = 0.0) -> ToolRegistry:
    """A registry whose ``charge`` tool appends ``<round> <pid>`` to ``effects``."""
    registry = ToolRegistry(ledger=ledger, peer_wait=10.0)

    @registry.tool(side_effects=True)
    def charge(round: int) -> dict[str, int]:
        with effects.open("a") as out:
            out.write(f"{round} {os.getpid()}\n")
        if hold:
            time.sleep(hold)
        return {"round": round, "by": os.getpid()}

    return registry


def race(db: str, effects: str, rounds: int, barrier: Barrier, report: str) -> None:
    """Run ``rounds`` aligned races of ``charge``; write each outcome to ``report``."""
    with SQLiteLedger(db, timeout=30.0) as ledger:
        registry = charging_registry(ledger, Path(effects))
        seen = []
        for n in range(rounds):
            barrier.wait(timeout=30)
            (outcome,) = registry.run_sync([charge_call(n)]).outcomes
            seen.append([n, outcome.status, outcome.output])
    Path(report).write_text(json.dumps(seen))


def hang(db: str, effects: str) -> None:
    """Start ``charge`` for round 0 and never finish (the parent kills this process)."""
    with SQLiteLedger(db) as ledger:
        registry = charging_registry(ledger, Path(effects), hold=3600.0)
        registry.run_sync([charge_call(0)])
