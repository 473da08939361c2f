"""Fixtures: one simulator for the test run, reset before each test; a shared HTTP client."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest

from tooltap.simulator import Simulator


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
