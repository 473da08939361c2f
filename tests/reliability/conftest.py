"""Fixtures of the reliability suite (issue 7): telemetry capture, replay server, simulator."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from rel_support import Capture, ReplayServer

from tooltap.simulator import Simulator


@pytest.fixture
def capture() -> Iterator[Capture]:
    """In-memory providers, not instrumented yet (``capture.instrument(...)``)."""
    cap = Capture()
    try:
        yield cap
    finally:
        cap.shutdown()


@pytest.fixture
def tap(capture: Capture) -> Capture:
    """``capture``, instrumented with the default options."""
    capture.instrument()
    return capture


@pytest.fixture(scope="module")
def replay() -> Iterator[ReplayServer]:
    """One byte-replay server per module."""
    server = ReplayServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def _module_sim() -> Iterator[Simulator]:
    with Simulator() as simulator:
        yield simulator


@pytest.fixture
def sim(_module_sim: Simulator) -> Simulator:
    """The module's simulator, reset (no faults, requests or conversation state left)."""
    _module_sim.reset()
    return _module_sim
