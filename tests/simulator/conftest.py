"""Fixtures: one simulator for the session, reset before each test; a shared HTTP client."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from tooltap.simulator import Simulator


def simulator_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("tooltap-simulator")]


@pytest.fixture(scope="session")
def shared_sim() -> Iterator[Simulator]:
    """Started once: SDK clients (slow to build) are reused across tests through its URL."""
    with Simulator() as simulator:
        yield simulator


@pytest.fixture
def sim(shared_sim: Simulator) -> Iterator[Simulator]:
    shared_sim.reset()
    yield shared_sim
    shared_sim.reset()


@pytest.fixture(scope="session")
def http() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=5.0) as client:
        yield client
